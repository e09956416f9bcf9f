//===- kiln_pool.cuh - max and average pooling windows on NHWC ------------===//
//
// The generated kernel describes the pooling with a struct S of compile-time
// constants (N, H, W, C, OH, OW, KH, KW, SH, SW, PT, PL, PB, PR, kMax,
// kCountIncludePad) and calls pool_window once per output element (threads
// walk channels fastest, so a warp reads consecutive channels), or with
// tile [1, 8, 1] pool_window8 once per eight channels of a pixel. PyTorch's
// rules: padding never wins a max and NaN propagates; an average divides the
// fp32 sum by the window clipped to the padded input (count_include_pad) or
// by the number of input elements it covers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_common.cuh"

namespace kiln::pool {

/// The window of output element `idx` of [N, OH, OW, C]: its image's
/// first input element of channel c, and the window's top-left corner.
struct Window {
  long long base;
  int h0, w0;
};

template <typename S> __device__ __forceinline__ Window window_of(long long idx) {
  const int c = (int)(idx % S::C);
  long long t = idx / S::C;
  const int ow = (int)(t % S::OW);
  t /= S::OW;
  const int oh = (int)(t % S::OH), n = (int)(t / S::OH);
  return {(long long)n * S::H * S::W * S::C + c, oh * S::SH - S::PT, ow * S::SW - S::PL};
}

/// Calls tap(offset) with the element offset (from the window's base) of
/// every window position inside the input: padding never takes part.
template <typename S, typename Tap>
__device__ __forceinline__ void for_each_tap(const Window &win, const Tap &tap) {
#pragma unroll
  for (int kh = 0; kh < S::KH; ++kh) {
    const int ih = win.h0 + kh;
    if ((unsigned)ih >= (unsigned)S::H)
      continue;
#pragma unroll
    for (int kw = 0; kw < S::KW; ++kw) {
      const int iw = win.w0 + kw;
      if ((unsigned)iw >= (unsigned)S::W)
        continue;
      tap(((long long)ih * S::W + iw) * S::C);
    }
  }
}

/// An average's divisor for the window at (h0, w0).
template <typename S> __device__ __forceinline__ float divisor_of(int h0, int w0) {
  const int h1 = min(h0 + S::KH, S::H + S::PB), w1 = min(w0 + S::KW, S::W + S::PR);
  int divisor = (h1 - h0) * (w1 - w0);
  if (!S::kCountIncludePad)
    divisor = (min(h1, S::H) - max(h0, 0)) * (min(w1, S::W) - max(w0, 0));
  return (float)divisor;
}

/// The pooled value (fp32, not yet rounded) of output element `idx` of
/// [N, OH, OW, C].
template <typename S, typename T>
__device__ __forceinline__ float pool_window(const T *__restrict__ x, long long idx) {
  const Window win = window_of<S>(idx);
  const T *base = x + win.base;
  float acc = S::kMax ? -INFINITY : 0.0f;
  for_each_tap<S>(win, [&](long long offset) {
    const float v = to_float(base[offset]);
    acc = S::kMax ? nan_max(acc, v) : acc + v;
  });
  return S::kMax ? acc : acc / divisor_of<S>(win.h0, win.w0);
}

/// Whether pool_window8 applies: 2-byte elements, whole 16-byte vectors
/// of channels.
template <typename S, typename T> __host__ __device__ constexpr bool vectorized() {
  return sizeof(T) == 2 && S::C % 8 == 0;
}

/// Output elements idx0 .. idx0 + 7 (idx0 % 8 == 0: eight channels of one
/// pixel), pooled as pool_window does, with one 16-byte load per window
/// position where a thread per element issues eight 2-byte loads (the
/// input is 16-byte aligned: every arena buffer and input is).
template <typename S, typename T>
__device__ __forceinline__ void pool_window8(const T *__restrict__ x, long long idx0,
                                             float (&out)[8]) {
  static_assert(vectorized<S, T>(), "8 channels a thread need 2-byte elements and C % 8 == 0");
  const Window win = window_of<S>(idx0);
  const T *base = x + win.base;
#pragma unroll
  for (int j = 0; j < 8; ++j)
    out[j] = S::kMax ? -INFINITY : 0.0f;
  for_each_tap<S>(win, [&](long long offset) {
    const uint4 raw = __ldg(reinterpret_cast<const uint4 *>(base + offset));
    const T *elements = reinterpret_cast<const T *>(&raw);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float v = to_float(elements[j]);
      out[j] = S::kMax ? nan_max(out[j], v) : out[j] + v;
    }
  });
  if (!S::kMax) {
    const float divisor = divisor_of<S>(win.h0, win.w0);
#pragma unroll
    for (int j = 0; j < 8; ++j)
      out[j] /= divisor;
  }
}

} // namespace kiln::pool
