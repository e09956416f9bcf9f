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
// tf32_gemm (fp32 data, tf32 math): 128x128x16 tiles on mma.sync m16n8k8.
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

/// The pooled Hopper GEMM's fallback (kiln_gemm_sm90.cuh's
/// wgmma_gemm_pooled) on its grid: a thread an (image, column) of the
/// pool, each pixel's dot product and epilogue on CUDA cores. Slow, for
/// the images of GPUs other than the one the kernel was chosen for; the
/// sums match the Hopper kernel's (each element rounded to its type, then
/// added in fp32).
template <typename T, typename Epilogue>
__device__ __forceinline__ void pooled_gemm_fallback(const T *__restrict__ A,
                                                     const T *__restrict__ B, int M, int N,
                                                     int K, const Epilogue &epilogue) {
  constexpr int kPixels = Epilogue::kPoolPixels;
  const long long outputs = static_cast<long long>(M / kPixels) * N;
  for (long long o = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; o < outputs;
       o += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int image = static_cast<int>(o / N), n = static_cast<int>(o % N);
    float sum = 0.0f;
    for (int p = 0; p < kPixels; ++p) {
      const int m = image * kPixels + p;
      float acc = 0.0f;
      for (int k = 0; k < K; ++k)
        acc += to_float(A[static_cast<long long>(m) * K + k]) *
               to_float(B[static_cast<long long>(n) * K + k]);
      sum += epilogue.pool_value(m, n, acc);
    }
    epilogue.pool_store(image, n, sum);
  }
}

/// The Hopper matmul's fallback over `batches` matrices on its 1-D grid:
/// tile t of batch t / (its tiles a batch), the operands at `offsets(z,
/// aOffset, bOffset)` and the results at batchBase z * M * N.
template <typename T, bool kBKMajor, typename Offsets, typename Epilogue>
__device__ __forceinline__ void mma_gemm_persistent_batched(const T *__restrict__ A,
                                                            const T *__restrict__ B, int M,
                                                            int N, int K, int batches,
                                                            const Offsets &offsets,
                                                            const Epilogue &epilogue) {
  const int tilesN = (N + kMmaBN - 1) / kMmaBN;
  const int tiles = ((M + kMmaBM - 1) / kMmaBM) * tilesN;
  for (long long t = blockIdx.x; t < static_cast<long long>(tiles) * batches; t += gridDim.x) {
    const int z = static_cast<int>(t / tiles), tile = static_cast<int>(t % tiles);
    long long aOffset, bOffset;
    offsets(static_cast<long long>(z), aOffset, bOffset);
    Epilogue batchEpilogue = epilogue;
    batchEpilogue.batchBase = static_cast<long long>(z) * M * N;
    mma_gemm_tile<T, kBKMajor>(A + aOffset, B + bOffset, M, N, K, batchEpilogue,
                               (tile / tilesN) * kMmaBM, (tile % tilesN) * kMmaBN);
  }
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

/// tf32 tensor cores on fp32 data (`--precision tf32`): 128x128 block
/// tiles, k tiles of 16, 8 warps as 2 x 4, each 64 rows x 32 columns (4 x 4
/// mma.sync m16n8k8 per 8 of k, fp32 accumulation). The operands round to
/// tf32 in registers on their way to shared memory; the next k tile's
/// global loads (16 bytes at a time where the contiguous size is a multiple
/// of 4) are in flight while this one computes.

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

/// Four consecutive elements of a row-major [rows, length] matrix from
/// (row, at), zero past its edges, rounded to tf32; one 16-byte load when
/// `vector` (length % 4 == 0) and the four are inside.
__device__ __forceinline__ float4 load4_tf32(const float *__restrict__ base, int rows,
                                             int length, int row, int at, bool vector) {
  float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  if (row < rows) {
    const float *p = base + (long long)row * length + at;
    if (vector && at + 3 < length) {
      float4 q = __ldg(reinterpret_cast<const float4 *>(p));
      v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (at + j < length)
          v[j] = p[j];
    }
  }
  return make_float4(round_to_tf32(v[0]), round_to_tf32(v[1]), round_to_tf32(v[2]),
                     round_to_tf32(v[3]));
}

template <bool kBKMajor, typename Epilogue>
__device__ __forceinline__ void tf32_gemm(const float *__restrict__ A,
                                          const float *__restrict__ B, int M, int N,
                                          int K, const Epilogue &epilogue) {
  // Local, not at namespace scope: there NVRTC gives every module that
  // includes this header a global for each.
  constexpr int kTf32BM = 128, kTf32BN = 128, kTf32BK = 16, kTf32Threads = 256;
  // k-major tiles at a pitch of 136 floats: a fragment's 32 reads (4 k rows
  // x 8 columns) fall in 32 banks.
  __shared__ __align__(16) float As[kTf32BK][kTf32BM + 8];
  __shared__ __align__(16) float Bs[kTf32BK][kTf32BN + 8];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int group = lane >> 2, inGroup = lane & 3;
  const int warpM = (warp >> 2) * 64, warpN = (warp & 3) * 32;
  const int blockM = blockIdx.y * kTf32BM, blockN = blockIdx.x * kTf32BN;
  const bool vectorK = (K & 3) == 0, vectorN = (N & 3) == 0;
  float4 stageA[2], stageB[2];
  // A (and a [N, K] B): 128 rows x 16 of k, four of k per thread and load.
  // A [K, N] B: 16 rows of k x 128 columns, four columns per load.
  auto load = [&](int k0) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int idx = tid + i * kTf32Threads;
      stageA[i] = load4_tf32(A, M, K, blockM + (idx >> 2), k0 + (idx & 3) * 4, vectorK);
      if (kBKMajor)
        stageB[i] = load4_tf32(B, N, K, blockN + (idx >> 2), k0 + (idx & 3) * 4, vectorK);
      else
        stageB[i] = load4_tf32(B, K, N, k0 + (idx >> 5), blockN + (idx & 31) * 4, vectorN);
    }
  };
  auto store = [&]() {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int idx = tid + i * kTf32Threads;
      const int r = idx >> 2, kq = (idx & 3) * 4;
      As[kq][r] = stageA[i].x;
      As[kq + 1][r] = stageA[i].y;
      As[kq + 2][r] = stageA[i].z;
      As[kq + 3][r] = stageA[i].w;
      if (kBKMajor) {
        Bs[kq][r] = stageB[i].x;
        Bs[kq + 1][r] = stageB[i].y;
        Bs[kq + 2][r] = stageB[i].z;
        Bs[kq + 3][r] = stageB[i].w;
      } else {
        *reinterpret_cast<float4 *>(&Bs[idx >> 5][(idx & 31) * 4]) = stageB[i];
      }
    }
  };
  float acc[4][4][4] = {};
  load(0);
  for (int k0 = 0; k0 < K; k0 += kTf32BK) {
    store();
    __syncthreads();
    if (k0 + kTf32BK < K)
      load(k0 + kTf32BK);
#pragma unroll
    for (int kk = 0; kk < kTf32BK; kk += 8) {
      unsigned a[4][4], b[4][2];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int m = warpM + i * 16 + group;
        a[i][0] = __float_as_uint(As[kk + inGroup][m]);
        a[i][1] = __float_as_uint(As[kk + inGroup][m + 8]);
        a[i][2] = __float_as_uint(As[kk + inGroup + 4][m]);
        a[i][3] = __float_as_uint(As[kk + inGroup + 4][m + 8]);
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int n = warpN + j * 8 + group;
        b[j][0] = __float_as_uint(Bs[kk + inGroup][n]);
        b[j][1] = __float_as_uint(Bs[kk + inGroup + 4][n]);
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          mma_tf32(acc[i][j], a[i], b[j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int m = blockM + warpM + i * 16 + group + (r >= 2 ? 8 : 0);
        const int n = blockN + warpN + j * 8 + inGroup * 2 + (r & 1);
        if (m < M && n < N)
          epilogue(m, n, acc[i][j][r]);
      }
}

} // namespace kiln
