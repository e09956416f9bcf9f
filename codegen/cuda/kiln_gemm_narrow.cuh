//===- kiln_gemm_narrow.cuh - GEMMs with few columns on CUDA cores --------===//
//
// A GEMM of a few columns and K <= 128 (MobileNet's and EfficientNet's 1x1
// convolutions of 16 to 144 channels) moves far more bytes than it does
// math: 1x1 16 -> 16 at 112 x 112, batch 32, is 205 MFLOP and 26 MB. On the
// tensor cores it is 3136 tiles of 128 x 64 x 64 for 16 x 16 of useful
// work each, every tile paying its epilogue's round trips. Here a thread
// takes whole rows: one row of A in 16-byte loads, the row's sums for up
// to 32 columns at a time in registers (the row is read again, from L1, for
// each further 32), the weight [K][N] in shared memory as fp32 read four
// columns at a time (a float4 per four FMAs: a broadcast load per FMA would
// bound the loop at a quarter of the FMA rate), then those columns'
// epilogue.
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
} // namespace narrow

/// Whether narrow_gemm takes a [M, kK] x [kN, kK]^T GEMM: 2-byte elements,
/// rows of whole 16-byte vectors, columns in fours and the fp32 weight in
/// 32 KiB of shared memory.
template <typename T, int kN, int kK> __host__ __device__ constexpr bool narrow_gemm_fits() {
  return sizeof(T) == 2 && kK % 8 == 0 && kK <= 128 && kN % 4 == 0 && kN > 0 &&
         kK * kN * 4 <= 32 * 1024;
}

/// Columns c0 .. c0 + kCols - 1 of row m: the sums, then every column's
/// epilogue value before any is stored, so a residual's loads are all in
/// flight at once.
template <typename T, int kN, int kK, int kCols, typename Epilogue>
__device__ __forceinline__ void narrow_columns(const T *__restrict__ row,
                                               const float (&weight)[kK][kN], int m, int c0,
                                               const Epilogue &epilogue) {
  float sum[kCols];
#pragma unroll
  for (int n = 0; n < kCols; ++n)
    sum[n] = 0.0f;
  // A short row's loads all go out at once; a longer row's one vector at a
  // time (unrolled whole, 24 x 64 spilled on sm_80; the other warps hide
  // each load).
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
  if constexpr (Epilogue::kPairs) {
    typename Epilogue::Values first[kCols / 2], second[kCols / 2];
#pragma unroll
    for (int n = 0; n < kCols; n += 2)
      epilogue.compute_pair(m, c0 + n, sum[n], sum[n + 1], first[n / 2], second[n / 2]);
#pragma unroll
    for (int n = 0; n < kCols; n += 2)
      epilogue.store_pair(m, c0 + n, first[n / 2], second[n / 2]);
  } else {
    typename Epilogue::Values values[kCols];
#pragma unroll
    for (int n = 0; n < kCols; ++n)
      values[n] = epilogue.compute(m, c0 + n, sum[n]);
#pragma unroll
    for (int n = 0; n < kCols; ++n)
      epilogue.store(m, c0 + n, values[n]);
  }
}

/// C[m, :] = A[m, :] B^T, then epilogue(m, n, sum) (two columns at a time
/// with Epilogue::kPairs), for each row m on a grid-stride loop over rows:
/// full passes of narrow::kColumnsPerPass columns, then the rest.
template <typename T, int kN, int kK, typename Epilogue>
__device__ __forceinline__ void narrow_gemm(const T *__restrict__ A, const T *__restrict__ B,
                                            int M, const Epilogue &epilogue) {
  static_assert(narrow_gemm_fits<T, kN, kK>(),
                "narrow_gemm takes 2-byte elements, K % 8 == 0, K <= 128, N % 4 == 0 and a "
                "[K][N] fp32 weight within 32 KiB");
  constexpr int kPass = narrow::kColumnsPerPass, kFull = kN / kPass * kPass;
  __shared__ __align__(16) float weight[kK][kN];
  // B is [N, K]: consecutive threads read consecutive k of one column.
  for (int e = threadIdx.x; e < kK * kN; e += blockDim.x)
    weight[e % kK][e / kK] = to_float(B[e]);
  __syncthreads();
  for (int m = blockIdx.x * blockDim.x + threadIdx.x; m < M; m += gridDim.x * blockDim.x) {
    const T *row = A + (long long)m * kK;
#pragma unroll 1
    for (int c0 = 0; c0 < kFull; c0 += kPass)
      narrow_columns<T, kN, kK, kPass>(row, weight, m, c0, epilogue);
    if constexpr (kN % kPass != 0)
      narrow_columns<T, kN, kK, kN % kPass>(row, weight, m, kFull, epilogue);
  }
}

} // namespace kiln
