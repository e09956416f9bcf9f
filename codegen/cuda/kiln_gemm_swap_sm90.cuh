//===- kiln_gemm_swap_sm90.cuh - few-row GEMMs, the weight as wgmma's M ---===//
//
// A transformer layer at batch 1 multiplies 128 (or 197) tokens by a
// weight of 768 to 4096 rows: C [M, N] = A [M, K] B [N, K]^T with M small.
// Tiles of output rows leave most multiprocessors idle there (128 x 768 is
// 12 tiles of 128 x 64), and splitting K over a cluster gives each block a
// short main loop whose first loads are most of its time. Here the
// weight's rows are wgmma's M side, 64 a block, and the tokens its N side,
// kTokens (16 or 32) a block: 128 x 768 is 8 x 12 = 96 blocks, each walking
// all of K through a deep TMA ring.
//
// The same block with wide token tiles (64 to 128, one accumulator set a
// consumer) takes the GEMMs of many rows whose 128 x 64 tiles would fill
// under half the GPU, where K was split over mma.sync: EfficientNet-B0's
// 7 x 7 projections at batch 32 (1568 x 192 x 1152: 78 blocks of 64 x 64)
// took 5.5-7.9 us where the split took 8.5-11.5 (the H100, 2026-12-07).
// Against the Hopper GEMM's own tiles under one wave it lost: ResNet-50's
// 1568 x 512 x 2048 on 112 blocks of 64 x 112 took 12.3 us where 104
// persistent tiles of 128 x 64 took 9.6; this block's epilogue runs after
// its main loop, a 4-byte pair a lane, and no block walks a second tile.
//
// The kCluster blocks of a cluster take
// consecutive token tiles of one weight tile, and each loads 64 / kCluster
// of its rows, multicast into all of them: the weight leaves L2 once a
// cluster. cuBLAS's kernels for these shapes are built the same way
// (nvjet_sm90 16 x 64 tiles in clusters of 4 x 2 on the H100, 2026-12-07).
//
// Block: two consumer warpgroups (warps 0-7) take the k-tiles in turn,
// each with its own accumulators, wgmma m64nkTokensk16 on the stage's
// weight tile (A, K-major) and token tile (B, K-major), both in 128-byte
// swizzle; warp 8's first lane issues the TMA loads. A 64 x 16 product is
// short, and one warpgroup keeps few of them in flight: with one consumer
// GPT-2's down-projection at batch 1 took 11.6 us on the H200 against
// cuBLAS's 6.7, whose kernel there runs two consumer warpgroups. With two
// it took 11.2 on the H100 against cuBLAS's 6.6 (2026-12-07): the second
// did not close the gap on 16-token tiles. The epilogue adds the two
// warpgroups' sums while turning
// the 64 x kTokens accumulators around in shared memory, so that a warp's
// lanes run the epilogue on consecutive columns of one output row.
//
// swap_gemm_fallback is the other images' body for the same grid and block:
// a weight row a warp at a time, K across its lanes (as gemm_gemv).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_common.cuh"
#include "kiln_gemm_gemv.cuh"
#include "kiln_ptx.cuh"
#include "kiln_sm90.cuh"

namespace kiln::swap {
/// Weight rows a block takes (wgmma's M), k-tile depth, consumer
/// warpgroups, threads a block (theirs and the producer warp).
constexpr int kWeightRows = 64, kBK = 64, kConsumers = 2, kThreads = 128 * kConsumers + 32;
/// One stage: a 64 x 64 weight tile and a kTokens x 64 token tile, each a
/// whole number of 1024-byte swizzle atoms (kTokens % 8 == 0).
__host__ __device__ constexpr int weight_tile_bytes() { return kWeightRows * kBK * 2; }
__host__ __device__ constexpr int token_tile_bytes(int tokens) { return tokens * kBK * 2; }
/// The transposed accumulators: a row of 64 floats a token, padded so that
/// the fragment writes of a warp fall on 32 distinct banks.
constexpr int kStagingPitch = kWeightRows + 4;
/// Dynamic shared memory: the stages, the staging, and 1 KiB to align the
/// stages to 1024 bytes.
__host__ __device__ constexpr int shared_bytes(int tokens, int stages) {
  return stages * (weight_tile_bytes() + token_tile_bytes(tokens)) +
         tokens * kStagingPitch * 4 + 1024;
}
} // namespace kiln::swap

namespace kiln {

/// C[m, n] for token tile blockIdx.x (kTokens rows of A) and weight tile
/// blockIdx.y (64 rows of B), on CUDA cores: warp w takes weight rows w,
/// w + 9, ...; its lanes take 16-byte chunks of K for every token (16 at a
/// time for a wide tile: a lane keeps one chunk's sums), and the warp's
/// sums meet by shuffles. (For the images without wgmma; K % 8 == 0.)
template <typename T, int kTokens, typename Epilogue>
__device__ __forceinline__ void swap_gemm_fallback(const T *__restrict__ A,
                                                   const T *__restrict__ B, int M, int N, int K,
                                                   const Epilogue &epilogue) {
  constexpr int kWarps = swap::kThreads / 32;
  constexpr int kChunk = kTokens <= 32 ? kTokens : 16;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int tileBegin = static_cast<int>(blockIdx.x) * kTokens,
            tileEnd = min(M, tileBegin + kTokens);
  for (int r = warp; r < swap::kWeightRows; r += kWarps) {
    const int n = blockIdx.y * swap::kWeightRows + r;
    if (n >= N)
      break;
    const T *row = B + (long long)n * K;
    for (int m0 = tileBegin; m0 < tileEnd; m0 += kChunk) {
      float sum[kChunk];
#pragma unroll
      for (int t = 0; t < kChunk; ++t)
        sum[t] = 0.0f;
      chunked_row_dots<T, kChunk>(A, row, m0, M, K, lane, sum);
      const float mine = warp_row_totals(sum);
      if (lane < kChunk && m0 + lane < M)
        epilogue(m0 + lane, n, mine);
    }
  }
}

} // namespace kiln

namespace kiln::sm90 {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

/// wgmma m64n32k16, m64n96k16 and m64n112k16 for the token tiles that
/// Wgmma<T, N> lacks (16, 64 and 128 tokens take it): the accumulators in
/// 16-column groups, d[j][e] the register 8j + e.
template <typename T> struct WgmmaM64N32;
template <typename T> struct WgmmaM64N96;
template <typename T> struct WgmmaM64N112;
#define KILN_SWAP_ACC(j)                                                                   \
  "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3]), "+f"(d[j][4]), "+f"(d[j][5]), \
      "+f"(d[j][6]), "+f"(d[j][7])
#define KILN_SWAP_REGS_0_15                                                                \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define KILN_SWAP_REGS_16_47                                                               \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, "   \
  "%33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
/// One m64nNk16 wrapper: REGS names its N / 2 accumulators, DESCS the two
/// descriptors' operand numbers after them, the rest the accumulators.
#define KILN_SWAP_WGMMA_N(TYPE, PTXTYPE, N, REGS, DESCS, ...)                                \
  template <> struct WgmmaM64N##N<TYPE> {                                                   \
    static __device__ __forceinline__ void run(float (&d)[N / 16][8], unsigned long long a, \
                                               unsigned long long b) {                      \
      asm volatile("{\n"                                                                   \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTXTYPE "." PTXTYPE   \
                   " {" REGS "}, " DESCS ", 1, 1, 1, 0, 0;\n"                               \
                   "}\n"                                                                   \
                   : __VA_ARGS__                                                            \
                   : "l"(a), "l"(b));                                                       \
    }                                                                                       \
  };
#define KILN_SWAP_WGMMA(TYPE, PTXTYPE)                                                      \
  KILN_SWAP_WGMMA_N(TYPE, PTXTYPE, 32, KILN_SWAP_REGS_0_15, "%16, %17", KILN_SWAP_ACC(0),   \
                    KILN_SWAP_ACC(1))                                                       \
  KILN_SWAP_WGMMA_N(TYPE, PTXTYPE, 96, KILN_SWAP_REGS_0_15 ", " KILN_SWAP_REGS_16_47,       \
                    "%48, %49", KILN_SWAP_ACC(0), KILN_SWAP_ACC(1), KILN_SWAP_ACC(2),       \
                    KILN_SWAP_ACC(3), KILN_SWAP_ACC(4), KILN_SWAP_ACC(5))                   \
  KILN_SWAP_WGMMA_N(TYPE, PTXTYPE, 112,                                                     \
                    KILN_SWAP_REGS_0_15 ", " KILN_SWAP_REGS_16_47                           \
                                        ", %48, %49, %50, %51, %52, %53, %54, %55",         \
                    "%56, %57", KILN_SWAP_ACC(0), KILN_SWAP_ACC(1), KILN_SWAP_ACC(2),       \
                    KILN_SWAP_ACC(3), KILN_SWAP_ACC(4), KILN_SWAP_ACC(5), KILN_SWAP_ACC(6))
KILN_SWAP_WGMMA(__half, "f16")
KILN_SWAP_WGMMA(__nv_bfloat16, "bf16")
#undef KILN_SWAP_WGMMA
#undef KILN_SWAP_WGMMA_N
#undef KILN_SWAP_REGS_16_47
#undef KILN_SWAP_REGS_0_15
#undef KILN_SWAP_ACC

template <typename T, int kTokens> struct SwapWgmma;
template <typename T> struct SwapWgmma<T, 16> : Wgmma<T, 16> {};
template <typename T> struct SwapWgmma<T, 32> : WgmmaM64N32<T> {};
template <typename T> struct SwapWgmma<T, 64> : Wgmma<T, 64> {};
template <typename T> struct SwapWgmma<T, 96> : WgmmaM64N96<T> {};
template <typename T> struct SwapWgmma<T, 112> : WgmmaM64N112<T> {};
template <typename T> struct SwapWgmma<T, 128> : Wgmma<T, 128> {};

/// C = A B^T through the swapped tile: A [M, K] (tokens; mapA's boxes are
/// 64 x kTokens) and B [N, K] (the weight; mapB's boxes 64 x 64 / kCluster),
/// N % 64 == 0. The grid is (token tiles rounded up to whole clusters,
/// N / 64); a token tile past M loads the last one in bounds (every box
/// then lies partly inside its tensor, so a stage's byte count holds) and
/// stores nothing.
template <typename T, int kTokens, int kStages, int kCluster, typename Epilogue>
__device__ __forceinline__ void swap_gemm(const TensorMap &mapA, const TensorMap &mapB, int M,
                                          int N, int K, const Epilogue &epilogue) {
  static_assert(kTokens == 16 || kTokens == 32 || kTokens == 64 || kTokens == 96 ||
                    kTokens == 112 || kTokens == 128,
                "token tiles of 16, 32, 64, 96, 112 or 128 (wgmma's N)");
  static_assert(kCluster == 1 || kCluster == 2 || kCluster == 4 || kCluster == 8,
                "clusters of 1, 2, 4 or 8 blocks (each loads a whole number of 8-row "
                "swizzle atoms of the weight tile)");
  // Each consumer warpgroup holds its last stage until its next one is
  // full, two k-tiles on: with two stages both are held and the producer
  // refills neither.
  static_assert(kStages >= 3, "two consumers need a ring of three stages or more");
  static_assert(swap::shared_bytes(kTokens, kStages) <= 232448,
                "the stages must fit in shared memory");
  constexpr int kWeightBytes = swap::weight_tile_bytes();
  constexpr int kTokenBytes = swap::token_tile_bytes(kTokens);
  constexpr int kRowsPerBlock = swap::kWeightRows / kCluster;
  extern __shared__ unsigned char dynamicShared[];
  // 128-byte swizzled tiles start 1024-byte aligned; every block of a
  // cluster computes the same pad, so multicast copies land alike.
  unsigned char *base =
      dynamicShared + ((1024u - (smem_address(dynamicShared) & 1023u)) & 1023u);
  T *weights = reinterpret_cast<T *>(base);
  T *tokens = reinterpret_cast<T *>(base + kStages * kWeightBytes);
  float *staging = reinterpret_cast<float *>(base + kStages * (kWeightBytes + kTokenBytes));
  __shared__ __align__(8) unsigned long long full[kStages], empty[kStages];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned rank = blockIdx.x % kCluster;
  const int tokenTile = blockIdx.x, weightRow = blockIdx.y * swap::kWeightRows;
  const int loadedTokenRow = min(tokenTile, (M - 1) / kTokens) * kTokens;
  const int kTiles = (K + swap::kBK - 1) / swap::kBK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      barrier_init(&full[s], 1);
      // The consumer warps of the warpgroup that reads a stage, in every
      // block of the cluster, release it before any block's producer
      // multicasts into it again.
      barrier_init(&empty[s], 4 * kCluster);
    }
    fence_barrier_init();
  }
  // A peer's multicast copies and arrivals need this block's barriers.
  if constexpr (kCluster > 1)
    cluster_sync();
  else
    __syncthreads();

  if (warp == 4 * swap::kConsumers) {
    if (lane == 0) {
      for (int k = 0; k < kTiles; ++k) {
        const int stage = k % kStages;
        if (k >= kStages)
          barrier_wait(&empty[stage], ((k / kStages) - 1) & 1);
        // The whole weight tile lands here: this block's rows and its peers'.
        barrier_expect_tx(&full[stage], kWeightBytes + kTokenBytes);
        tma_load_2d(tokens + stage * (kTokenBytes / 2), mapA, k * swap::kBK, loadedTokenRow,
                    &full[stage]);
        T *slice = weights + stage * (kWeightBytes / 2) + rank * kRowsPerBlock * swap::kBK;
        if constexpr (kCluster > 1)
          tma_load_2d_multicast(slice, mapB, k * swap::kBK, weightRow + rank * kRowsPerBlock,
                                &full[stage], static_cast<unsigned short>((1u << kCluster) - 1));
        else
          tma_load_2d(slice, mapB, k * swap::kBK, weightRow, &full[stage]);
      }
    }
  } else {
    // Warpgroup c takes k-tiles c, c + 2, ...; a narrow tile's four
    // 16-deep steps of a k-tile go into four accumulator sets, so that they
    // overlap too. A wide tile's steps are long enough to follow each
    // other in one set (four would take 128 to 256 registers).
    const int consumer = warp / 4;
    constexpr int kSets = kTokens <= 32 ? swap::kBK / 16 : 1;
    float d[kSets][kTokens / 16][8];
#pragma unroll
    for (int set = 0; set < kSets; ++set)
      clear_accumulators(d[set]);
    auto release = [&](int stage) {
      if (lane == 0)
        barrier_arrive_every_block<kCluster>(&empty[stage], rank);
    };
    // One wgmma group in flight a warpgroup: after issuing its k-tile k,
    // wait for its previous one's and release that stage.
    int previous = -1;
    for (int k = consumer; k < kTiles; k += swap::kConsumers) {
      const int stage = k % kStages;
      barrier_wait(&full[stage], (k / kStages) & 1);
      const T *a = weights + stage * (kWeightBytes / 2);
      const T *b = tokens + stage * (kTokenBytes / 2);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < swap::kBK / 16; ++kk)
        SwapWgmma<T, kTokens>::run(d[kk % kSets], descriptor(a + kk * 16),
                                   descriptor(b + kk * 16));
      wgmma_commit();
      wgmma_wait<1>();
      if (previous >= 0)
        release(previous);
      previous = stage;
    }
    wgmma_wait<0>();
    if (previous >= 0)
      release(previous);
#pragma unroll
    for (int set = 1; set < kSets; ++set)
#pragma unroll
      for (int j = 0; j < kTokens / 16; ++j)
#pragma unroll
        for (int e = 0; e < 8; ++e)
          d[0][j][e] += d[set][j][e];
    // m64nNk16's layout: warp w of a warpgroup holds weight rows
    // 16 (w % 4) + lane / 4 (+ 8); chunk j tokens 16j + 2 (lane % 4) (+ 1,
    // + 8, + 9). Written token-major: warpgroup 1 stores its sums, then
    // warpgroup 0 adds its own at the same places.
    static_assert(swap::kConsumers == 2, "two warpgroups' sums meet in the staging");
    const int r0 = 16 * (warp % 4) + lane / 4;
    auto stage_sums = [&](bool add) {
      constexpr int kPitch = swap::kStagingPitch;
      constexpr int kAt[8] = {0,         kPitch,     8,              kPitch + 8,
                              8 * kPitch, 9 * kPitch, 8 * kPitch + 8, 9 * kPitch + 8};
#pragma unroll
      for (int j = 0; j < kTokens / 16; ++j) {
        float *top = staging + (16 * j + 2 * (lane % 4)) * kPitch + r0;
#pragma unroll
        for (int e = 0; e < 8; ++e)
          top[kAt[e]] = add ? top[kAt[e]] + d[0][j][e] : d[0][j][e];
      }
    };
    if (consumer == 1)
      stage_sums(false);
    named_barrier_sync(1, 128 * swap::kConsumers);
    if (consumer == 0)
      stage_sums(true);
    named_barrier_sync(1, 128 * swap::kConsumers);
    // A warp's lanes take consecutive columns of one output row, in pairs
    // where the functor takes them (a warp then stores a row's 64 columns
    // at once). N % 64 == 0: a pair is in bounds with its first column.
    if constexpr (Epilogue::kPairs) {
      for (int i = threadIdx.x; i < kTokens * swap::kWeightRows / 2;
           i += 128 * swap::kConsumers) {
        const int t = i / (swap::kWeightRows / 2), r = 2 * (i % (swap::kWeightRows / 2));
        const int m = tokenTile * kTokens + t, n = weightRow + r;
        if (m < M && n < N) {
          const float *acc = staging + t * swap::kStagingPitch + r;
          typename Epilogue::Values first, second;
          epilogue.compute_pair(m, n, acc[0], acc[1], first, second);
          epilogue.store_pair(m, n, first, second);
        }
      }
    } else {
      for (int i = threadIdx.x; i < kTokens * swap::kWeightRows;
           i += 128 * swap::kConsumers) {
        const int t = i / swap::kWeightRows, r = i % swap::kWeightRows;
        const int m = tokenTile * kTokens + t, n = weightRow + r;
        if (m < M && n < N)
          epilogue(m, n, staging[t * swap::kStagingPitch + r]);
      }
    }
  }
  // A peer may still multicast into this block or arrive on its barriers.
  if constexpr (kCluster > 1)
    cluster_sync();
}

#endif // __CUDA_ARCH_FEAT_SM90_ALL

} // namespace kiln::sm90
