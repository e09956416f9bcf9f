//===- kiln_conv_sm90.cuh - Hopper implicit-GEMM convolution --------------===//
//
// conv_wgmma: an NHWC convolution (one group, C % 8 == 0, fp16/bf16) on
// kiln_gemm_sm90.cuh's persistent TMA + wgmma main loop. The GEMM is
// out[m, o] = sum over taps (kh, kw) and channels c of x[pixel(m) + tap, c]
// * w[o, kh, kw, c]; no im2col matrix is built.
//
// A row tile is a box of output pixels, kNb images x kHb rows x kWb
// columns (at most 128). For k-step (tap, channel block) its A tile is one
// 4-D TMA copy of the input box that those pixels read at that tap: start
// (c0, ow0 * SW - PL + kw * DW, oh0 * SH - PT + kh * DH, n0), traversal
// strides (1, SW, SH, 1), so a strided convolution reads every SW-th
// column. TMA writes the box densely, 64 channels (128 bytes) per pixel,
// in the same 128-byte swizzle as a GEMM's A tile, and fills coordinates
// in the padding or past any edge with zeros: padding, ragged edges and
// C % 64 != 0 need no code. The B tile is a 3-D copy of the weight viewed
// as [O, KH * KW, C] at (c0, tap, n0). Rows of a tile past its box or
// past the output's edges are computed and not stored.
//
// Dims<S> and the shape struct S are kiln_conv.cuh's.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_conv.cuh"
#include "kiln_gemm_sm90.cuh"

namespace kiln::conv {

/// The pixel box of a tile: images, rows and columns of output pixels.
template <typename S, int kNb, int kHb, int kWb> struct PixelTiles {
  static_assert(kNb * kHb * kWb <= sm90::kBM, "a pixel tile is at most 128 pixels");
  static constexpr int kTilesW = (S::OW + kWb - 1) / kWb;
  static constexpr int kTilesH = (S::OH + kHb - 1) / kHb;
  static constexpr int kTilesN = (S::N + kNb - 1) / kNb;
  static constexpr int kTiles = kTilesN * kTilesH * kTilesW;
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

template <typename S, int kNb, int kHb, int kWb> struct ConvOperands {
  using P = PixelTiles<S, kNb, kHb, kWb>;
  static_assert(S::G == 1, "conv_wgmma takes one group");
  static constexpr int kChannelBlocks = (S::C + sm90::kBK - 1) / sm90::kBK;
  static constexpr int kTileRows = sm90::kBM;
  static constexpr unsigned kBytesA = kNb * kHb * kWb * sm90::kBK * 2;
  static constexpr int kEpilogueRows = sm90::kEpilogueRows;
  /// A tile row's output pixel takes divisions to find: each lane finds one
  /// per tile and the epilogue shuffles it to the warp (computed per row,
  /// the indices of eight rows spill 192-wide tiles).
  static constexpr bool kRowsByShuffle = true;
  /// The weight is [Cout, taps, C]: K-major.
  static constexpr bool kTransB = false;
  const sm90::TensorMap &input, &weight;

  template <typename T>
  static __device__ __forceinline__ unsigned long long b_descriptor(const T *b, int kk) {
    return sm90::descriptor(b + kk * 16);
  }

  __device__ __forceinline__ int tiles_m() const { return P::kTiles; }
  __device__ __forceinline__ int k_tiles() const { return S::KH * S::KW * kChannelBlocks; }
  __device__ __forceinline__ void load_a(void *dst, int tileM, int k,
                                         unsigned long long *bar) const {
    const int tw = tileM % P::kTilesW, th = (tileM / P::kTilesW) % P::kTilesH,
              tn = tileM / (P::kTilesW * P::kTilesH);
    const int tap = k / kChannelBlocks, c0 = (k % kChannelBlocks) * sm90::kBK;
    const int kh = tap / S::KW, kw = tap % S::KW;
    sm90::tma_load_4d(dst, input, c0, tw * kWb * S::SW - S::PL + kw * S::DW,
                      th * kHb * S::SH - S::PT + kh * S::DH, tn * kNb, bar);
  }
  __device__ __forceinline__ void load_b(void *dst, int /*tileM*/, int blockN, int k,
                                         unsigned long long *bar) const {
    const int tap = k / kChannelBlocks, c0 = (k % kChannelBlocks) * sm90::kBK;
    sm90::tma_load_3d(dst, weight, c0, tap, blockN, bar);
  }
  __device__ __forceinline__ void load_b_multicast(void *dst, int blockN, int k,
                                                   unsigned long long *bar,
                                                   unsigned short blocks) const {
    const int tap = k / kChannelBlocks, c0 = (k % kChannelBlocks) * sm90::kBK;
    sm90::tma_load_3d_multicast(dst, weight, c0, tap, blockN, bar, blocks);
  }
  /// Row r of the tile is pixel (r / (kHb kWb), r / kWb % kHb, r % kWb) of
  /// its box; -1 past the box or the output.
  __device__ __forceinline__ int row(int tileM, int r) const {
    const int tw = tileM % P::kTilesW, th = (tileM / P::kTilesW) % P::kTilesH,
              tn = tileM / (P::kTilesW * P::kTilesH);
    const int ow = tw * kWb + r % kWb, oh = th * kHb + (r / kWb) % kHb,
              n = tn * kNb + r / (kWb * kHb);
    if (r >= kNb * kHb * kWb || ow >= S::OW || oh >= S::OH || n >= S::N)
      return -1;
    return (n * S::OH + oh) * S::OW + ow;
  }
  __device__ __forceinline__ int clamp_row(int m) const { return max(m, 0); }
  __device__ __forceinline__ bool stores(int m) const { return m >= 0; }
};

/// A 1x1 convolution over a channel concat of two NHWC tensors (a
/// projection shortcut merged into a bottleneck's last convolution; P as
/// for kiln::conv::concat_im2col8): part 0's 64-channel k-steps, then part
/// 1's, each an A box of its own tensor map at its own strides. The weight
/// [O, 1, C0 + C1] keeps the same channel order, so a k-step's B box starts
/// at channel 64 j of part 0 or C0 + 64 j of part 1. A part's last box past
/// its channels reads zeros (TMA's fill), against which the weight's next
/// channels multiply to nothing.
template <typename S, typename P, int kNb, int kHb, int kWb>
struct ConcatConvOperands : ConvOperands<S, kNb, kHb, kWb> {
  using Base = ConvOperands<S, kNb, kHb, kWb>;
  using Tiles = PixelTiles<S, kNb, kHb, kWb>;
  static_assert(S::KH == 1 && S::KW == 1 && P::C0 + P::C1 == S::C,
                "a 1x1 convolution over both parts' channels");
  static constexpr int kBlocks0 = (P::C0 + sm90::kBK - 1) / sm90::kBK;
  static constexpr int kBlocks1 = (P::C1 + sm90::kBK - 1) / sm90::kBK;
  const sm90::TensorMap &input1;

  __device__ __forceinline__ int k_tiles() const { return kBlocks0 + kBlocks1; }
  static __device__ __forceinline__ int weight_channel(int k) {
    return k < kBlocks0 ? k * sm90::kBK : P::C0 + (k - kBlocks0) * sm90::kBK;
  }
  __device__ __forceinline__ void load_a(void *dst, int tileM, int k,
                                         unsigned long long *bar) const {
    const int tw = tileM % Tiles::kTilesW, th = (tileM / Tiles::kTilesW) % Tiles::kTilesH,
              tn = tileM / (Tiles::kTilesW * Tiles::kTilesH);
    if (k < kBlocks0)
      sm90::tma_load_4d(dst, this->input, k * sm90::kBK, tw * kWb * P::SW0, th * kHb * P::SH0,
                        tn * kNb, bar);
    else
      sm90::tma_load_4d(dst, input1, (k - kBlocks0) * sm90::kBK, tw * kWb * P::SW1,
                        th * kHb * P::SH1, tn * kNb, bar);
  }
  __device__ __forceinline__ void load_b(void *dst, int /*tileM*/, int blockN, int k,
                                         unsigned long long *bar) const {
    sm90::tma_load_3d(dst, this->weight, weight_channel(k), 0, blockN, bar);
  }
  __device__ __forceinline__ void load_b_multicast(void *dst, int blockN, int k,
                                                   unsigned long long *bar,
                                                   unsigned short blocks) const {
    sm90::tma_load_3d_multicast(dst, this->weight, weight_channel(k), 0, blockN, bar, blocks);
  }
};

template <typename S, typename P, typename T, int kBN, int kStages, sm90::Schedule kSchedule,
          int kMulticast, int kBlocksPerSM, int kNb, int kHb, int kWb, bool kStreamK = false,
          int kSplitK = 1, typename Epilogue>
__device__ __forceinline__ void conv_wgmma_concat(const sm90::TensorMap &input0,
                                                  const sm90::TensorMap &input1,
                                                  const sm90::TensorMap &weight,
                                                  const Epilogue &epilogue,
                                                  float *workspace = nullptr) {
  sm90::wgmma_mainloop<T, kBN, kStages, kSchedule, kMulticast, kBlocksPerSM, kStreamK, false,
                       kSplitK>(
      ConcatConvOperands<S, P, kNb, kHb, kWb>{{input0, weight}, input1}, S::O, epilogue,
      workspace);
}

template <typename S, typename T, int kBN, int kStages, sm90::Schedule kSchedule,
          int kMulticast, int kBlocksPerSM, int kNb, int kHb, int kWb, bool kStreamK = false,
          int kSplitK = 1, typename Epilogue>
__device__ __forceinline__ void conv_wgmma(const sm90::TensorMap &input,
                                           const sm90::TensorMap &weight,
                                           const Epilogue &epilogue,
                                           float *workspace = nullptr) {
  sm90::wgmma_mainloop<T, kBN, kStages, kSchedule, kMulticast, kBlocksPerSM, kStreamK, false,
                       kSplitK>(
      ConvOperands<S, kNb, kHb, kWb>{input, weight}, S::O, epilogue, workspace);
}

#endif // __CUDA_ARCH_FEAT_SM90_ALL

} // namespace kiln::conv
