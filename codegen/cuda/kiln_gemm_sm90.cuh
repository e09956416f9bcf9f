//===- kiln_gemm_sm90.cuh - Hopper GEMM: TMA + mbarrier pipeline + wgmma ---===//
//
// C = A B^T for A [M, K] and B [N, K], both K-major (nn.Linear), fp16/bf16 in,
// fp32 accumulate, then the caller's epilogue functor per in-bounds element:
// from fp32 staging in shared memory (store_accumulators), or on the
// accumulators' registers where the functor allows (store_fragments: one
// 16-bit result, rows of whole 16-byte chunks; both in
// kiln_gemm_sm90_epilogue.cuh). Built for sm_90a only
// (guarded by __CUDA_ARCH_FEAT_SM90_ALL).
//
//   Block tile 128 x kBN x 64 (kBN = 64, 128, 192 or 256); 3 warpgroups (384
//   threads): warpgroup 0 is the producer (one thread issues the TMA loads;
//   setmaxnreg gives its registers to the consumers), warpgroups 1 and 2
//   consume. Cooperative schedule: each multiplies 64 rows of every tile
//   with wgmma m64nkBNk16 into kBN / 2 fp32 registers. A GEMM's cooperative
//   tile may also be 192 x 192 with a third consumer (512 threads): where
//   M's row tiles of 192 fill the multiprocessors in whole waves and 128
//   rows leave half a wave (ViT's 6304 rows: 33 x 4 = 132 tiles of
//   192 x 192 at N = 768, where 128 x 192 makes 200). Ping-pong: each owns
//   every other tile, all 128 rows (kBN registers; kBN <= 128), and the two
//   take turns on the tensor cores so one's epilogue overlaps the other's
//   main loop. Epilogue warpgroups (640 threads): the consumers run
//   cooperative main loops only and hand each tile's accumulators through
//   shared memory to warpgroups 3 and 4, which run its epilogue beside the
//   next tile's main loop. kStages shared-memory stages in a ring, each with a `full`
//   barrier (TMA bytes landed) and an `empty` barrier (every consumer warp
//   that read it done). Tiles arrive through tensor maps (128-byte swizzle,
//   boxes 64 x 128 for A and 64 x kBN / kMulticast for B) that the runtime
//   encodes against the final buffer addresses; TMA fills out-of-range
//   elements with zeros, so any M, N and K (K % 8 == 0 for the 16-byte
//   global stride) works and only the epilogue checks bounds. With
//   kMulticast = 2, clusters of two blocks share each B tile, or with
//   kMulticastA each A tile (A's box is then half the tile's rows).
//
// The main loop is written against an `Operands` policy: how many row tiles
// and k-tiles there are, how one stage's A and B tiles are loaded, and which
// output row each row of a tile is. MatrixOperands is the plain GEMM;
// kiln_conv_sm90.cuh's ConvOperands loads boxes of NHWC pixels, so the same
// loop runs an implicit-GEMM convolution.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_common.cuh"
#include "kiln_ptx.cuh"
#include "kiln_sm90.cuh"
#include "kiln_stream_k.cuh"

namespace kiln::sm90 {


/// Block tiles are kBM x kBN x kBK with kBN (128, 192 or 256) and the depth
/// of the ring of stages chosen per GEMM by the selection stage: narrower
/// tiles fill the multiprocessors where 256-wide ones leave a wave partly
/// empty (N = 768: 96 tiles of 128 x 256 on 132 multiprocessors, 128 of
/// 128 x 192), and free shared memory for more stages.
constexpr int kBM = 128, kBK = 64, kThreads = 384;
/// The one tile width under 64 (wgmma m64n56k16): ResNet-50's 2048 -> 512
/// at 7 x 7 in 130 tiles where 64-wide ones make 104 on 132
/// multiprocessors, the busiest computing 7/8 of the outputs.
constexpr int kNarrowBN = 56;
/// The cooperative schedule's taller tile: three consumer warpgroups.
constexpr int kTallRows = 192;
__host__ __device__ constexpr int tile_bytes_a(int rows) { return rows * kBK * 2; }
__host__ __device__ constexpr int tile_bytes_b(int bn) { return bn * kBK * 2; }
/// Epilogue staging: each consumer warp turns its 16 x 64 accumulator slice
/// around in shared memory (pitch 72 floats: conflict-free float2 writes).
constexpr int kStagingCols = 64, kStagingPitch = 72;
constexpr int kWarpStagingBytes = 16 * kStagingPitch * 4;
/// A tile's staging: a slice for each consumer warp (4 a 64-row band).
/// `half`: the results' half of each warp's slice alone (a fragments
/// epilogue whose row input, if any, comes through the ring).
__host__ __device__ constexpr int staging_bytes(int rows, bool half = false) {
  return rows / 16 * (half ? kWarpStagingBytes / 2 : kWarpStagingBytes);
}
/// Rows of a staged slice whose epilogue is computed before any is stored
/// (a GEMM's; an Operands policy sets its own).
constexpr int kEpilogueRows = 8;
/// The epilogue warpgroups' schedule: a tile's fp32 accumulators handed
/// from the consumers to the epilogue warpgroups through shared memory.
__host__ __device__ constexpr int handoff_bytes(int bn) { return kBM * bn * 4; }
/// A warp's slice of a 16-bit row input (a residual) for the fragments
/// epilogue: 16 rows of 64 values at a pitch of 72.
constexpr int kInputSliceBytes = 16 * (kStagingCols + 8) * 2;
/// Whether a GEMM's ping-pong warps copy both row halves' row-input slices
/// before the main loop: with 64-wide tiles each half's epilogue is one
/// slice, and a 1x1 convolution over few channels (one k-step) is all
/// epilogue, so the second half would otherwise wait a whole round trip of
/// its own. The second slices lie past the staging (where the epilogue
/// warpgroups' handoff would be), one a consumer warp.
__host__ __device__ constexpr bool second_input_slices(bool pingpong, int bn, int rows,
                                                       int blocksPerSM) {
  return pingpong && bn == kStagingCols && rows == kBM && blocksPerSM == 1;
}
/// With `prefetchInputs` as well, a ping-pong warp copies its next tile's
/// two slices while this tile runs (two more a consumer warp: the next
/// tile's first-half slice cannot go where this tile's is, in the staging).
__host__ __device__ constexpr int input_slices_per_warp(bool secondInputs, bool prefetchInputs) {
  return secondInputs ? (prefetchInputs ? 3 : 1) : 0;
}
/// Split K across a cluster: the partial sums of one consumer's 64 rows,
/// which a block receives from its peer (fp32, thread-minor float4s).
__host__ __device__ constexpr int split_partial_bytes(int bn, int splitK) {
  return splitK > 1 ? 64 * bn * 4 : 0;
}
/// Dynamic shared memory: the stages, the epilogue staging, the handoff
/// (the epilogue warpgroups' schedule), the row-input slices past the
/// staging or a split-K partial, and 1 KiB to align the stages to 1024.
__host__ __device__ constexpr int shared_bytes(int bn, int stages, bool handoff = false,
                                               int rows = kBM, bool secondInputs = false,
                                               bool prefetchInputs = false, int splitK = 1,
                                               bool halfStaging = false) {
  return stages * (tile_bytes_a(rows) + tile_bytes_b(bn)) + staging_bytes(rows, halfStaging) +
         (handoff ? handoff_bytes(bn) : 0) +
         rows / 16 * input_slices_per_warp(secondInputs, prefetchInputs) * kInputSliceBytes +
         split_partial_bytes(bn, splitK) + 1024;
}
/// The most a block may use (227 KiB on sm_90).
constexpr int kMaxSharedBytes = 232448;
/// A pooled epilogue's sums (the functor's static shared memory): fp32,
/// `images` x `width`.
__host__ __device__ constexpr int pool_bytes(int images, int width) {
  return images * width * 4;
}

/// Stream-K consumers' named barrier (the ping-pong turns take 1 and 2).
constexpr int kStreamKBarrier = 3;
static_assert(kStreamKTileRows == kBM, "stream-K's partial tiles are the main loop's");

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

/// A plain GEMM's operands: tensor maps of A [M, K] (boxes 64 x kRows) and
/// B, tile rows consecutive output rows.
///  - B [N, K] (a linear's weight; boxes 64 x kBN), or with kMnMajorB a
///    [K, N] B (matmul's right operand), loaded as kBN / 64 boxes of 64
///    columns x 64 k-rows, each 8 KiB of 128-byte rows: the MN-major layout
///    descriptor_mn describes, its 64-wide groups 8 KiB apart.
///  - kBatched: `batches` matrices, 3-D maps with the batch outermost (an
///    operand not `batchedA` / `batchedB` is read at batch 0 for all). The
///    persistent blocks walk every batch's tiles as one run of row tiles,
///    each batch's ceil(M / kRows) in turn, so a block's next tile may be
///    the next batch's and its operands stream in during this epilogue (a
///    bmm of K = 64 is one k-step a tile: a grid plane a batch paid a
///    block's fill and drain every tile). A tile's rows stay within its
///    batch: the output row of batch z's row m is z * M + m, and a row past
///    its batch's M is past every batch's (never stored).
///  - kRowStep < kRows: row tile t starts at row t * kRowStep and keeps its
///    first kRowStep rows only (the rest are loaded and never stored), so
///    that a tile holds whole images for a pooled epilogue (7 x 7 pixels:
///    two images, 98 of 128 rows).
template <int kBN, int kRows = kBM, bool kMnMajorB = false, bool kBatched = false,
          int kRowStep = kRows>
struct MatrixOperands {
  static_assert(kRowStep == kRows || (kRowStep < kRows && !kBatched),
                "a row step shorter than the tile takes one matrix");
  const TensorMap &mapA, &mapB;
  int M, K, N;
  int batches = 1;
  bool batchedA = false, batchedB = false;
  static constexpr int kTileRows = kRows;
  static constexpr bool kTransB = kMnMajorB;
  static constexpr unsigned kBytesA = tile_bytes_a(kRows);
  static constexpr int kEpilogueRows = sm90::kEpilogueRows;
  /// Whether row() is worth computing once per tile and lane and passing
  /// around by shuffles: one add for one matrix; with a batch, a division
  /// and a test whose registers spilled a 256-wide tile's GELU + residual
  /// epilogue (NVRTC, sm_90a).
  static constexpr bool kRowsByShuffle = kBatched;
  /// Bytes between the 64-column groups of an MN-major B stage.
  static constexpr unsigned kGroupBytes = 64 * kBK * 2;
  /// Row tiles of one matrix, and of the whole launch.
  __device__ __forceinline__ int tiles_per_batch() const { return (M + kRowStep - 1) / kRowStep; }
  __device__ __forceinline__ int tiles_m() const {
    return kBatched ? batches * tiles_per_batch() : tiles_per_batch();
  }
  /// The batch of row tile tileM (0 without one).
  __device__ __forceinline__ int batch_of(int tileM) const {
    return kBatched ? tileM / tiles_per_batch() : 0;
  }
  /// Output rows of the whole launch.
  __device__ __forceinline__ int rows() const { return kBatched ? batches * M : M; }
  __device__ __forceinline__ int k_tiles() const { return (K + kBK - 1) / kBK; }
  __device__ __forceinline__ void load_a(void *dst, int tileM, int k,
                                         unsigned long long *bar) const {
    if constexpr (kBatched) {
      const int z = batch_of(tileM);
      tma_load_3d(dst, mapA, k * kBK, (tileM - z * tiles_per_batch()) * kRows,
                  batchedA ? z : 0, bar);
    } else {
      tma_load_2d(dst, mapA, k * kBK, tileM * kRowStep, bar);
    }
  }
  __device__ __forceinline__ void load_b(void *dst, int tileM, int blockN, int k,
                                         unsigned long long *bar) const {
    const int batchB = kBatched && batchedB ? batch_of(tileM) : 0;
    if constexpr (kMnMajorB) {
      // A group wholly past N is loaded from the last group in bounds
      // instead: its columns are never stored, and every box then lies
      // (partly) inside the tensor, so the stage's byte count holds.
      const int lastGroup = (N - 1) / 64 * 64;
#pragma unroll
      for (int g = 0; g < kBN / 64; ++g) {
        void *group = static_cast<unsigned char *>(dst) + g * kGroupBytes;
        const int n = min(blockN + g * 64, lastGroup);
        if constexpr (kBatched)
          tma_load_3d(group, mapB, n, k * kBK, batchB, bar);
        else
          tma_load_2d(group, mapB, n, k * kBK, bar);
      }
    } else if constexpr (kBatched) {
      tma_load_3d(dst, mapB, k * kBK, blockN, batchB, bar);
    } else {
      tma_load_2d(dst, mapB, k * kBK, blockN, bar);
    }
  }
  /// B's box from column blockN into every block of the cluster in `blocks`
  /// (a [N, K] B without a batch: the emitter takes no cluster otherwise).
  __device__ __forceinline__ void load_b_multicast(void *dst, int blockN, int k,
                                                   unsigned long long *bar,
                                                   unsigned short blocks) const {
    static_assert(!kMnMajorB && !kBatched, "multicast loads a [N, K] B without a batch");
    tma_load_2d_multicast(dst, mapB, k * kBK, blockN, bar, blocks);
  }
  /// Rows [rowOffset, rowOffset + A's box) of row tile tileM into every
  /// block of the cluster in `blocks` (one matrix: the emitter takes no
  /// cluster with a batch). A box wholly past M lands as zeros, its bytes
  /// counted all the same, like an odd multicast pair's row tile past M.
  __device__ __forceinline__ void load_a_multicast(void *dst, int tileM, int rowOffset, int k,
                                                   unsigned long long *bar,
                                                   unsigned short blocks) const {
    static_assert(!kBatched && kRowStep == kRows, "multicast loads A of one matrix's tiles");
    tma_load_2d_multicast(dst, mapA, k * kBK, tileM * kRows + rowOffset, bar, blocks);
  }
  /// The wgmma descriptor of B's k-step kk (16 deep) in a stage at `b`.
  template <typename T>
  static __device__ __forceinline__ unsigned long long b_descriptor(const T *b, int kk) {
    if constexpr (kMnMajorB)
      return descriptor_mn(b + kk * 16 * 64, kGroupBytes);
    else
      return descriptor(b + kk * 16);
  }
  /// The output row of row r of row tile tileM (rows() or more past the
  /// end); a row the epilogue may read at; whether it is stored.
  __device__ __forceinline__ int row(int tileM, int r) const {
    if constexpr (kBatched) {
      const int z = batch_of(tileM), m = (tileM - z * tiles_per_batch()) * kRows + r;
      return m < M ? z * M + m : rows() + m;
    } else if constexpr (kRowStep == kRows) {
      return tileM * kRows + r;
    } else {
      // Rows past the step are another tile's (stored there): past M here.
      return r < kRowStep ? tileM * kRowStep + r : M + r;
    }
  }
  __device__ __forceinline__ int clamp_row(int m) const { return min(m, rows() - 1); }
  __device__ __forceinline__ bool stores(int m) const { return m < rows(); }
};

/// How the two consumer warpgroups share the tiles.
///  - cooperative: both work on one 128-row tile, 64 rows each, and run its
///    epilogue together while the tensor cores idle.
///  - ping-pong: each warpgroup owns every other tile of the block, all 128
///    of its rows (two m64 wgmmas per k-step), and the two take turns on
///    the tensor cores: one's main loop runs while the other's epilogue
///    does. Its accumulators are twice a cooperative tile's per thread,
///    so tiles are 64 or 128 wide.
enum class Schedule { cooperative, pingpong, epilogue_warpgroups };

/// Its named barriers: 4 + h "half h of the handoff is full", 6 + h "half
/// h of the handoff is free again" (ping-pong's turns take 1 and 2,
/// stream-K 3).
constexpr int kHandoffFullBarrier = 4, kHandoffFreeBarrier = 6;

/// A consumer thread's accumulators as the epilogue warpgroups' thread of
/// the same place reads them back from the handoff: vector v of thread t
/// of a half at v * 128 + t (thread-minor: conflict-free, and the same
/// fragment layout on both sides). Indexed as the accumulators' 16-column
/// chunks, each read when the epilogue reaches it.
struct HandoffAccumulators {
  const float4 *thread;
  struct Chunk {
    float v[8];
    __device__ __forceinline__ float operator[](int i) const { return v[i]; }
  };
  __device__ __forceinline__ Chunk operator[](int chunk) const {
    const float4 a = thread[(2 * chunk) * 128], b = thread[(2 * chunk + 1) * 128];
    return {{a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w}};
  }
};

/// Turns of the ping-pong schedule: named barrier 1 + w is "warpgroup w may
/// start its next main loop".
constexpr int kTurnBarrier = 1;

} // namespace kiln::sm90

#include "kiln_gemm_sm90_epilogue.cuh"

namespace kiln::sm90 {

__device__ __forceinline__ int load_acquire_gpu(const int *p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_release_gpu(int *p, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

/// The persistent TMA + wgmma main loop over `ops`' row tiles and N's
/// column tiles, with the epilogue staged through shared memory.
///
/// kMulticast = 2: blocks run in clusters of two that take consecutive row
/// tiles of the same columns in lockstep. Each loads its own A tile and half
/// of the shared B tile, multicast into both blocks' shared memory: B's
/// traffic from L2 halves. A stage is refilled only when the consumers of
/// both blocks have released it (they arrive on both blocks' `empty`
/// barriers), and neither block leaves while its peer may still arrive.
///
/// kMulticastA (with kMulticast = 2): the pair takes consecutive column
/// tiles of the same rows instead, and shares the A tile: each block loads
/// half of its rows and its own B tile. A's tile is at least B's wherever
/// a tile is no wider than tall (128 x 64 reads 2 bytes of A a byte of B,
/// 192 x 192 one), so a block's L2 reads fall by a third or a quarter;
/// cuBLAS runs BERT's and ViT's batch-32 GEMMs in such pairs (its
/// kernels' cluster shape 1 x 2). Here they were slower on every shape
/// timed (the H100, 2026-12-08: BERT's FFN down-projection 28.6 -> 30.4
/// us, ResNet-50's 2048 -> 512 9.6 -> 10.9), as pairs sharing B were: the
/// pair's lockstep costs more than the L2 reads it saves. An odd last
/// column tile is computed from a B box past N (zeros) and not stored.
///
/// kBlocksPerSM = 2: two blocks share a multiprocessor (the launch bounds
/// say so and the stages must fit twice), so an epilogue-bound kernel (a
/// short K) has twice the warps to hide its latency. ptxas then compiles the
/// whole kernel within 80 registers a thread (setmaxnreg cannot raise that),
/// which holds a cooperative 64-wide tile's 32 accumulators and its
/// epilogue, not m64n128's 64 nor ping-pong's two halves (they spill).
///
/// kSplitK = 2: for GEMMs whose tiles fill at most half the
/// multiprocessors (ResNet-50's last stage at batch 32: 56 tiles of
/// 128 x 128). Blocks run in clusters of two that take the same tile, each
/// walking half of its k-steps; block r keeps rows 64r .. 64r + 63. Its
/// other consumer warpgroup stores its partial sums into the peer's shared
/// memory and skips the epilogue; the keeping consumer adds the peer's
/// partial to its own and runs the epilogue of its 64 rows. So the grid
/// fills twice the multiprocessors with 128-wide tiles where 64-wide ones
/// would read each A tile twice as often, with no workspace and no second
/// kernel.
template <typename T, int kBN, int kStages, Schedule kSchedule = Schedule::cooperative,
          int kMulticast = 1, int kBlocksPerSM = 1, bool kStreamK = false,
          bool kPrefetchInputs = false, int kSplitK = 1, bool kMulticastA = false,
          typename Operands, typename Epilogue>
__device__ __forceinline__ void wgmma_mainloop(const Operands &ops, int N,
                                               const Epilogue &epilogue,
                                               float *workspace = nullptr) {
  static_assert(kBN == kNarrowBN || kBN == 64 || kBN == 128 || kBN == 192 || kBN == 256,
                "wgmma tiles are 56, 64, 128, 192 or 256 wide");
  // The narrow tile: one staged slice, its last 8 columns past the tile
  // (never stored), and none of what a whole slice or a [K, N] B's 64-wide
  // groups would need.
  static_assert(kBN != kNarrowBN ||
                    (kSchedule == Schedule::cooperative && kMulticast == 1 && kSplitK == 1 &&
                     kBlocksPerSM == 1 && !kStreamK && !Operands::kTransB &&
                     Operands::kTileRows == kBM && !Epilogue::kRowInputRing),
                "a 56-wide tile is cooperative, 128 rows, one block a multiprocessor, no "
                "cluster or stream-K, a [N, K] B and no row input through the ring");
  static_assert(kSchedule != Schedule::pingpong || kBN <= 128,
                "a ping-pong warpgroup holds a whole tile: 64 or 128 wide");
  static_assert(kMulticast == 1 || kMulticast == 2, "clusters of 1 or 2 blocks");
  static_assert(!kMulticastA || (kMulticast == 2 && !Operands::kRowsByShuffle),
                "pairs share A tiles of a GEMM's rows");
  static_assert(kBlocksPerSM == 1 ||
                    (kBlocksPerSM == 2 && kBN == 64 && kSchedule == Schedule::cooperative),
                "two blocks a multiprocessor take cooperative 64-wide tiles");
  constexpr bool kHandoff = kSchedule == Schedule::epilogue_warpgroups;
  static_assert(!kHandoff || (kBN <= 128 && kMulticast == 1 && kBlocksPerSM == 1 && !kStreamK),
                "the epilogue warpgroups take tiles 64 or 128 wide, one block a "
                "multiprocessor, no cluster, no stream-K");
  static_assert(!kStreamK || (kSchedule == Schedule::cooperative && kMulticast == 1 &&
                               kBlocksPerSM == 1),
                "stream-K takes cooperative tiles, one block a multiprocessor, no cluster");
  static_assert(kSplitK == 1 ||
                    (kSplitK == 2 && kSchedule == Schedule::cooperative && kMulticast == 1 &&
                     kBlocksPerSM == 1 && !kStreamK && Operands::kTileRows == kBM &&
                     kBN <= 128),
                "split K takes clusters of two blocks on cooperative 128-row tiles at most "
                "128 wide, one block a multiprocessor, no multicast, no stream-K");
  // A pooled epilogue (Epilogue::kPoolImages: a global average pool over
  // each image's rows) sums a tile's columns image by image in shared
  // memory, then writes the tile's means: every consumer of a tile must see
  // all of its rows, which one block's cooperative warpgroups do.
  static_assert(Epilogue::kPoolImages == 0 ||
                    (kSchedule == Schedule::cooperative && kMulticast == 1 && kSplitK == 1 &&
                     kBlocksPerSM == 1 && !kStreamK && Epilogue::kPoolWidth == kBN &&
                     Operands::kTileRows == kBM),
                "a pooled epilogue takes cooperative 128-row tiles of one block, no cluster, "
                "no stream-K, and sums as wide as the tile");
  // Blocks of a cluster: multicast pairs or split-K pairs (never both).
  constexpr int kClusterBlocks = kMulticast * kSplitK;
  constexpr bool kPingPong = kSchedule == Schedule::pingpong;
  // Tile rows, and the consumer warpgroups that multiply them (64 rows
  // each, cooperative; ping-pong's two take whole tiles in turn).
  constexpr int kRows = Operands::kTileRows;
  constexpr int kConsumers = kPingPong ? 2 : kRows / 64;
  static_assert(kRows == kBM || (kRows == kTallRows && kBN <= 192 &&
                                 kSchedule == Schedule::cooperative &&
                                 (kMulticast == 1 || kMulticastA) && kBlocksPerSM == 1 &&
                                 !kStreamK),
                "192-row tiles are cooperative, at most 192 wide (96 accumulators a "
                "thread), one block a multiprocessor, no stream-K, and share A if "
                "anything");
  // GEMMs only: a convolution's rows (computed by shuffles) do not take the
  // early copy at all.
  constexpr bool kSecondInputs =
      !Operands::kRowsByShuffle && second_input_slices(kPingPong, kBN, kRows, kBlocksPerSM);
  // The next tile's slices too (kPrefetchInputs: the code generator's
  // choice where the ring leaves room for them).
  constexpr bool kNextInputs = kPrefetchInputs && kSecondInputs;
  // A ring deeper than the full staging leaves room for (residual_ring's
  // extra stage): each warp's staging is its results' half alone, the row
  // input coming through the ring.
  constexpr bool kHalfStaging = shared_bytes(kBN, kStages, kHandoff, kRows, kSecondInputs,
                                             kNextInputs, kSplitK) > kMaxSharedBytes;
  static_assert(!kHalfStaging || (Epilogue::kFragments &&
                                  (!Epilogue::kRowInput || Epilogue::kRowInputRing)),
                "half of a warp's staging holds 16-bit results alone");
  static_assert(kStages >= 2 &&
                    shared_bytes(kBN, kStages, kHandoff, kRows, kSecondInputs, kNextInputs,
                                 kSplitK, kHalfStaging) +
                            pool_bytes(Epilogue::kPoolImages, Epilogue::kPoolWidth) <=
                        kMaxSharedBytes,
                "the stages (and a pool's sums) must fit in shared memory");
  constexpr int kWarpStagingFloats =
      (kHalfStaging ? kWarpStagingBytes / 2 : kWarpStagingBytes) / 4;
  constexpr int kTileBytesA = tile_bytes_a(kRows);
  constexpr int kTileBytesB = tile_bytes_b(kBN);
  // Rows of the B tile (or, kMulticastA, of the A tile) each block of a
  // cluster loads for all of them.
  constexpr int kRowsB = kMulticastA ? kBN : kBN / kMulticast;
  constexpr int kRowsA = kMulticastA ? kRows / kMulticast : kRows;
  // Pairs along rows (sharing B) and along columns (sharing A).
  constexpr int kRowPairs = kMulticastA ? 1 : kMulticast;
  constexpr int kColumnPairs = kMulticastA ? kMulticast : 1;
  extern __shared__ unsigned char dynamicShared[];
  // 128-byte swizzled tiles must start 1024-byte aligned. The pad is added
  // to the shared array itself, not to an integer cast of it: through an
  // integer the compiler loses the address space and reads the epilogue's
  // staging with generic loads (LD, not LDS). Every block of a cluster
  // computes the same pad: multicast copies land at the same offsets.
  unsigned char *base =
      dynamicShared + ((1024u - (smem_address(dynamicShared) & 1023u)) & 1023u);
  T *tilesA = reinterpret_cast<T *>(base);
  T *tilesB = reinterpret_cast<T *>(base + kStages * kTileBytesA);
  float *const stagingBase =
      reinterpret_cast<float *>(base + kStages * (kTileBytesA + kTileBytesB));
  // The epilogue warpgroups' handoff: half h (rows 64h .. 64h + 63) from
  // consumer h to epilogue warpgroup h.
  constexpr int kStagingFloats = staging_bytes(kRows, kHalfStaging) / 4;
  float4 *const handoff = reinterpret_cast<float4 *>(stagingBase + kStagingFloats);
  unsigned short *const secondInputs =
      reinterpret_cast<unsigned short *>(stagingBase + kStagingFloats);
  // Split K: the peer's partial sums of this block's kept rows, vector v of
  // consumer thread t at v * 128 + t (the handoff's layout).
  float4 *const splitPartial = reinterpret_cast<float4 *>(stagingBase + kStagingFloats);
  __shared__ __align__(8) unsigned long long full[kStages], empty[kStages];
  // Split K: "the peer's partial is here" (one keeping thread arms it with
  // the partial's bytes, which the peer's asynchronous stores count down)
  // and "the peer has read this block's partial" (its 128 keeping threads).
  __shared__ __align__(8) unsigned long long splitFull, splitFree;

  // Read through a shuffle, the warpgroup index is visibly the same across
  // each warp: ptxas otherwise takes code that depends on it (the ping-pong
  // schedule's tile walk) as divergent and serializes its wgmmas (C7520).
  const int warpgroup = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0),
            lane128 = threadIdx.x % 128;
  // A 1-D grid's clusters are runs of consecutive blocks. (Read from
  // blockIdx rather than %cluster_ctarank, the compiler may re-read it
  // instead of holding a register through the epilogue.)
  const unsigned rank = blockIdx.x % kMulticast;
  // Split K: which half of each tile's k-steps this block walks, and which
  // 64 rows it keeps.
  const int splitRank = static_cast<int>(blockIdx.x % kSplitK);
  // Persistent: each cluster walks cluster tiles c, c + clusters, ...; a
  // cluster tile is kMulticast consecutive row tiles (one a block) of the
  // same kBN columns, or with kMulticastA consecutive column tiles of the
  // same rows. The producer runs ahead across tile boundaries, so
  // the next tile's operands land while the consumers run this tile's
  // epilogue. Stage and parity follow a k-iteration counter that continues
  // across tiles, the same in every block of a cluster.
  const int tilesN = (N + kBN - 1) / kBN;
  // Cluster tiles along N.
  const int clusterTilesN = (tilesN + kColumnPairs - 1) / kColumnPairs;
  const int tiles = (ops.tiles_m() + kRowPairs - 1) / kRowPairs * clusterTilesN;
  const int cluster = blockIdx.x / kClusterBlocks, clusters = gridDim.x / kClusterBlocks;
  const int kTiles = ops.k_tiles();
  // The k-steps [splitBegin, splitEnd) this block walks of every tile (all
  // of them unless K is split; a split of one k-step leaves the second
  // block none).
  const int kPerSplit = (kTiles + kSplitK - 1) / kSplitK;
  const int splitBegin = min(kTiles, splitRank * kPerSplit),
            splitEnd = min(kTiles, splitBegin + kPerSplit);
  auto rowTile = [&](int t) {
    return kMulticastA ? t / clusterTilesN
                       : t / clusterTilesN * kMulticast + static_cast<int>(rank);
  };
  auto columns = [&](int t) {
    return kMulticastA ? (t % clusterTilesN * kMulticast + static_cast<int>(rank)) * kBN
                       : t % clusterTilesN * kBN;
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      barrier_init(&full[s], 1);
      // A lane of each consumer warp that reads the stage, in every block
      // of the cluster, arrives.
      barrier_init(&empty[s], (kPingPong ? 4 : 4 * kConsumers) * kMulticast);
    }
    if constexpr (kSplitK > 1) {
      barrier_init(&splitFull, 1);
      barrier_init(&splitFree, 128);
    }
    fence_barrier_init();
  }
  // A peer's multicast copies and arrivals need this block's barriers
  // initialized.
  if constexpr (kClusterBlocks > 1)
    cluster_sync();
  else
    __syncthreads();

  // The epilogue's row-varying inputs (a residual) of tile t, pulled into
  // L2 by the threads that will read them: one tile ahead, the epilogue
  // finds them there instead of waiting on DRAM slice by slice.
  auto prefetch_epilogue = [&](int t) {
    if constexpr (Epilogue::kPrefetchStep > 0) {
      if (t >= tiles)
        return;
      constexpr int kLines = (kBN + Epilogue::kPrefetchStep - 1) / Epilogue::kPrefetchStep;
      constexpr int kThreadsReading = kPingPong ? 128 : 128 * kConsumers;
      const int tM = rowTile(t), n0 = columns(t);
      for (int i = kPingPong ? lane128 : threadIdx.x - (kHandoff ? 384 : 128); i < kRows * kLines;
           i += kThreadsReading) {
        const int m = ops.row(tM, i / kLines), n = n0 + (i % kLines) * Epilogue::kPrefetchStep;
        if (ops.stores(m) && n < N)
          epilogue.prefetch_l2(m, n);
      }
    }
  };
  // The row input's slices through the ring (Epilogue::kRowInputRing, the
  // kernel configuration's residual_ring): the producer
  // loads a tile's slices by TMA after its k-steps (RingInput), so that
  // neither the consumers' copies nor an L2 prefetch read them, and a
  // block's next tile streams in behind them. The code generator gives the
  // functor the row input's tensor map only for these tiles.
  constexpr bool kRingInput = Epilogue::kRowInputRing;
  static_assert(!kRingInput || (Epilogue::kFragments && Epilogue::kRowInput &&
                                kSchedule == Schedule::cooperative && !kStreamK &&
                                kSplitK == 1 && !Operands::kRowsByShuffle &&
                                !Operands::kTransB),
                "the row input takes the ring in cooperative GEMM tiles without stream-K "
                "or split K (the dialect says why not ping-pong)");
  constexpr int kRingSlices = kRingInput ? kBN / kStagingCols : 0;
  // The row input's first slice (of the first row half) on its way during
  // the main loop. GEMMs only: a convolution's rows take enough registers
  // to compute that a 192-wide one spilled. Not with 192 rows either: at
  // 160 registers a consumer, a bias, GELU and residual epilogue spilled
  // with it (NVRTC, 2026-12-04).
  constexpr bool kEarlyInput = kRows == kBM && Epilogue::kFragments && Epilogue::kRowInput &&
                               Epilogue::kRowInputEarly && !Operands::kRowsByShuffle &&
                               !kRingInput;

  if (warpgroup == 0) {
    // The producer gives its registers to the consumers (one block a
    // multiprocessor: the kernel is compiled to 168 a thread, the consumers
    // need up to 232; three consumers: 128 a thread, 24 for the producer
    // and 160 for them, where 152 spilled a GELU and residual epilogue).
    // Pairs sharing A keep 32 (their cluster's loads spilled at 24: NVRTC,
    // 2026-12-07), which with 3 x 128 consumer threads at 160 fills the
    // register file exactly.
    if constexpr (kConsumers == 3)
      release_registers<kMulticastA ? 32 : 24>();
    else if constexpr (kBlocksPerSM == 1)
      release_registers<40>();
    // (Epilogue warpgroups: the 640 threads start with 96 registers each,
    // and setmaxnreg.inc waits until the block's pool has what it asks
    // for: 40 + 2 x 112 + 2 x 104 of the 5 x 96 a lane. Asking for more
    // than the producer gives back hangs the block.)
    if (lane128 == 0) {
      int it = 0;
      // The k-tiles [kBegin, kEnd) of one tile into the ring.
      auto produce = [&](int tile, int kBegin, int kEnd) {
        const int tileM = rowTile(tile), blockN = columns(tile);
        for (int k = kBegin; k < kEnd; ++k, ++it) {
          int stage = it % kStages;
          if (it >= kStages)
            barrier_wait(&empty[stage], ((it / kStages) - 1) & 1);
          // The whole A and B tiles land here: this block's rows and its
          // peers'.
          barrier_expect_tx(&full[stage], Operands::kBytesA + kTileBytesB);
          if constexpr (kMulticastA)
            ops.load_a_multicast(tilesA + stage * (kRows * kBK) + rank * kRowsA * kBK, tileM,
                                 static_cast<int>(rank) * kRowsA, k, &full[stage],
                                 static_cast<unsigned short>((1u << kMulticast) - 1));
          else
            ops.load_a(tilesA + stage * (kRows * kBK), tileM, k, &full[stage]);
          if constexpr (kMulticastA)
            ops.load_b(tilesB + stage * (kBN * kBK), tileM, blockN, k, &full[stage]);
          else if constexpr (kMulticast > 1)
            ops.load_b_multicast(tilesB + stage * (kBN * kBK) + rank * kRowsB * kBK,
                                 blockN + rank * kRowsB, k, &full[stage],
                                 static_cast<unsigned short>((1u << kMulticast) - 1));
          else
            ops.load_b(tilesB + stage * (kBN * kBK), tileM, blockN, k, &full[stage]);
        }
        if constexpr (kRingInput) {
          // A slice wholly past N comes from the last one in bounds (never
          // stored): every box then lies partly inside the tensor, so its
          // byte count holds. So do a multicast pair's rows past M (an odd
          // last row tile, computed and not stored).
          const int lastSlice = (N - 1) / kStagingCols * kStagingCols;
          const int inputRow = ops.row(min(tileM, ops.tiles_m() - 1), 0);
          for (int c = 0; c < kRingSlices; ++c, ++it) {
            int stage = it % kStages;
            if (it >= kStages)
              barrier_wait(&empty[stage], ((it / kStages) - 1) & 1);
            barrier_expect_tx(&full[stage], Operands::kBytesA);
            epilogue.load_row_input_box(tilesA + stage * (kRows * kBK), inputRow,
                                        min(blockN + c * kStagingCols, lastSlice), &full[stage]);
          }
        }
      };
      if constexpr (kStreamK)
        StreamKPlan(tiles, kTiles, gridDim.x)
            .walk(blockIdx.x, [&](int tile, int kBegin, int kEnd, int) {
              produce(tile, kBegin, kEnd);
            });
      else
        for (int tile = cluster; tile < tiles; tile += clusters)
          produce(tile, splitBegin, splitEnd);
    }
  } else if (kHandoff && warpgroup >= 3) {
    // An epilogue warpgroup: the epilogues of its half of every tile, each
    // while the consumers run the next tile's main loop.
    claim_registers<104>();
    const int half = warpgroup - 3, warp = lane128 / 32;
    float *staging = stagingBase + (half * 4 + warp) * kWarpStagingFloats;
    const HandoffAccumulators acc{handoff + half * (64 * kBN / 4) + lane128};
    prefetch_epilogue(cluster);
    for (int tile = cluster; tile < tiles; tile += clusters) {
      const int tileM = rowTile(tile), blockN = columns(tile);
      const int warpRow = half * 64 + warp * 16;
      prefetch_epilogue(tile + clusters);
      if constexpr (kEarlyInput)
        copy_first_row_input(ops, N, epilogue, row_input_slice(staging), tileM, blockN,
                             warpRow);
      named_barrier_sync(kHandoffFullBarrier + half, 256);
      if constexpr (Epilogue::kFragments)
        store_fragments<kBN>(ops, N, epilogue, acc, staging, tileM, blockN, warpRow,
                             kEarlyInput);
      else
        store_accumulators<kBN>(ops, N, epilogue, acc, staging, tileM, blockN, warpRow);
      // The consumer waits for this before its next tile's handoff.
      if (tile + clusters < tiles)
        named_barrier_arrive(kHandoffFreeBarrier + half, 256);
    }
  } else {
    if constexpr (kHandoff)
      claim_registers<112>();
    else if constexpr (kConsumers == 3)
      claim_registers<160>();
    else if constexpr (kBlocksPerSM == 1)
      claim_registers<232>();
    const int consumer = warpgroup - 1;
    const int warp = lane128 / 32, lane = lane128 % 32;
    float *staging = stagingBase + (consumer * 4 + warp) * kWarpStagingFloats;
    // Row halves of a tile this warpgroup multiplies: its own 64 rows
    // (cooperative) or both (ping-pong).
    constexpr int kHalves = kPingPong ? 2 : 1;
    // The second row half's first row-input slice, copied before the main
    // loop too (kSecondInputs: ping-pong, 64 wide).
    constexpr bool kEarlySecond = kEarlyInput && kSecondInputs;
    unsigned short *const secondInput =
        secondInputs + (consumer * 4 + warp) * (kInputSliceBytes / 2);
    // kNextInputs: a tile's slices are copied at the start of this
    // warpgroup's previous tile, a whole tile (and the other warpgroup's
    // turn) ahead of its epilogue, into one of two sets of slices by the
    // parity of the warpgroup's tiles: set 0 is the staging's own and the
    // second slice, set 1 lies past all the second slices.
    constexpr bool kPrefetch = kEarlySecond && kNextInputs;
    unsigned short *const nextInputs =
        secondInputs + (8 + (consumer * 4 + warp) * 2) * (kInputSliceBytes / 2);
    auto input_slice = [&](int parity, int h) {
      return parity == 0 ? (h == 0 ? row_input_slice(staging) : secondInput)
                         : nextInputs + h * (kInputSliceBytes / 2);
    };
    // A tile's two slices, one group each (two empty groups past the last
    // tile, so that every epilogue waits on the same count).
    auto copy_inputs = [&](int tile, int parity) {
      if constexpr (kPrefetch) {
        if (tile < tiles) {
          copy_first_row_input(ops, N, epilogue, input_slice(parity, 0), rowTile(tile),
                               columns(tile), warp * 16);
          copy_first_row_input(ops, N, epilogue, input_slice(parity, 1), rowTile(tile),
                               columns(tile), 64 + warp * 16);
        } else {
          cp_async_commit();
          cp_async_commit();
        }
      }
    };
    // Tiles this warpgroup takes: its cluster's j-th tile, for j = first,
    // first + step, ...
    const int first = kPingPong ? consumer : 0, step = kPingPong ? 2 : 1;
    // A stage read by this warp's wgmmas (complete: wgmma.wait_group is
    // warp-aligned) is released in every block that a multicast fills.
    auto release = [&](int stage) {
      if (lane == 0)
        barrier_arrive_every_block<kMulticast>(&empty[stage], rank);
    };
    // A tile's accumulators, cleared and pinned to registers.
    // 16-column groups of accumulators (the narrow tile's last half used).
    constexpr int kChunks = (kBN + 15) / 16;
    using Accumulators = float[kHalves][kChunks][8];
    auto clear = [&](Accumulators &acc) {
#pragma unroll
      for (int h = 0; h < kHalves; ++h)
#pragma unroll
        for (int i = 0; i < kChunks; ++i)
#pragma unroll
          for (int jj = 0; jj < 8; ++jj)
            acc[h][i][jj] = 0.0f;
#pragma unroll
      for (int h = 0; h < kHalves; ++h)
        pin_accumulators(acc[h]);
    };
    // k-steps [kBegin, kEnd) of a tile from ring position `it` on. One wgmma
    // group stays in flight: after issuing step k, wait for step k-1's group
    // only and release its stage, so the tensor cores never idle on a
    // barrier between consecutive steps. Returns the last stage read, not
    // yet released (-1: none).
    auto multiply = [&](Accumulators &acc, int kBegin, int kEnd, int &it) {
      int previous = -1;
      for (int k = kBegin; k < kEnd; ++k, ++it) {
        int stage = it % kStages;
        barrier_wait(&full[stage], (it / kStages) & 1);
        const T *a = tilesA + stage * (kRows * kBK) + (kPingPong ? 0 : consumer * 64 * kBK);
        const T *b = tilesB + stage * (kBN * kBK);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBK / 16; ++kk)
#pragma unroll
          for (int h = 0; h < kHalves; ++h)
            Wgmma<T, kBN, Operands::kTransB>::run(acc[h], descriptor(a + h * 64 * kBK + kk * 16),
                                                  Operands::b_descriptor(b, kk));
        wgmma_commit();
        wgmma_wait<1>();
        if (previous >= 0)
          release(previous);
        previous = stage;
      }
      return previous;
    };
    auto drain = [&](int previous) {
      wgmma_wait<0>();
      if (previous >= 0)
        release(previous);
    };
    auto store = [&](Accumulators &acc, int tileM, int blockN, bool earlyInput = false,
                     int parity = 0, const RingInput *ring = nullptr) {
      // A tile narrower than its staged slice stores its own columns only:
      // the epilogue's bound is its end (or N's).
      const int end = kBN % kStagingCols == 0 ? N : min(N, blockN + kBN);
#pragma unroll
      for (int h = 0; h < kHalves; ++h) {
        const int warpRow = (kPingPong ? h : consumer) * 64 + warp * 16;
        if constexpr (kPrefetch)
          // The next tile's two groups may still be in flight.
          store_fragments<kBN, 2>(ops, end, epilogue, acc[h], staging, tileM, blockN, warpRow,
                                  true, input_slice(parity, h));
        else if constexpr (Epilogue::kFragments)
          store_fragments<kBN>(ops, end, epilogue, acc[h], staging, tileM, blockN, warpRow,
                               earlyInput && (h == 0 || kEarlySecond),
                               kEarlySecond && h == 1 ? secondInput : nullptr, ring);
        else
          store_accumulators<kBN>(ops, end, epilogue, acc[h], staging, tileM, blockN, warpRow);
      }
    };
    if constexpr (kStreamK) {
      const StreamKPlan plan(tiles, kTiles, gridDim.x);
      // The flags, then a tile of float4s a block (computed where used:
      // held across the main loop, the pointers spill beside a 192-wide
      // convolution's residual epilogue).
      int *flags = reinterpret_cast<int *>(workspace);
      constexpr int kPartialVectors = kBM * kBN / 4;
      auto partials = [&](int block) {
        return reinterpret_cast<float4 *>(workspace + kStreamKFlags) +
               static_cast<long long>(block) * kPartialVectors;
      };
      const int thread = threadIdx.x - 128; // of the 256 consumers
      int it = 0;
      plan.walk(blockIdx.x, [&](int tile, int kBegin, int kEnd, int tileStart) {
        const int tileM = rowTile(tile), blockN = columns(tile);
        const bool finishes = kEnd == kTiles;
        if (finishes)
          prefetch_epilogue(tile);
        Accumulators d;
        clear(d);
        drain(multiply(d, kBegin, kEnd, it));
        // Each thread's accumulators as float4s, thread-minor: the writes
        // and the finisher's reads are coalesced, and the finisher's thread
        // t holds the same elements as thread t here.
        if (!finishes) {
          float4 *own = partials(blockIdx.x);
#pragma unroll
          for (int v = 0; v < kBN / 8; ++v) {
            const float *q = &d[0][v / 2][(v % 2) * 4];
            __stcg(own + v * 256 + thread, make_float4(q[0], q[1], q[2], q[3]));
          }
          __threadfence();
          named_barrier_sync(kStreamKBarrier, 256);
          if (thread == 0)
            store_release_gpu(&flags[blockIdx.x], 1);
          return;
        }
        if (tileStart >= 0 && kBegin > 0)
          for (int peer = plan.owner(tileStart); peer < static_cast<int>(blockIdx.x); ++peer) {
            if (thread == 0) {
              while (load_acquire_gpu(&flags[peer]) == 0)
                __nanosleep(32);
              // Lowered for the next launch: each flag is raised and
              // lowered once a launch, so the workspace stays as it began.
              flags[peer] = 0;
            }
            named_barrier_sync(kStreamKBarrier, 256);
            const float4 *theirs = partials(peer);
#pragma unroll
            for (int v = 0; v < kBN / 8; ++v) {
              const float4 p = __ldcg(theirs + v * 256 + thread);
              float *q = &d[0][v / 2][(v % 2) * 4];
              q[0] += p.x;
              q[1] += p.y;
              q[2] += p.z;
              q[3] += p.w;
            }
          }
        store(d, tileM, blockN);
      });
    } else {
      // With kPrefetch the row input's copies a tile ahead pull it from
      // memory already: no L2 prefetch of the same lines beside them.
      if constexpr (!kHandoff && !kPrefetch && !kRingInput)
        prefetch_epilogue(cluster + first * clusters);
      if constexpr (kPrefetch)
        copy_inputs(cluster + first * clusters, 0);
      // Split K: whether this warpgroup keeps its 64 rows (runs their
      // epilogue) or sends its partial sums to the peer that does.
      const bool keeps = kSplitK == 1 || consumer == splitRank;
      const unsigned peer = static_cast<unsigned>(1 - splitRank);
      // The sender's targets in the peer, the same for every tile (mapa is
      // volatile asm: inside the loop it would run once a tile).
      const unsigned theirPartial =
                         kSplitK > 1 ? cluster_address(splitPartial + lane128, peer) : 0u,
                     theirFull = kSplitK > 1 ? cluster_address(&splitFull, peer) : 0u;
      for (int j = first, tile = cluster + first * clusters, parity = 0; tile < tiles;
           j += step, tile += step * clusters, parity ^= 1) {
        const int tileM = rowTile(tile), blockN = columns(tile);
        if constexpr (!kHandoff && !kPrefetch && !kRingInput)
          prefetch_epilogue(tile + step * clusters);
        Accumulators d;
        clear(d);
        // Ping-pong: wait for the other warpgroup to have issued its tile's
        // last k-step. Besides taking turns on the tensor cores, this keeps
        // the two from waiting on the same stage's `full` barrier more than
        // one phase apart, where its parity would not tell them apart.
        if (kPingPong && j > 0)
          named_barrier_sync(kTurnBarrier + consumer, 256);
        if constexpr (kPrefetch) {
          copy_inputs(tile + step * clusters, parity ^ 1);
        } else {
          if constexpr (kEarlyInput && !kHandoff)
            if (keeps)
              copy_first_row_input(ops, N, epilogue, row_input_slice(staging), tileM, blockN,
                                   (kPingPong ? 0 : consumer) * 64 + warp * 16);
          if constexpr (kEarlySecond)
            copy_first_row_input(ops, N, epilogue, secondInput, tileM, blockN, 64 + warp * 16);
        }
        int it = j * (splitEnd - splitBegin + kRingSlices);
        const int previous = multiply(d, splitBegin, splitEnd, it);
        // The other warpgroup's turn, if it has a next tile.
        if (kPingPong && tile + clusters < tiles)
          named_barrier_arrive(kTurnBarrier + (1 - consumer), 256);
        drain(previous);
        if constexpr (kHandoff) {
          // Into the handoff once its epilogue warpgroup is done with the
          // previous tile's, then theirs.
          if (j > 0)
            named_barrier_sync(kHandoffFreeBarrier + consumer, 256);
          float4 *mine = handoff + consumer * (64 * kBN / 4) + lane128;
#pragma unroll
          for (int v = 0; v < kBN / 8; ++v) {
            const float *q = &d[0][v / 2][(v % 2) * 4];
            mine[v * 128] = make_float4(q[0], q[1], q[2], q[3]);
          }
          named_barrier_arrive(kHandoffFullBarrier + consumer, 256);
        } else if constexpr (kSplitK > 1) {
          if (!keeps) {
            // Into the peer's partial once it has read the previous one.
            if (j > 0)
              barrier_wait_acquire_cluster(&splitFree, (j - 1) & 1);
#pragma unroll
            for (int v = 0; v < kBN / 8; ++v) {
              const float *q = &d[0][v / 2][(v % 2) * 4];
              cluster_store4_async(theirPartial + v * 128 * sizeof(float4),
                                   make_float4(q[0], q[1], q[2], q[3]), theirFull);
            }
            continue;
          }
          // The peer's stores may land before this arming (the barrier's
          // byte count dips below zero within the phase): the phase ends
          // once both are in.
          if (lane128 == 0)
            barrier_expect_tx(&splitFull, split_partial_bytes(kBN, kSplitK));
          barrier_wait_acquire_cluster(&splitFull, j & 1);
#pragma unroll
          for (int v = 0; v < kBN / 8; ++v) {
            const float4 p = splitPartial[v * 128 + lane128];
            float *q = &d[0][v / 2][(v % 2) * 4];
            q[0] += p.x;
            q[1] += p.y;
            q[2] += p.z;
            q[3] += p.w;
          }
          // Only a next tile's partial waits for this one to be read.
          if (tile + step * clusters < tiles)
            barrier_arrive_release_cluster(&splitFree, peer);
          store(d, tileM, blockN, kEarlyInput, parity);
        } else if constexpr (kRingInput) {
          const RingInput ring{reinterpret_cast<const unsigned char *>(tilesA),
                               full,
                               empty,
                               it,
                               kStages,
                               static_cast<unsigned>(kTileBytesA),
                               static_cast<unsigned>(kMulticast),
                               rank};
          store(d, tileM, blockN, false, parity, &ring);
        } else if constexpr (Epilogue::kPoolImages > 0) {
          // The stores add into the tile's sums (cleared before the first
          // tile and by each flush); the flush waits for every warp's. (The
          // consumers' barrier is stream-K's, which a pool never runs with.)
          const int thread = threadIdx.x - 128; // of the 256 consumers
          if (j == 0) {
            epilogue.pool_clear(thread, 256);
            named_barrier_sync(kStreamKBarrier, 256);
          }
          store(d, tileM, blockN, kEarlyInput, parity);
          named_barrier_sync(kStreamKBarrier, 256);
          epilogue.pool_flush(tileM, blockN, thread, 256);
          named_barrier_sync(kStreamKBarrier, 256);
        } else {
          store(d, tileM, blockN, kEarlyInput, parity);
        }
      }
    }
  }
  // A peer may still arrive on this block's barriers (or store its partial
  // into this block's shared memory) until it is done.
  if constexpr (kClusterBlocks > 1)
    cluster_sync();
}

template <typename T, int kBN, int kStages, Schedule kSchedule, int kMulticast,
          int kBlocksPerSM, bool kStreamK = false, int kRows = kBM, bool kPrefetchInputs = false,
          int kSplitK = 1, bool kMulticastA = false, typename Epilogue>
__device__ __forceinline__ void wgmma_gemm(const TensorMap &mapA, const TensorMap &mapB,
                                           int M, int N, int K,
                                           const Epilogue &epilogue,
                                           float *workspace = nullptr) {
  wgmma_mainloop<T, kBN, kStages, kSchedule, kMulticast, kBlocksPerSM, kStreamK,
                 kPrefetchInputs, kSplitK, kMulticastA>(
      MatrixOperands<kBN, kRows>{mapA, mapB, M, K, N}, N, epilogue, workspace);
}

/// A GEMM whose epilogue pools (a 1x1 convolution's rows, image after
/// image, into its global average pool): row tiles of kImageRows rows,
/// whole images (the functor's kPoolImages of them), on cooperative
/// 128-row tiles.
template <typename T, int kBN, int kStages, int kImageRows, typename Epilogue>
__device__ __forceinline__ void wgmma_gemm_pooled(const TensorMap &mapA, const TensorMap &mapB,
                                                  int M, int N, int K,
                                                  const Epilogue &epilogue) {
  static_assert(Epilogue::kPoolImages > 0 &&
                    kImageRows == Epilogue::kPoolImages * Epilogue::kPoolPixels &&
                    kImageRows <= kBM,
                "a tile's rows are its whole images");
  wgmma_mainloop<T, kBN, kStages, Schedule::cooperative, 1, 1>(
      MatrixOperands<kBN, kBM, false, false, kImageRows>{mapA, mapB, M, K, N}, N, epilogue);
}

/// matmul and bmm: B [K, N] (kMnMajorB) or [N, K], `batches` matrices
/// (kBatched) where each operand is batched (`batchedA`, `batchedB`) or
/// broadcast over it, their tiles walked by one persistent grid; the
/// epilogue indexes the flattened [batches * M, N] result. No cluster: a
/// multicast B would be shared by row tiles of one batch only.
template <typename T, int kBN, int kStages, Schedule kSchedule, int kBlocksPerSM,
          bool kStreamK, int kRows, bool kPrefetchInputs, bool kMnMajorB, bool kBatched,
          typename Epilogue>
__device__ __forceinline__ void wgmma_matmul(const TensorMap &mapA, const TensorMap &mapB,
                                             int M, int N, int K, int batches, bool batchedA,
                                             bool batchedB, const Epilogue &epilogue,
                                             float *workspace = nullptr) {
  static_assert(!kBatched || !kStreamK, "stream-K's partial tiles take one batch");
  static_assert(!kBatched || !Epilogue::kRowInputRing,
                "the ring's row input boxes are one matrix's rows");
  wgmma_mainloop<T, kBN, kStages, kSchedule, 1, kBlocksPerSM, kStreamK, kPrefetchInputs>(
      MatrixOperands<kBN, kRows, kMnMajorB, kBatched>{mapA, mapB, M, K, N, batches, batchedA,
                                                      batchedB},
      N, epilogue, workspace);
}

#endif // __CUDA_ARCH_FEAT_SM90_ALL

} // namespace kiln::sm90
