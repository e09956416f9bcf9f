//===- KernelFallback.cpp - a safer configuration after a rejection -------===//
//
// One step a retry, the costliest register demand first. The stem on input
// rows and the streaming GEMM: half their blocks a multiprocessor. The
// depthwise convolution: a minimum of one block (ptxas's registers). Before
// any of those, a GEMM's sizes given at launch (which the kernel holds in
// registers, and bounds it can no longer drop). The Hopper GEMM and
// convolution: the residual through the ring (a stage fewer where the ring
// had the staging's room; 128 x 256 tiles, past what a residual copied by
// rows allows, narrowed to 128 wide in the same step), stream-K's partial
// tiles, K split over a cluster, a multicast cluster, two blocks a
// multiprocessor, then the schedules that hold more per thread (ping-pong:
// a whole tile a warpgroup; the epilogue warpgroups: five warpgroups in
// one register file; the overlapped attention: two tiles' scores, after a
// third K/V stage), then 192-row tiles (four warpgroups in one register
// file), then tiles wider than 128 (a cooperative 192 or 256-wide tile
// holds 96 or 128 accumulators a thread). Each step after the ring's keeps
// the stages, which fit in the shared memory of the configuration before
// (none of these needs more).
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/KernelFallback.h"

#include "kiln/Dialect/Kiln/KernelShapes.h"

using namespace kiln;

std::optional<KernelConfigAttr> kiln::saferKernelConfig(KernelConfigAttr config,
                                                        std::string &why, int64_t poolImages) {
  mlir::MLIRContext *context = config.getContext();
  KernelVariant variant = config.getVariant();
  llvm::SmallVector<int64_t> tile(config.getTile());
  int64_t multicast = config.getMulticast(), blocksPerSM = config.getBlocksPerSm();
  bool streamK = config.getStreamK();
  bool runtimeSizes = config.getRuntimeSizes();
  WgmmaSchedule schedule = config.getSchedule();
  int64_t gridLimit = config.getGridLimit();
  int64_t splitK = config.getSplitK();
  int64_t stages = config.getStages();
  bool residualRing = config.getResidualRing();
  bool multicastA = config.getMulticastA();
  auto with = [&](std::string step) {
    why = std::move(step);
    return KernelConfigAttr::get(context, variant, tile, stages, splitK, gridLimit,
                                 config.getPixelTile(), schedule, multicast, blocksPerSM,
                                 streamK, runtimeSizes, residualRing, multicastA);
  };
  // The residual through the ring before anything else of the Hopper
  // GEMM's: the ring spilled where registers were tight. Copied by rows,
  // the staging takes its row-input half back from a ring that had its
  // room, and a tile past the copied residual's accumulator limit (128 x
  // 256, which only the ring made worth taking) narrows to 128 in the same
  // step.
  if (residualRing && tile.size() == 3) {
    residualRing = false;
    const bool pingpong = schedule == WgmmaSchedule::pingpong;
    std::string narrowed;
    if (wgmmaAccumulators(pingpong, tile[1]) > kResidualMaxAccumulators) {
      narrowed = " in 128-wide tiles (not " + std::to_string(tile[1]) + ")";
      tile[1] = 128;
      // The narrower ring may go as deep as the selection stage's (6).
      stages = 6;
    }
    const bool secondInputs = wgmmaSecondInputSlices(pingpong, tile[1], tile[0], blocksPerSM);
    while (stages > 2 && wgmmaSharedBytes(tile[1], stages, false, tile[0], secondInputs) +
                                 poolImages * tile[1] * 4 >
                             kMaxDynamicSharedBytes)
      --stages;
    return with("the residual copied by rows (not through the ring)" + narrowed + ", " +
                std::to_string(stages) + " stages");
  }
  // Sizes known to ptxas first (the Hopper and split-K GEMMs): held in
  // registers, runtime ones spilled 192-row tiles' epilogues (which the
  // selection now keeps them from).
  if (runtimeSizes) {
    runtimeSizes = false;
    return with("sizes in the source (not given at launch)");
  }
  // The stem on input rows and the streaming GEMM: half the blocks a
  // multiprocessor, each with twice the registers (the grid shrinks alike).
  if (variant == KernelVariant::conv_stem || variant == KernelVariant::gemm_stream) {
    if (blocksPerSM <= 1)
      return std::nullopt;
    std::string step = std::to_string(blocksPerSM / 2) +
                       (blocksPerSM / 2 == 1 ? " block" : " blocks") +
                       " a multiprocessor (not " + std::to_string(blocksPerSM) + ")";
    gridLimit = gridLimit / blocksPerSM * (blocksPerSM / 2);
    blocksPerSM /= 2;
    return with(step);
  }
  // The depthwise kernel: ptxas's own register count (the launch bounds'
  // minimum of one block).
  if (variant == KernelVariant::conv_depthwise) {
    if (blocksPerSM <= 1)
      return std::nullopt;
    std::string step = "ptxas's own registers (not " + std::to_string(blocksPerSM) +
                       " blocks a multiprocessor)";
    blocksPerSM = 1;
    return with(step);
  }
  if (variant == KernelVariant::attention_wgmma) {
    // A third K/V stage's index arithmetic first (BERT's overlapped kernel
    // sits at its 128 registers with 2).
    if (stages == 3) {
      stages = 0;
      return with("2 K/V stages (not 3)");
    }
    if (schedule == WgmmaSchedule::overlapped) {
      schedule = WgmmaSchedule::cooperative;
      return with("softmax and products in turn (not overlapped)");
    }
    return std::nullopt;
  }
  if (variant != KernelVariant::gemm_wgmma && variant != KernelVariant::conv_wgmma)
    return std::nullopt;
  if (streamK) {
    streamK = false;
    return with("no stream-K");
  }
  // (The pairs' grid limit stays: a block a tile, half of it busy.)
  if (splitK != 1) {
    splitK = 1;
    return with("K not split over a cluster");
  }
  if (multicast != 1) {
    multicast = 1;
    multicastA = false;
    return with("no multicast cluster");
  }
  if (blocksPerSM != 1) {
    blocksPerSM = 1;
    return with("one block a multiprocessor");
  }
  if (schedule != WgmmaSchedule::cooperative) {
    std::string step =
        "the cooperative schedule (not " + stringifyWgmmaSchedule(schedule).str() + ")";
    schedule = WgmmaSchedule::cooperative;
    return with(step);
  }
  if (tile.size() == 3 && tile[0] != 128) {
    std::string step = "128-row tiles (not " + std::to_string(tile[0]) + ")";
    tile[0] = 128;
    return with(step);
  }
  if (tile.size() == 3 && tile[1] > 128) {
    std::string step = "128-wide tiles (not " + std::to_string(tile[1]) + ")";
    tile[1] = 128;
    return with(step);
  }
  return std::nullopt;
}
