//===- kiln_gemm.cuh - GEMM main loops with a caller-supplied epilogue ----===//
//
// C[m, n] = sum_k A[m, k] * B(k, n), fp32 accumulation, then
// epilogue(m, n, acc) for every in-bounds element (the tensor-core loops
// through its compute() and store(), many elements' computes first); the
// generated kernel's epilogue applies bias, activation, residual and casts
// and stores.
//
//   A: row-major [M, K] (K contiguous).
//   B: `kBKMajor` true:  [N, K], K contiguous (nn.Linear's weight);
//      `kBKMajor` false: [K, N], N contiguous (matmul's right operand).
//
// mma_gemm (fp16/bf16): 128x128x32 block tiles, 8 warps of 64x32, mma.sync
// m16n8k16 fed by ldmatrix from padded shared memory (no bank conflicts);
// tiles are staged through registers so global loads of tile k+1 overlap the
// math of tile k. Any M, N, K: out-of-range elements load as zero.
// simt_gemm (fp32): 64x64x16 tiles, 4x4 outputs per thread, FMA.
// tf32_gemm (fp32 data, tf32 math): the same tiles on mma.sync m16n8k8.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_common.cuh"
#include "kiln_ptx.cuh"

namespace kiln {

template <typename T> struct MmaName;
template <> struct MmaName<__half> {
  static __device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4],
                                             const unsigned (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
template <> struct MmaName<__nv_bfloat16> {
  static __device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4],
                                             const unsigned (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

constexpr int kMmaBM = 128, kMmaBN = 128, kMmaBK = 32, kMmaThreads = 256;
constexpr int kPad = 8; // halves of padding per shared row: 16 bytes

/// 8 consecutive elements of row `row` from column `col` of a row-major
/// [rows, cols] matrix, zero-filled past its edges; one 16-byte load when the
/// whole vector is inside and aligned.
template <typename T>
__device__ __forceinline__ uint4 load8(const T *base, int rows, int cols,
                                       int row, int col) {
  uint4 v = make_uint4(0, 0, 0, 0);
  if (row >= rows)
    return v;
  const T *p = base + (long long)row * cols + col;
  if (col + 8 <= cols && (reinterpret_cast<unsigned long long>(p) & 15) == 0)
    return *reinterpret_cast<const uint4 *>(p);
  T *e = reinterpret_cast<T *>(&v);
#pragma unroll
  for (int i = 0; i < 8; ++i)
    if (col + i < cols)
      e[i] = p[i];
  return v;
}

/// The tile loop over operands given as loaders: `loadA(m, k)` returns the 8
/// elements A[m, k..k+7] and `loadB(row, col)` 8 consecutive elements of B
/// in its memory layout ([N, K] when kBKMajor, else [K, N]), zero past the
/// edges. Plain GEMMs load with load8; convolutions gather im2col rows.
template <typename T, bool kBKMajor, int kEpilogueBatch = 4, typename LoadA, typename LoadB,
          typename Epilogue>
__device__ __forceinline__ void mma_tile_loop(const LoadA &loadA, const LoadB &loadB,
                                              int M, int N, int K,
                                              const Epilogue &epilogue,
                                              const int blockM, const int blockN) {
  // A tile [BM][BK], B tile [BN][BK] (K-major) or [BK][BN] (N-major).
  __shared__ __align__(16) T As[kMmaBM][kMmaBK + kPad];
  __shared__ __align__(16) T Bs[kBKMajor ? kMmaBN : kMmaBK]
                                [kBKMajor ? kMmaBK + kPad : kMmaBN + kPad];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int warpM = warp >> 2, warpN = warp & 3; // 2 x 4 warps

  float acc[4][4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        acc[i][j][r] = 0.0f;

  // Each thread stages two 8-element vectors of A and two of B per tile.
  uint4 aStage[2], bStage[2];
  auto fetch = [&](int k0) {
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      int v = tid + s * kMmaThreads; // 512 vectors per tile
      int r = v / (kMmaBK / 8), c = (v % (kMmaBK / 8)) * 8;
      aStage[s] = loadA(blockM + r, k0 + c);
      if (kBKMajor) {
        bStage[s] = loadB(blockN + r, k0 + c);
      } else {
        int rk = v / (kMmaBN / 8), cn = (v % (kMmaBN / 8)) * 8;
        bStage[s] = loadB(k0 + rk, blockN + cn);
      }
    }
  };
  auto commit = [&]() {
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      int v = tid + s * kMmaThreads;
      int r = v / (kMmaBK / 8), c = (v % (kMmaBK / 8)) * 8;
      *reinterpret_cast<uint4 *>(&As[r][c]) = aStage[s];
      if (kBKMajor) {
        *reinterpret_cast<uint4 *>(&Bs[r][c]) = bStage[s];
      } else {
        int rk = v / (kMmaBN / 8), cn = (v % (kMmaBN / 8)) * 8;
        *reinterpret_cast<uint4 *>(&Bs[rk][cn]) = bStage[s];
      }
    }
  };

  // Launched with more than kMmaThreads threads (the sm_90a variant of the
  // same kernel uses 384), the extra warps only take part in the barriers.
  const bool worker = tid < kMmaThreads;
  if (worker)
    fetch(0);
  for (int k0 = 0; k0 < K; k0 += kMmaBK) {
    __syncthreads(); // the previous tile's readers are done
    if (worker)
      commit();
    __syncthreads();
    if (!worker)
      continue;
    if (k0 + kMmaBK < K)
      fetch(k0 + kMmaBK); // in flight during the math below
#pragma unroll
    for (int kk = 0; kk < kMmaBK; kk += 16) {
      unsigned a[4][4], b[4][2];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const T *p = &As[warpM * 64 + i * 16 + (lane & 15)][kk + (lane >> 4) * 8];
        ldmatrix_x4(a[i], p);
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if (kBKMajor) {
          const T *p = &Bs[warpN * 32 + j * 8 + (lane & 7)][kk + ((lane >> 3) & 1) * 8];
          ldmatrix_x2(b[j], p);
        } else {
          const T *p = &Bs[kk + (lane & 15)][warpN * 32 + j * 8];
          ldmatrix_x2_trans(b[j], p);
        }
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          MmaName<T>::mma(acc[i][j], a[i], b[j]);
    }
  }

  // Accumulator layout of m16n8: lane/4 is the row (+8 for regs 2, 3),
  // 2*(lane%4) the column pair.
  if (!worker)
    return;
  // kEpilogueBatch x 4 elements of a row block (16 by default) are computed
  // before any is stored: a store between two of the epilogue's loads (a
  // residual, a bias) would keep them in order, each waiting out the memory
  // latency alone. Kernels launched with 384 threads (168 registers) batch
  // fewer.
  auto rowOf = [&](int i, int r) {
    return blockM + warpM * 64 + i * 16 + (lane >> 2) + (r >= 2 ? 8 : 0);
  };
  auto columnOf = [&](int j, int r) {
    return blockN + warpN * 32 + j * 8 + (lane & 3) * 2 + (r & 1);
  };
  static_assert(4 % kEpilogueBatch == 0, "batches of 1, 2 or 4 column blocks");
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j0 = 0; j0 < 4; j0 += kEpilogueBatch) {
      typename Epilogue::Values values[kEpilogueBatch][4];
#pragma unroll
      for (int j = j0; j < j0 + kEpilogueBatch; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          if (rowOf(i, r) < M && columnOf(j, r) < N)
            values[j - j0][r] = epilogue.compute(rowOf(i, r), columnOf(j, r), acc[i][j][r]);
#pragma unroll
      for (int j = j0; j < j0 + kEpilogueBatch; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          if (rowOf(i, r) < M && columnOf(j, r) < N)
            epilogue.store(rowOf(i, r), columnOf(j, r), values[j - j0][r]);
    }
}

template <typename T, bool kBKMajor, typename Epilogue>
__device__ __forceinline__ void mma_gemm_tile(const T *__restrict__ A,
                                              const T *__restrict__ B, int M, int N,
                                              int K, const Epilogue &epilogue,
                                              const int blockM, const int blockN) {
  mma_tile_loop<T, kBKMajor>(
      [&](int row, int col) { return load8(A, M, K, row, col); },
      [&](int row, int col) {
        return kBKMajor ? load8(B, N, K, row, col) : load8(B, K, N, row, col);
      },
      M, N, K, epilogue, blockM, blockN);
}

/// One 128 x 128 tile per block, on a grid of (N tiles, M tiles, batch).
template <typename T, bool kBKMajor, typename Epilogue>
__device__ __forceinline__ void mma_gemm(const T *__restrict__ A,
                                         const T *__restrict__ B, int M, int N,
                                         int K, const Epilogue &epilogue) {
  mma_gemm_tile<T, kBKMajor>(A, B, M, N, K, epilogue, blockIdx.y * kMmaBM,
                             blockIdx.x * kMmaBN);
}

/// Persistent form for a 1-D grid (the launch shape of the sm_90a kernel
/// this is the fallback of): the block walks tiles blockIdx.x, +gridDim.x, ...
template <typename T, bool kBKMajor, typename Epilogue>
__device__ __forceinline__ void mma_gemm_persistent(const T *__restrict__ A,
                                                    const T *__restrict__ B, int M,
                                                    int N, int K,
                                                    const Epilogue &epilogue) {
  const int tilesN = (N + kMmaBN - 1) / kMmaBN;
  const int tiles = ((M + kMmaBM - 1) / kMmaBM) * tilesN;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x)
    mma_gemm_tile<T, kBKMajor>(A, B, M, N, K, epilogue, (tile / tilesN) * kMmaBM,
                               (tile % tilesN) * kMmaBN);
}

constexpr int kSimtBM = 64, kSimtBN = 64, kSimtBK = 16, kSimtThreads = 256;

/// The SIMT tile loop over loaders: `loadA(m, k)` and `loadB(n, k)` return
/// one element (in range; the loop checks the bounds). `kBKMajor` only picks
/// the order in which B is walked, for coalescing.
template <bool kBKMajor, typename LoadA, typename LoadB, typename Epilogue>
__device__ __forceinline__ void simt_tile_loop(const LoadA &loadA, const LoadB &loadB,
                                               int M, int N, int K,
                                               const Epilogue &epilogue) {
  __shared__ float As[kSimtBK][kSimtBM + 1];
  __shared__ float Bs[kSimtBK][kSimtBN + 1];
  const int tid = threadIdx.x;
  const int tm = (tid / 16) * 4, tn = (tid % 16) * 4;
  const int blockM = blockIdx.y * kSimtBM, blockN = blockIdx.x * kSimtBN;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += kSimtBK) {
    for (int e = tid; e < kSimtBK * kSimtBM; e += kSimtThreads) {
      int k = e % kSimtBK, m = e / kSimtBK;
      int gm = blockM + m, gk = k0 + k;
      As[k][m] = (gm < M && gk < K) ? loadA(gm, gk) : 0.0f;
    }
    for (int e = tid; e < kSimtBK * kSimtBN; e += kSimtThreads) {
      int k, n;
      if (kBKMajor) { k = e % kSimtBK; n = e / kSimtBK; }
      else { n = e % kSimtBN; k = e / kSimtBN; }
      int gn = blockN + n, gk = k0 + k;
      float v = 0.0f;
      if (gn < N && gk < K)
        v = loadB(gn, gk);
      Bs[k][n] = v;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kSimtBK; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        a[i] = As[k][tm + i];
        b[i] = Bs[k][tn + i];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      int m = blockM + tm + i, n = blockN + tn + j;
      if (m < M && n < N)
        epilogue(m, n, acc[i][j]);
    }
}

template <bool kBKMajor, typename Epilogue>
__device__ __forceinline__ void simt_gemm(const float *__restrict__ A,
                                          const float *__restrict__ B, int M,
                                          int N, int K, const Epilogue &epilogue) {
  simt_tile_loop<kBKMajor>(
      [&](int m, int k) { return A[(long long)m * K + k]; },
      [&](int n, int k) {
        return kBKMajor ? B[(long long)n * K + k] : B[(long long)k * N + n];
      },
      M, N, K, epilogue);
}

/// tf32 tensor cores on fp32 data (`--precision tf32`): the SIMT loop's
/// 64x64x16 block tile and loaders, the operands rounded to tf32 as they
/// land in shared memory, and mma.sync m16n8k8 with fp32 accumulation:
/// 8 warps as 4 x 2, each 16 rows x 32 columns (four n8 tiles).
__device__ __forceinline__ float round_to_tf32(float x) {
  unsigned bits;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(bits) : "f"(x));
  return __uint_as_float(bits);
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4],
                                         const unsigned (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <bool kBKMajor, typename LoadA, typename LoadB, typename Epilogue>
__device__ __forceinline__ void tf32_tile_loop(const LoadA &loadA, const LoadB &loadB,
                                               int M, int N, int K,
                                               const Epilogue &epilogue) {
  // A pitch of 72 floats puts a fragment's 32 reads (4 k rows x 8
  // columns) in 32 banks.
  __shared__ float As[kSimtBK][kSimtBM + 8];
  __shared__ float Bs[kSimtBK][kSimtBN + 8];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int group = lane >> 2, inGroup = lane & 3;
  const int warpM = (warp >> 1) * 16, warpN = (warp & 1) * 32;
  const int blockM = blockIdx.y * kSimtBM, blockN = blockIdx.x * kSimtBN;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += kSimtBK) {
    for (int e = tid; e < kSimtBK * kSimtBM; e += kSimtThreads) {
      int k = e % kSimtBK, m = e / kSimtBK;
      int gm = blockM + m, gk = k0 + k;
      As[k][m] = round_to_tf32((gm < M && gk < K) ? loadA(gm, gk) : 0.0f);
    }
    for (int e = tid; e < kSimtBK * kSimtBN; e += kSimtThreads) {
      int k, n;
      if (kBKMajor) { k = e % kSimtBK; n = e / kSimtBK; }
      else { n = e % kSimtBN; k = e / kSimtBN; }
      int gn = blockN + n, gk = k0 + k;
      Bs[k][n] = round_to_tf32((gn < N && gk < K) ? loadB(gn, gk) : 0.0f);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kSimtBK; kk += 8) {
      unsigned a[4];
      a[0] = __float_as_uint(As[kk + inGroup][warpM + group]);
      a[1] = __float_as_uint(As[kk + inGroup][warpM + group + 8]);
      a[2] = __float_as_uint(As[kk + inGroup + 4][warpM + group]);
      a[3] = __float_as_uint(As[kk + inGroup + 4][warpM + group + 8]);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        unsigned b[2];
        b[0] = __float_as_uint(Bs[kk + inGroup][warpN + j * 8 + group]);
        b[1] = __float_as_uint(Bs[kk + inGroup + 4][warpN + j * 8 + group]);
        mma_tf32(acc[j], a, b);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      int m = blockM + warpM + group + (r >= 2 ? 8 : 0);
      int n = blockN + warpN + j * 8 + inGroup * 2 + (r & 1);
      if (m < M && n < N)
        epilogue(m, n, acc[j][r]);
    }
}

template <bool kBKMajor, typename Epilogue>
__device__ __forceinline__ void tf32_gemm(const float *__restrict__ A,
                                          const float *__restrict__ B, int M,
                                          int N, int K, const Epilogue &epilogue) {
  tf32_tile_loop<kBKMajor>(
      [&](int m, int k) { return A[(long long)m * K + k]; },
      [&](int n, int k) {
        return kBKMajor ? B[(long long)n * K + k] : B[(long long)k * N + n];
      },
      M, N, K, epilogue);
}

} // namespace kiln
