//===- HopperTiles.cpp - the Hopper GEMM's tile, schedule and ring --------===//
//
// kiln-select-kernels' cost model for gemm_wgmma and conv_wgmma: which tile
// width, rows and schedule finish a GEMM's tiles soonest on the target's
// multiprocessors, the deepest ring of stages that fits, and whether
// stream-K shares the last waves (see SelectKernels.cpp's file comment).
//
//===----------------------------------------------------------------------===//

#include "HopperTiles.h"

#include <algorithm>

using namespace mlir;
using namespace kiln;

namespace kiln::selection {

namespace {
/// Two blocks a multiprocessor compile within 80 registers a thread:
/// cooperative 64-wide tiles only.
constexpr int64_t kTwoBlockWidth = 64;

/// A tile shape and schedule the Hopper main loop implements. A narrower
/// tile pays more per column: it reuses each loaded A tile over fewer
/// columns and runs as many epilogues per column.
struct WgmmaCandidate {
  WgmmaSchedule schedule;
  int64_t width;
  double perColumn;
  int64_t rows = 128;
  /// fp32 accumulators per consumer thread.
  int64_t accumulators() const {
    return wgmmaAccumulators(schedule == WgmmaSchedule::pingpong, width);
  }
  bool handoff() const { return schedule == WgmmaSchedule::epilogue_warpgroups; }
  /// The cost a column for a GEMM (`conv` false) or a convolution.
  double costPerColumn(bool conv) const;
};
/// 64 wide for few output columns: a 1x1 convolution to 16 or 24 channels
/// (EfficientNet, MobileNet) in a 128-wide tile computed 8 or 5 times the
/// epilogue it stores, and a convolution of 64 output channels left half of
/// one idle. GEMMs and convolutions choose among the same candidates.
constexpr WgmmaCandidate kWgmmaCandidates[] = {
    {WgmmaSchedule::cooperative, 256, 1.0}, {WgmmaSchedule::cooperative, 192, 1.05},
    {WgmmaSchedule::cooperative, 128, 1.15}, {WgmmaSchedule::cooperative, 64, 1.3},
    {WgmmaSchedule::pingpong, 128, 1.15},    {WgmmaSchedule::pingpong, 64, 1.3},
    {WgmmaSchedule::epilogue_warpgroups, 128, 1.15},
    {WgmmaSchedule::epilogue_warpgroups, 64, 1.3},
    {WgmmaSchedule::cooperative, 192, 1.0, 192}, {WgmmaSchedule::cooperative, 128, 1.05, 192},
    {WgmmaSchedule::cooperative, 64, 1.25, 192}};
/// No 64-row tiles: ping-pong warpgroups each holding a 64 x 256 or 64 x
/// 192 tile (the epilogue beside the other's main loop, whole waves on
/// ViT-B/16's 6304 rows) were built and timed on the H100 (2026-12-07,
/// every transformer GEMM at batch 32) at 1.17-1.84x the time of these
/// candidates' (ViT's GELU up-projection 49.7 -> 67.0 us). Per output a
/// 64 x 256 tile loads 1.25 times a 128 x 128 tile's operands from L2, and
/// it took 1.25 times as long on BERT's FFN up-projection (34.2 -> 43.0
/// us), both loading 8.8 TB/s: there the operands' L2 reads bound the
/// main loop, not the epilogue (bench/NOTES.md).
/// A 192-row tile's main loop and epilogue take 1.5 times a 128-row one's
/// (the epilogue's stores and residual reads are the tile's bytes, whatever
/// the warps that issue them). Its A tile is reused over 192 columns and
/// its B tile over 192 rows: per output, the operands' shared-memory
/// traffic of a 128 x 256 tile, hence its 1.0 a column (a GEMM's 128 x
/// 256 pays more for its epilogue: kWideCooperativeGemmPerColumn). Measured
/// on the H200 (2026-12-04, GEMMs alone), where it says 192 rows: ViT's FFN
/// down-projection 53.6 -> 45.0 us, output projection 18.5 -> 15.0, FFN
/// up-projection 58.8 -> 55.8; BERT's QKV 24.2 -> 24.5 (even), and where it
/// says 128: ViT's QKV (ping-pong 34.6, 192 rows 35.8), BERT's FFN
/// down-projection (29.1 against 39.2: 88 tiles on 132 multiprocessors).
/// Two blocks a multiprocessor, unasked, for an epilogue that reads a
/// residual after a main loop of 2 to 4 k-steps, where each of the two
/// blocks still walks at least 6 tiles: one block's residual loads and
/// stores then run beside the other's main loop. Measured on the H200
/// (ResNet-50 at batch 32, each launch alone, 2026-12-04): the 1x1
/// 128 -> 512 convolutions with a residual at 28 x 28 (1568 tiles, 6 a
/// block) 18.8 -> 17.6 us, 256 -> 512 stride 2 28.0 -> 25.6; where it
/// stays one: 64 -> 256 at 56 x 56 (one k-step) 32.2 -> 32.4, 256 -> 1024
/// at 14 x 14 (3 tiles a block) 11.8 -> 12.4, 512 -> 2048 (8 k-steps)
/// 10.9 -> 12.0. As the rule, twice more on 2026-12-05: 5.7 and 6.0 us
/// off the four launches it takes.
constexpr int64_t kTwoBlockMinKSteps = 2;
constexpr int64_t kTwoBlockMaxKSteps = 4;
constexpr int64_t kTwoBlockMinTilesPerBlock = 6;
/// A tile's epilogue, in k-steps of its main loop (64 deep, same width):
/// converting, the fused ops and the stores of 128 x width outputs.
constexpr double kEpilogueSteps = 6;
/// Stream-K where the blocks would idle this share of the waves' time (the
/// last wave's empty part) and up to this many waves: streamed tiles split
/// in two or three cost a partial tile's write and read each, which a
/// nearly full last wave does not pay back (BERT's QKV: 384 tiles on 132,
/// 3% idle).
constexpr double kStreamKMinIdle = 0.15;
constexpr int64_t kStreamKMaxWaves = 4;
/// Ping-pong's overlap is not free: the epilogue takes issue slots beside
/// the other warpgroup's wgmmas, the turns order the main loops, and one
/// warpgroup issues twice the wgmmas of a cooperative one. Fitted on the
/// H200, GEMMs alone against each other. For GEMMs since the epilogue
/// takes columns in pairs (2026-12-02, evening): 128-wide ping-pong tiles
/// beat cooperative 256 on every FFN up-projection (BERT's with GELU 38.5
/// against 40.7 us, GPT-2's 35.6 against 40.1, ViT's 61.0 against 66.2, and
/// with a bias alone 29.9 against 32.4) and lost to cooperative 192 on the
/// down-projections (K = 3072: 32.3 against 27.4) and BERT's QKV (26.7
/// against 25.0). Implicit-GEMM convolutions take the GEMMs' factor since
/// they were tuned launch by launch on the H100 (batch 32, 2026-12-06,
/// candidates alone, then side by side in the whole model): 64-wide ping-pong
/// tiles on ResNet-50's 3x3 128 -> 128 at 28 x 28, 15.7 -> 14.5 us, and
/// 128-wide on its merged shortcut at 14 x 14, 16.1 -> 14.7; at 1.15 these
/// three alone change among the CNNs' implicit GEMMs. 1x1 convolutions run
/// as GEMMs keep the factor fitted before (cooperative within 1% of the
/// chosen mix on the CNNs): at 1.15 EfficientNet-B0's 320 -> 1280 at 7 x 7
/// would turn ping-pong, which its tuning did not find faster.
constexpr double kPingPongOverheadGemm = 1.15, kPingPongOverheadPointwise = 1.3;
/// A GEMM's cooperative 256-wide tile pays a column what a 192-wide one
/// does, not less: with both factors at 1.0 and 1.15 the cost model gave
/// the FFN block's up-projection (4096 x 4096 x 1024 + GELU, 4 tiles a
/// block) 128 x 256 over 128-wide ping-pong by 0.7%, and on the H100
/// (2026-12-07, GEMMs alone, one table) ping-pong took 51.7 us against
/// 57.1, as it had beaten cooperative 256 on every FFN up-projection before
/// (above). Where K is long the 256-wide tile still wins the model by 20%
/// or more (the FFN's 4096 x 1024 x 4096 down-projection, a square 4096
/// GEMM). Convolutions keep 1.0: their tiles were tuned with it.
constexpr double kWideCooperativeGemmPerColumn = 1.05;

double WgmmaCandidate::costPerColumn(bool conv) const {
  return !conv && width == 256 && schedule == WgmmaSchedule::cooperative
             ? kWideCooperativeGemmPerColumn
             : perColumn;
}
/// A 1x1 convolution takes 192-row tiles (over the cost model's 128-row
/// choice, when that is 64 wide or under a wave) only where they come in at
/// most two waves, each with this share of the multiprocessors busy. On the
/// H200 at batch 32 (2026-12-04, launch by launch, every 1x1 convolution of
/// ResNet-50, MobileNetV3 and EfficientNet-B0 on 128 and on 192 rows), 192
/// rows won on one or two full waves: ResNet-50's 512 -> 128 at 28 x 28 13.5
/// -> 12.4 us, 1024 -> 512 at 14 x 14 17.6 -> 14.8, 1024 -> 256 11.6 -> 11.0,
/// 256 -> 1024 12.0 -> 11.5; MobileNetV3's and EfficientNet's 40 -> 240 at
/// 28 x 28 16.3 -> 13.3 and 16.9 -> 14.7, 80 -> 480 at 14 x 14 10.3 -> 9.4,
/// 120 -> 40 + residual 9.7 -> 8.8, 112 -> 672 12.7 -> 10.4. They lost on
/// four waves (ResNet-50's 56 x 56 layers, up to 1.17x with a residual),
/// under a full wave (every 7 x 7 layer, up to 1.15x; 14 x 14 to 80 or 112
/// channels, 66 tiles) and against 128-wide tiles on three full waves
/// (ResNet-50's 512 -> 256 at 28 x 28, 16.9 -> 17.5). With a residual, 64
/// wide only: 128 wide lost even on two waves (ResNet-50's 256 -> 1024 +
/// residual at 14 x 14, 15.3 -> 15.5).
constexpr int64_t kTallPointwiseMaxWaves = 2;
constexpr int64_t kTallPointwiseMinBusyPercent = 95;
/// Split K across a cluster (--wgmma-split-k, off: about 3 us slower a
/// launch where it applied, 2026-12-05): a main loop of at least this many
/// k-steps, so that each block of a pair walks 4 or more beside the
/// exchange of 32-48 KiB of partial sums.
constexpr int64_t kSplitMinKSteps = 8;
/// The widths a split tile may take (192 wide, a residual epilogue spilled
/// beside the split's own registers).
constexpr int64_t kSplitWidths[] = {64, 128};

/// The deepest ring, 2 to 6 stages, whose shared memory (wgmmaSharedBytes
/// with these arguments, `blocksPerSM` blocks of it) fits the target.
/// `halfStaging`: the staging keeps only its results' half (a residual
/// through the ring).
int64_t ringStages(const TargetImage &target, int64_t width, bool handoff, int64_t rows,
                   bool secondInputs, bool prefetchInputs, int64_t splitK,
                   int64_t blocksPerSM, bool halfStaging = false) {
  int64_t stages = 2;
  while (stages < 6 &&
         wgmmaSharedBytes(width, stages + 1, handoff, rows, secondInputs, prefetchInputs,
                          splitK, halfStaging) *
                 blocksPerSM <=
             target.maxDynamicSharedBytes)
    ++stages;
  return stages;
}

/// The wide token tiles, narrowest first, the shortest main loop and the
/// fewest row tiles that take them. EfficientNet-B0's 7 x 7 projections
/// (1152 -> 192 and 320, 672 -> 192, batch 32), under half a wave of 128 x
/// 64 tiles, ran K split over mma.sync at 2.0-2.2x cuDNN's time (the H200,
/// 2026-12-06); on 78 or 130 swapped blocks of 64 x 64 they took 5.5-7.9
/// us where the split took 8.5-11.5 (the H100, 2026-12-07). A short K
/// leaves a block's time to its prologue and epilogue, which the swapped
/// block does not overlap (8 k-steps: those layers). Under 4 row tiles the
/// few-row rules decide (a transformer at batch 1, measured against
/// cuBLAS).
constexpr int64_t kSwapWideTokens[] = {64, 96, 112, 128};
constexpr int64_t kSwapWideMinKSteps = 8;
constexpr int64_t kSwapWideMinRowTiles = 4;
/// Its deepest ring: a wide tile's stage is 16 to 24 KiB, and 8 stages
/// cover the L2 latency of a block that walks 16 or more.
constexpr int64_t kSwapWideMaxStages = 8;

} // namespace

std::optional<SwapWideTile> swapWideTile(const GemmShape &s, const TargetImage &target,
                                         const SwapWideReference &reference, std::string &why) {
  const int64_t multiprocessors = target.multiprocessors;
  if (!s.kMajorB || s.batch != 1 || s.K % 8 != 0 || s.N % kSwapWeightRows != 0) {
    why = "not wide swapped tiles: they take a [N, K] B, no batch, K % 8 == 0 and N % 64 == 0";
    return std::nullopt;
  }
  // Few rows are the few-row rules' (`why` stays empty: not a candidate).
  if (ceilDiv(s.M, 128) < kSwapWideMinRowTiles)
    return std::nullopt;
  const int64_t kSteps = ceilDiv(s.K, 64);
  if (kSteps < kSwapWideMinKSteps) {
    why = "not wide swapped tiles: " + str(kSteps) + " k-steps, under " +
          str(kSwapWideMinKSteps);
    return std::nullopt;
  }
  const int64_t weightTiles = s.N / kSwapWeightRows;
  for (int64_t tokens : kSwapWideTokens) {
    const int64_t macs = kSwapWeightRows * tokens * kSteps * 64;
    if (macs > reference.busiestMacs)
      break;
    const int64_t tokenTiles = ceilDiv(s.M, tokens);
    // Pairs share each weight tile by multicast (a pair's tile past M loads
    // the last one in bounds and stores nothing).
    const int64_t cluster = tokenTiles >= 2 ? 2 : 1;
    const int64_t blocks = ceilDiv(tokenTiles, cluster) * cluster * weightTiles;
    if (blocks > multiprocessors)
      continue;
    int64_t stages = std::max<int64_t>(std::min(kSteps, kSwapWideMaxStages), 3);
    while (stages > 3 && swapSharedBytes(tokens, stages) > target.maxDynamicSharedBytes)
      --stages;
    SwapWideTile wide{tokens, cluster, stages, blocks, ""};
    wide.why = reference.kernel + ": " + str(blocks) + " blocks of 64 x " + str(tokens) +
               " in one wave, clusters of " + str(cluster) + ", " + str(stages) + " stages";
    return wide;
  }
  why = "not wide swapped tiles: none of 64 to 128 tokens fills one wave of " +
        str(multiprocessors) + " within " + reference.kernel;
  return std::nullopt;
}

/// Whether stream-K (StreamKPlan, codegen/cuda/kiln_stream_k.cuh) takes the tile:
/// blocks idle for at least kStreamKMinIdle of the waves' time (the last
/// wave's empty part: a quarter of ViT's down-projection at 1.5 waves; or,
/// under one wave, the blocks without a tile), at most kStreamKMaxWaves
/// waves, and two k-steps or more for every block. `why` says which.
/// A convolution's tile wider than 128 with a residual is left alone: its
/// pixel indexing, the residual's loads and stream-K's state spill there.
bool streamKApplies(const WgmmaTile &tile, int64_t batch, int64_t blocks, int64_t kSteps,
                    bool convResidual, std::string &why) {
  if (tile.schedule != WgmmaSchedule::cooperative || tile.multicast != 1 ||
      tile.blocksPerSM != 1 || batch != 1 || tile.rows != 128 || tile.splitK != 1) {
    why = "not stream_k: it takes one cooperative block a multiprocessor, no cluster, "
          "batch 1, 128-row tiles";
    return false;
  }
  if (convResidual && tile.width > 128) {
    why = "not stream_k: a convolution's " + str(tile.width) +
          "-wide tile with a residual has no registers to spare";
    return false;
  }
  const int64_t waves = ceilDiv(tile.tiles, blocks);
  const double idle = 1.0 - static_cast<double>(tile.tiles) / static_cast<double>(waves * blocks);
  const std::string idleShare = std::to_string(static_cast<int>(idle * 100 + 0.5)) + "%";
  const std::string tiles = str(tile.tiles) + " tiles on " + str(blocks) + " blocks";
  if (idle < kStreamKMinIdle) {
    why = "not stream_k: " + tiles + " leave " + idleShare + " of the waves idle";
    return false;
  }
  if (waves > kStreamKMaxWaves) {
    why = "not stream_k: " + tiles + " are more than " + str(kStreamKMaxWaves) + " waves";
    return false;
  }
  const int64_t streamed = tile.tiles < blocks ? tile.tiles : blocks + tile.tiles % blocks;
  if (streamed * kSteps < 2 * blocks) {
    why = "not stream_k: " + tiles + " of " + str(kSteps) +
          " k-steps give a block fewer than two";
    return false;
  }
  why = "stream_k: " + tiles + " leave " + idleShare + " of the waves idle; " +
        (tile.tiles < blocks ? "all" : "the last " + str(streamed)) +
        " shared by k-iterations";
  return true;
}

/// The shortest main loop the narrow tile takes: under it the epilogue,
/// not the multiply-adds a block computes, sets a one-wave launch's time
/// (MobileNetV3's and EfficientNet-B0's 14 x 14 projections, 4 to 11
/// k-steps, keep their tiles; ResNet-50's 2048 -> 512 has 32).
constexpr int64_t kNarrowMinKSteps = 16;

bool narrowTile(WgmmaTile &tile, const GemmShape &s, const TargetImage &target, bool streamed,
                bool runtimeSizes, bool residual, std::string &why) {
  const int64_t width = kWgmmaNarrowWidth;
  if (!s.kMajorB || s.batch != 1 || s.N < width || residual) {
    why = "not 56 wide: it takes a [N, K] B without a batch, at least 56 columns and no "
          "residual (its ring's slices are 64 wide)";
    return false;
  }
  if (ceilDiv(s.K, 64) < kNarrowMinKSteps) {
    why = "not 56 wide: " + str(ceilDiv(s.K, 64)) + " k-steps, under " + str(kNarrowMinKSteps);
    return false;
  }
  if (tile.rows != 128 || tile.splitK != 1 || tile.multicast != 1 || tile.blocksPerSM != 1 ||
      streamed || runtimeSizes) {
    why = "not 56 wide: the tile is not one cooperative 128-row block without a cluster, "
          "stream-K or sizes at launch";
    return false;
  }
  const int64_t tiles = ceilDiv(s.M, 128) * ceilDiv(s.N, width);
  // One wave either way: more tiles a block would add epilogues that the
  // outputs do not count.
  if (tiles > target.multiprocessors || tile.tiles > target.multiprocessors) {
    why = "not 56 wide: " + str(tiles) + " tiles of 128 x 56 (or the tile's " + str(tile.tiles) +
          ") fill more than one wave of " + str(target.multiprocessors);
    return false;
  }
  const int64_t outputs = 128 * width;
  if (outputs >= tile.blockOutputs) {
    why = "not 56 wide: " + str(tiles) + " tiles of 128 x 56 leave the busiest block " +
          str(outputs) + " outputs, not fewer than " + str(tile.blockOutputs);
    return false;
  }
  why = str(tiles) + " tiles of 128 x 56 (wgmma-narrow): the busiest block computes " +
        str(outputs) + " outputs, not " + str(tile.blockOutputs);
  tile.width = width;
  tile.tiles = tiles;
  tile.blockOutputs = outputs;
  tile.schedule = WgmmaSchedule::cooperative;
  tile.residualRing = false;
  tile.stages = ringStages(target, width, false, 128, false, false, 1, 1);
  tile.copiedStages = tile.stages;
  return true;
}

/// Whether the Hopper GEMM's chosen tile runs in pairs along N that share
/// the A tile (wgmma-multicast-a): each block loads half of the A tile's
/// rows for both and its own B tile, so A leaves L2 once a pair. The
/// kernel takes an odd column count (a tile past N computed, not stored);
/// the selection does not, where that would be a row's worth of waste.
bool sharesATile(const WgmmaTile &tile, const GemmShape &s, const TargetImage &target,
                 bool streamed, bool runtimeSizes, bool residual, std::string &why) {
  if (!target.clusters) {
    why = "not pairs sharing A: " + target.arch + " has no clusters";
    return false;
  }
  const char *taken = tile.multicast != 1 ? "pairs sharing B (wgmma-multicast)"
                      : tile.splitK != 1   ? "K split over a cluster"
                      : streamed           ? "stream-K"
                      : tile.schedule == WgmmaSchedule::epilogue_warpgroups
                          ? "the epilogue warpgroups"
                      : runtimeSizes ? "sizes given at launch"
                                     : nullptr;
  if (taken) {
    why = std::string("not pairs sharing A: the tile takes ") + taken;
    return false;
  }
  if (!s.kMajorB || s.batch != 1) {
    why = "not pairs sharing A: they take a [N, K] B and no batch";
    return false;
  }
  // At 160 registers a consumer, a 192 x 192 tile's residual copied by
  // rows spilled 8 bytes beside the pair's cluster addressing (NVRTC,
  // 2026-12-07); through the ring it fits.
  if (tile.rows == 192 && tile.width == 192 && residual && !tile.residualRing) {
    why = "not pairs sharing A: a 192 x 192 tile's residual copied by rows spills beside them";
    return false;
  }
  const int64_t columnTiles = ceilDiv(s.N, tile.width);
  if (columnTiles < 2 || columnTiles % 2 != 0) {
    why = "not pairs sharing A: " + str(columnTiles) + " column tiles of " + str(tile.width) +
          " (an even count of 2 or more)";
    return false;
  }
  why = "pairs of column tiles sharing A by multicast (wgmma-multicast-a)";
  return true;
}

/// The group inputs its epilogue reads at every output element: inputs of
/// the result's shape used by an op other than the GEMM or convolution and
/// its layout change.
static llvm::SmallVector<BlockArgument> residualInputs(FusionOp group) {
  Block &body = group.getBody().front();
  // The shape the epilogue computes: a pooled group's, what it pools.
  std::optional<GlobalPool> pool = globalPoolOf(group);
  ArrayRef<int64_t> result =
      cast<RankedTensorType>(pool ? pool->mean.getInput().getType() : group.getResult(0).getType())
          .getShape();
  llvm::SmallVector<BlockArgument> residuals;
  for (BlockArgument argument : body.getArguments()) {
    if (cast<RankedTensorType>(argument.getType()).getShape() != result)
      continue;
    if (llvm::any_of(argument.getUsers(), [](Operation *user) {
          return !isa<LinearOp, MatmulOp, BatchMatmulOp, Conv2dOp, PermuteOp>(user);
        }))
      residuals.push_back(argument);
  }
  return residuals;
}

/// Whether the group's epilogue reads a group input at every output element.
bool readsResidual(FusionOp group) { return !residualInputs(group).empty(); }

/// Whether the group's one result and its one residual are 16-bit, the
/// result its only one: what the Hopper GEMM's ring can carry
/// (--wgmma-residual-ring; the code generator checks the epilogue itself).
static bool sixteenBitResidual(FusionOp group) {
  auto sixteen = [](Type type) {
    Type element = cast<RankedTensorType>(type).getElementType();
    return element.isF16() || element.isBF16();
  };
  if (group->getNumResults() != 1 || !sixteen(group.getResult(0).getType()))
    return false;
  llvm::SmallVector<BlockArgument> residuals = residualInputs(group);
  return residuals.size() == 1 && sixteen(residuals.front().getType());
}

static std::string scheduleName(WgmmaSchedule schedule) {
  return stringifyWgmmaSchedule(schedule).str();
}

/// The candidate whose tiles finish soonest. A persistent block walks
/// n = ceil(blocks' tiles / multiprocessors) tiles. Cooperative, each
/// tile's main loop (k steps) and epilogue (e) follow each other: n (k + e).
/// Ping-pong, one warpgroup's epilogue runs beside the other's main loop:
/// the tensor cores need n k + e, each warpgroup ceil(n / 2) (k + e).
/// Multicast pairs of blocks take row tiles two at a time (an odd last one
/// is computed and not stored) and read B from L2 once for both. N = 768 at
/// M = 4096: 96 cooperative tiles of 128 x 256 leave 36 of 132
/// multiprocessors idle, 128 of 128 x 192 fill all but 4.
///
/// Multicast is taken only when asked for: on the H200 the transformer
/// GEMMs read a third of L2's bandwidth without it (Nsight Compute), and
/// pairs were no faster on any of them and up to 1.3x slower with a GELU
/// epilogue (2026-12-02).
WgmmaTile wgmmaTile(const GemmShape &s, const TargetImage &target, FusionOp group,
                    const SplitKKnobs &knobs) {
  const bool residual = readsResidual(group);
  // What the ring can carry (wgmma-residual-ring, below), asked once for
  // every candidate tile.
  const bool ringCarries = knobs.wgmmaResidualRing && sixteenBitResidual(group);
  const int64_t multiprocessors = target.multiprocessors;
  const int64_t kSteps = ceilDiv(std::max<int64_t>(s.K, 1), 64);
  const double k = static_cast<double>(kSteps);
  const double e = kEpilogueSteps;
  // An implicit GEMM's shape has no anchor; a 1x1 convolution run as a GEMM
  // is a GEMM's rows of pixels (and may take 192 of them, below).
  const bool conv = group.getKind() == FusionKind::conv_epilogue;
  const bool implicitConv = conv && s.anchor == nullptr;
  const bool pointwiseConv = conv && !implicitConv;
  const double pingPongOverhead =
      pointwiseConv ? kPingPongOverheadPointwise : kPingPongOverheadGemm;
  WgmmaTile best{0, 0, 0, WgmmaSchedule::cooperative, 1, ""};
  double bestCost = 0;
  // The best of 128 rows, against which 192 rows must save work.
  WgmmaTile bestShort{0, 0, 0, WgmmaSchedule::cooperative, 1, ""};
  double bestShortCost = 0;
  std::string considered;
  // Every tile the loop below admits, with its cost: wgmma-candidate's list.
  llvm::SmallVector<std::pair<double, WgmmaTile>> feasible;
  // Tiles the tuner tries after those (GEMMs' 192-row tiles under 192 wide).
  llvm::SmallVector<WgmmaTile> tunerLast;
  const std::string &schedule = knobs.wgmmaSchedule;
  // Pairs need clusters and a second row tile to share B with: a [N, K] B
  // without a batch (the kernel's multicast loads).
  int64_t multicast = knobs.wgmmaMulticast == 0 ? 1 : knobs.wgmmaMulticast;
  if (multicast > 1 &&
      (!target.clusters || ceilDiv(s.M, 128) < multicast || !s.kMajorB || s.batch != 1))
    multicast = 1;
  // Two blocks a multiprocessor where asked for, or (the cost model's
  // choice) for a short main loop before a residual epilogue (above). Only
  // with a [N, K] B without a batch (GemmEmitter.cpp says why), and
  // cooperative 64-wide tiles of 128 rows, so not under another schedule
  // or row count that was asked for.
  const bool shortResidual =
      knobs.wgmmaBlocksPerSM == 0 && residual && kSteps >= kTwoBlockMinKSteps &&
      kSteps <= kTwoBlockMaxKSteps && multicast == 1 && knobs.wgmmaSchedule == "auto" &&
      knobs.wgmmaRows != 192 &&
      ceilDiv(ceilDiv(s.M, 128) * ceilDiv(s.N, kTwoBlockWidth) * s.batch,
              2 * multiprocessors) >= kTwoBlockMinTilesPerBlock;
  const int64_t blocksPerSM =
      (knobs.wgmmaBlocksPerSM == 2 || shortResidual) && s.kMajorB && s.batch == 1 ? 2 : 1;
  // The epilogue warpgroups only when asked for (not yet measured), and
  // for GEMMs alone: a convolution asking for them takes the cost model's.
  // A 1x1 convolution's 192-row tile, chosen by its waves (below).
  WgmmaTile bestTall{0, 0, 0, WgmmaSchedule::cooperative, 1, ""};
  // The 192-row tiles that carry their residual through the ring, each
  // with its candidate's cost a column, weighed after the loop.
  llvm::SmallVector<std::pair<double, WgmmaTile>> tallRing;
  double bestPerColumn = 0;
  auto waves = [&](int64_t tiles) { return ceilDiv(tiles, multiprocessors); };
  // Fewest waves, then the least padded area computed.
  auto fewerWaves = [&](int64_t tiles, int64_t area) {
    return bestTall.width == 0 || waves(tiles) < waves(bestTall.tiles) ||
           (waves(tiles) == waves(bestTall.tiles) &&
            area < bestTall.tiles * bestTall.rows * bestTall.width);
  };
  const bool anySchedule =
      schedule == "auto" || (conv && schedule == "epilogue_warpgroups");
  for (const WgmmaCandidate &candidate : kWgmmaCandidates) {
    // The cost model's own choice takes no epilogue warpgroups: beside
    // the next main loop their epilogues lost every GEMM they were timed on
    // (fp32 accumulators handed on 128-row tiles, fp16 pairs on 192 rows).
    if (anySchedule ? candidate.handoff() : scheduleName(candidate.schedule) != schedule)
      continue;
    // Past the residual's limit: only with the residual through the ring,
    // where the epilogue reads it from shared memory instead of issuing
    // global loads beside the accumulators (ResNet-50's 512 -> 2048 +
    // residual at 7 x 7 in 128 x 256 tiles: 168 registers, no spill); the
    // cost model's only where its tiles fill one wave at most (below).
    const bool pastResidualLimit =
        residual && candidate.accumulators() > kResidualMaxAccumulators;
    if (pastResidualLimit && !ringCarries)
      continue;
    if (blocksPerSM == 2 && (candidate.width != kTwoBlockWidth ||
                             candidate.schedule != WgmmaSchedule::cooperative))
      continue;
    // 192 rows: GEMMs and 1x1 convolutions (an implicit GEMM's pixel boxes
    // are 128), one block a multiprocessor, no cluster; taken as the knob
    // says (wgmmaKnobsError has refused 192 with a cluster or two blocks a
    // multiprocessor).
    const bool tall = candidate.rows != 128;
    if (tall && (implicitConv || knobs.wgmmaRows == 128 || multicast != 1 || blocksPerSM != 1))
      continue;
    if (!tall && knobs.wgmmaRows == 192 && !implicitConv)
      continue;
    // 192 rows narrower than 192: 1x1 convolutions, or forced (GEMMs' cost
    // model was fitted without them). A GEMM's tuner still tries them, last
    // (cuBLAS runs BERT's down-projections at batch 32 on 132 tiles of
    // 192 x 128, where the cost model gives 128 of 128 x 192).
    const bool tunerOnly =
        tall && candidate.width != 192 && !pointwiseConv && knobs.wgmmaRows != 192;
    if (tunerOnly && knobs.wgmmaCandidate < 0)
      continue;
    int64_t blocks = ceilDiv(ceilDiv(s.M, candidate.rows), multicast) * multicast *
                     ceilDiv(s.N, candidate.width) * s.batch;
    int64_t n = ceilDiv(blocks, multiprocessors / multicast * multicast * blocksPerSM);
    const double rowScale = static_cast<double>(candidate.rows) / 128;
    // The epilogue warpgroups: each tile's epilogue beside the next main
    // loop, the tensor cores' time n k unless the epilogues take longer.
    double steps = candidate.schedule == WgmmaSchedule::cooperative ? n * (k + e) * rowScale
                   : candidate.handoff()                            ? std::max(n * k, n * e) + e
                   : std::max(n * k + e, ceilDiv(n, 2) * (k + e)) * pingPongOverhead;
    const double perColumn = candidate.costPerColumn(conv);
    double cost = steps * candidate.width * perColumn;
    std::string name = scheduleName(candidate.schedule) + " " + str(candidate.rows) + " x " +
                       str(candidate.width) +
                       (multicast > 1 ? " multicast " + str(multicast) : "");
    // Past the residual's limit, the cost model's own choice only for a
    // GEMM or a 1x1 convolution in one wave: measured there alone (kernel
    // tuning on the H100, 2026-12-06, ResNet-50 at batch 32: 512 -> 2048 +
    // residual at 7 x 7, 104 tiles of 128 x 256 against 99 of 192 x 192,
    // 9.8 -> 9.0 us, the same in the whole model; the FFN block's 4096 x
    // 1024 x 4096 down-projection + residual, 128 tiles of 128 x 256
    // against 256 of 128 x 128, 50.5 -> 47.2 us, H100, 2026-12-07, one
    // table). Elsewhere the tuner's candidate alone: over more waves (the
    // 64 -> 256 at 56 x 56, 784 tiles of 128 x 256, even with 192 x 128;
    // ViT's down-projection, 150 tiles, 67.1 us against 41.4 on 192 x 192).
    const bool pastLimitOwn =
        pastResidualLimit && !implicitConv && blocks <= multiprocessors;
    if ((!pastResidualLimit || pastLimitOwn) && !tunerOnly)
      considered += std::string(considered.empty() ? "" : ", ") + name + ": " + str(blocks) +
                    " tiles, " + str(n) + " a block";
    const int64_t blockOutputs = n * candidate.rows * candidate.width;
    auto tile = [&] {
      // (The second row-input slices counted for convolutions too, which
      // do not take them: the stages come out the same.)
      const bool secondInputs =
          wgmmaSecondInputSlices(candidate.schedule == WgmmaSchedule::pingpong, candidate.width,
                                 candidate.rows, blocksPerSM);
      // wgmma-residual-prefetch: room for the next tile's residual slices
      // too, which the code generator then copies a tile ahead
      // (kiln_gemm_sm90.cuh). GEMMs and 1x1 convolutions only: an implicit
      // GEMM's shape has no anchor, and its kernel copies no slice early.
      const bool prefetchInputs =
          knobs.wgmmaResidualPrefetch && secondInputs && residual && s.anchor != nullptr;
      // wgmma-residual-ring: the residual through the main loop's ring
      // (cooperative tiles of a GEMM or a 1x1 convolution, a [N, K] B, no
      // batch, one block a multiprocessor: two spilled with it; the dialect
      // says why not ping-pong; in a multicast pair each block loads its
      // own rows' slices, not yet timed): the staging keeps only its
      // results' half, and the ring takes another stage where that half
      // makes room. (On the H100, 2026-12-05: BERT's FFN down-projection
      // 30.5 -> 29.8 us with 5 stages, ViT's 48.0 -> 42.9 with 4, the
      // out-projections 0.8-0.9 us faster.)
      const bool ringResidual = ringCarries && !prefetchInputs && s.anchor != nullptr &&
                                s.kMajorB && s.batch == 1 && blocksPerSM == 1 &&
                                s.N % 8 == 0 &&
                                candidate.schedule == WgmmaSchedule::cooperative;
      // The ring with the residual copied by rows, and with it through the
      // ring (the staging's freed half may make room for a stage more).
      const int64_t copiedStages =
          ringStages(target, candidate.width, candidate.handoff(), candidate.rows, secondInputs,
                     prefetchInputs, 1, blocksPerSM);
      const int64_t stagesWithRing =
          ringResidual ? ringStages(target, candidate.width, candidate.handoff(), candidate.rows,
                                    secondInputs, prefetchInputs, 1, blocksPerSM, true)
                       : copiedStages;
      WgmmaTile chosen{candidate.width,
                       ringResidual ? stagesWithRing : copiedStages,
                       blocks,
                       candidate.schedule,
                       multicast,
                       name + (blocksPerSM == 2 ? ", two a multiprocessor" : "") +
                           (ringResidual ? ", the residual through the ring" : ""),
                       blocksPerSM,
                       candidate.rows,
                       blockOutputs};
      chosen.residualRing = ringResidual;
      chosen.copiedStages = copiedStages;
      return chosen;
    };
    if (tunerOnly) {
      // Behind every tile the cost model ranks (their cost is from a model
      // fitted without them): the tuner's candidates past those.
      if (!pastResidualLimit || tile().residualRing)
        tunerLast.push_back(tile());
      continue;
    }
    if (pastResidualLimit) {
      const WgmmaTile ringTile = tile();
      if (!ringTile.residualRing)
        continue;
      if (knobs.wgmmaCandidate >= 0)
        feasible.push_back({cost, ringTile});
      if (!pastLimitOwn)
        continue;
    } else if (knobs.wgmmaCandidate >= 0) {
      feasible.push_back({cost, tile()});
    }
    if (!tall && (bestShort.width == 0 || cost < bestShortCost)) {
      bestShort = tile();
      bestShortCost = cost;
    }
    if (tall && pointwiseConv && knobs.wgmmaRows == 0) {
      const int64_t area = blocks * candidate.rows * candidate.width;
      const WgmmaTile tallTile = tile();
      if (residual && tallTile.residualRing)
        tallRing.push_back({perColumn, tallTile});
      const bool admitted =
          waves(blocks) <= kTallPointwiseMaxWaves && (!residual || candidate.width == 64) &&
          blocks * 100 >= waves(blocks) * multiprocessors * kTallPointwiseMinBusyPercent;
      if (admitted && fewerWaves(blocks, area))
        bestTall = tallTile;
      continue;
    }
    if (best.width == 0 || cost < bestCost) {
      best = tile();
      bestCost = cost;
      bestPerColumn = perColumn;
    }
  }
  // With the residual through the ring (wgmma-residual-ring), the waves rule
  // (kTallPointwiseMaxWaves) does not hold: the epilogue no longer reads the
  // residual beside its accumulators, and 192-row tiles also win where their
  // busiest block computes fewer outputs than the 128-row choice's, each
  // weighted by its candidate's cost a column (the cost model's main-loop and
  // epilogue steps leave out what the ring saves). Tuned launch by launch on the
  // H100 at batch 32 (2026-12-06, each layer's candidates alone, then side by
  // side in the whole model): ResNet-50's 64 -> 256 + residual at 56 x 56 (8
  // waves of 192 x 128) 46.3 -> 44.1 us, 256 -> 1024 at 14 x 14 (2 waves of 192
  // x 128) 11.8 -> 8.8, 512 -> 2048 at 7 x 7 (99 tiles of 192 x 192) 11.6 ->
  // 9.9, EfficientNet-B0's 144 -> 24 at 56 x 56 (4 waves of 192 x 64) 18.2 ->
  // 16.7; on the H200 the same morning 11.5 -> 8.9 and 10.6 -> 9.6. Where both
  // fill one wave it stays 128 rows (MobileNetV3's 672 -> 112 at 14 x 14: 66
  // tiles of 192 x 64 against 98 of 128 x 64, the fastest).
  for (const auto &[perColumn, tall] : tallRing) {
    const int64_t area = tall.tiles * tall.rows * tall.width;
    if (best.width != 0 &&
        waves(tall.tiles) * tall.rows * tall.width * perColumn <
            waves(best.tiles) * best.rows * best.width * bestPerColumn &&
        fewerWaves(tall.tiles, area))
      bestTall = tall;
  }
  // 192 rows only where they take work off the busiest block: where the
  // cost model's factors call it cheaper for the same or more outputs a
  // block, it was not (the FFN's 4096 x 1024 x 4096 down-projection with a
  // residual: 132 tiles of 192 x 192 against two of 128 x 128 on most
  // blocks, 4 us slower on the H200, 2026-12-04).
  if (best.rows != 128 && bestShort.width != 0 && best.blockOutputs >= bestShort.blockOutputs) {
    considered += "; not " + str(best.rows) + " rows: " + str(best.blockOutputs) +
                  " outputs a block against " + str(bestShort.blockOutputs);
    best = bestShort;
  }
  // 1x1 convolutions: 192 rows where the 128-row choice is 64 wide (its
  // wgmma reads A and B for half the math of a 128-wide one) or fills less
  // than one wave, and the 192-row tiles fill the GPU in one or two waves.
  // (best is the 128-row choice here: the loop left 192 rows to this.)
  if (bestTall.width != 0 && (best.width == 64 || best.tiles < multiprocessors)) {
    considered += "; " + str(bestTall.rows) + " rows: " + str(bestTall.tiles) + " tiles in " +
                  str(waves(bestTall.tiles)) + " waves against " + str(best.width) + "-wide " +
                  str(best.tiles);
    best = bestTall;
  }
  // Split K across a cluster where asked for: the narrowest cooperative
  // 128-row tile whose pairs of blocks fit on the multiprocessors, each
  // block walking half the k-steps of one tile. Where 64-wide tiles would
  // take more than the multiprocessors, 128-wide pairs read each A tile
  // half as often (ResNet-50's 3x3 512 -> 512 at 7 x 7, batch 32: 112
  // tiles of 128 x 64, or 56 pairs of 128 x 128).
  std::string splitWhy;
  if (knobs.wgmmaSplitK) {
    const bool splitFits = target.clusters && multicast == 1 && blocksPerSM == 1 &&
                           s.kMajorB && s.batch == 1 &&
                           (schedule == "auto" || schedule == "cooperative") &&
                           knobs.wgmmaRows != 192;
    if (!splitFits)
      splitWhy = "; not split K: it takes clusters, cooperative 128-row tiles, no multicast, "
                 "one block a multiprocessor, a [N, K] B and no batch";
    else if (kSteps < kSplitMinKSteps)
      splitWhy = "; not split K: " + str(kSteps) + " k-steps, under " + str(kSplitMinKSteps);
    else {
      splitWhy = "; not split K: pairs of blocks on 128-wide tiles or narrower take more "
                 "than " + str(multiprocessors) + " multiprocessors";
      for (int64_t width : kSplitWidths) {
        const int64_t tiles = ceilDiv(s.M, 128) * ceilDiv(s.N, width);
        if (2 * tiles > multiprocessors)
          continue;
        best = WgmmaTile{width,
                         ringStages(target, width, false, 128, false, false, 2, 1),
                         tiles,
                         WgmmaSchedule::cooperative,
                         1,
                         "cooperative 128 x " + str(width) + ", K split over pairs of blocks",
                         1,
                         128,
                         128 * width};
        best.splitK = 2;
        splitWhy = "; split K: " + str(tiles) + " tiles in pairs of blocks on " +
                   str(2 * tiles) + " of " + str(multiprocessors) +
                   " multiprocessors, " + str(ceilDiv(kSteps, 2)) + " of " + str(kSteps) +
                   " k-steps a block";
        break;
      }
    }
  }
  std::string candidateWhy;
  if (knobs.wgmmaCandidate >= 0) {
    // The cost model's choice first, then the other tiles it admitted,
    // cheapest first, each shape and schedule once: a tuner's candidate N
    // is the same tile from one compile to the next.
    llvm::stable_sort(feasible, [](const auto &a, const auto &b) { return a.first < b.first; });
    llvm::SmallVector<WgmmaTile> ranked{best};
    for (const auto &[cost, tile] : feasible)
      if (llvm::none_of(ranked, [&](const WgmmaTile &seen) {
            return seen.rows == tile.rows && seen.width == tile.width &&
                   seen.schedule == tile.schedule && seen.splitK == tile.splitK;
          }))
        ranked.push_back(tile);
    ranked.append(tunerLast.begin(), tunerLast.end());
    const int64_t count = static_cast<int64_t>(ranked.size());
    if (knobs.wgmmaCandidate < count) {
      best = ranked[knobs.wgmmaCandidate];
      candidateWhy = "; wgmma-candidate " + str(knobs.wgmmaCandidate) + " of " + str(count);
    } else {
      candidateWhy = "; wgmma-candidate " + str(knobs.wgmmaCandidate) + ": only " +
                     str(count) + ", the cost model's kept";
    }
  }
  best.why = best.why + " tiles, " + str(best.stages) + " stages (" + considered + " on " +
             str(multiprocessors) + " multiprocessors" +
             (residual ? "; a residual: at most " + str(kResidualMaxAccumulators) +
                             " accumulators a thread"
                       : "") +
             (shortResidual && blocksPerSM == 2
                  ? "; two blocks a multiprocessor: a residual after " + str(kSteps) +
                        " k-steps"
                  : "") +
             splitWhy + ")" + candidateWhy;
  return best;
}

} // namespace kiln::selection
