//===- kiln_gemm_gemv.cuh - GEMMs of a few rows, K across a warp's lanes --===//
//
// A GEMM of at most 32 rows: a squeeze-and-excitation block's two 1x1
// convolutions on a pooled [batch, C] tensor (EfficientNet-B0 has 32 of
// them), a classifier at batch 1. There is almost no math, and a tiled
// kernel puts it all on one or two blocks: the split-K GEMM took 5-10 us a
// launch on the GPU machine where cuDNN takes about 3. Here each block owns
// one output column n (the weight's row n) and a warp per 8 rows; the lanes
// take 16-byte chunks of K, the warp sums its 8 rows' partial dot products
// with shuffles, and 8 lanes run the epilogue, a row each. Every column
// runs at once, and each thread's loads are independent: the launch pays
// one round trip for its operands, not one per k tile.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_common.cuh"

namespace kiln {

namespace gemv {
/// Rows a warp sums (its lanes hold one partial sum per row).
constexpr int kRowsPerWarp = 8;
/// Rows the kernel takes: one block of up to four warps per column.
constexpr int kMaxRows = 32;
/// Threads a block for an M-row GEMM (the code generator launches this many).
__host__ __device__ constexpr int threads(int M) {
  return 32 * ((M + kRowsPerWarp - 1) / kRowsPerWarp);
}
} // namespace gemv

/// Whether gemv_gemm takes an [kM, kK] x [N, kK]^T GEMM: 2-byte elements,
/// at most gemv::kMaxRows rows.
template <typename T, int kM, int kK> __host__ __device__ constexpr bool gemv_gemm_fits() {
  return sizeof(T) == 2 && kK > 0 && kM > 0 && kM <= gemv::kMaxRows;
}

/// sum[r] += A[m0 + r, :] . w[:] for the rows below M, each lane taking
/// K's 16-byte chunks lane, lane + 32, ... (K % 8 == 0); a warp's lanes
/// then hold partial sums of every row.
template <typename T, int kRows>
__device__ __forceinline__ void chunked_row_dots(const T *__restrict__ A,
                                                 const T *__restrict__ w, int m0, int M, int K,
                                                 int lane, float (&sum)[kRows]) {
#pragma unroll 2
  for (int c = lane; c < K / 8; c += 32) {
    const uint4 wraw = __ldg(reinterpret_cast<const uint4 *>(w + c * 8));
    const T *wv = reinterpret_cast<const T *>(&wraw);
    float wf[8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
      wf[i] = to_float(wv[i]);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (m0 + r >= M)
        break;
      const uint4 araw =
          __ldg(reinterpret_cast<const uint4 *>(A + (long long)(m0 + r) * K + c * 8));
      const T *a = reinterpret_cast<const T *>(&araw);
#pragma unroll
      for (int i = 0; i < 8; ++i)
        sum[r] = fmaf(to_float(a[i]), wf[i], sum[r]);
    }
  }
}

/// Every row's warp total, lane r keeping row r's (selects, not an indexed
/// register array, which would go to local memory).
template <int kRows> __device__ __forceinline__ float warp_row_totals(const float (&sum)[kRows]) {
  const int lane = threadIdx.x % 32;
  float mine = 0.0f;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float total = warp_sum(sum[r]);
    if (lane == r)
      mine = total;
  }
  return mine;
}

/// C[m, n] = A[m, :] . B[n, :], then epilogue(m, n, sum), for column n =
/// blockIdx.x and rows 8w .. 8w + 7 on warp w: 16-byte chunks of K a lane
/// where rows are whole chunks, else an element a lane.
template <typename T, int kM, int kK, typename Epilogue>
__device__ __forceinline__ void gemv_gemm(const T *__restrict__ A, const T *__restrict__ B,
                                          const Epilogue &epilogue) {
  static_assert(gemv_gemm_fits<T, kM, kK>(),
                "gemv_gemm takes 2-byte elements and at most 32 rows");
  constexpr int kRows = gemv::kRowsPerWarp;
  const int n = blockIdx.x, lane = threadIdx.x % 32, m0 = threadIdx.x / 32 * kRows;
  const T *column = B + (long long)n * kK;
  float sum[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    sum[r] = 0.0f;
  // Rows of K % 8 != 0 elements do not start on 16-byte boundaries (the
  // excitation convolutions of EfficientNet: K = 4 to 28): an element a
  // lane.
  if constexpr (kK % 8 != 0) {
    for (int k = lane; k < kK; k += 32) {
      const float w = to_float(column[k]);
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (m0 + r >= kM)
          break;
        sum[r] = fmaf(to_float(A[(long long)(m0 + r) * kK + k]), w, sum[r]);
      }
    }
  }
  if constexpr (kK % 8 == 0)
    chunked_row_dots<T, kRows>(A, column, m0, kM, kK, lane, sum);
  const float mine = warp_row_totals(sum);
  if (lane < kRows && m0 + lane < kM)
    epilogue(m0 + lane, n, mine);
}

} // namespace kiln
