//===- kiln_gemm_splitk.cuh - small GEMMs: 64x64 tiles, split K in a cluster ----===//
//
// For GEMMs whose 128 x 256 tiles would leave most of the GPU idle (a
// transformer layer at batch 1: 128 x 768 x 3072 is 3 such tiles). Each
// block computes a 64 x 64 tile over a slice of K with mma.sync m16n8k16
// (4 warps of 32 x 32, a 3-stage cp.async pipeline). On sm_90a the kSplit
// blocks of one tile form a thread-block cluster: each leaves its fp32
// partial tile in its shared memory, and the cluster's first block adds the
// others' through distributed shared memory and runs the epilogue, so split
// K costs no workspace and no second kernel. Elsewhere (no clusters) the
// first block of each group walks all of K and the others return.
//
// Grid: (tiles along N * kSplit, tiles along M, batch); the kernel carries
// __cluster_dims__(kSplit, 1, 1) on sm_90a. Requires K % 8 == 0 (and
// N % 8 == 0 when B is [K, N]) for 16-byte cp.async rows.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_gemm.cuh"

namespace kiln {

constexpr int kSplitBM = 64, kSplitBN = 64, kSplitBK = 32, kSplitThreads = 128, kSplitStages = 3;

__device__ __forceinline__ void cp_async16_zfill(void *shared, const void *global, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(shared)),
               "l"(global), "r"(valid ? 16 : 0));
}

/// The tile loop over operands given as 16-byte chunk addresses:
/// `chunkA(m, k)` is &A[m, k..k+7] and `chunkB(row, col)` 8 consecutive
/// elements of B in its layout ([N, K] when kBKMajor, else [K, N]), or null
/// where they are zero (past the edges, in a convolution's padding).
template <typename T, bool kBKMajor, int kSplit, typename ChunkA, typename ChunkB,
          typename Epilogue>
__device__ __forceinline__ void splitk_tile_loop(const ChunkA &chunkA, const ChunkB &chunkB,
                                                 int M, int N, int K, const Epilogue &epilogue) {
  constexpr int kRowA = kSplitBK + kPad;                        // A tile [BM][BK + pad]
  constexpr int kBRows = kBKMajor ? kSplitBN : kSplitBK;        // B tile rows
  constexpr int kRowB = kBKMajor ? kSplitBK + kPad : kSplitBN + kPad;
  constexpr int kStageElems = kSplitBM * kRowA + kBRows * kRowB;
  __shared__ __align__(128) T tiles[kSplitStages * kStageElems];

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int warpM = warp >> 1, warpN = warp & 1; // 2 x 2 warps of 32 x 32
  const int rank = blockIdx.x % kSplit;
  const int blockN = (blockIdx.x / kSplit) * kSplitBN, blockM = blockIdx.y * kSplitBM;
  const int kTiles = (K + kSplitBK - 1) / kSplitBK;
  int tBegin = 0, tEnd = kTiles;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const int per = (kTiles + kSplit - 1) / kSplit;
  tBegin = min(kTiles, rank * per);
  tEnd = min(kTiles, tBegin + per);
#else
  if (rank != 0)
    return; // no clusters: the group's first block does the whole tile
#endif

  auto load = [&](int stage, int t) {
    T *As = tiles + stage * kStageElems, *Bs = As + kSplitBM * kRowA;
    const int k0 = t * kSplitBK;
    // A: 64 rows x 4 chunks of 8; B likewise (K-major) or 32 rows x 8 chunks.
#pragma unroll
    for (int it = 0; it < 2; ++it) {
      const int c = tid + it * kSplitThreads, r = c >> 2, col = (c & 3) * 8;
      const T *from = chunkA(blockM + r, k0 + col);
      cp_async16_zfill(As + r * kRowA + col, from ? from : tiles, from != nullptr);
    }
#pragma unroll
    for (int it = 0; it < 2; ++it) {
      const int c = tid + it * kSplitThreads;
      const int r = kBKMajor ? c >> 2 : c >> 3, col = kBKMajor ? (c & 3) * 8 : (c & 7) * 8;
      const T *from = kBKMajor ? chunkB(blockN + r, k0 + col) : chunkB(k0 + r, blockN + col);
      cp_async16_zfill(Bs + r * kRowB + col, from ? from : tiles, from != nullptr);
    }
  };

  float acc[2][4][4];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        acc[i][j][r] = 0.0f;

  // Prologue: stages 0 .. kSplitStages - 2 in flight.
#pragma unroll
  for (int s = 0; s < kSplitStages - 1; ++s) {
    if (tBegin + s < tEnd)
      load(s, tBegin + s);
    asm volatile("cp.async.commit_group;\n" ::);
  }
  for (int t = tBegin; t < tEnd; ++t) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kSplitStages - 2));
    __syncthreads();
    // Refill the stage the previous iteration read.
    const int next = t + kSplitStages - 1;
    if (next < tEnd)
      load((next - tBegin) % kSplitStages, next);
    asm volatile("cp.async.commit_group;\n" ::);
    const T *As = tiles + ((t - tBegin) % kSplitStages) * kStageElems;
    const T *Bs = As + kSplitBM * kRowA;
#pragma unroll
    for (int kk = 0; kk < kSplitBK; kk += 16) {
      unsigned a[2][4], b[4][2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const T *p = As + (warpM * 32 + i * 16 + (lane & 15)) * kRowA + kk + (lane >> 4) * 8;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(a[i][0]), "=r"(a[i][1]), "=r"(a[i][2]), "=r"(a[i][3])
                     : "r"(smem_address(p)));
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if (kBKMajor) {
          const T *p = Bs + (warpN * 32 + j * 8 + (lane & 7)) * kRowB + kk + ((lane >> 3) & 1) * 8;
          asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                       : "=r"(b[j][0]), "=r"(b[j][1])
                       : "r"(smem_address(p)));
        } else {
          const T *p = Bs + (kk + (lane & 15)) * kRowB + warpN * 32 + j * 8;
          asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                       : "=r"(b[j][0]), "=r"(b[j][1])
                       : "r"(smem_address(p)));
        }
      }
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          MmaName<T>::mma(acc[i][j], a[i], b[j]);
    }
  }
  asm volatile("cp.async.wait_group 0;\n" ::);

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if (kSplit > 1) {
    // Each block's partial tile, fp32 [64][64], over its pipeline buffers.
    static_assert(kSplitBM * kSplitBN * 4 <= kSplitStages * kStageElems * (int)sizeof(T),
                  "the partial tile fits in the pipeline's shared memory");
    float *partial = reinterpret_cast<float *>(tiles);
    __syncthreads(); // every warp is done reading the last stage
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int m = warpM * 32 + i * 16 + (lane >> 2) + h * 8;
          const int n = warpN * 32 + j * 8 + (lane & 3) * 2;
          *reinterpret_cast<float2 *>(partial + m * kSplitBN + n) =
              make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        }
    // Release our partial to the cluster, acquire the others'.
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
                     : "memory");
    if (rank == 0) {
      for (int peer = 1; peer < kSplit; ++peer) {
        unsigned remote;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
                     : "=r"(remote)
                     : "r"(smem_address(partial)), "r"(peer));
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int m = warpM * 32 + i * 16 + (lane >> 2) + h * 8;
              const int n = warpN * 32 + j * 8 + (lane & 3) * 2;
              float x, y;
              asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];\n"
                           : "=f"(x), "=f"(y)
                           : "r"(remote + (unsigned)((m * kSplitBN + n) * 4)));
              acc[i][j][2 * h] += x;
              acc[i][j][2 * h + 1] += y;
            }
      }
    }
    // Peers keep their shared memory alive until the first block has read it.
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
                     : "memory");
    if (rank != 0)
      return;
  }
#endif

#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int m = blockM + warpM * 32 + i * 16 + (lane >> 2) + (r >= 2 ? 8 : 0);
        const int n = blockN + warpN * 32 + j * 8 + (lane & 3) * 2 + (r & 1);
        if (m < M && n < N)
          epilogue(m, n, acc[i][j][r]);
      }
}

/// A plain GEMM: A [M, K], B [N, K] or [K, N], both with rows of whole
/// 16-byte chunks (K % 8 == 0; N % 8 == 0 when B is [K, N]).
template <typename T, bool kBKMajor, int kSplit, typename Epilogue>
__device__ __forceinline__ void splitk_gemm(const T *__restrict__ A, const T *__restrict__ B,
                                            int M, int N, int K, const Epilogue &epilogue) {
  splitk_tile_loop<T, kBKMajor, kSplit>(
      [&](int m, int k) -> const T * {
        return m < M && k < K ? A + (long long)m * K + k : nullptr;
      },
      [&](int row, int col) -> const T * {
        if (kBKMajor)
          return row < N && col < K ? B + (long long)row * K + col : nullptr;
        return row < K && col < N ? B + (long long)row * N + col : nullptr;
      },
      M, N, K, epilogue);
}

} // namespace kiln
