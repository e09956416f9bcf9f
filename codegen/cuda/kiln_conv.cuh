//===- kiln_conv.cuh - 2-D convolution on NHWC as implicit GEMM -----------===//
//
// The generated kernel describes its convolution with a struct S of
// compile-time constants (N, H, W, C, O, KH, KW, SH, SW, PT, PL, DH, DW, OH,
// OW, G, kNchw) and supplies the epilogue(m, o, acc) that adds the bias, runs
// the group's elementwise ops and stores: m numbers the output positions
// (n, oh, ow) and o the output channel, so element (m, o) sits at m * O + o.
//
//   Implicit GEMM per group g (grid z): M = N * OH * OW, N = O / G,
//   K = KH * KW * C / G in the weight's own (kh, kw, c) order, so the weight
//   [O, KH, KW, C / G] is B, K-major, as stored. A is gathered on the fly
//   (im2col in the loader): row m, column k = (kh, kw, c) reads input
//   (n, oh * SH - PT + kh * DH, ow * SW - PL + kw * DW, g * C / G + c), zero in
//   the padding. With C / G % 8 == 0 eight consecutive k share one (kh, kw)
//   and load as one 16-byte vector; otherwise (the 3-channel stem, odd
//   groups) element by element.
//   conv_mma (fp16/bf16) feeds kiln_gemm.cuh's mma.sync tile loop;
//   conv_simt (fp32) its SIMT loop; conv_depthwise (G == C, one input channel
//   per group) is direct: one thread per output element, channels
//   contiguous so a warp reads consecutive channels.
//   kNchw: the input is NCHW (the frontend's layout change fused into the
//   first convolution); the loader reads it in place, element by element.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_gemm.cuh"
#include "kiln_gemm_splitk.cuh"

namespace kiln::conv {

template <typename S> struct Dims {
  static constexpr int Cg = S::C / S::G, Og = S::O / S::G;
  static constexpr int K = S::KH * S::KW * Cg;
  static constexpr int M = S::N * S::OH * S::OW;
};

/// In 32 bits: the code generator refuses inputs of 2^31 elements or more
/// (64-bit offsets cost registers the 384-thread kernels do not have).
template <typename S>
__device__ __forceinline__ int input_offset(int n, int ih, int iw, int c) {
  if (S::kNchw)
    return ((n * S::C + c) * S::H + ih) * S::W + iw;
  return ((n * S::H + ih) * S::W + iw) * S::C + c;
}

/// Where the window of output position m starts (may be in the padding).
struct Window {
  int n, ih, iw;
};
template <typename S> __device__ __forceinline__ Window window_of(int m) {
  const int ow = m % S::OW, t = m / S::OW;
  return {t / S::OH, (t % S::OH) * S::SH - S::PT, ow * S::SW - S::PL};
}

/// A[m, k] of group g as a pointer, or null in the padding.
template <typename S, typename T>
__device__ __forceinline__ const T *gather(const T *__restrict__ x, const Window &w,
                                           int k, int g) {
  constexpr int Cg = Dims<S>::Cg;
  const int c = k % Cg, khw = k / Cg;
  const int ih = w.ih + (khw / S::KW) * S::DH, iw = w.iw + (khw % S::KW) * S::DW;
  if ((unsigned)ih >= (unsigned)S::H || (unsigned)iw >= (unsigned)S::W)
    return nullptr;
  return x + input_offset<S>(w.n, ih, iw, g * Cg + c);
}

/// A[m, k..k+7] of group g, zero past the edges and in the padding.
template <typename S, typename T>
__device__ __forceinline__ uint4 im2col8(const T *__restrict__ x, int m, int k, int g) {
  using D = Dims<S>;
  uint4 v = make_uint4(0, 0, 0, 0);
  if (m >= D::M)
    return v;
  const Window w = window_of<S>(m);
  T *e = reinterpret_cast<T *>(&v);
  if (!S::kNchw && D::Cg % 8 == 0) {
    if (k >= D::K)
      return v;
    const T *p = gather<S>(x, w, k, g);
    if (!p)
      return v;
    if ((reinterpret_cast<unsigned long long>(p) & 15) == 0)
      return *reinterpret_cast<const uint4 *>(p);
#pragma unroll
    for (int i = 0; i < 8; ++i)
      e[i] = p[i];
    return v;
  }
#pragma unroll
  for (int i = 0; i < 8; ++i)
    if (k + i < D::K)
      if (const T *p = gather<S>(x, w, k + i, g))
        e[i] = *p;
  return v;
}

/// fp16/bf16: 128 x 128 tiles of mma.sync on a grid of (O/G tiles, M tiles, G).
template <typename S, typename T, typename Epilogue>
__device__ __forceinline__ void conv_mma(const T *__restrict__ x, const T *__restrict__ w,
                                         const Epilogue &epilogue) {
  using D = Dims<S>;
  const int g = blockIdx.z;
  const T *wg = w + (long long)g * D::Og * D::K;
  mma_tile_loop<T, true>(
      [&](int m, int k) { return im2col8<S>(x, m, k, g); },
      [&](int row, int col) { return load8(wg, D::Og, D::K, row, col); }, D::M, D::Og,
      D::K, ColumnOffset<Epilogue>{epilogue, g * D::Og},
      blockIdx.y * kMmaBM, blockIdx.x * kMmaBN);
}

/// conv_mma on a persistent 1-D grid, A's rows gathered by `gatherA(m, k)`:
/// the other images of a conv_wgmma kernel run it on the launch shape of
/// the sm_90a image.
template <typename S, typename T, typename GatherA, typename Epilogue>
__device__ __forceinline__ void conv_mma_tiles(const GatherA &gatherA, const T *__restrict__ w,
                                               const Epilogue &epilogue) {
  using D = Dims<S>;
  static_assert(S::G == 1, "the persistent form takes one group");
  constexpr int tilesN = (D::Og + kMmaBN - 1) / kMmaBN;
  constexpr int tiles = ((D::M + kMmaBM - 1) / kMmaBM) * tilesN;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x)
    mma_tile_loop<T, true, 1>(
        gatherA, [&](int row, int col) { return load8(w, D::Og, D::K, row, col); }, D::M,
        D::Og, D::K, epilogue, (tile / tilesN) * kMmaBM, (tile % tilesN) * kMmaBN);
}

template <typename S, typename T, typename Epilogue>
__device__ __forceinline__ void conv_mma_persistent(const T *__restrict__ x,
                                                    const T *__restrict__ w,
                                                    const Epilogue &epilogue) {
  conv_mma_tiles<S>([&](int m, int k) { return im2col8<S>(x, m, k, 0); }, w, epilogue);
}

/// A[m, k..k+7] of a 1x1 convolution whose input is a channel concat of
/// two NHWC tensors (P: part p has Cp channels of Hp x Wp pixels, read every
/// SHp-th row and SWp-th column): part 0's channels, then part 1's. Both
/// channel counts are multiples of 8, so 8 channels never straddle parts.
template <typename S, typename P, typename T>
__device__ __forceinline__ uint4 concat_im2col8(const T *__restrict__ x0,
                                                const T *__restrict__ x1, int m, int k) {
  static_assert(P::C0 % 8 == 0 && P::C1 % 8 == 0 && P::C0 + P::C1 == S::C,
                "two parts of whole 8-channel chunks make the input");
  uint4 v = make_uint4(0, 0, 0, 0);
  if (m >= Dims<S>::M || k >= S::C)
    return v;
  const int ow = m % S::OW, t = m / S::OW, oh = t % S::OH, n = t / S::OH;
  const T *p = k < P::C0 ? x0 + ((n * P::H0 + oh * P::SH0) * P::W0 + ow * P::SW0) * P::C0 + k
                         : x1 + ((n * P::H1 + oh * P::SH1) * P::W1 + ow * P::SW1) * P::C1 +
                               (k - P::C0);
  if ((reinterpret_cast<unsigned long long>(p) & 15) == 0)
    return *reinterpret_cast<const uint4 *>(p);
  T *e = reinterpret_cast<T *>(&v);
#pragma unroll
  for (int i = 0; i < 8; ++i)
    e[i] = p[i];
  return v;
}

/// conv_mma_persistent over a channel concat (concat_im2col8): the other
/// images of a conv_wgmma_concat kernel.
template <typename S, typename P, typename T, typename Epilogue>
__device__ __forceinline__ void conv_mma_concat(const T *__restrict__ x0,
                                                const T *__restrict__ x1,
                                                const T *__restrict__ w,
                                                const Epilogue &epilogue) {
  static_assert(S::KH == 1 && S::KW == 1, "a 1x1 convolution");
  conv_mma_tiles<S>([&](int m, int k) { return concat_im2col8<S, P>(x0, x1, m, k); }, w,
                    epilogue);
}

/// fp16/bf16 convolutions too small to fill the GPU with 128 x 128 tiles
/// (late stages, batch 1): kiln_gemm_splitk.cuh's 64 x 64 tiles with K split
/// across a cluster, im2col rows gathered by cp.async; NHWC with C / G % 8
/// == 0 only (each 16-byte chunk is 8 channels of one input pixel). Grid:
/// (O/G tiles * kSplit, M tiles, G).
template <typename S, typename T, int kSplit, int kBK, int kStages, typename Epilogue>
__device__ __forceinline__ void conv_splitk(const T *__restrict__ x, const T *__restrict__ w,
                                            const Epilogue &epilogue) {
  using D = Dims<S>;
  static_assert(!S::kNchw && D::Cg % 8 == 0, "whole 16-byte chunks of channels");
  const int g = blockIdx.z;
  const T *wg = w + (long long)g * D::Og * D::K;
  splitk_tile_loop<T, true, kSplit, kBK, kStages>(
      [&](int m, int k) -> const T * {
        return m < D::M && k < D::K ? gather<S>(x, window_of<S>(m), k, g) : nullptr;
      },
      [&](int row, int col) -> const T * {
        return row < D::Og && col < D::K ? wg + (long long)row * D::K + col : nullptr;
      },
      D::M, D::Og, D::K, ColumnOffset<Epilogue>{epilogue, g * D::Og});
}

/// fp32: 64 x 64 SIMT tiles on a grid of (O/G tiles, M tiles, G).
template <typename S, typename Epilogue>
__device__ __forceinline__ void conv_simt(const float *__restrict__ x,
                                          const float *__restrict__ w,
                                          const Epilogue &epilogue) {
  using D = Dims<S>;
  const int g = blockIdx.z;
  const float *wg = w + (long long)g * D::Og * D::K;
  simt_tile_loop<true>(
      [&](int m, int k) {
        const float *p = gather<S>(x, window_of<S>(m), k, g);
        return p ? *p : 0.0f;
      },
      [&](int n, int k) { return wg[(long long)n * D::K + k]; }, D::M, D::Og, D::K,
      ColumnOffset<Epilogue>{epilogue, g * D::Og});
}

/// tap(ih, iw, kh * KW + kw) for each filter tap of `win` inside the input
/// (the padding skipped).
template <typename S, typename Tap>
__device__ __forceinline__ void for_each_tap(const Window &win, const Tap &tap) {
#pragma unroll
  for (int kh = 0; kh < S::KH; ++kh) {
    const int ih = win.ih + kh * S::DH;
    if ((unsigned)ih >= (unsigned)S::H)
      continue;
#pragma unroll
    for (int kw = 0; kw < S::KW; ++kw) {
      const int iw = win.iw + kw * S::DW;
      if ((unsigned)iw < (unsigned)S::W)
        tap(ih, iw, kh * S::KW + kw);
    }
  }
}

/// Whether conv_depthwise can run 8 channels per thread: one filter per
/// channel (O == C), C % 8 == 0, NHWC, 2-byte elements.
template <typename S, typename T> __host__ __device__ constexpr bool depthwise_vectorized() {
  return S::G == S::C && S::O == S::C && S::C % 8 == 0 && !S::kNchw && sizeof(T) == 2;
}
namespace depthwise {
/// Channels a block's slice covers (its filters sit in shared memory): at
/// most 128, the channels split evenly in whole 8-channel groups over as
/// few slices as that takes. Slices of 128 and a remainder left most of
/// the remainder's blocks idle: at 144 channels the second slice's 16 kept
/// 2 of 16 thread groups busy, 44% of all threads idle; two slices of 72
/// keep all but 4 of 256 busy.
template <typename S> __host__ __device__ constexpr int slice() {
  constexpr int slices = (S::C + 127) / 128;
  return ((S::C + slices - 1) / slices + 7) / 8 * 8;
}
/// Output positions a block takes per step: 256 threads of 8 channels.
template <typename S> __host__ __device__ constexpr int pixels() { return 256 / (slice<S>() / 8); }
/// Positions a step of the whole grid's x covers with kColumns adjacent
/// output columns a thread: rows of ceil(OW / kColumns) column groups.
template <typename S, int kColumns> __host__ __device__ constexpr int column_groups() {
  return S::N * S::OH * ((S::OW + kColumns - 1) / kColumns);
}
/// The input pixels a kTH x kTW patch of outputs reads: rows, columns.
template <typename S, int kTH> __host__ __device__ constexpr int patch_rows() {
  return (kTH - 1) * S::SH + (S::KH - 1) * S::DH + 1;
}
template <typename S, int kTW> __host__ __device__ constexpr int patch_columns() {
  return (kTW - 1) * S::SW + (S::KW - 1) * S::DW + 1;
}
/// Output patches of kTH x kTW over the batch (the grid's x walks them).
template <typename S, int kTH, int kTW> __host__ __device__ constexpr int patches() {
  return S::N * ((S::OH + kTH - 1) / kTH) * ((S::OW + kTW - 1) / kTW);
}
/// Shared bytes of conv_depthwise_patches: the slice's filters and input
/// patch (the code generator checks the same sum against its budget).
template <typename S, int kTH, int kTW> __host__ __device__ constexpr int patch_shared_bytes() {
  return (S::KH * S::KW + patch_rows<S, kTH>() * patch_columns<S, kTW>()) * slice<S>() * 2;
}
} // namespace depthwise

/// Channels c .. c + 7 of output position m: in pairs where the epilogue
/// takes them (four 4-byte stores and residual loads where eight 2-byte
/// ones would each touch as many sectors), every value computed before any
/// is stored.
template <typename Epilogue>
__device__ __forceinline__ void store_eight_channels(const Epilogue &epilogue, int m, int c,
                                                     const float (&acc)[8]) {
  if constexpr (Epilogue::kPairs) {
    typename Epilogue::Values first[4], second[4];
#pragma unroll
    for (int i = 0; i < 8; i += 2)
      epilogue.compute_pair(m, c + i, acc[i], acc[i + 1], first[i / 2], second[i / 2]);
#pragma unroll
    for (int i = 0; i < 8; i += 2)
      epilogue.store_pair(m, c + i, first[i / 2], second[i / 2]);
  } else {
    typename Epilogue::Values values[8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
      values[i] = epilogue.compute(m, c + i, acc[i]);
#pragma unroll
    for (int i = 0; i < 8; ++i)
      epilogue.store(m, c + i, values[i]);
  }
}

/// kColumns adjacent output columns of one output row, 8 channels from c,
/// for the thread's column group q: each input column of a filter row is
/// loaded once for every output column it feeds (a 3x3 stride-1 row of
/// four outputs reads 6 input columns, not 12), the filter taps from
/// shared memory as before.
template <typename S, int kColumns, int kSlice, typename T, typename Epilogue>
__device__ __forceinline__ void depthwise_columns(const T *__restrict__ x,
                                                  const T (&filters)[S::KH * S::KW][kSlice],
                                                  int group, int c, int q,
                                                  const Epilogue &epilogue) {
  constexpr int kGroupsPerRow = (S::OW + kColumns - 1) / kColumns;
  constexpr int kSpan = (kColumns - 1) * S::SW + (S::KW - 1) * S::DW + 1;
  const int ow0 = q % kGroupsPerRow * kColumns, t = q / kGroupsPerRow;
  const int n = t / S::OH, ih0 = t % S::OH * S::SH - S::PT, iw0 = ow0 * S::SW - S::PL;
  float acc[kColumns][8];
#pragma unroll
  for (int p = 0; p < kColumns; ++p)
#pragma unroll
    for (int i = 0; i < 8; ++i)
      acc[p][i] = 0.0f;
#pragma unroll
  for (int kh = 0; kh < S::KH; ++kh) {
    const int ih = ih0 + kh * S::DH;
    if ((unsigned)ih >= (unsigned)S::H)
      continue;
#pragma unroll
    for (int j = 0; j < kSpan; ++j) {
      const int iw = iw0 + j;
      if ((unsigned)iw >= (unsigned)S::W)
        continue;
      const uint4 in = *reinterpret_cast<const uint4 *>(x + input_offset<S>(n, ih, iw, c));
      const T *ie = reinterpret_cast<const T *>(&in);
      float inf[8];
#pragma unroll
      for (int i = 0; i < 8; ++i)
        inf[i] = to_float(ie[i]);
#pragma unroll
      for (int p = 0; p < kColumns; ++p) {
        // Column j feeds output p through tap kw where j = p SW + kw DW:
        // known when the loops unroll, so only real taps are emitted.
        const int offset = j - p * S::SW;
        if (offset < 0 || offset % S::DW != 0 || offset / S::DW >= S::KW)
          continue;
        const uint4 f = *reinterpret_cast<const uint4 *>(
            &filters[kh * S::KW + offset / S::DW][group * 8]);
        const T *fe = reinterpret_cast<const T *>(&f);
#pragma unroll
        for (int i = 0; i < 8; ++i)
          acc[p][i] = fmaf(inf[i], to_float(fe[i]), acc[p][i]);
      }
    }
  }
  const int m0 = (t * S::OW) + ow0;
#pragma unroll
  for (int p = 0; p < kColumns; ++p) {
    if (ow0 + p >= S::OW)
      break;
    store_eight_channels(epilogue, m0 + p, c, acc[p]);
  }
}

/// The epilogue of eight channels c .. c + 7 of output position m: one
/// 16-byte chunk where the epilogue packs them, else in pairs.
template <typename Epilogue>
__device__ __forceinline__ void store_depthwise_chunk(const Epilogue &epilogue, int m, int c,
                                                      const float (&acc)[8]) {
  if constexpr (Epilogue::kFragments) {
    uint4 inputs{}, chunk;
    if constexpr (Epilogue::kRowInput)
      inputs = *reinterpret_cast<const uint4 *>(epilogue.row_input_at(m, c));
    chunk.x = epilogue.compute_packed(m, c, acc[0], acc[1], inputs.x);
    chunk.y = epilogue.compute_packed(m, c + 2, acc[2], acc[3], inputs.y);
    chunk.z = epilogue.compute_packed(m, c + 4, acc[4], acc[5], inputs.z);
    chunk.w = epilogue.compute_packed(m, c + 6, acc[6], acc[7], inputs.w);
    epilogue.store_chunk(m, c, chunk);
  } else {
    store_eight_channels(epilogue, m, c, acc);
  }
}

/// Depthwise over 2-D patches of kTH x kTW outputs (pixel_tile [1, kTH,
/// kTW]; off unless the selection stage is asked for it: on the GPU
/// machine, 2026-12-05, 1.1-1.8x the one-column kernel's time on every
/// MobileNetV3 and EfficientNet-B0 layer at batch 32). The one-column
/// kernel below waits on its loads: a block's row segment reads its 3 or 5
/// input rows from L2, each row fetched again by the blocks above and
/// below, and a thread has one tap's load in flight at a time within its
/// registers. Here a block copies its patch's whole
/// input window for its slice of channels into shared memory with cp.async
/// (every load in flight at once, no registers held) and computes the
/// patch from there, each input row read from L2 once per patch instead of
/// once per output row. Threads as in the one-column kernel: 8 channels of
/// an output position each, 256 / (slice / 8) positions a pass.
template <typename S, int kTH, int kTW, typename T, typename Epilogue>
__device__ __forceinline__ void conv_depthwise_patches(const T *__restrict__ x,
                                                       const T *__restrict__ w,
                                                       const Epilogue &epilogue) {
  static_assert(depthwise_vectorized<S, T>(),
                "8 channels a thread need O == C, C % 8 == 0, NHWC and 2-byte elements");
  constexpr int kTaps = S::KH * S::KW, kSlice = depthwise::slice<S>();
  constexpr int kGroups = kSlice / 8, kPositions = depthwise::pixels<S>();
  constexpr int kRows = depthwise::patch_rows<S, kTH>();
  constexpr int kColumns = depthwise::patch_columns<S, kTW>();
  constexpr int kPatchesH = (S::OH + kTH - 1) / kTH, kPatchesW = (S::OW + kTW - 1) / kTW;
  static_assert(depthwise::patch_shared_bytes<S, kTH, kTW>() <= 48 * 1024,
                "a patch's input window and filters fit the static shared memory");
  __shared__ __align__(16) T filters[kTaps][kSlice];
  __shared__ __align__(16) T window[kRows * kColumns][kSlice];
  const int c0 = blockIdx.y * kSlice;
  for (int e = threadIdx.x; e < kTaps * kSlice; e += blockDim.x) {
    const int tap = e / kSlice, c = e % kSlice;
    filters[tap][c] = c0 + c < S::C ? w[(c0 + c) * kTaps + tap] : from_float<T>(0.0f);
  }
  const int group = threadIdx.x % kGroups, c = c0 + group * 8;
  const bool computes = threadIdx.x < kPositions * kGroups && c < S::C;
  for (int patch = blockIdx.x; patch < depthwise::patches<S, kTH, kTW>(); patch += gridDim.x) {
    const int pw = patch % kPatchesW, t = patch / kPatchesW;
    const int n = t / kPatchesH, oh0 = t % kPatchesH * kTH, ow0 = pw * kTW;
    const int ih0 = oh0 * S::SH - S::PT, iw0 = ow0 * S::SW - S::PL;
    // The previous patch's reads are done before its window is replaced.
    __syncthreads();
    for (int e = threadIdx.x; e < kRows * kColumns * kGroups; e += blockDim.x) {
      const int g = e % kGroups, pixel = e / kGroups;
      const int ih = ih0 + pixel / kColumns, iw = iw0 + pixel % kColumns, ce = c0 + g * 8;
      const bool inside = (unsigned)ih < (unsigned)S::H && (unsigned)iw < (unsigned)S::W &&
                          ce < S::C;
      // Outside the input (the padding, a slice's idle groups): zeros.
      cp_async16(&window[pixel][g * 8], inside ? x + input_offset<S>(n, ih, iw, ce) : x, inside);
    }
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    if (!computes)
      continue;
    for (int q = threadIdx.x / kGroups; q < kTH * kTW; q += kPositions) {
      const int r = q / kTW, col = q % kTW, oh = oh0 + r, ow = ow0 + col;
      if (oh >= S::OH || ow >= S::OW)
        continue;
      float acc[8];
#pragma unroll
      for (int i = 0; i < 8; ++i)
        acc[i] = 0.0f;
#pragma unroll
      for (int kh = 0; kh < S::KH; ++kh)
#pragma unroll
        for (int kw = 0; kw < S::KW; ++kw) {
          const int pixel = (r * S::SH + kh * S::DH) * kColumns + col * S::SW + kw * S::DW;
          const uint4 in = *reinterpret_cast<const uint4 *>(&window[pixel][group * 8]);
          const uint4 f = *reinterpret_cast<const uint4 *>(&filters[kh * S::KW + kw][group * 8]);
          const T *ie = reinterpret_cast<const T *>(&in), *fe = reinterpret_cast<const T *>(&f);
#pragma unroll
          for (int i = 0; i < 8; ++i)
            acc[i] = fmaf(to_float(ie[i]), to_float(fe[i]), acc[i]);
        }
      store_depthwise_chunk(epilogue, (n * S::OH + oh) * S::OW + ow, c, acc);
    }
  }
}

/// Depthwise (G == C, one input channel per group). kEightChannels: each
/// block holds the filters of a slice of up to 128 channels (grid y;
/// depthwise::slice) transposed to [tap][channel] in shared memory; each
/// thread computes 8 consecutive channels of one output position per step,
/// one 16-byte load of input and of filter per tap, where one thread per
/// element would issue 16 2-byte loads, and stores them as one 16-byte chunk
/// where the epilogue packs them; blocks of 256 threads take pixels<S>()
/// positions (grid x); with kColumns > 1 a position is kColumns adjacent
/// output columns (depthwise_columns). The loop is bound by its loads'
/// latency, not by instructions or bandwidth: on the H200 it ran fastest
/// with the most threads (blocks_per_sm 8, 32 registers a thread, against
/// ptxas's own 40: 3-8% faster), while fp32 filters in shared memory (no
/// conversions, twice the shared traffic) lost 1.5x even held to 40
/// registers, and filters held in registers (112) 1.3-1.5x. Otherwise one
/// thread per output element (m, o) on a grid-stride loop; output channel o
/// reads input channel o / (O / C).
template <typename S, bool kEightChannels = false, int kColumns = 1, typename T,
          typename Epilogue>
__device__ __forceinline__ void conv_depthwise(const T *__restrict__ x,
                                               const T *__restrict__ w,
                                               const Epilogue &epilogue) {
  using D = Dims<S>;
  if constexpr (kEightChannels) {
    static_assert(depthwise_vectorized<S, T>(),
                  "8 channels a thread need O == C, C % 8 == 0, NHWC and 2-byte elements");
    static_assert(kColumns == 1 || kColumns == 2 || kColumns == 4,
                  "one, two or four output columns a thread");
    constexpr int kTaps = S::KH * S::KW, kSlice = depthwise::slice<S>();
    constexpr int kGroups = kSlice / 8, kPixels = depthwise::pixels<S>();
    __shared__ __align__(16) T filters[kTaps][kSlice];
    const int c0 = blockIdx.y * kSlice;
    for (int e = threadIdx.x; e < kTaps * kSlice; e += blockDim.x) {
      const int tap = e / kSlice, c = e % kSlice;
      filters[tap][c] = c0 + c < S::C ? w[(c0 + c) * kTaps + tap] : from_float<T>(0.0f);
    }
    __syncthreads();
    const int group = threadIdx.x % kGroups, c = c0 + group * 8;
    if (threadIdx.x >= kPixels * kGroups || c >= S::C)
      return;
    if constexpr (kColumns > 1) {
      for (int q = blockIdx.x * kPixels + threadIdx.x / kGroups;
           q < depthwise::column_groups<S, kColumns>(); q += gridDim.x * kPixels)
        depthwise_columns<S, kColumns, kSlice>(x, filters, group, c, q, epilogue);
      return;
    }
    for (int m = blockIdx.x * kPixels + threadIdx.x / kGroups; m < D::M;
         m += gridDim.x * kPixels) {
      const Window win = window_of<S>(m);
      float acc[8];
#pragma unroll
      for (int i = 0; i < 8; ++i)
        acc[i] = 0.0f;
      for_each_tap<S>(win, [&](int ih, int iw, int tap) {
        const uint4 in = *reinterpret_cast<const uint4 *>(x + input_offset<S>(win.n, ih, iw, c));
        const uint4 f = *reinterpret_cast<const uint4 *>(&filters[tap][group * 8]);
        const T *ie = reinterpret_cast<const T *>(&in), *fe = reinterpret_cast<const T *>(&f);
#pragma unroll
        for (int i = 0; i < 8; ++i)
          acc[i] = fmaf(to_float(ie[i]), to_float(fe[i]), acc[i]);
      });
      // One 16-byte store where pairs were four 4-byte ones: 2-6% of the
      // kernel's time on EfficientNet-B0's layers at batch 32, and fewer
      // values live at the end of the loop.
      store_depthwise_chunk(epilogue, m, c, acc);
    }
    return;
  }
  constexpr long long total = (long long)D::M * S::O;
  for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
       idx += (long long)gridDim.x * blockDim.x) {
    const int o = (int)(idx % S::O), m = (int)(idx / S::O);
    const Window win = window_of<S>(m);
    const int c = o / D::Og;
    const T *wo = w + (long long)o * S::KH * S::KW;
    float acc = 0.0f;
    for_each_tap<S>(win, [&](int ih, int iw, int tap) {
      acc = fmaf(to_float(x[input_offset<S>(win.n, ih, iw, c)]), to_float(wo[tap]), acc);
    });
    epilogue(m, o, acc);
  }
}

} // namespace kiln::conv

#include "kiln_conv_stem.cuh"
