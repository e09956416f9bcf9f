//===- HopperTiles.h - the selection stage's Hopper GEMM cost model ---------===//
//
// Shared by kiln-select-kernels (SelectKernels.cpp) and the cost model of
// the Hopper GEMM's tiles (HopperTiles.cpp): the knobs the pass reads, and
// the tile, schedule and ring it picks for gemm_wgmma and conv_wgmma.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/Dialect/Kiln/KernelShapes.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Target/Target.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace kiln::selection {

/// The pass's options, as the selection reads them.
struct SplitKKnobs {
  int64_t maxBlocks, minK, kTile, stages;
  bool convWgmma;
  int64_t gemmNarrowFmas; // 0: never gemm_narrow
  int64_t gemmGemvRows; // 0: never gemm_gemv
  int64_t gemmStreamIntensity; // 0: never gemm_stream
  int64_t gemmStreamBlocks;    // gemm_stream's blocks a multiprocessor, at most
  bool poolVector;
  int64_t depthwiseColumns; // output columns a vectorized depthwise thread takes
  bool depthwisePatches;    // one column a thread: 2-D patches staged in shared memory
  int64_t elementwiseUnroll; // elements an elementwise thread takes a step
  std::string wgmmaSchedule; // auto, cooperative or pingpong
  int64_t wgmmaMulticast;    // 0: the cost model's choice
  int64_t wgmmaBlocksPerSM;  // 0: the cost model's choice
  int64_t wgmmaRows;         // 0: the cost model's choice, else 128 or 192
  int64_t attentionRows;     // 0: the cost model's choice
  int64_t attentionStages;   // 0: attention_wgmma's 2
  bool wgmmaStreamK;
  bool wgmmaResidualPrefetch;
  bool wgmmaResidualRing; // a residual through the ring, a stage deeper where it fits
  bool attentionWgmma;
  bool attentionOverlap;
  bool attentionPersistent;
  bool runtimeSizes; // gemm_wgmma: M, N and K at launch where the epilogue allows
  bool wgmmaMatmul;  // matmul and bmm (a [K, N] B, a batch) as gemm_wgmma
  bool wgmmaSplitK;  // pairs of blocks in a cluster split K under half a wave
  /// GEMMs of one to three 128-row tiles on gemm_wgmma rather than
  /// gemm_split_k, where its 128 x 64 tiles fill a quarter of the GPU.
  bool wgmmaFewRows = true;
  /// The fewest 128 x 64 tiles that take it (0: a quarter of the
  /// multiprocessors).
  int64_t wgmmaFewRowsTiles = 0;
  /// The few-row GEMMs left to gemm_split_k as gemm_wgmma_swap instead.
  bool wgmmaSwap = false;
  /// GEMMs that would split K over mma.sync as gemm_wgmma_swap's wide token
  /// tiles, where those leave no more work a multiprocessor.
  bool wgmmaSwapWide = true;
  /// gemm_wgmma's tiles in pairs along N that share the A tile.
  bool wgmmaMulticastA = false;
  /// gemm_wgmma's 128 x 56 tiles where they leave the busiest block fewer
  /// outputs.
  bool wgmmaNarrow = false;
  /// -1: the cost model's tile; N >= 0: the N-th of the tiles it considered
  /// (its own choice first, then the others cheapest first; past the last,
  /// its own), for a tuner that times each layer's candidates.
  int64_t wgmmaCandidate = -1;
  /// attention_wgmma's blocks a multiprocessor: 0 (the kernel's rule) or 4
  /// (the cooperative schedule at a head size of 64, 96 registers).
  int64_t attentionBlocksPerSM = 0;
};

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline std::string str(int64_t v) { return std::to_string(v); }

/// The Hopper GEMM's tile: rows x width x 64, the consumer warpgroups'
/// schedule, and the deepest ring of stages (at most 6) that fits in
/// shared memory.
struct WgmmaTile {
  int64_t width, stages, tiles;
  WgmmaSchedule schedule;
  int64_t multicast;
  std::string why;
  int64_t blocksPerSM = 1;
  int64_t rows = 128;
  /// Outputs the busiest block computes: its tiles times a tile's outputs.
  int64_t blockOutputs = 0;
  /// Blocks of a cluster that split each tile's k-steps (1: none).
  int64_t splitK = 1;
  /// The residual through the main loop's ring (residual_ring), and the
  /// stages a ring may take where it is copied by rows instead (stream-K,
  /// which the ring does not take, decides later).
  bool residualRing = false;
  int64_t copiedStages = 0;
};

/// The grid_limit of a Hopper main loop's launch of `tile`: every block a
/// stream-K launch may take, both blocks of each split tile's pair, else a
/// block a tile up to `blocks`.
inline int64_t wgmmaGridLimit(const WgmmaTile &tile, bool streamed, int64_t blocks) {
  if (streamed)
    return blocks;
  return tile.splitK != 1 ? tile.splitK * tile.tiles : std::min(tile.tiles, blocks);
}

/// The candidate whose tiles finish soonest (HopperTiles.cpp).
WgmmaTile wgmmaTile(const GemmShape &s, const TargetImage &target, FusionOp group,
                    const SplitKKnobs &knobs);
/// gemm_wgmma_swap's wide token tiles: 64 weight rows by `tokens` a block,
/// all of K, in clusters of `cluster` that share the weight tile.
struct SwapWideTile {
  int64_t tokens = 0, cluster = 1, stages = 0, blocks = 0;
  std::string why;
};
/// What they must beat: the kernel the selection takes otherwise, as the
/// multiply-adds its busiest multiprocessor computes, and its name.
struct SwapWideReference {
  int64_t busiestMacs = 0;
  std::string kernel;
};
/// The narrowest wide token tile whose blocks fill at most one wave, each
/// with no more multiply-adds than the reference's busiest multiprocessor,
/// or nothing; `why` says why not (empty under 4 row tiles of 128, which
/// the few-row rules take).
std::optional<SwapWideTile> swapWideTile(const GemmShape &s, const TargetImage &target,
                                         const SwapWideReference &reference, std::string &why);
/// `tile` as the narrow 128 x 56 tile where that leaves its busiest block
/// fewer outputs (wgmma-narrow's rule, HopperTiles.cpp): a main loop long
/// enough that the tensor cores set the pace, one wave either way, a
/// cooperative 128-row tile of one block, a [N, K] B, no batch, no
/// residual, cluster, split K, stream-K or sizes at launch; `why` says
/// which.
bool narrowTile(WgmmaTile &tile, const GemmShape &s, const TargetImage &target,
                bool streamed, bool runtimeSizes, bool residual, std::string &why);
/// Whether `tile` runs in pairs of column tiles sharing A by multicast
/// (wgmma-multicast-a's rule, HopperTiles.cpp); `why` says which.
bool sharesATile(const WgmmaTile &tile, const GemmShape &s, const TargetImage &target,
                 bool streamed, bool runtimeSizes, bool residual, std::string &why);
/// Whether stream-K takes the tile; `why` says why or why not.
bool streamKApplies(const WgmmaTile &tile, int64_t batch, int64_t blocks, int64_t kSteps,
                    bool convResidual, std::string &why);
/// Whether the group's epilogue reads a group input at every output element
/// (an input of the result's shape used by an op other than the GEMM or
/// convolution and its layout change).
bool readsResidual(FusionOp group);

/// runtime-sizes (RuntimeSizes.cpp): whether a GEMM group (gemm_split_k,
/// or gemm_wgmma on 128-row tiles: on 192-row ones, ViT-B/16's at batch
/// 32, ptxas spilled the epilogue with the sizes in registers) can take M,
/// N and K at launch: no batch, N % 8 == 0 (the epilogue's pairs and
/// 16-byte chunks need no check of N), an elementwise epilogue over the
/// bias by column and inputs of the result's shape. `why` says why or why
/// not, for the remarks.
bool runtimeSizesApply(FusionOp group, const GemmShape &s, std::string &why);
/// Whether a normalization group can take its row count at launch: its
/// inputs are rows, row vectors or single elements.
bool runtimeRowsApply(FusionOp group, const NormalizationShape &shape, std::string &why);

} // namespace kiln::selection
