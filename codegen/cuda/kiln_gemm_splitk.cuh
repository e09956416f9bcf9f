//===- kiln_gemm_splitk.cuh - small GEMMs: 64x64 tiles, split K in a cluster ----===//
//
// For GEMMs whose 128 x 256 tiles would leave most of the GPU idle (a
// transformer layer at batch 1: 128 x 768 x 3072 is 3 such tiles). Each
// block computes a 64 x 64 tile over a slice of K with mma.sync m16n8k16
// (4 warps of 32 x 32, a kStages-deep cp.async pipeline of kBK-wide k
// tiles in dynamic shared memory: splitk_shared_bytes()). On sm_90a the kSplit
// blocks of one tile form a thread-block cluster: each leaves its fp32
// partial tile in its shared memory, then each block adds up 64 / kSplit
// rows of all of them through distributed shared memory and runs their
// epilogue, so split K costs no workspace and no second kernel. Elsewhere
// (no clusters) the first block of each group walks all of K and the others
// return.
//
// Grid: (tiles along N * kSplit, tiles along M, batch); the kernel carries
// __cluster_dims__(kSplit, 1, 1) on sm_90a. Requires K % 8 == 0 (and
// N % 8 == 0 when B is [K, N]) for 16-byte cp.async rows.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_gemm.cuh"

namespace kiln {

constexpr int kSplitBM = 64, kSplitBN = 64, kSplitThreads = 128;
constexpr int kPartialPitch = kSplitBN + 4; // floats per row of a partial tile

/// Halves of one pipeline stage: the A tile [BM][BK + pad] and the B tile,
/// [BN][BK + pad] when K-major, else [BK][BN + pad].
template <bool kBKMajor, int kBK>
__host__ __device__ constexpr int splitk_stage_elems() {
  return kSplitBM * (kBK + kPad) + (kBKMajor ? kSplitBN * (kBK + kPad) : kBK * (kSplitBN + kPad));
}

/// The dynamic shared memory a launch must give the kernel: the pipeline,
/// which the fp32 partial tile reuses after the main loop.
template <typename T, bool kBKMajor, int kBK, int kStages>
__host__ __device__ constexpr int splitk_shared_bytes() {
  return kStages * splitk_stage_elems<kBKMajor, kBK>() * (int)sizeof(T) >
                 kSplitBM * kPartialPitch * (int)sizeof(float)
             ? kStages * splitk_stage_elems<kBKMajor, kBK>() * (int)sizeof(T)
             : kSplitBM * kPartialPitch * (int)sizeof(float);
}

/// The tile loop over operands given as 16-byte chunk addresses:
/// `chunkA(m, k)` is &A[m, k..k+7] and `chunkB(row, col)` 8 consecutive
/// elements of B in its layout ([N, K] when kBKMajor, else [K, N]), or null
/// where they are zero (past the edges, in a convolution's padding).
template <typename T, bool kBKMajor, int kSplit, int kBK, int kStages, typename ChunkA,
          typename ChunkB, typename Epilogue>
__device__ __forceinline__ void splitk_tile_loop(const ChunkA &chunkA, const ChunkB &chunkB,
                                                 int M, int N, int K, const Epilogue &epilogue) {
  static_assert(kBK % 16 == 0 && kStages >= 2, "whole mma k-steps, a pipeline");
  constexpr int kRowA = kBK + kPad;
  constexpr int kRowB = kBKMajor ? kBK + kPad : kSplitBN + kPad;
  constexpr int kStageElems = splitk_stage_elems<kBKMajor, kBK>();
  // A deep pipeline of wide k tiles outgrows the 48 KiB of static shared
  // memory: at batch 1 the blocks are few and latency-bound, and bytes in
  // flight per block are what set their pace.
  extern __shared__ __align__(128) unsigned char kiln_splitk_shared[];
  T *tiles = reinterpret_cast<T *>(kiln_splitk_shared);

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int warpM = warp >> 1, warpN = warp & 1; // 2 x 2 warps of 32 x 32
  const int rank = blockIdx.x % kSplit;
  const int blockN = (blockIdx.x / kSplit) * kSplitBN, blockM = blockIdx.y * kSplitBM;
  const int kTiles = (K + kBK - 1) / kBK;
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
    const int k0 = t * kBK;
    // A: 64 rows of kBK / 8 chunks; B likewise (K-major) or kBK rows of 8.
    constexpr int kChunksK = kBK / 8, kChunks = kSplitBM * kChunksK;
    static_assert(kChunks % kSplitThreads == 0, "every thread loads whole chunks");
#pragma unroll
    for (int it = 0; it < kChunks / kSplitThreads; ++it) {
      const int c = tid + it * kSplitThreads, r = c / kChunksK, col = (c % kChunksK) * 8;
      const T *from = chunkA(blockM + r, k0 + col);
      cp_async16(As + r * kRowA + col, from ? from : tiles, from != nullptr);
    }
#pragma unroll
    for (int it = 0; it < kChunks / kSplitThreads; ++it) {
      const int c = tid + it * kSplitThreads;
      const int r = kBKMajor ? c / kChunksK : c >> 3;
      const int col = kBKMajor ? (c % kChunksK) * 8 : (c & 7) * 8;
      const T *from = kBKMajor ? chunkB(blockN + r, k0 + col) : chunkB(k0 + r, blockN + col);
      cp_async16(Bs + r * kRowB + col, from ? from : tiles, from != nullptr);
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

  // Prologue: stages 0 .. kStages - 2 in flight.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (tBegin + s < tEnd)
      load(s, tBegin + s);
    cp_async_commit();
  }
  for (int t = tBegin; t < tEnd; ++t) {
    cp_async_wait<kStages - 2>();
    __syncthreads();
    // Refill the stage the previous iteration read.
    const int next = t + kStages - 1;
    if (next < tEnd)
      load((next - tBegin) % kStages, next);
    cp_async_commit();
    const T *As = tiles + ((t - tBegin) % kStages) * kStageElems;
    const T *Bs = As + kSplitBM * kRowA;
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
      unsigned a[2][4], b[4][2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const T *p = As + (warpM * 32 + i * 16 + (lane & 15)) * kRowA + kk + (lane >> 4) * 8;
        ldmatrix_x4(a[i], p);
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if (kBKMajor) {
          const T *p = Bs + (warpN * 32 + j * 8 + (lane & 7)) * kRowB + kk + ((lane >> 3) & 1) * 8;
          ldmatrix_x2(b[j], p);
        } else {
          const T *p = Bs + (kk + (lane & 15)) * kRowB + warpN * 32 + j * 8;
          ldmatrix_x2_trans(b[j], p);
        }
      }
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          MmaName<T>::mma(acc[i][j], a[i], b[j]);
    }
  }
  // Written in place rather than as cp_async_wait<0>(): through the wrapper
  // NVVM moves a register move across the wait in the sm_90a image, and the
  // kernels keep the instruction order the H200 measured.
  asm volatile("cp.async.wait_group 0;\n" ::);

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if (kSplit > 1) {
    // Each block's partial tile, fp32 [64][kPartialPitch], over its pipeline
    // buffers (splitk_shared_bytes() leaves room for it). The pitch's 4
    // extra floats spread the mma layout's rows over the banks.
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
          *reinterpret_cast<float2 *>(partial + m * kPartialPitch + n) =
              make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        }
    // Release our partial to the cluster, acquire the others'.
    cluster_sync();
    // Every block adds up its own 64 / kSplit rows of the tile across the
    // cluster and runs their epilogue: the reduction's DSMEM reads spread
    // over all kSplit blocks instead of queueing in the first one, 4
    // consecutive columns per load, all peers' loads in flight at once.
    constexpr int kRows = kSplitBM / kSplit, kQuads = kRows * kSplitBN / 4;
    unsigned peerBase[kSplit];
    cluster_peer_addresses(partial, peerBase);
    for (int q = tid; q < kQuads; q += kSplitThreads) {
      const int row = rank * kRows + q / (kSplitBN / 4), col = (q % (kSplitBN / 4)) * 4;
      const unsigned offset = (unsigned)((row * kPartialPitch + col) * 4);
      float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
      for (int peer = 0; peer < kSplit; ++peer) {
        const float4 v = cluster_load4(peerBase[peer] + offset);
        sum[0] += v.x;
        sum[1] += v.y;
        sum[2] += v.z;
        sum[3] += v.w;
      }
      const int m = blockM + row;
#pragma unroll
      for (int c = 0; c < 4; ++c)
        if (m < M && blockN + col + c < N)
          epilogue(m, blockN + col + c, sum[c]);
    }
    // Peers keep their shared memory alive until every block has read it.
    cluster_sync();
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
template <typename T, bool kBKMajor, int kSplit, int kBK, int kStages, typename Epilogue>
__device__ __forceinline__ void splitk_gemm(const T *__restrict__ A, const T *__restrict__ B,
                                            int M, int N, int K, const Epilogue &epilogue) {
  splitk_tile_loop<T, kBKMajor, kSplit, kBK, kStages>(
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
