//===- FuseNormalization.cpp - row normalizations with their neighbours ---===//
//
// Algorithm: visit layer norms, softmaxes and row moments in program order; grow each
// into its elementwise producers (when `prologue` is on) and consumers over
// the same shape (growAnchoredGroup), then outline the group as
// `kiln.fusion normalization`. The row kernel reads each input row once,
// applies the prologue on load, normalizes with fp32 statistics, and applies
// the epilogue before the store.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/FusionUtils.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Passes/Passes.h"

#define DEBUG_TYPE "kiln-fuse-normalization"

namespace kiln {
#define GEN_PASS_DEF_KILNFUSENORMALIZATION
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {
struct FuseNormalizationPass
    : kiln::impl::KilnFuseNormalizationBase<FuseNormalizationPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> anchors;
    getOperation().walk([&](Operation *op) {
      if (isa<LayerNormOp, SoftmaxOp, RowMomentsOp>(op) && !isa<FusionOp>(op->getParentOp()) &&
          !op->hasAttr(attr::kNoFuse))
        anchors.push_back(op);
    });
    FusionControlFn takeAll = [](Operation *, Operation *) { return true; };
    IRRewriter rewriter(&getContext());
    // Row moments store two values a row: nothing elementwise follows them
    // in their kernel.
    for (Operation *anchor : anchors)
      fuseIntoGroup(rewriter,
                    growAnchoredGroup(anchor,
                                      {/*consumers=*/!isa<RowMomentsOp>(anchor), prologue},
                                      takeAll),
                    FusionKind::normalization);
  }
};
} // namespace
