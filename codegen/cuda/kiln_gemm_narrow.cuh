//===- kiln_gemm_narrow.cuh - GEMMs with few columns on CUDA cores --------===//
//
// A GEMM of a few columns and K <= 128 (MobileNet's and EfficientNet's 1x1
// convolutions of 16 to 144 channels) moves far more bytes than it does
// math: 1x1 16 -> 16 at 112 x 112, batch 32, is 205 MFLOP and 26 MB. On the
// tensor cores it is 3136 tiles of 128 x 64 x 64 for 16 x 16 of useful
// work each, every tile paying its epilogue's round trips. Here a lane
// takes whole rows: one row of A in 16-byte loads, the row's sums for up
// to 32 columns at a time in registers (the row is read again, from L1, for
// each further 32), the weight [K][N] in shared memory as fp32 read four
// columns at a time (a float4 per four FMAs: a broadcast load per FMA would
// bound the loop at a quarter of the FMA rate). The epilogue does not run
// where the sums are: a lane per row stores 32 rows a row apart per
// instruction, a sector each for 4 bytes (the first version, timed on the
// GPU machine: 1x1 16 -> 96 at 112 x 112, batch 32, 295 us against the
// tensor cores' 66). The warp passes its 32 rows' sums through shared
// memory instead, and consecutive lanes take consecutive column pairs of a
// row, so each store (and each residual load) covers whole sectors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_common.cuh"

namespace kiln {

namespace narrow {
/// Columns a pass over a row computes: a pass's sums and epilogue values
/// stay within 128 registers (four blocks of 128 threads a multiprocessor;
/// the code generator gives two passes' kernels 255).
constexpr int kColumnsPerPass = 32;
/// Threads a block (the code generator launches this many): four warps,
/// each with its own staging tile.
constexpr int kThreads = 128;
/// Shared memory the weight may take: with the four staging tiles of 32 x
/// 33 floats (16.5 KiB), within the 48 KiB of static shared memory.
constexpr int kWeightBytes = 24 * 1024;
} // namespace narrow

/// Whether narrow_gemm takes a [M, kK] x [kN, kK]^T GEMM: 2-byte elements,
/// rows of whole 16-byte vectors, columns in fours and the fp32 weight in
/// narrow::kWeightBytes of shared memory.
template <typename T, int kN, int kK> __host__ __device__ constexpr bool narrow_gemm_fits() {
  return sizeof(T) == 2 && kK % 8 == 0 && kK <= 128 && kN % 4 == 0 && kN > 0 &&
         kK * kN * 4 <= narrow::kWeightBytes;
}

/// Columns c0 .. c0 + kCols - 1 of the warp's 32 rows base .. base + 31
/// (this lane's row: base + lane, its A row at `row`): each lane's sums
/// into `stage` (a row per lane), then the epilogue with consecutive lanes
/// on consecutive columns, every value computed before any is stored, so
/// a residual's loads are all in flight at once.
template <typename T, int kN, int kK, int kCols, typename Epilogue>
__device__ __forceinline__ void narrow_columns(const T *__restrict__ row,
                                               const float (&weight)[kK][kN],
                                               float (&stage)[32][narrow::kColumnsPerPass + 1],
                                               int base, int M, int c0,
                                               const Epilogue &epilogue) {
  const int lane = threadIdx.x % 32;
  float sum[kCols];
#pragma unroll
  for (int n = 0; n < kCols; ++n)
    sum[n] = 0.0f;
  if (base + lane < M) {
    // A short row's loads all go out at once; a longer row's one vector at
    // a time (unrolled whole, 24 x 64 spilled on sm_80; the other warps
    // hide each load).
    constexpr int kRowUnroll = kK <= 32 ? kK / 8 : 1;
#pragma unroll kRowUnroll
    for (int k0 = 0; k0 < kK; k0 += 8) {
      const uint4 raw = __ldg(reinterpret_cast<const uint4 *>(row + k0));
      const T *elements = reinterpret_cast<const T *>(&raw);
#pragma unroll
      for (int kk = 0; kk < 8; ++kk) {
        const float a = to_float(elements[kk]);
        const float *w = &weight[k0 + kk][c0];
#pragma unroll
        for (int n = 0; n < kCols; n += 4) {
          const float4 w4 = *reinterpret_cast<const float4 *>(w + n);
          sum[n] = fmaf(a, w4.x, sum[n]);
          sum[n + 1] = fmaf(a, w4.y, sum[n + 1]);
          sum[n + 2] = fmaf(a, w4.z, sum[n + 2]);
          sum[n + 3] = fmaf(a, w4.w, sum[n + 3]);
        }
      }
    }
  }
  // The previous pass's reads of `stage` are done before it is overwritten;
  // a pitch of 33 keeps both the row-per-lane writes and the
  // column-per-lane reads free of bank conflicts.
  __syncwarp();
#pragma unroll
  for (int n = 0; n < kCols; ++n)
    stage[lane][n] = sum[n];
  __syncwarp();
  // Four pairs (or eight values) at a time, the chunks not unrolled: the
  // residual loads of a chunk are in flight together, and a whole pass's
  // values at once (or its unrolled chunks' indices) spilled under the
  // 128-register budget (24 to 32 columns with a GELU).
  if constexpr (Epilogue::kPairs) {
    constexpr int kPairsPerRow = kCols / 2, kChunk = 4;
#pragma unroll 1
    for (int j0 = 0; j0 < kPairsPerRow; j0 += kChunk) {
      typename Epilogue::Values first[kChunk], second[kChunk];
#pragma unroll
      for (int j = 0; j < kChunk && j0 + j < kPairsPerRow; ++j) {
        const int e = lane + 32 * (j0 + j), r = e / kPairsPerRow, n = e % kPairsPerRow * 2;
        if (base + r < M)
          epilogue.compute_pair(base + r, c0 + n, stage[r][n], stage[r][n + 1], first[j],
                                second[j]);
      }
#pragma unroll
      for (int j = 0; j < kChunk && j0 + j < kPairsPerRow; ++j) {
        const int e = lane + 32 * (j0 + j), r = e / kPairsPerRow, n = e % kPairsPerRow * 2;
        if (base + r < M)
          epilogue.store_pair(base + r, c0 + n, first[j], second[j]);
      }
    }
  } else {
    constexpr int kChunk = 8;
#pragma unroll 1
    for (int j0 = 0; j0 < kCols; j0 += kChunk) {
      typename Epilogue::Values values[kChunk];
#pragma unroll
      for (int j = 0; j < kChunk && j0 + j < kCols; ++j) {
        const int e = lane + 32 * (j0 + j), r = e / kCols, n = e % kCols;
        if (base + r < M)
          values[j] = epilogue.compute(base + r, c0 + n, stage[r][n]);
      }
#pragma unroll
      for (int j = 0; j < kChunk && j0 + j < kCols; ++j) {
        const int e = lane + 32 * (j0 + j), r = e / kCols, n = e % kCols;
        if (base + r < M)
          epilogue.store(base + r, c0 + n, values[j]);
      }
    }
  }
}

/// C[m, :] = A[m, :] B^T, then epilogue(m, n, sum) (two columns at a time
/// with Epilogue::kPairs): each warp takes 32 rows at a time on a
/// grid-stride loop, in full passes of narrow::kColumnsPerPass columns,
/// then the rest.
template <typename T, int kN, int kK, typename Epilogue>
__device__ __forceinline__ void narrow_gemm(const T *__restrict__ A, const T *__restrict__ B,
                                            int M, const Epilogue &epilogue) {
  static_assert(narrow_gemm_fits<T, kN, kK>(),
                "narrow_gemm takes 2-byte elements, K % 8 == 0, K <= 128, N % 4 == 0 and a "
                "[K][N] fp32 weight within narrow::kWeightBytes");
  constexpr int kPass = narrow::kColumnsPerPass, kFull = kN / kPass * kPass;
  constexpr int kWarps = narrow::kThreads / 32;
  __shared__ __align__(16) float weight[kK][kN];
  __shared__ float staging[kWarps][32][kPass + 1];
  // B is [N, K]: consecutive threads read consecutive k of one column.
  for (int e = threadIdx.x; e < kK * kN; e += blockDim.x)
    weight[e % kK][e / kK] = to_float(B[e]);
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // The loop's bound is the same for the whole warp: every lane takes part
  // in the staging, rows past M or not.
  for (int base = (blockIdx.x * kWarps + warp) * 32; base < M; base += gridDim.x * kWarps * 32) {
    const T *row = A + (long long)(base + lane) * kK;
#pragma unroll 1
    for (int c0 = 0; c0 < kFull; c0 += kPass)
      narrow_columns<T, kN, kK, kPass>(row, weight, staging[warp], base, M, c0, epilogue);
    if constexpr (kN % kPass != 0)
      narrow_columns<T, kN, kK, kN % kPass>(row, weight, staging[warp], base, M, kFull,
                                            epilogue);
  }
}

} // namespace kiln
