//===- kiln_pool.cuh - max and average pooling windows on NHWC ------------===//
//
// The generated kernel describes the pooling with a struct S of compile-time
// constants (N, H, W, C, OH, OW, KH, KW, SH, SW, PT, PL, PB, PR, kMax,
// kCountIncludePad) and calls pool_window once per output element (threads
// walk channels fastest, so a warp reads consecutive channels). PyTorch's
// rules: padding never wins a max and NaN propagates; an average divides the
// fp32 sum by the window clipped to the padded input (count_include_pad) or
// by the number of input elements it covers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_common.cuh"

namespace kiln::pool {

/// The pooled value (fp32, not yet rounded) of output element `idx` of
/// [N, OH, OW, C].
template <typename S, typename T>
__device__ __forceinline__ float pool_window(const T *__restrict__ x, long long idx) {
  const int c = (int)(idx % S::C);
  long long t = idx / S::C;
  const int ow = (int)(t % S::OW);
  t /= S::OW;
  const int oh = (int)(t % S::OH), n = (int)(t / S::OH);
  const int h0 = oh * S::SH - S::PT, w0 = ow * S::SW - S::PL;
  const T *base = x + (long long)n * S::H * S::W * S::C + c;
  float acc = S::kMax ? -INFINITY : 0.0f;
#pragma unroll
  for (int kh = 0; kh < S::KH; ++kh) {
    const int ih = h0 + kh;
    if ((unsigned)ih >= (unsigned)S::H)
      continue;
#pragma unroll
    for (int kw = 0; kw < S::KW; ++kw) {
      const int iw = w0 + kw;
      if ((unsigned)iw >= (unsigned)S::W)
        continue;
      const float v = to_float(base[((long long)ih * S::W + iw) * S::C]);
      acc = S::kMax ? nan_max(acc, v) : acc + v;
    }
  }
  if (S::kMax)
    return acc;
  const int h1 = min(h0 + S::KH, S::H + S::PB), w1 = min(w0 + S::KW, S::W + S::PR);
  int divisor = (h1 - h0) * (w1 - w0);
  if (!S::kCountIncludePad)
    divisor = (min(h1, S::H) - max(h0, 0)) * (min(w1, S::W) - max(w0, 0));
  return acc / (float)divisor;
}

} // namespace kiln::pool
