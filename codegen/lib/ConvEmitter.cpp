//===- ConvEmitter.cpp - conv_epilogue and pooling groups -> CUDA ---------===//
//
// conv_epilogue: one kiln.conv2d (NHWC) plus elementwise ops on its result.
// The convolution runs one of six main loops (kiln_conv.cuh), as its
// kernel configuration says:
//   1. a plain GEMM (1x1, stride 1, no padding, one group, NHWC input): the
//      input is [N*H*W, C] and the weight [O, C], so the GEMM emitter runs
//      it, TMA + wgmma on sm_90a when C % 8 == 0 for fp16/bf16;
//   2. depthwise (groups == C): a direct kernel, one thread per output, or
//      (tile [1, 8, 1]) 8 channels per thread;
//   3. fp16/bf16: implicit GEMM on mma.sync, im2col in the A loader;
//   4. fp32: the same implicit GEMM on SIMT FMA;
//   5. conv_wgmma (sm_90a, kiln_conv_sm90.cuh): the implicit GEMM on the
//      Hopper GEMM's TMA + wgmma loop, each A tile one TMA box of NHWC
//      input pixels per filter tap; path 3 on the same grid elsewhere;
//   6. conv_stem (few input channels): the whole weight and KH input rows
//      (or an im2col tile) in shared memory, mma.sync over all of K, every
//      image.
// Every path ends in the same epilogue functor: (m, o, acc) -> acc + bias,
// rounded to the element type, then the group's ops at idx = m * O + o.
// The input may be `kiln.permute %arg [0, 2, 3, 1]` of an NCHW argument:
// paths 2-4 then read NCHW in place.
//
// pooling: one kiln.pool2d plus elementwise ops on its result, one thread
// per output element, channels fastest, or with tile [1, 8, 1] eight
// channels of a pixel a thread (kiln_pool.cuh).
//
//===----------------------------------------------------------------------===//

#include "ElementCode.h"
#include "Emitters.h"

#include "kiln/Dialect/Kiln/KernelShapes.h"
#include "kiln/Dialect/Kiln/Window.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;
using namespace kiln::codegen::detail;

namespace {

template <typename Op> Op anchorOf(FusionOp group) {
  for (Operation &op : group.getBody().front())
    if (auto anchor = dyn_cast<Op>(op))
      return anchor;
  return {};
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// `struct name { static constexpr int A = 1; ... };`
std::string constants(const std::string &name,
                      ArrayRef<std::pair<const char *, int64_t>> values) {
  std::string text = "struct " + name + " {\n";
  for (auto [key, value] : values)
    text += std::string("  static constexpr ") +
            (key[0] == 'k' ? "bool " : "int ") + key + " = " +
            (key[0] == 'k' ? (value ? "true" : "false") : std::to_string(value)) + ";\n";
  return text + "};\n";
}

/// The convolution's sizes as kiln_conv.cuh's shape struct `name`.
std::string convShapeStruct(const std::string &name, Conv2dOp conv, bool nchw) {
  ArrayRef<int64_t> in = conv.getInput().getType().getShape();
  ArrayRef<int64_t> w = conv.getWeight().getType().getShape();
  ArrayRef<int64_t> out = conv.getType().getShape();
  ArrayRef<int64_t> s = conv.getStrides(), p = conv.getPadding(), d = conv.getDilation();
  return constants(
      name, {{"N", in[0]}, {"H", in[1]}, {"W", in[2]}, {"C", in[3]}, {"O", out[3]},
             {"KH", w[1]}, {"KW", w[2]}, {"SH", s[0]}, {"SW", s[1]}, {"PT", p[0]},
             {"PL", p[1]}, {"DH", d[0]}, {"DW", d[1]}, {"OH", out[1]},
             {"OW", out[2]}, {"G", conv.getGroups()}, {"kNchw", nchw ? 1 : 0}});
}

/// Emits every op of the group but `skip` into `code`, then the stores.
LogicalResult emitRest(FusionOp group, ElementCode &code,
                       ArrayRef<Operation *> skip) {
  for (Operation &op : group.getBody().front().without_terminator())
    if (!llvm::is_contained(skip, &op) && failed(code.emit(&op)))
      return failure();
  for (auto [index, value] : llvm::enumerate(yieldOf(group).getValues()))
    code.store(index, value);
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// conv_wgmma (kiln_conv_sm90.cuh), its epilogue already emitted: tensor maps of the NHWC input as
/// [N, H, W, C] (of each part of a channel concat, `partArgs`, at its own
/// strides) and of the weight as [O, KH * KW, C]; a persistent grid of 384
/// threads. Other images run conv_mma over the same grid.
FailureOr<EmittedKernel> emitHopperConvolution(FusionOp group, StringRef name,
                                               const ConvShape &convShape,
                                               KernelConfigAttr config, ElementCode &epilogue,
                                               BlockArgument inputArg, BlockArgument weightArg,
                                               ArrayRef<BlockArgument> partArgs,
                                               bool layoutChange) {
  Conv2dOp conv = convShape.conv;
  auto refuse = [&](const Twine &why) {
    return group.emitOpError("cannot run as conv_wgmma: ") << why;
  };
  Type element = conv.getType().getElementType();
  ArrayRef<int64_t> in = conv.getInput().getType().getShape();
  ArrayRef<int64_t> w = conv.getWeight().getType().getShape();
  ArrayRef<int64_t> out = conv.getType().getShape();
  ArrayRef<int64_t> s = conv.getStrides();
  if (!element.isF16() && !element.isBF16())
    return refuse("wgmma needs fp16 or bf16 operands");
  if (convShape.groups != 1 || layoutChange || in[3] % 8 != 0)
    return refuse("TMA boxes need one group and an NHWC input with C % 8 == 0 (16-byte "
                  "strides)");
  if (std::optional<std::string> problem = wgmmaConfigProblem(config))
    return refuse(*problem);
  ArrayRef<int64_t> tile = config.getTile();
  if (tile[0] != 128)
    return refuse("its row tiles are boxes of at most 128 output pixels: tiles [128, ...]");
  if (tile[1] == kWgmmaNarrowWidth)
    return refuse("its tiles are 64 wide or more (a 56-wide tile is a GEMM's)");
  ArrayRef<int64_t> pixels = config.getPixelTile();
  if (pixels.size() != 3)
    return refuse("it needs a pixel_tile [images, rows, columns]");
  if (s[0] > 8 || s[1] > 8 || pixels[1] * s[0] > 256 || pixels[2] * s[1] > 256 ||
      pixels[0] > 256)
    return refuse("a TMA box spans at most 256 elements per dimension with strides of at "
                  "most 8");
  int64_t width = tile[1];
  int64_t pixelTiles =
      ceilDiv(out[0], pixels[0]) * ceilDiv(out[1], pixels[1]) * ceilDiv(out[2], pixels[2]);
  const int64_t multicast = config.getMulticast();
  // Split K: both blocks of a cluster on one tile (the attribute's verifier
  // has held it to cooperative 128 x 128 or narrower, no multicast).
  const int64_t split = config.getSplitK();
  const int64_t clusterBlocks = multicast * split;

  std::string shapeName = name.str() + "_shape", epilogueName = name.str() + "_epilogue";
  std::string type = cudaType(element);
  EmittedKernel kernel = kernelFor(group, name, "conv_epilogue");
  kernel.block = 384;
  kernel.grid[0] = persistentGrid(pixelTiles, ceilDiv(out[3], width), multicast,
                                  config.getGridLimit(), split);
  kernel.clusterBlocks = static_cast<unsigned>(clusterBlocks);
  kernel.dynamicSharedBytes = static_cast<unsigned>(
      wgmmaSharedBytes(width, config.getStages(), false, 128, false, false, split));
  kernel.otherImagesSharedBytes = 0;
  auto u = [](int64_t v) { return static_cast<unsigned>(v); };
  // The NHWC input's 4-D map, or each part's of a channel concat, read at
  // its own strides over the same boxes of output pixels.
  auto inputMap = [&](BlockArgument arg, int64_t strideH, int64_t strideW) {
    ArrayRef<int64_t> from = cast<RankedTensorType>(arg.getType()).getShape();
    return TensorMapArg{arg.getArgNumber(),
                        {from[3], from[2], from[1], from[0]},
                        {64, u(pixels[2] * strideW), u(pixels[1] * strideH), u(pixels[0])},
                        {1, u(strideW), u(strideH), 1}};
  };
  for (auto [part, arg] : llvm::zip_equal(convShape.parts, partArgs)) {
    if (part.channels % 8 != 0)
      return refuse("each part of a channel concat needs C % 8 == 0 (16-byte strides)");
    if (part.strideH > 8 || part.strideW > 8 || pixels[1] * part.strideH > 256 ||
        pixels[2] * part.strideW > 256)
      return refuse("a TMA box spans at most 256 elements per dimension with strides of at "
                    "most 8");
    kernel.tensorMaps.push_back(inputMap(arg, part.strideH, part.strideW));
  }
  if (partArgs.empty())
    kernel.tensorMaps.push_back(inputMap(inputArg, s[0], s[1]));
  kernel.tensorMaps.push_back(TensorMapArg{weightArg.getArgNumber(),
                                           {w[3], w[1] * w[2], w[0]},
                                           {64, 1, u(width / multicast)},
                                           {1, 1, 1}});
  setStreamKLaunch(config, width, kernel);
  std::string shape = convShapeStruct(shapeName, conv, /*nchw=*/false);
  std::string weight = "in" + std::to_string(weightArg.getArgNumber());
  // The main loop's operands and, for other images, conv_mma's input
  // pointers: the input, or the parts of a channel concat and their shape.
  std::string mainLoop = "conv_wgmma", maps = "map0, map1", inputs, partsName;
  if (partArgs.empty()) {
    inputs = "in" + std::to_string(inputArg.getArgNumber());
  } else {
    partsName = name.str() + "_parts";
    std::vector<std::pair<const char *, int64_t>> partConstants;
    static const char *const kPartKeys[2][5] = {{"C0", "H0", "W0", "SH0", "SW0"},
                                                {"C1", "H1", "W1", "SH1", "SW1"}};
    for (auto [index, part] : llvm::enumerate(convShape.parts)) {
      ArrayRef<int64_t> from = cast<RankedTensorType>(partArgs[index].getType()).getShape();
      partConstants.insert(partConstants.end(), {{kPartKeys[index][0], part.channels},
                                                 {kPartKeys[index][1], from[1]},
                                                 {kPartKeys[index][2], from[2]},
                                                 {kPartKeys[index][3], part.strideH},
                                                 {kPartKeys[index][4], part.strideW}});
      inputs += "in" + std::to_string(partArgs[index].getArgNumber()) + ", ";
    }
    inputs.resize(inputs.size() - 2);
    shape += constants(partsName, partConstants);
    mainLoop = "conv_wgmma_concat";
    maps = "map0, map1, map2";
    shapeName += ", " + partsName;
  }
  std::string sizes = std::to_string(width) + ", " + std::to_string(config.getStages()) + ", " +
                      wgmmaScheduleName(config.getSchedule()) + ", " +
                      std::to_string(multicast) + ", " +
                      std::to_string(config.getBlocksPerSm()) + ", " +
                      std::to_string(pixels[0]) + ", " + std::to_string(pixels[1]) + ", " +
                      withoutTrailingDefaults({std::to_string(pixels[2]),
                                               config.getStreamK() ? "true" : "false",
                                               std::to_string(split)},
                                              {"false", "1"});
  kernel.source =
      header(group, kernel.kind) + "#include \"kiln_conv_sm90.cuh\"\n" +
      "static_assert(" +
      wgmmaSharedBytesCall(width, config.getStages(), false, 128, false, false, split) +
      " == " + std::to_string(kernel.dynamicSharedBytes) +
      ", \"the launch's shared memory must match the kernel's\");\n" +
      (clusterBlocks > 1 ? clusterPreamble(clusterBlocks) : "") +
      wgmmaBlocksPreamble(config.getBlocksPerSm()) + "\n" + shape + "\n" +
      emitEpilogueFunctor(group,
                          {epilogueName, "int m, int o", "m, o", "",
                           "    const long long idx = (long long)m * " +
                               std::to_string(out[3]) + "LL + o;\n",
                           /*pairs=*/out[3] % 2 == 0, /*chunks=*/out[3] % 8 == 0},
                          epilogue) +
      "\n" +
      kernelOpen(group, name, kernel.block, kernel.tensorMaps.size(),
                 static_cast<unsigned>(config.getBlocksPerSm()),
                 /*splitCluster=*/clusterBlocks > 1, /*workspace=*/kernel.workspaceBytes != 0) +
      "  const " +
      epilogueName + " epilogue{" + epilogueInitializers(group) +
      "};\n#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n  kiln::conv::" + mainLoop + "<" + shapeName +
      ", " + type + ", " + sizes + ">(" + maps + ", epilogue" +
      (kernel.workspaceBytes ? ", workspace" : "") + ");\n#else\n" +
      "  kiln::conv::" + (partArgs.empty() ? "conv_mma_persistent" : "conv_mma_concat") + "<" +
      shapeName + ">(" + inputs + ", " + weight + ", epilogue);\n#endif\n}\n";
  return kernel;
}

FailureOr<EmittedKernel> emitConvolution(FusionOp group, StringRef name) {
  std::optional<ConvShape> convShape = convShapeOf(group);
  if (!convShape)
    return group.emitOpError("a conv_epilogue group needs a kiln.conv2d");
  Conv2dOp conv = convShape->conv;
  // The input: a group argument, NHWC, or the NHWC permute of an NCHW one,
  // or (conv_wgmma) a channel concat of group arguments and their strided
  // slices, each read in place.
  Value input = conv.getInput();
  SmallVector<BlockArgument, 2> partArgs;
  SmallVector<Operation *> concatViews;
  if (!convShape->parts.empty()) {
    concatViews.push_back(input.getDefiningOp());
    for (const ConvInputPart &part : convShape->parts) {
      auto arg = dyn_cast<BlockArgument>(part.source);
      if (!arg)
        return conv.emitOpError("each part of a channel concat the convolution reads must be "
                                "an input of the group or a strided slice of one");
      partArgs.push_back(arg);
      if (part.slice)
        concatViews.push_back(part.slice);
    }
    if (partArgs.size() != 2)
      return conv.emitOpError("conv_wgmma reads a channel concat of two parts, not ")
             << partArgs.size();
    // Stands for the input below; the kernel reads the parts.
    input = partArgs.front();
  }
  PermuteOp layoutChange = input.getDefiningOp<PermuteOp>();
  if (layoutChange) {
    if (layoutChange.getPermutation() != ArrayRef<int64_t>{0, 2, 3, 1})
      return conv.emitOpError("a permuted convolution input must be the NCHW -> NHWC "
                              "permute [0, 2, 3, 1], got a different permutation");
    input = layoutChange.getInput();
  }
  auto inputArg = dyn_cast<BlockArgument>(input);
  auto weightArg = dyn_cast<BlockArgument>(conv.getWeight());
  if (!inputArg || !weightArg)
    return conv.emitOpError("the convolution's input and weight must be inputs of the "
                            "group (or the input's NCHW -> NHWC permute)");
  if (conv.getBias() && !isa<BlockArgument>(conv.getBias()))
    return conv.emitOpError("the bias must be an input of the group");
  // A global average pool at the end: the pooled GEMM's epilogue (its
  // result is the pool's shape).
  const bool pooled = globalPoolOf(group).has_value();
  for (Value result : group.getResults())
    if (!pooled &&
        cast<RankedTensorType>(result.getType()).getShape() != conv.getType().getShape())
      return group.emitOpError("a conv_epilogue kernel needs every result in the "
                               "convolution's shape");

  ArrayRef<int64_t> out = conv.getType().getShape();
  const int64_t groups = conv.getGroups();
  const int64_t M = out[0] * out[1] * out[2], O = out[3];
  Type element = conv.getType().getElementType();
  if (M * O >= (1LL << 31) || elementCount(conv.getInput().getType()) >= (1LL << 31))
    return conv.emitOpError("convolutions past 2^31 elements are not supported");

  // The epilogue reads the accumulator plus bias, rounded as if stored.
  ElementCode epilogue(group, out, "idx", "    ");
  epilogue.deferStores = true;
  // The bias is read at the output channel the epilogue is called with:
  // through idx it would cost a 64-bit remainder per element (and, in the
  // wgmma epilogue, registers enough to spill).
  std::string accumulator = "acc";
  KernelConfigAttr config = configOf(group);
  KernelVariant variant = config.getVariant();
  if (conv.getBias())
    accumulator = "(acc + kiln::to_float(in" +
                  std::to_string(cast<BlockArgument>(conv.getBias()).getArgNumber()) + "[o]))";
  else if (!element.isF32() && variant == KernelVariant::conv_wgmma)
    // Rounded straight from the wgmma accumulator, a bias-free
    // convolution's result serializes the kernel's wgmmas (kiln_common.cuh).
    accumulator = "kiln::accumulator_value(acc)";
  SmallVector<Operation *> skip = {conv};
  if (layoutChange)
    skip.push_back(layoutChange);
  skip.append(concatViews.begin(), concatViews.end());

  auto refuse = [&](StringRef why) {
    return group.emitOpError("cannot run as ")
           << stringifyKernelVariant(variant) << ": " << why;
  };
  bool gemmVariant =
      variant <= KernelVariant::gemm_split_k || variant == KernelVariant::gemm_narrow ||
      variant == KernelVariant::gemm_gemv || variant == KernelVariant::gemm_stream ||
      variant == KernelVariant::gemm_wgmma_swap;
  if (gemmVariant != convShape->plainGemm)
    return refuse(convShape->plainGemm
                      ? "a 1x1 convolution with stride 1, no padding and one group runs as a GEMM"
                      : "only a 1x1 convolution with stride 1, no padding and one group is a GEMM");
  if (pooled && (!convShape->plainGemm || variant != KernelVariant::gemm_wgmma))
    return refuse("a global average pool is summed in the epilogue of a 1x1 convolution run "
                  "as gemm_wgmma only");
  if (convShape->plainGemm) {
    GemmPlan plan;
    plan.anchor = conv;
    plan.lhs = inputArg;
    plan.rhs = weightArg;
    plan.bias = conv.getBias();
    plan.M = convShape->M;
    plan.N = convShape->outChannels;
    plan.K = convShape->inChannelsPerGroup;
    plan.kind = "conv_epilogue";
    return emitGemmKernel(group, name, plan);
  }

  epilogue.bind(conv.getResult(), roundedTo(element, accumulator));
  if (failed(emitRest(group, epilogue, skip)))
    return failure();

  bool depthwise = convShape->depthwise;
  bool tensorCores = element.isF16() || element.isBF16();
  if (variant == KernelVariant::conv_wgmma)
    return emitHopperConvolution(group, name, *convShape, config, epilogue, inputArg,
                                 weightArg, partArgs, layoutChange != nullptr);
  if (!partArgs.empty())
    return refuse("a convolution over a channel concat runs as conv_wgmma");
  if (depthwise != (variant == KernelVariant::conv_depthwise))
    return refuse(depthwise ? "a depthwise convolution runs as conv_depthwise"
                            : "conv_depthwise needs one filter per channel");
  if (variant == KernelVariant::conv_simt && tensorCores)
    return refuse("the SIMT loop reads fp32 operands");
  if ((variant == KernelVariant::conv_mma || variant == KernelVariant::conv_split_k) &&
      !tensorCores)
    return refuse("mma.sync needs fp16 or bf16 operands");
  if (variant == KernelVariant::conv_split_k &&
      (layoutChange || convShape->inChannelsPerGroup % 8 != 0 || !splitKPipelineOf(config)))
    return refuse("split-K needs an NHWC input with Cin per group % 8 == 0, 64 x 64 tiles, "
                  "a k tile that is a multiple of 16 and 2 or more stages");
  if (variant != KernelVariant::conv_split_k && config.getSplitK() != 1)
    return refuse("only conv_split_k splits K");
  std::string shapeName = name.str() + "_shape", epilogueName = name.str() + "_epilogue";
  std::string x = "in" + std::to_string(inputArg.getArgNumber());
  std::string weight = "in" + std::to_string(weightArg.getArgNumber());
  EmittedKernel kernel = kernelFor(group, name, "conv_epilogue");
  kernel.block = kThreads;
  std::string call, preamble;
  // The selection stage asks for 8 channels a thread with tile [1, 8, 1]
  // (the kernel asserts kiln::conv::depthwise_vectorized for it).
  const int64_t C = conv.getInput().getType().getShape()[3];
  // Tile [1, 8, P]: 8 channels of P adjacent output columns a thread.
  ArrayRef<int64_t> tile = config.getTile();
  const StemGeometry stem = stemGeometryOf(*convShape);
  const int64_t columns = tile.size() == 3 ? tile[2] : 0;
  const bool vectorizedDepthwise = depthwise && tile.size() == 3 && tile[0] == 1 &&
                                   tile[1] == 8 && (columns == 1 || columns == 2 || columns == 4);
  if (depthwise && !tile.empty() && !vectorizedDepthwise)
    return refuse("conv_depthwise takes no tile (a thread per element) or [1, 8, P] (8 "
                  "channels of P = 1, 2 or 4 adjacent output columns a thread)");
  if (vectorizedDepthwise &&
      (groups != C || O != C || C % 8 != 0 || layoutChange || !tensorCores))
    return refuse("8 channels a thread need fp16 or bf16, one filter per channel, C % 8 == "
                  "0 and an NHWC input");
  // The channels a grid row of the vectorized depthwise kernel takes, as
  // kiln::conv::depthwise::slice computes them (at most 128, split evenly
  // in 8-channel groups).
  const int64_t slice = depthwiseSlice(C);
  // pixel_tile [1, TH, TW] on one column a thread: a block computes patches
  // of TH x TW outputs from their input window in shared memory
  // (kiln::conv::conv_depthwise_patches).
  ArrayRef<int64_t> patch = config.getPixelTile();
  const bool patches = vectorizedDepthwise && !patch.empty();
  if (!patch.empty() && (!patches || columns != 1 || patch[0] != 1))
    return refuse("a pixel tile takes 8 channels of one output column a thread (tile [1, 8, "
                  "1]) and patches of one image ([1, rows, columns])");
  if (patches) {
    const int64_t shared = depthwisePatchSharedBytes(*convShape, patch[1], patch[2]);
    if (shared > kStaticSharedBytes)
      return refuse("a patch of " + std::to_string(patch[1]) + " x " +
                    std::to_string(patch[2]) + " outputs: its input window and filters take " +
                    std::to_string(shared) + " bytes of shared memory, past the " +
                    std::to_string(kStaticSharedBytes) + " a kernel has statically");
    kernel.grid[0] = static_cast<unsigned>(
        std::min(out[0] * ceilDiv(out[1], patch[1]) * ceilDiv(out[2], patch[2]),
                 std::max<int64_t>(config.getGridLimit(), 1)));
    kernel.grid[1] = static_cast<unsigned>(ceilDiv(C, slice));
    call = "kiln::conv::conv_depthwise_patches<" + shapeName + ", " + std::to_string(patch[1]) +
           ", " + std::to_string(patch[2]) + ">(" + x + ", " + weight;
  } else if (vectorizedDepthwise) {
    // Blocks of 256 / (slice / 8) output positions (groups of `columns`
    // adjacent output columns), a slice of channels per grid row.
    const int64_t pixels = 256 / (slice / 8);
    const int64_t positions = columns == 1 ? M : out[0] * out[1] * ceilDiv(out[2], columns);
    kernel.grid[0] = static_cast<unsigned>(
        std::min(ceilDiv(positions, pixels), std::max<int64_t>(config.getGridLimit(), 1)));
    kernel.grid[1] = static_cast<unsigned>(ceilDiv(C, slice));
    call = "kiln::conv::conv_depthwise<" + shapeName + ", true" +
           (columns == 1 ? std::string() : ", " + std::to_string(columns)) + ">(" + x + ", " +
           weight;
  } else if (depthwise) {
    kernel.grid[0] = gridStrideBlocks(group, M * O, kThreads);
    call = "kiln::conv::conv_depthwise<" + shapeName + ">(" + x + ", " + weight;
  } else if (variant == KernelVariant::conv_split_k) {
    int64_t split = config.getSplitK();
    kernel.block = 128;
    kernel.grid[0] = static_cast<unsigned>((O / groups + 63) / 64 * split);
    kernel.grid[1] = static_cast<unsigned>((M + 63) / 64);
    kernel.grid[2] = static_cast<unsigned>(groups);
    if (kernel.grid[1] > 65535)
      return conv.emitOpError("the implicit GEMM needs ")
             << kernel.grid[1] << " row tiles, past the grid's y limit of 65535";
    SplitKPipeline pipeline = *splitKPipelineOf(config);
    kernel.dynamicSharedBytes = pipeline.sharedBytes(/*kMajorB=*/true, 2);
    kernel.clusterBlocks = static_cast<unsigned>(split);
    preamble = splitClusterPreamble(split) +
                    pipeline.sharedAssert(cudaType(element), /*kMajorB=*/true, 2);
    call = "kiln::conv::conv_splitk<" + shapeName + ", " + cudaType(element) + ", " +
           std::to_string(split) + pipeline.templateArgs() + ">(" + x + ", " + weight;
  } else if (variant == KernelVariant::conv_stem) {
    if (!tensorCores || groups != 1 || O > 128)
      return refuse("conv_stem needs fp16 or bf16 operands, one group and at most 128 output "
                    "channels");
    if (!stem.fits(kMaxDynamicSharedBytes))
      return refuse(stem.rows() ? "its weight, input rows and results do not fit in 227 KiB of "
                                  "shared memory"
                                : "its weight and im2col tile do not fit in 48 KiB of shared "
                                  "memory");
    if (tile.size() != 3 || tile[0] != stem.tileRows() || tile[1] != ceilDiv(O, 16) * 16 ||
        tile[2] != stem.reduction())
      return refuse("conv_stem's tile is [" + std::to_string(stem.tileRows()) + ", " +
                    std::to_string(ceilDiv(O, 16) * 16) + ", " +
                    std::to_string(stem.reduction()) +
                    "] here (output positions, output channels and K rounded up to 16 " +
                    (stem.rows() ? "a filter row" : "as a whole") + ")");
    if (config.getGridLimit() <= 0)
      return refuse("the persistent grid needs a grid_limit (blocks at most)");
    const int64_t blocks = config.getBlocksPerSm();
    if (!stem.rows() && blocks != 1)
      return refuse("over an im2col tile its blocks a multiprocessor follow from O: "
                    "blocks_per_sm = 1");
    if (stem.rows() && (blocks < 1 || blocks * stem.sharedBytes() > kMaxDynamicSharedBytes))
      return refuse("its shared memory (" + std::to_string(stem.sharedBytes()) +
                    " bytes) allows at most " +
                    std::to_string(kMaxDynamicSharedBytes / stem.sharedBytes()) +
                    " blocks a multiprocessor, not " + std::to_string(blocks));
    kernel.grid[0] = static_cast<unsigned>(std::min(stem.tiles(), config.getGridLimit()));
    if (stem.rows())
      kernel.dynamicSharedBytes = static_cast<unsigned>(stem.sharedBytes());
    call = "kiln::conv::conv_stem<" + shapeName + ">(" + x + ", " + weight;
  } else {
    int64_t tile = tensorCores ? 128 : 64;
    int64_t mTiles = (M + tile - 1) / tile;
    if (mTiles > 65535)
      return conv.emitOpError("the implicit GEMM needs ")
             << mTiles << " row tiles, past the grid's y limit of 65535";
    kernel.grid[0] = static_cast<unsigned>((O / groups + tile - 1) / tile);
    kernel.grid[1] = static_cast<unsigned>(mTiles);
    kernel.grid[2] = static_cast<unsigned>(groups);
    call = std::string(tensorCores ? "kiln::conv::conv_mma<" : "kiln::conv::conv_simt<") +
           shapeName + ">(" + x + ", " + weight;
  }
  std::string shape = convShapeStruct(shapeName, conv, layoutChange != nullptr);
  if (vectorizedDepthwise)
    // The grid has one row per slice of channels: the kernel must slice alike.
    shape += "static_assert(kiln::conv::depthwise::slice<" + shapeName +
             ">() == " + std::to_string(slice) +
             ", \"the code generator's grid must match the kernel's channel slices\");\n";
  if (variant == KernelVariant::conv_stem)
    shape += "static_assert(kiln::conv::stem::shared_bytes<" + shapeName + ">() == " +
             std::to_string(stem.sharedBytes()) +
             " && kiln::conv::stem::reduction<" + shapeName + ">() == " +
             std::to_string(stem.reduction()) +
             ", \"the code generator's shared memory and K must match the kernel's\");\n";
  std::string launch =
      variant != KernelVariant::conv_split_k
          // The vectorized depthwise kernel's minimum is the selection's
          // blocks a multiprocessor (8: 32 registers, within which its loop
          // stores eight channels as one chunk without spilling). The stem
          // asks for the selection's blocks a multiprocessor (input rows) or
          // StemGeometry::blocksPerSM (im2col): alone, its gather staged in
          // registers would take them all and one block would leave the
          // loads' latency to itself.
          ? kernelOpen(group, name, kThreads, 0,
                       variant == KernelVariant::conv_stem
                           ? unsigned(stem.rows() ? config.getBlocksPerSm() : stem.blocksPerSM())
                       : vectorizedDepthwise ? unsigned(config.getBlocksPerSm())
                                             : unsigned(!depthwise))
          : kernelOpen(group, name, kernel.block, 0, /*minBlocks=*/1, /*splitCluster=*/true);
  kernel.source = header(group, kernel.kind) + "#include \"kiln_conv.cuh\"\n" + preamble +
                  "\n" + shape + "\n" + emitEpilogueFunctor(group,
                                      {epilogueName, "int m, int o", "m, o", "",
                                       "    const long long idx = (long long)m * " +
                                           std::to_string(O) + "LL + o;\n",
                                       /*pairs=*/O % 2 == 0,
                                       /*chunks=*/(variant == KernelVariant::conv_stem &&
                                                   stem.rows() && O % 8 == 0) ||
                                           (vectorizedDepthwise && columns == 1),
                                       /*halfSteps=*/variant != KernelVariant::conv_stem},
                                      epilogue) +
                  "\n" + launch + "  const " + epilogueName +
                  " epilogue{" + epilogueInitializers(group) + "};\n  " + call +
                  ", epilogue);\n}\n";
  return kernel;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

FailureOr<EmittedKernel> emitPool(FusionOp group, StringRef name) {
  Pool2dOp pool = anchorOf<Pool2dOp>(group);
  auto inputArg = dyn_cast<BlockArgument>(pool.getInput());
  if (!inputArg)
    return pool.emitOpError("the pooled tensor must be an input of the group");
  ArrayRef<int64_t> in = pool.getInput().getType().getShape();
  ArrayRef<int64_t> out = pool.getType().getShape();
  for (Value result : group.getResults())
    if (cast<RankedTensorType>(result.getType()).getShape() != out)
      return group.emitOpError("a pooling kernel needs every result in the pooled shape");
  int64_t total = elementCount(pool.getType());
  ArrayRef<int64_t> k = pool.getKernel(), s = pool.getStrides(), p = pool.getPadding();
  Type element = pool.getType().getElementType();

  ElementCode epilogue(group, out, "idx", "    ");
  epilogue.bind(pool.getResult(), roundedTo(element, "pooled"));
  if (failed(emitRest(group, epilogue, {pool})))
    return failure();

  // Tile [1, 8, 1]: eight channels a thread, one 16-byte load per window
  // position (kiln_pool.cuh's pool_window8); no tile: a thread per element.
  KernelConfigAttr config = configOf(group);
  const bool eightChannels = config.getTile() == ArrayRef<int64_t>{1, 8, 1};
  if (!config.getTile().empty() && !eightChannels)
    return group.emitOpError("cannot run as pooling: it takes no tile (a thread per element) "
                             "or [1, 8, 1] (8 channels a thread)");
  if (eightChannels && ((!element.isF16() && !element.isBF16()) || in[3] % 8 != 0))
    return group.emitOpError("cannot run as pooling: 8 channels a thread need fp16 or bf16 "
                             "and C % 8 == 0");
  // Grid-stride work items: outputs, or pixels' eight channels.
  const int64_t count = total / (eightChannels ? 8 : 1);

  EmittedKernel kernel = kernelFor(group, name, "pooling");
  kernel.block = kThreads;
  kernel.grid[0] = gridStrideBlocks(group, count, kThreads);
  std::string shapeName = name.str() + "_window";
  std::string shape = constants(
      shapeName, {{"N", in[0]}, {"H", in[1]}, {"W", in[2]}, {"C", in[3]}, {"OH", out[1]},
                  {"OW", out[2]}, {"KH", k[0]}, {"KW", k[1]}, {"SH", s[0]}, {"SW", s[1]},
                  {"PT", p[0]}, {"PL", p[1]}, {"PB", p[2]}, {"PR", p[3]},
                  {"kMax", pool.getKind() == PoolKind::max},
                  {"kCountIncludePad", pool.getCountIncludePad()}});
  const std::string input = "in" + std::to_string(inputArg.getArgNumber());
  std::string body;
  if (eightChannels) {
    // The epilogue still runs per element: its ops read other inputs at idx.
    std::string perElement;
    for (StringRef line : llvm::split(StringRef(epilogue.code).rtrim('\n'), '\n'))
      perElement += "  " + line.str() + "\n";
    body = "static_assert(kiln::pool::vectorized<" + shapeName + ", " + cudaType(element) +
           ">(), \"8 channels a thread need 2-byte elements and C % 8 == 0\");\n" +
           kernelOpen(group, name, kThreads) + gridStrideLoop("pixelChannels", count) +
           "    float pooled8[8];\n" +
           "    kiln::pool::pool_window8<" + shapeName + ">(" + input +
           ", pixelChannels * 8, pooled8);\n#pragma unroll\n    for (int j = 0; j < 8; ++j) {\n" +
           "      const long long idx = pixelChannels * 8 + j;\n" +
           "      const float pooled = pooled8[j];\n" +
           perElement + "    }\n  }\n}\n";
  } else {
    body = kernelOpen(group, name, kThreads) + gridStrideLoop("idx", count) +
           "    const float pooled = kiln::pool::pool_window<" + shapeName + ">(" + input +
           ", idx);\n" + epilogue.code + "  }\n}\n";
  }
  kernel.source = header(group, kernel.kind) + "#include \"kiln_pool.cuh\"\n\n" + shape +
                  "\n" + body;
  return kernel;
}

} // namespace

FailureOr<EmittedKernel> kiln::codegen::detail::emitConv(FusionOp group, StringRef name) {
  return emitConvolution(group, name);
}

FailureOr<EmittedKernel> kiln::codegen::detail::emitPooling(FusionOp group, StringRef name) {
  return emitPool(group, name);
}
