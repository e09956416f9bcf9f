//===- FuseConvEpilogue.cpp - convolution + elementwise epilogue groups ---===//
//
// Algorithm: visit convolutions in program order; grow each into its
// elementwise consumers over the convolution's result shape
// (growAnchoredGroup, consumers only), add the channels-last permute of a
// function argument feeding it when that permute has no other user, and
// the channel concat marked kiln.read_in_place (with its strided slices)
// that a merged shortcut convolution reads in place when nothing else
// reads them, then outline
// the group as `kiln.fusion conv_epilogue`. A convolution whose
// consumers cannot join still becomes a group of its own. With
// global-pool, the mean over H and W that alone reads the group's one
// result joins it (globalPoolJoins: the policy), ending the group.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/FusionUtils.h"
#include "kiln/Dialect/Kiln/KernelShapes.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Passes/Passes.h"
#include "kiln/Target/Target.h"

#define DEBUG_TYPE "kiln-fuse-conv-epilogue"

namespace kiln {
#define GEN_PASS_DEF_KILNFUSECONVEPILOGUE
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The NCHW -> NHWC permute of a function argument that only this
/// convolution reads: the kernel can read the argument in place.
PermuteOp boundaryPermute(Conv2dOp conv) {
  auto permute = conv.getInput().getDefiningOp<PermuteOp>();
  if (!permute || permute.getPermutation() != ArrayRef<int64_t>{0, 2, 3, 1} ||
      !permute->hasOneUse() || permute->hasAttr(attr::kNoFuse) ||
      !isa<BlockArgument>(permute.getInput()))
    return {};
  return permute;
}

/// The channel concat a 1x1 convolution reads, and the slices under it,
/// when only the convolution reads them and the concat is marked
/// `kiln.read_in_place` (the merged shortcut's, whose pass checked that the
/// target's kernel reads it in place: channelConcatParts).
SmallVector<Operation *> concatViews(Conv2dOp conv) {
  std::optional<SmallVector<ConvInputPart, 2>> parts = channelConcatParts(conv);
  Operation *concat = conv.getInput().getDefiningOp();
  if (!parts || !concat->hasOneUse() || concat->hasAttr(attr::kNoFuse) ||
      !concat->hasAttr(attr::kReadInPlace))
    return {};
  SmallVector<Operation *> views = {concat};
  for (const ConvInputPart &part : *parts)
    if (part.slice) {
      if (!part.slice->hasOneUse() || part.slice->hasAttr(attr::kNoFuse))
        return {};
      views.push_back(part.slice);
    }
  return views;
}

/// The mean over H and W that alone reads the one value `group` leaves to
/// the rest of the function, where the pooled Hopper GEMM takes it (the
/// pass's description); null otherwise.
ReduceMeanOp globalPoolJoins(Conv2dOp conv, const llvm::SetVector<Operation *> &group,
                             int64_t multiprocessors) {
  Value escaping;
  for (Operation *op : group)
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (!group.contains(user)) {
          if (escaping && escaping != result)
            return {};
          escaping = result;
        }
  if (!escaping || !escaping.hasOneUse())
    return {};
  auto mean = dyn_cast<ReduceMeanOp>(*escaping.getUsers().begin());
  if (!mean || mean->hasAttr(attr::kNoFuse) || mean.getDims() != ArrayRef<int64_t>{1, 2})
    return {};
  ArrayRef<int64_t> in = conv.getInput().getType().getShape();
  ArrayRef<int64_t> out = conv.getType().getShape();
  Type element = conv.getType().getElementType();
  auto escapingType = cast<RankedTensorType>(escaping.getType());
  if (!isPlainGemmConv(conv) || !(element.isF16() || element.isBF16()) || in[3] % 8 != 0 ||
      out[3] % 2 != 0 || out[1] * out[2] > 128 || escapingType.getShape() != out ||
      !(escapingType.getElementType().isF16() || escapingType.getElementType().isBF16()))
    return {};
  // Whole images a 128-row tile, in tiles 64 wide: a quarter of the GPU.
  const int64_t imagesPerTile = poolImagesPerTile(out[1] * out[2]);
  const int64_t tiles = (out[0] + imagesPerTile - 1) / imagesPerTile * ((out[3] + 63) / 64);
  if (tiles * 4 < multiprocessors)
    return {};
  return mean;
}

struct FuseConvEpiloguePass : kiln::impl::KilnFuseConvEpilogueBase<FuseConvEpiloguePass> {
  using Base::Base;

  void runOnOperation() override {
    // The pool joins only where the primary target runs the pooled GEMM (an
    // unknown target is kiln-select-kernels' error to report).
    bool pools = false;
    int64_t gpuMultiprocessors = 0;
    if (globalPool) {
      std::string error;
      std::optional<TargetDescription> description =
          describeTargets(std::vector<std::string>(targets.begin(), targets.end()), error, {},
                          static_cast<int>(multiprocessors));
      pools = description && description->primary().tensorCores == TensorCoreGeneration::Wgmma;
      if (pools)
        gpuMultiprocessors = description->primary().multiprocessors;
    }
    SmallVector<Conv2dOp> anchors;
    getOperation().walk([&](Conv2dOp op) {
      if (!isa<FusionOp>(op->getParentOp()) && !op->hasAttr(attr::kNoFuse))
        anchors.push_back(op);
    });
    FusionControlFn takeAll = [](Operation *, Operation *) { return true; };
    IRRewriter rewriter(&getContext());
    for (Conv2dOp anchor : anchors) {
      llvm::SetVector<Operation *> group =
          growAnchoredGroup(anchor, {/*consumers=*/true, /*producers=*/false}, takeAll);
      if (PermuteOp permute = boundaryPermute(anchor))
        group.insert(permute);
      for (Operation *view : concatViews(anchor))
        group.insert(view);
      if (pools)
        if (ReduceMeanOp mean = globalPoolJoins(anchor, group, gpuMultiprocessors))
          group.insert(mean);
      fuseIntoGroup(rewriter, group, FusionKind::conv_epilogue);
    }
  }
};

} // namespace
