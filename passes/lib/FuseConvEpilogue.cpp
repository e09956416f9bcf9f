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
// consumers cannot join still becomes a group of its own.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/FusionUtils.h"
#include "kiln/Dialect/Kiln/KernelShapes.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Passes/Passes.h"

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

struct FuseConvEpiloguePass : kiln::impl::KilnFuseConvEpilogueBase<FuseConvEpiloguePass> {
  void runOnOperation() override {
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
      fuseIntoGroup(rewriter, group, FusionKind::conv_epilogue);
    }
  }
};

} // namespace
