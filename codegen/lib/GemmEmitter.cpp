//===- GemmEmitter.cpp - gemm_epilogue groups -> CUDA C++ kernels ---------===//
//
// A GEMM group's plan (operands, batch offsets, bias), then one kernel for
// the variant kiln-select-kernels chose: a main loop from kiln_gemm.cuh
// (mma.sync for fp16/bf16, SIMT FMA for fp32, tf32), split K across a
// cluster (kiln_gemm_splitk.cuh), the persistent TMA + wgmma loop
// (kiln_gemm_sm90.cuh), a thread per row (kiln_gemm_narrow.cuh) or a block
// per column (kiln_gemm_gemv.cuh), with the epilogue functor generated for
// the group. 1x1 convolutions reach emitGemmKernel from ConvEmitter.cpp.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KernelShapes.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/codegen/CudaEmitter.h"

#include "ElementCode.h"
#include "Emitters.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;
using namespace kiln::codegen::detail;

FailureOr<EmittedKernel> kiln::codegen::detail::emitGemm(FusionOp group, StringRef name) {
  std::optional<GemmShape> shape = gemmShapeOf(group);
  if (!shape)
    return group.emitOpError("a gemm_epilogue group needs a linear, matmul or batch_matmul");
  Operation *anchor = shape->anchor;
  Value lhs = anchor->getOperand(0), rhs = anchor->getOperand(1);
  auto lhsArg = dyn_cast<BlockArgument>(lhs), rhsArg = dyn_cast<BlockArgument>(rhs);
  if (!lhsArg || !rhsArg)
    return anchor->emitOpError("GEMM operands must be inputs of the group");
  auto resultType = cast<RankedTensorType>(anchor->getResult(0).getType());
  ArrayRef<int64_t> lhsShape = cast<RankedTensorType>(lhs.getType()).getShape();
  ArrayRef<int64_t> rhsShape = cast<RankedTensorType>(rhs.getType()).getShape();

  GemmPlan plan;
  plan.anchor = anchor;
  plan.lhs = lhsArg;
  plan.rhs = rhsArg;
  plan.kMajorB = shape->kMajorB;
  if (auto linear = dyn_cast<LinearOp>(anchor))
    plan.bias = linear.getBias();
  int64_t K = shape->K, N = shape->N, M = shape->M, batch = shape->batch;
  if (!plan.kMajorB) {
    ArrayRef<int64_t> batchShape = resultType.getShape().drop_back(2);
    if (batch > 65535)
      return anchor->emitOpError("batch of ") << batch << " exceeds the grid's z limit";
    // In batch z, each operand's offset with its broadcast strides.
    auto offsetOf = [&](ArrayRef<int64_t> operandShape, int64_t matrix) {
      ArrayRef<int64_t> operandBatch = operandShape.drop_back(2);
      SmallVector<int64_t> strides = stridesOf(operandBatch);
      SmallVector<int64_t> zStrides = stridesOf(batchShape);
      std::string offset = "0LL";
      size_t lead = batchShape.size() - operandBatch.size();
      for (size_t d = 0; d < operandBatch.size(); ++d)
        if (operandBatch[d] != 1)
          offset += " + (z / " + std::to_string(zStrides[d + lead]) +
                    " % " + std::to_string(batchShape[d + lead]) + ") * " +
                    std::to_string(strides[d] * matrix) + "LL";
      return offset;
    };
    plan.aOffsetOfZ = offsetOf(lhsShape, M * K);
    plan.bOffsetOfZ = offsetOf(rhsShape, K * N);
    plan.offsetsByBatch = true;
  }
  plan.M = M;
  plan.N = N;
  plan.K = K;
  plan.batch = batch;
  plan.batchA = shape->batchA;
  plan.batchB = shape->batchB;
  return emitGemmKernel(group, name, plan);
}

std::optional<kiln::codegen::detail::SplitKPipeline>
kiln::codegen::detail::splitKPipelineOf(KernelConfigAttr config) {
  ArrayRef<int64_t> tile = config.getTile();
  if (tile.size() != 3 || tile[0] != 64 || tile[1] != 64 || tile[2] % 16 != 0 ||
      config.getStages() < 2)
    return std::nullopt;
  return SplitKPipeline{tile[2], config.getStages()};
}

std::string kiln::codegen::detail::SplitKPipeline::templateArgs() const {
  return ", " + std::to_string(kTile) + ", " + std::to_string(stages);
}

int64_t kiln::codegen::detail::SplitKPipeline::sharedBytes(bool kMajorB,
                                                           int64_t elementBytes) const {
  constexpr int64_t tile = 64, pad = 8; // kSplitBM = kSplitBN, kPad
  int64_t stage = tile * (kTile + pad) + (kMajorB ? tile * (kTile + pad) : kTile * (tile + pad));
  return std::max(stages * stage * elementBytes, tile * (tile + 4) * 4); // kPartialPitch
}

std::string kiln::codegen::detail::SplitKPipeline::sharedAssert(StringRef element, bool kMajorB,
                                                                int64_t elementBytes) const {
  return "static_assert(kiln::splitk_shared_bytes<" + element.str() + ", " +
         (kMajorB ? "true" : "false") + templateArgs() +
         ">() == " + std::to_string(sharedBytes(kMajorB, elementBytes)) +
         ", \"the launch's shared memory must match the kernel's\");\n";
}

std::optional<std::string> kiln::codegen::detail::wgmmaConfigProblem(KernelConfigAttr config) {
  ArrayRef<int64_t> tile = config.getTile();
  if (tile.size() != 3 || (tile[0] != 128 && tile[0] != 192) || tile[2] != 64 ||
      !llvm::is_contained({kWgmmaNarrowWidth, int64_t{64}, int64_t{128}, int64_t{192},
                           int64_t{256}},
                          tile[1]))
    return "its template implements tiles [128 | 192, 56 | 64 | 128 | 192 | 256, 64] only";
  // The narrow tile (kWgmmaNarrowWidth): one block of two
  // cooperative warpgroups on 128 rows and nothing that a cluster, stream-K
  // or the ring's 64-wide residual slices would add.
  if (tile[1] == kWgmmaNarrowWidth &&
      (tile[0] != 128 || config.getSchedule() != WgmmaSchedule::cooperative ||
       config.getMulticast() != 1 || config.getSplitK() != 1 || config.getBlocksPerSm() != 1 ||
       config.getStreamK() || config.getResidualRing()))
    return "a 56-wide tile is cooperative on 128 rows, one block a multiprocessor, with no "
           "cluster, split, stream_k or residual_ring";
  // Three consumer warpgroups hold a 192-row tile: 96 accumulators a thread
  // at most, in registers that nothing else may claim.
  if (tile[0] == 192 && (tile[1] > 192 || config.getSchedule() != WgmmaSchedule::cooperative ||
                         (config.getMulticast() != 1 && !config.getMulticastA()) ||
                         config.getBlocksPerSm() != 1 || config.getStreamK()))
    return "a 192-row tile is at most 192 wide and cooperative, with no multicast of B, one "
           "block a multiprocessor and no stream_k";
  // Whether the ring fits an image's shared memory is kiln-lower-launches'
  // question: the emitter knows no GPU.
  if (config.getStages() < 2)
    return "its TMA ring needs 2 or more stages";
  if (config.getGridLimit() < config.getMulticast() * config.getSplitK())
    return "the persistent grid needs a grid_limit (blocks at most) of one cluster or more";
  if (config.getStreamK() && config.getGridLimit() > sm90::kStreamKFlags)
    return "stream_k takes a grid_limit of at most " + std::to_string(sm90::kStreamKFlags) +
           " (its workspace's flags)";
  return std::nullopt;
}

void kiln::codegen::detail::setStreamKLaunch(KernelConfigAttr config, int64_t width,
                                             EmittedKernel &kernel) {
  if (!config.getStreamK())
    return;
  kernel.grid[0] = static_cast<unsigned>(config.getGridLimit());
  kernel.workspaceBytes = static_cast<uint64_t>(
      sm90::stream_k_workspace_bytes(static_cast<int>(width),
                                     static_cast<int>(config.getGridLimit())));
  kernel.workspaceStateBytes = sm90::kStreamKFlags * 4;
}

unsigned kiln::codegen::detail::persistentGrid(int64_t rowTiles, int64_t columnTiles,
                                               int64_t multicast, int64_t gridLimit,
                                               int64_t splitK, bool multicastA) {
  // Blocks come in whole clusters, and more than the tiles (or the limit,
  // one per multiprocessor) would only queue. A multicast pair takes two
  // row tiles, or with multicast_a two column tiles.
  const int64_t clusterBlocks = multicast * splitK;
  int64_t clusters = multicastA ? rowTiles * ((columnTiles + multicast - 1) / multicast)
                                : (rowTiles + multicast - 1) / multicast * columnTiles;
  return static_cast<unsigned>(std::min(clusters, gridLimit / clusterBlocks) * clusterBlocks);
}

namespace {
/// `#define name` as `hopper` in the sm_90a image and `other` elsewhere.
std::string defineInSm90a(const std::string &name, const std::string &hopper,
                          const std::string &other) {
  return "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n#define " + name + " " + hopper +
         "\n#else\n#define " + name + (other.empty() ? "" : " " + other) + "\n#endif\n";
}
} // namespace

std::string kiln::codegen::detail::wgmmaBlocksPreamble(int64_t blocksPerSM) {
  if (blocksPerSM == 1)
    return "";
  return "// " + std::to_string(blocksPerSM) +
         " blocks a multiprocessor in the sm_90a image (kernelOpen).\n" +
         defineInSm90a("KILN_WGMMA_BLOCKS_PER_SM", std::to_string(blocksPerSM), "1");
}

std::string kiln::codegen::detail::withoutTrailingDefaults(
    const std::vector<std::string> &values, const std::vector<std::string> &defaults) {
  size_t kept = values.size();
  const size_t firstDefaulted = values.size() - defaults.size();
  while (kept > firstDefaulted && values[kept - 1] == defaults[kept - 1 - firstDefaulted])
    --kept;
  std::string text;
  for (size_t i = 0; i < kept; ++i)
    text += (i ? ", " : "") + values[i];
  return text;
}

std::string kiln::codegen::detail::wgmmaSharedBytesCall(int64_t width, int64_t stages,
                                                        bool handoff, int64_t rows,
                                                        bool secondInputs, bool prefetchInputs,
                                                        int64_t splitK, bool halfStaging) {
  auto flag = [](bool value) { return std::string(value ? "true" : "false"); };
  return "kiln::sm90::shared_bytes(" +
         withoutTrailingDefaults({std::to_string(width), std::to_string(stages), flag(handoff),
                                  std::to_string(rows), flag(secondInputs),
                                  flag(prefetchInputs), std::to_string(splitK),
                                  flag(halfStaging)},
                                 {"false", "128", "false", "false", "1", "false"}) +
         ")";
}

std::string kiln::codegen::detail::wgmmaScheduleName(WgmmaSchedule schedule) {
  return std::string("kiln::sm90::Schedule::") + stringifyWgmmaSchedule(schedule).str();
}

std::string kiln::codegen::detail::clusterPreamble(int64_t blocks) {
  if (blocks == 1)
    return "#define KILN_SPLIT_CLUSTER\n";
  return "// The blocks that split one output's work form a cluster (sm_90a).\n" +
         defineInSm90a("KILN_SPLIT_CLUSTER",
                       "__cluster_dims__(" + std::to_string(blocks) + ", 1, 1)", "");
}

std::string kiln::codegen::detail::splitClusterPreamble(int64_t split) {
  return "#include \"kiln_gemm_splitk.cuh\"\n" + clusterPreamble(split);
}


namespace {
/// gemm_narrow's blocks of 128 threads a multiprocessor, for ptxas's
/// register budget: with the block size alone it held some rows' sums to 72
/// registers and spilled (28 to 36 columns with a GELU epilogue, on sm_80
/// and sm_90a). Four blocks give 128 registers, enough for one pass of up to
/// 32 columns; past 32 columns (passes of 32 and a rest,
/// kiln_gemm_narrow.cuh) 128 spilled with a GELU, so two blocks, 255.
unsigned narrowBlocksPerSM(int64_t columns) { return columns <= 32 ? 4 : 2; }
} // namespace

namespace {
/// The operands' offsets where each batch has a plane of the grid.
std::string operandOffsetsOnGridPlanes(const GemmPlan &plan) {
  if (!plan.offsetsByBatch)
    return "  const long long aOffset = 0, bOffset = 0;\n";
  // (A batched operand of a GEMM folded into one matrix reads at z = 0.)
  const bool readsZ = plan.aOffsetOfZ != "0LL" || plan.bOffsetOfZ != "0LL";
  return (readsZ ? "  const long long z = blockIdx.z;\n" : "") +
         std::string("  const long long aOffset = ") + plan.aOffsetOfZ +
         ";\n  const long long bOffset = " + plan.bOffsetOfZ + ";\n";
}
} // namespace

FailureOr<EmittedKernel> kiln::codegen::detail::emitGemmKernel(FusionOp group, StringRef name,
                                                const GemmPlan &plan) {
  Block &body = group.getBody().front();
  Operation *anchor = plan.anchor;
  BlockArgument lhsArg = plan.lhs, rhsArg = plan.rhs;
  auto resultType = cast<RankedTensorType>(anchor->getResult(0).getType());
  Type element = cast<RankedTensorType>(lhsArg.getType()).getElementType();
  bool kMajorB = plan.kMajorB;
  int64_t M = plan.M, N = plan.N, K = plan.K, batch = plan.batch;
  if (M > (1LL << 31) / 2 || N > (1LL << 31) / 2)
    return anchor->emitOpError("GEMM dimensions past 2^30 are not supported");

  // The epilogue: index of the element in the full result, the accumulator
  // (plus bias), then the group's other ops.
  ElementCode epilogue(group, resultType.getShape(), "idx", "    ");
  epilogue.deferStores = true;
  // Without a batch the rows are the result's leading dimensions flattened:
  // the functor's m and n (with one, idx counts from the batch's base).
  if (batch == 1) {
    epilogue.rowIndex = "m";
    epilogue.columnIndex = "n";
  }
  std::string accumulator = "acc";
  if (plan.bias) {
    auto biasArg = dyn_cast<BlockArgument>(plan.bias);
    if (!biasArg)
      return anchor->emitOpError("the bias must be an input of the group");
    accumulator = "(acc + kiln::to_float(in" + std::to_string(biasArg.getArgNumber()) +
                  "[n]))";
  } else if (!element.isF32() &&
             configOf(group).getVariant() == KernelVariant::gemm_wgmma) {
    // Rounded straight from the wgmma accumulator, a bias-free linear's
    // result serializes the kernel's wgmmas (kiln_common.cuh).
    accumulator = "kiln::accumulator_value(acc)";
  }
  // The GEMM's own result rounds to its type before the epilogue reads it,
  // as it would through memory (an f32 result of 16-bit operands: not at all).
  epilogue.bind(anchor->getResult(0),
                resultType.getElementType().isF32()
                    ? accumulator
                    : "kiln::to_float(kiln::from_float<" + cudaType(resultType.getElementType()) +
                          ">(" + accumulator + "))");
  // A 1x1 convolution's global average pool (GlobalPool): the epilogue
  // computes the pool's input, which the kernel sums.
  std::optional<GlobalPool> pool =
      plan.kind == "conv_epilogue" ? globalPoolOf(group) : std::nullopt;
  for (Operation &op : body.without_terminator())
    if (&op != anchor && (!pool || &op != pool->mean.getOperation()) &&
        failed(epilogue.emit(&op)))
      return failure();
  if (pool)
    epilogue.store(0, pool->mean.getInput());
  else
    for (auto [index, value] : llvm::enumerate(yieldOf(group).getValues()))
      epilogue.store(index, value);

  bool tensorCores = element.isF16() || element.isBF16();
  if (!tensorCores && !element.isF32())
    return anchor->emitOpError("GEMM on ") << element << " is not supported";
  // The variant kiln-select-kernels chose (or a test forced): each needs
  // what its template assumes.
  KernelConfigAttr config = configOf(group);
  KernelVariant variant = config.getVariant();
  auto refuse = [&](StringRef why) {
    return group.emitOpError("cannot run as ")
           << stringifyKernelVariant(variant) << ": " << why;
  };
  auto expectTile = [&](ArrayRef<int64_t> tile) -> LogicalResult {
    if (config.getTile() == tile)
      return success();
    return refuse("its template implements the tile [" +
                  llvm::join(llvm::map_range(tile, [](int64_t v) { return std::to_string(v); }),
                             ", ") +
                  "] only");
  };
  bool hopper = variant == KernelVariant::gemm_wgmma;
  bool splitK = variant == KernelVariant::gemm_split_k;
  bool narrow = variant == KernelVariant::gemm_narrow;
  bool gemv = variant == KernelVariant::gemm_gemv;
  bool stream = variant == KernelVariant::gemm_stream;
  bool swap = variant == KernelVariant::gemm_wgmma_swap;
  // gemm_stream's stages hold the row input beside A wherever the epilogue
  // reads one (used where the functor takes it as pairs, kRowInput).
  const bool streamRowInput = stream && !epilogue.elementLoads.empty();
  const int64_t streamBytes =
      stream ? streamSharedBytes(N, K, config.getStages(), streamRowInput) : 0;
  std::optional<SplitKPipeline> pipeline;
  switch (variant) {
  case KernelVariant::gemm_simt:
    if (tensorCores)
      return refuse("the SIMT GEMM reads fp32 operands");
    if (failed(expectTile({64, 64, 16})))
      return failure();
    break;
  case KernelVariant::gemm_tf32:
    if (tensorCores)
      return refuse("the tf32 GEMM reads fp32 operands");
    if (!anchor->hasAttr(attr::kTf32))
      return refuse("the GEMM's operands may not be rounded to tf32 (its op lacks "
                    "kiln.tf32: compile with --precision tf32)");
    if (failed(expectTile({128, 128, 16})))
      return failure();
    break;
  case KernelVariant::gemm_mma:
    if (!tensorCores)
      return refuse("mma.sync needs fp16 or bf16 operands");
    if (failed(expectTile({128, 128, 32})))
      return failure();
    break;
  case KernelVariant::gemm_wgmma:
    // TMA needs 16-byte global strides: K % 8 == 0, and N % 8 == 0 for a
    // [K, N] B.
    if (!tensorCores || K % 8 != 0 || (!kMajorB && N % 8 != 0))
      return refuse("TMA + wgmma needs fp16/bf16 operands, K % 8 == 0 and, for a [K, N] B, "
                    "N % 8 == 0");
    if (!GemmShape::wholeBatchesOf(batch, plan.batchA, plan.batchB))
      return refuse("its batch needs each operand batched whole or not at all (one tensor map "
                    "dimension)");
    if (config.getMulticast() != 1 && (!kMajorB || batch != 1))
      return refuse(config.getMulticastA()
                        ? "pairs sharing A take column tiles of one matrix and a [N, K] B: no "
                          "batch, no [K, N] B"
                        : "multicast shares a [N, K] B between row tiles of one matrix: no "
                          "batch, no [K, N] B");
    // Within the 80 registers of two blocks a multiprocessor, a [K, N] B's
    // GELU and residual epilogue spilled (NVRTC, 2026-12-05).
    if (config.getBlocksPerSm() != 1 && (!kMajorB || batch != 1))
      return refuse("two blocks a multiprocessor take a [N, K] B without a batch");
    if (std::optional<std::string> problem = wgmmaConfigProblem(config))
      return refuse(*problem);
    if (config.getTile()[1] == kWgmmaNarrowWidth && (!kMajorB || batch != 1))
      return refuse("a 56-wide tile takes a [N, K] B without a batch (a [K, N] B comes in "
                    "64-wide boxes)");
    break;
  case KernelVariant::gemm_split_k:
    if (!tensorCores || K % 8 != 0 || (!kMajorB && N % 8 != 0))
      return refuse("split-K needs fp16/bf16 operands, K % 8 == 0 and, for a [K, N] B, "
                    "N % 8 == 0");
    if (!(pipeline = splitKPipelineOf(config)))
      return refuse("its template takes 64 x 64 tiles, a k tile that is a multiple of 16 "
                    "and 2 or more stages");
    break;
  case KernelVariant::gemm_narrow:
    if (!tensorCores || !kMajorB || K % 8 != 0 || K > 128 || N % 4 != 0 || K * N * 4 > 24576)
      return refuse("a thread per row takes fp16/bf16 operands, a [N, K] B, K % 8 == 0, "
                    "K <= 128, N % 4 == 0 and a K x N fp32 weight within 24 KiB");
    if (!config.getTile().empty())
      return refuse("it takes no tile (a thread per row)");
    if (config.getGridLimit() <= 0)
      return refuse("its grid-stride loop needs a grid_limit (blocks at most)");
    break;
  case KernelVariant::gemm_gemv:
    if (!tensorCores || !kMajorB || M > 32)
      return refuse("a block per column takes fp16/bf16 operands, a [N, K] B and at most 32 "
                    "rows");
    if (!config.getTile().empty())
      return refuse("it takes no tile (a block per column)");
    break;
  case KernelVariant::gemm_stream:
    if (!tensorCores || !kMajorB || K % 8 != 0 || N % 8 != 0 || K > 256 || N > 256 ||
        batch != 1)
      return refuse("streaming A past a resident weight takes fp16/bf16 operands, a [N, K] B, "
                    "K % 8 == 0 and N % 8 == 0, both at most 256, and no batch");
    if (failed(expectTile({kStreamRows, kStreamChunk, (K + 15) / 16 * 16})))
      return failure();
    if (config.getStages() < 2 || config.getStages() > kStreamMaxStages)
      return refuse("its cp.async ring takes 2 to " + std::to_string(kStreamMaxStages) +
                    " stages");
    if (config.getGridLimit() <= 0)
      return refuse("its grid-stride loop needs a grid_limit (blocks at most)");
    if (config.getBlocksPerSm() * streamBytes > kMaxDynamicSharedBytes)
      return refuse(std::to_string(config.getBlocksPerSm()) + " blocks of " +
                    std::to_string(streamBytes) +
                    " bytes of shared memory do not fit a multiprocessor");
    break;
  case KernelVariant::gemm_wgmma_swap:
    // The weight's tiles come in 64-row boxes (or a cluster's share of
    // them) that must each lie partly inside it for the stage's byte count.
    if (!tensorCores || !kMajorB || batch != 1 || K % 8 != 0 || N % kSwapWeightRows != 0)
      return refuse("the weight as wgmma's M side takes fp16/bf16 operands, a [N, K] B, no "
                    "batch, K % 8 == 0 and N % 64 == 0");
    if (config.getTile().size() != 3 || config.getStages() < 2)
      return refuse("it needs its tile ([64, TOKENS, 64]) and 2 or more stages");
    if (swapSharedBytes(config.getTile()[1], config.getStages()) > kMaxDynamicSharedBytes)
      return refuse(std::to_string(config.getStages()) + " stages of " +
                    std::to_string(config.getTile()[1]) +
                    " tokens do not fit a block's shared memory");
    break;
  default:
    return refuse("a GEMM runs as gemm_simt, gemm_tf32, gemm_mma, gemm_wgmma, gemm_split_k, "
                  "gemm_narrow, gemm_gemv, gemm_stream or gemm_wgmma_swap");
  }
  // The pool's tiles hold whole images: as many as 128 rows take. (Only a
  // 1x1 convolution run as gemm_wgmma gets here with one: ConvEmitter.cpp.)
  const int64_t poolImages = pool ? poolImagesPerTile(pool->pixels) : 0;
  if (pool) {
    if (!poolImages)
      return refuse("a pooled GEMM takes images of at most 128 pixels");
    if (config.getTile()[0] != 128 || config.getSchedule() != WgmmaSchedule::cooperative ||
        config.getMulticast() != 1 || config.getBlocksPerSm() != 1 || config.getStreamK() ||
        config.getSplitK() != 1 || config.getRuntimeSizes())
      return refuse("a pooled epilogue takes cooperative 128-row tiles of one block a "
                    "multiprocessor: no cluster, stream_k, split or sizes at run time");
    if (N % 2 != 0)
      return refuse("a pooled epilogue takes an even channel count");
  }
  int64_t split = config.getSplitK();
  if (split != 1 && !splitK && !hopper)
    return refuse("only gemm_split_k, gemm_wgmma and conv_wgmma split K");
  // The Hopper loop's split: a linear's [N, K] B without a batch (the
  // kiln::sm90::wgmma_gemm path).
  const int64_t hopperSplit = hopper ? split : 1;
  if (hopperSplit != 1 && (!kMajorB || batch != 1))
    return refuse("the Hopper loop splits K for a [N, K] B without a batch only");
  // runtime_sizes: M, N and K are the kernel's last parameters and its
  // source names no size, so every group of this configuration and
  // epilogue shares the kernel (and its compile).
  const bool runtimeSizes = config.getRuntimeSizes();
  if (runtimeSizes && ((!hopper && !splitK) || batch != 1 || N % 8 != 0))
    return refuse("sizes at run time take gemm_wgmma or gemm_split_k, no batch and N % 8 == 0");
  if (runtimeSizes && epilogue.indexesByShape())
    return refuse("sizes at run time: its epilogue indexes an input by the result's shape (a "
                  "broadcast or a data movement), which would name the sizes");
  // gemm_gemv: a warp per 8 rows (kiln::gemv::threads).
  unsigned threads = splitK || narrow ? 128
                     : gemv      ? static_cast<unsigned>(32 * ((M + 7) / 8))
                     : hopper    ? 384
                     : swap      ? static_cast<unsigned>(kSwapThreads)
                                 : 256;
  const bool handoff = hopper && config.getSchedule() == WgmmaSchedule::epilogue_warpgroups;
  if (handoff)
    threads = 640;
  // A warpgroup a 64-row band of a cooperative tile, and the producer's.
  const int64_t tileRows = hopper ? config.getTile()[0] : 128;
  if (hopper && tileRows != 128)
    threads = static_cast<unsigned>(128 * (1 + tileRows / 64));
  // The functor's column rules, for it below and the checks before it: an
  // even N pairs columns, N % 8 == 0 rows of 16-byte chunks (a Hopper or
  // streaming main loop), no batch packed fp16 steps.
  EpilogueFunctor columnRules;
  columnRules.pairs = N % 2 == 0;
  columnRules.chunks = (hopper || stream) && N % 8 == 0;
  columnRules.halfSteps = batch == 1;
  // Ping-pong 64-wide tiles keep both row halves' first row-input slices
  // (not with a batch, whose rows the kernel computes once a lane and
  // passes by shuffles, as a convolution's).
  const bool secondInputs =
      hopper && batch == 1 &&
      wgmmaSecondInputSlices(config.getSchedule() == WgmmaSchedule::pingpong,
                             config.getTile()[1], tileRows, config.getBlocksPerSm());
  // And the next tile's, copied a tile ahead, where the epilogue reads a
  // row input and the ring the selection stage sized leaves room for them
  // (--wgmma-residual-prefetch gives up a stage for it), unless the row
  // input comes through the ring.
  const bool prefetchInputs =
      secondInputs && !config.getStreamK() && !config.getResidualRing() &&
      !epilogue.elementLoads.empty() &&
      wgmmaSharedBytes(config.getTile()[1], config.getStages(), false, tileRows, true, true) <=
          kMaxDynamicSharedBytes;
  // residual_ring: the epilogue's 16-bit row input (a residual) through
  // the main loop's ring by TMA, the shape of an A tile (kiln_gemm_sm90.cuh's
  // kRingInput). The attribute's verifier holds the schedule, cluster and
  // sizes to what the ring takes; the epilogue must also run on fragments
  // with that one row input (the functor's own rule, for the functor
  // below, which the diagnostics KILN_EPILOGUE_FRAGMENTS=0 and
  // KILN_EPILOGUE_PAIRS=0 turn off). Where it does not, the residual is
  // copied by rows, and a ring deeper than that leaves room for is refused
  // below by the bytes it needs. Where it does and the ring is deeper than
  // the full staging leaves room for, the staging keeps its results' half
  // alone (halfStaging).
  const bool ringInput =
      hopper && config.getResidualRing() && kMajorB && batch == 1 &&
      epilogue.elementLoads.size() == 1 &&
      epilogueOnFragments(group, epilogue, epilogueColumnPairs(columnRules.pairs, epilogue),
                          columnRules.chunks);
  const bool halfStaging =
      ringInput &&
      wgmmaSharedBytes(config.getTile()[1], config.getStages(), handoff, tileRows, secondInputs,
                       prefetchInputs, hopperSplit) > kMaxDynamicSharedBytes;
  // Warpgroups past three exist in the sm_90a image only: the others'
  // mma.sync loop is compiled for (and launched with) 384 threads, whose
  // registers it needs.
  const bool sm90aThreads = hopper && threads != 384;
  // The sm_90a variant is persistent over 128 x 256 tiles on a 1-D grid of
  // at most one block per H200 multiprocessor; its mma.sync fallback walks
  // 128 x 128 tiles on the same grid.
  const bool tf32 = variant == KernelVariant::gemm_tf32;
  int64_t tileM = tensorCores || tf32 ? 128 : 64, tileN = tensorCores || tf32 ? 128 : 64;
  std::string mmaLoop =
      tensorCores
          ? std::string(hopper ? "kiln::mma_gemm_persistent<" : "kiln::mma_gemm<") +
                cudaType(element) + ", " + (kMajorB ? "true" : "false") + ">"
          : std::string(variant == KernelVariant::gemm_tf32 ? "kiln::tf32_gemm<"
                                                            : "kiln::simt_gemm<") +
                (kMajorB ? "true" : "false") + ">";
  std::string sizes = runtimeSizes ? "(int)size_m, (int)size_n, (int)size_k"
                                   : std::to_string(M) + ", " + std::to_string(N) + ", " +
                                         std::to_string(K);
  std::string pointerCall = mmaLoop + "(in" + std::to_string(lhsArg.getArgNumber()) +
                            " + aOffset, in" + std::to_string(rhsArg.getArgNumber()) +
                            " + bOffset, " + sizes + ", epilogue);\n";
  if (splitK)
    pointerCall = "kiln::splitk_gemm<" + cudaType(element) + ", " +
                  (kMajorB ? "true" : "false") + ", " + std::to_string(split) +
                  pipeline->templateArgs() + ">(in" +
                  std::to_string(lhsArg.getArgNumber()) + " + aOffset, in" +
                  std::to_string(rhsArg.getArgNumber()) + " + bOffset, " + sizes +
                  ", epilogue);\n";
  if (gemv)
    pointerCall = "kiln::gemv_gemm<" + cudaType(element) + ", " + std::to_string(M) + ", " +
                  std::to_string(K) + ">(in" + std::to_string(lhsArg.getArgNumber()) +
                  " + aOffset, in" + std::to_string(rhsArg.getArgNumber()) +
                  " + bOffset, epilogue);\n";
  if (stream)
    pointerCall = "kiln::stream_gemm<" + cudaType(element) + ", " + std::to_string(N) + ", " +
                  std::to_string(K) + ", " + std::to_string(config.getStages()) + ", " +
                  (streamRowInput ? "true" : "false") + ">(in" +
                  std::to_string(lhsArg.getArgNumber()) + " + aOffset, in" +
                  std::to_string(rhsArg.getArgNumber()) + " + bOffset, " + std::to_string(M) +
                  ", epilogue);\n";
  if (narrow)
    pointerCall = "kiln::narrow_gemm<" + cudaType(element) + ", " + std::to_string(N) + ", " +
                  std::to_string(K) + ">(in" + std::to_string(lhsArg.getArgNumber()) +
                  " + aOffset, in" + std::to_string(rhsArg.getArgNumber()) + " + bOffset, " +
                  std::to_string(M) + ", epilogue);\n";
  // The swapped tile: its tokens and cluster; other images sum on CUDA
  // cores over the same grid.
  const int64_t swapTokens = swap ? config.getTile()[1] : 0;
  const int64_t swapCluster = swap ? config.getMulticast() : 1;
  if (swap)
    pointerCall = "kiln::swap_gemm_fallback<" + cudaType(element) + ", " +
                  std::to_string(swapTokens) + ">(in" + std::to_string(lhsArg.getArgNumber()) +
                  " + aOffset, in" + std::to_string(rhsArg.getArgNumber()) + " + bOffset, " +
                  sizes + ", epilogue);\n";
  // The Hopper loop in the sm_90a image, the mma.sync fallback elsewhere.
  std::string mainLoop = "  " + pointerCall;
  if (swap)
    mainLoop = "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n  kiln::sm90::swap_gemm<" +
               cudaType(element) + ", " + std::to_string(swapTokens) + ", " +
               std::to_string(config.getStages()) + ", " + std::to_string(swapCluster) +
               ">(map0, map1, " + sizes + ", epilogue);\n#else\n  " + pointerCall +
               "#endif\n";
  if (hopper) {
    auto flag = [](bool value) { return std::string(value ? "true" : "false"); };
    const std::string common = cudaType(element) + ", " + std::to_string(config.getTile()[1]) +
                               ", " + std::to_string(config.getStages()) + ", " +
                               wgmmaScheduleName(config.getSchedule()) + ", ";
    const std::string tail =
        config.getStreamK() ? ", epilogue, workspace);\n" : ", epilogue);\n";
    std::string call;
    if (pool)
      // Row tiles of whole images (kiln_gemm_sm90.cuh's wgmma_gemm_pooled).
      call = "kiln::sm90::wgmma_gemm_pooled<" + cudaType(element) + ", " +
             std::to_string(config.getTile()[1]) + ", " + std::to_string(config.getStages()) +
             ", " + std::to_string(poolImages * pool->pixels) + ">(map0, map1, " + sizes +
             ", epilogue);\n";
    else if (!kMajorB || batch != 1)
      // matmul and bmm: B [K, N], every batch's tiles on one persistent grid.
      call = "kiln::sm90::wgmma_matmul<" + common +
             std::to_string(config.getBlocksPerSm()) + ", " + flag(config.getStreamK()) + ", " +
             std::to_string(tileRows) + ", " + flag(prefetchInputs) + ", " + flag(!kMajorB) +
             ", " + flag(batch != 1) + ">(map0, map1, " + sizes + ", " + std::to_string(batch) +
             ", " + flag(plan.batchA != 1) + ", " + flag(plan.batchB != 1) + tail;
    else
      call = "kiln::sm90::wgmma_gemm<" + common +
             withoutTrailingDefaults(
                 {std::to_string(config.getMulticast()), std::to_string(config.getBlocksPerSm()),
                  flag(config.getStreamK()), std::to_string(tileRows), flag(prefetchInputs),
                  std::to_string(hopperSplit), flag(config.getMulticastA())},
                 {"false", "128", "false", "1", "false"}) +
             ">(map0, map1, " + sizes + tail;
    if (pool)
      pointerCall = "kiln::pooled_gemm_fallback<" + cudaType(element) + ">(in" +
                    std::to_string(lhsArg.getArgNumber()) + " + aOffset, in" +
                    std::to_string(rhsArg.getArgNumber()) + " + bOffset, " + sizes +
                    ", epilogue);\n";
    // The fallback walks the same grid's tiles, batch after batch.
    if (batch != 1)
      pointerCall = "kiln::mma_gemm_persistent_batched<" + cudaType(element) + ", " +
                    (kMajorB ? "true" : "false") + ">(in" +
                    std::to_string(lhsArg.getArgNumber()) + ", in" +
                    std::to_string(rhsArg.getArgNumber()) + ", " + sizes + ", " +
                    std::to_string(batch) +
                    ",\n      [](long long z, long long &aOffset, long long &bOffset) {\n"
                    "        aOffset = " + plan.aOffsetOfZ + ";\n        bOffset = " +
                    plan.bOffsetOfZ + ";\n      }, epilogue);\n";
    mainLoop = "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n  " + call + "#else\n  " + pointerCall +
               "#endif\n";
  }

  EmittedKernel kernel = kernelFor(group, name, plan.kind);
  kernel.block = threads;
  if (runtimeSizes)
    kernel.scalars = {M, N, K};
  kernel.grid[0] = static_cast<unsigned>((N + tileN - 1) / tileN);
  kernel.grid[1] = static_cast<unsigned>((M + tileM - 1) / tileM);
  kernel.grid[2] = static_cast<unsigned>(batch);
  if (splitK) {
    kernel.grid[0] = static_cast<unsigned>((N + 63) / 64 * split);
    kernel.grid[1] = static_cast<unsigned>((M + 63) / 64);
    kernel.dynamicSharedBytes = pipeline->sharedBytes(kMajorB, 2);
    kernel.clusterBlocks = static_cast<unsigned>(split);
  }
  if (narrow) {
    kernel.grid[0] = gridStrideBlocks(group, M, threads);
    kernel.grid[1] = 1;
  }
  if (gemv) {
    kernel.grid[0] = static_cast<unsigned>(N);
    kernel.grid[1] = 1;
  }
  if (stream) {
    kernel.grid[0] = gridStrideBlocks(group, M, kStreamRows);
    kernel.grid[1] = 1;
    kernel.dynamicSharedBytes = static_cast<unsigned>(streamBytes);
  }
  if (swap) {
    // Token tiles along x, whole clusters of them (a tile past M loads the
    // last one in bounds and stores nothing); the weight's tiles along y.
    const int64_t tokenTiles = (M + swapTokens - 1) / swapTokens;
    kernel.grid[0] =
        static_cast<unsigned>((tokenTiles + swapCluster - 1) / swapCluster * swapCluster);
    kernel.grid[1] = static_cast<unsigned>(N / kSwapWeightRows);
    kernel.dynamicSharedBytes =
        static_cast<unsigned>(swapSharedBytes(swapTokens, config.getStages()));
    kernel.otherImagesSharedBytes = 0;
    kernel.clusterBlocks = static_cast<unsigned>(swapCluster);
    // A [M, K] boxes of 64 x tokens; B [N, K] boxes of 64 x this block's
    // share of the weight tile's rows.
    kernel.tensorMaps = {
        TensorMapArg::matrix(lhsArg.getArgNumber(), M, K, static_cast<unsigned>(swapTokens), 64),
        TensorMapArg::matrix(rhsArg.getArgNumber(), N, K,
                             static_cast<unsigned>(kSwapWeightRows / swapCluster), 64)};
  }
  const int64_t multicast = config.getMulticast();
  std::string ringInputMap;
  // Blocks of a Hopper cluster: multicast pairs or split-K pairs.
  const int64_t clusterBlocks = multicast * hopperSplit;
  if (hopper) {
    int64_t tileWidth = config.getTile()[1];
    // A batch's row tiles follow the one before's on the same grid.
    if (batch * M > (1LL << 31) / 2)
      return refuse("its batch's rows (batch x M) pass 2^30");
    // A pool's row tiles step by its images.
    const int64_t rowStep = pool ? poolImages * pool->pixels : tileRows;
    kernel.grid[0] = persistentGrid(batch * ((M + rowStep - 1) / rowStep),
                                    (N + tileWidth - 1) / tileWidth, multicast,
                                    config.getGridLimit(), hopperSplit, config.getMulticastA());
    kernel.grid[1] = 1;
    kernel.grid[2] = 1;
    kernel.dynamicSharedBytes = static_cast<unsigned>(
        wgmmaSharedBytes(tileWidth, config.getStages(), handoff, tileRows, secondInputs,
                         prefetchInputs, hopperSplit, halfStaging));
    kernel.otherImagesSharedBytes = 0;
    if (sm90aThreads)
      kernel.otherImagesBlock = 384;
    kernel.clusterBlocks = static_cast<unsigned>(clusterBlocks);
    // Each block of a cluster loads its share of B's rows (or with
    // multicast_a of A's); a [K, N] B comes in boxes of 64 columns (128-byte
    // rows, the swizzle's width).
    const bool multicastA = config.getMulticastA();
    kernel.tensorMaps = {
        TensorMapArg::matrix(lhsArg.getArgNumber(), M, K,
                             static_cast<unsigned>(multicastA ? tileRows / multicast : tileRows),
                             64),
        kMajorB ? TensorMapArg::matrix(rhsArg.getArgNumber(), N, K,
                                       static_cast<unsigned>(multicastA ? tileWidth
                                                                        : tileWidth / multicast),
                                       64)
                : TensorMapArg::matrix(rhsArg.getArgNumber(), K, N, 64, 64)};
    // A batch: a third, outermost dimension (1 where the operand is
    // broadcast over it), a matrix a box.
    if (batch != 1) {
      kernel.tensorMaps[0].dims.push_back(plan.batchA);
      kernel.tensorMaps[1].dims.push_back(plan.batchB);
      for (TensorMapArg &map : kernel.tensorMaps) {
        map.box.push_back(1);
        map.elementStrides.push_back(1);
      }
    }
    // A batch's blocks would share one partial tile each.
    if (config.getStreamK() && batch != 1)
      return refuse("stream_k takes batch 1");
    if (ringInput) {
      ringInputMap = "map" + std::to_string(kernel.tensorMaps.size());
      kernel.tensorMaps.push_back(TensorMapArg::matrix(
          epilogue.elementLoads[0], M, N, static_cast<unsigned>(tileRows), 64));
    }
    setStreamKLaunch(config, tileWidth, kernel);
  }
  std::string epilogueName = name.str() + "_epilogue";
  const std::vector<std::string> sizeParameters =
      runtimeSizes ? std::vector<std::string>{"size_m", "size_n", "size_k"}
                   : std::vector<std::string>{};
  std::string open =
      splitK ? kernelOpen(group, name, threads, 0, /*minBlocks=*/1, /*splitCluster=*/true,
                          /*workspace=*/false, "", sizeParameters)
             : kernelOpen(group, name, threads, kernel.tensorMaps.size(),
                          hopper || stream ? static_cast<unsigned>(config.getBlocksPerSm())
                          : narrow         ? narrowBlocksPerSM(N)
                                           : 0,
                          /*splitCluster=*/(hopper && clusterBlocks > 1) || swapCluster > 1,
                          /*workspace=*/kernel.workspaceBytes != 0,
                          sm90aThreads ? "KILN_WGMMA_THREADS" : "", sizeParameters);
  kernel.source =
      header(group, kernel.kind, /*withLocation=*/!runtimeSizes) +
      "#include \"kiln_gemm.cuh\"\n" +
      (narrow ? "#include \"kiln_gemm_narrow.cuh\"\nstatic_assert(kiln::narrow::kThreads == " +
                    std::to_string(threads) + ", \"the launch's block must match the kernel's "
                    "staging tiles\");\n"
              : "") +
      (stream ? "#include \"kiln_gemm_stream.cuh\"\nstatic_assert(kiln::stream::kThreads == " +
                    std::to_string(threads) + " && kiln::stream::shared_bytes(" +
                    std::to_string(N) + ", " + std::to_string(K) + ", " +
                    std::to_string(config.getStages()) + ", " +
                    (streamRowInput ? "true" : "false") + ") == " +
                    std::to_string(kernel.dynamicSharedBytes) +
                    ", \"the launch's block and shared memory must match the kernel's\");\n"
              : "") +
      (gemv ? "#include \"kiln_gemm_gemv.cuh\"\nstatic_assert(kiln::gemv::threads(" +
                  std::to_string(M) + ") == " + std::to_string(threads) +
                  ", \"the launch's block must match the kernel's warps\");\n"
            : "") +
      (hopper ? "#include \"kiln_gemm_sm90.cuh\"\nstatic_assert(" +
                    wgmmaSharedBytesCall(config.getTile()[1], config.getStages(), handoff,
                                         tileRows, secondInputs, prefetchInputs, hopperSplit,
                                         halfStaging) +
                    " == " + std::to_string(kernel.dynamicSharedBytes) +
                    ", \"the launch's shared memory must match the kernel's\");\n"
              : "") +
      (splitK ? splitClusterPreamble(split) +
                    pipeline->sharedAssert(cudaType(element), kMajorB, 2)
              : "") +
      (hopper && clusterBlocks > 1 ? clusterPreamble(clusterBlocks) : "") +
      (swap ? "#include \"kiln_gemm_swap_sm90.cuh\"\nstatic_assert(kiln::swap::shared_bytes(" +
                  std::to_string(swapTokens) + ", " + std::to_string(config.getStages()) +
                  ") == " + std::to_string(kernel.dynamicSharedBytes) +
                  ", \"the launch's shared memory must match the kernel's\");\n"
                  "static_assert(kiln::swap::kThreads == " + std::to_string(kSwapThreads) +
                  ", \"the launch's threads must match the kernel's\");\n" +
                  (swapCluster > 1 ? clusterPreamble(swapCluster) : "")
            : "") +
      (hopper ? wgmmaBlocksPreamble(config.getBlocksPerSm()) : "") +
      (sm90aThreads ? "// " + std::to_string(threads / 128) +
                          " warpgroups in the sm_90a image, three elsewhere.\n" +
                          defineInSm90a("KILN_WGMMA_THREADS", std::to_string(threads), "384")
                    : "") +
      "\n" +
      emitEpilogueFunctor(group,
                          {epilogueName, "int m, int n", "m, n",
                           runtimeSizes ? "  long long batchBase;\n  long long columns;\n"
                                        : "  long long batchBase;\n",
                           "    const long long idx = batchBase + (long long)m * " +
                               (runtimeSizes ? std::string("columns") : std::to_string(N) + "LL") +
                               " + n;\n",
                           columnRules.pairs, columnRules.chunks, columnRules.halfSteps,
                           ringInputMap, "", pool ? pool->pixels : 0, poolImages,
                           hopper ? config.getTile()[1] : 0, N, pool ? pool->images : 0},
                          epilogue) +
      "\n" + open +
      (hopper && batch != 1 ? "" : operandOffsetsOnGridPlanes(plan)) +
      "  const " + epilogueName + " epilogue{" + epilogueInitializers(group) +
      // (The Hopper kernel's grid has one plane: its batch base is 0, and
      // its tiles' rows run on through the batches. A constant 0 there
      // spilled a 64-wide ping-pong bmm's GELU + residual epilogue.)
      (runtimeSizes ? std::string(", 0LL, size_n};\n")
                    : ", (long long)blockIdx.z * " + std::to_string(M * N) + "LL" +
                          (ringInputMap.empty() ? "" : ", &" + ringInputMap) + "};\n") +
      mainLoop + "}\n";
  return kernel;
}
