//===- FuseWindows.cpp - pools and reductions with their epilogues --------===//
//
// Algorithm: visit pools and reductions in program order; grow each into
// its elementwise consumers over the anchor's result shape
// (growAnchoredGroup, consumers only) and outline the group as
// `kiln.fusion pooling` or `kiln.fusion reduction`.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/FusionUtils.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Passes/Passes.h"

#define DEBUG_TYPE "kiln-fuse-windows"

namespace kiln {
#define GEN_PASS_DEF_KILNFUSEWINDOWS
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct FuseWindowsPass : kiln::impl::KilnFuseWindowsBase<FuseWindowsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> anchors;
    getOperation().walk([&](Operation *op) {
      if (isa<Pool2dOp, ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op) &&
          !isa<FusionOp>(op->getParentOp()) && !op->hasAttr(attr::kNoFuse))
        anchors.push_back(op);
    });
    FusionControlFn takeAll = [](Operation *, Operation *) { return true; };
    IRRewriter rewriter(&getContext());
    for (Operation *anchor : anchors)
      fuseIntoGroup(rewriter,
                    growAnchoredGroup(anchor, {/*consumers=*/true, /*producers=*/false},
                                      takeAll),
                    isa<Pool2dOp>(anchor) ? FusionKind::pooling : FusionKind::reduction);
  }
};

} // namespace
