//===- kiln_gemm_narrow.cuh - GEMMs with few columns on CUDA cores --------===//
//
// A GEMM of N <= 64 columns and K <= 128 (MobileNet's and EfficientNet's
// 1x1 convolutions of 16 to 72 channels) moves far more bytes than it does
// math: 1x1 16 -> 16 at 112 x 112, batch 32, is 205 MFLOP and 26 MB. On the
// tensor cores it is 3136 tiles of 128 x 64 x 64 for 16 x 16 of useful
// work each, every tile paying its epilogue's round trips. Here a thread
// takes whole rows: one row of A in 16-byte loads, every column's sum in
// registers, the weight [K][N] in shared memory as fp32 read four columns
// at a time (a float4 per four FMAs: a broadcast load per FMA would bound
// the loop at a quarter of the FMA rate), then the row's epilogue.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_common.cuh"

namespace kiln {

/// Whether narrow_gemm takes a [M, kK] x [kN, kK]^T GEMM: 2-byte elements,
/// rows of whole 16-byte vectors, columns in fours, the fp32 weight in 32
/// KiB of shared memory and the row's sums in at most 64 registers.
template <typename T, int kN, int kK> __host__ __device__ constexpr bool narrow_gemm_fits() {
  return sizeof(T) == 2 && kK % 8 == 0 && kK <= 128 && kN % 4 == 0 && kN <= 64 &&
         kK * kN * 4 <= 32 * 1024;
}

/// C[m, :] = A[m, :] B^T for each row m on a grid-stride loop over rows,
/// then epilogue(m, n, sum) for every column (two at a time with
/// Epilogue::kPairs): every column's value is computed before any is
/// stored, so a residual's loads are all in flight at once.
template <typename T, int kN, int kK, typename Epilogue>
__device__ __forceinline__ void narrow_gemm(const T *__restrict__ A, const T *__restrict__ B,
                                            int M, const Epilogue &epilogue) {
  static_assert(narrow_gemm_fits<T, kN, kK>(),
                "narrow_gemm takes 2-byte elements, K % 8 == 0, K <= 128, N % 4 == 0, N <= 64");
  // A short row's loads all go out at once; a longer row's one vector at a
  // time (unrolled whole, 24 x 64 spilled on sm_80; the other warps hide
  // each load).
  constexpr int kRowUnroll = kK <= 32 ? kK / 8 : 1;
  __shared__ __align__(16) float weight[kK][kN];
  // B is [N, K]: consecutive threads read consecutive k of one column.
  for (int e = threadIdx.x; e < kK * kN; e += blockDim.x)
    weight[e % kK][e / kK] = to_float(B[e]);
  __syncthreads();
  for (int m = blockIdx.x * blockDim.x + threadIdx.x; m < M; m += gridDim.x * blockDim.x) {
    float sum[kN];
#pragma unroll
    for (int n = 0; n < kN; ++n)
      sum[n] = 0.0f;
    const T *row = A + (long long)m * kK;
#pragma unroll kRowUnroll
    for (int k0 = 0; k0 < kK; k0 += 8) {
      const uint4 raw = __ldg(reinterpret_cast<const uint4 *>(row + k0));
      const T *elements = reinterpret_cast<const T *>(&raw);
#pragma unroll
      for (int kk = 0; kk < 8; ++kk) {
        const float a = to_float(elements[kk]);
#pragma unroll
        for (int n = 0; n < kN; n += 4) {
          const float4 w = *reinterpret_cast<const float4 *>(&weight[k0 + kk][n]);
          sum[n] = fmaf(a, w.x, sum[n]);
          sum[n + 1] = fmaf(a, w.y, sum[n + 1]);
          sum[n + 2] = fmaf(a, w.z, sum[n + 2]);
          sum[n + 3] = fmaf(a, w.w, sum[n + 3]);
        }
      }
    }
    if constexpr (Epilogue::kPairs) {
      typename Epilogue::Values first[kN / 2], second[kN / 2];
#pragma unroll
      for (int n = 0; n < kN; n += 2)
        epilogue.compute_pair(m, n, sum[n], sum[n + 1], first[n / 2], second[n / 2]);
#pragma unroll
      for (int n = 0; n < kN; n += 2)
        epilogue.store_pair(m, n, first[n / 2], second[n / 2]);
    } else {
      typename Epilogue::Values values[kN];
#pragma unroll
      for (int n = 0; n < kN; ++n)
        values[n] = epilogue.compute(m, n, sum[n]);
#pragma unroll
      for (int n = 0; n < kN; ++n)
        epilogue.store(m, n, values[n]);
    }
  }
}

} // namespace kiln
