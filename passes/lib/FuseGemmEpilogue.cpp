//===- FuseGemmEpilogue.cpp - GEMM + elementwise epilogue groups ----------===//
//
// Algorithm: visit contractions (linear, matmul, batch_matmul) in program
// order; grow each into its elementwise consumers over the GEMM's result
// shape (growAnchoredGroup, consumers only: kiln's GEMM kernels have no
// prologue; and a consumer's operand that is an outer product of row and
// column values, which the epilogue recomputes), then outline the group as `kiln.fusion gemm_epilogue`. A GEMM
// whose consumers cannot join still becomes a group of its own, so every
// kernel is a fusion group.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/FusionUtils.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Passes/Passes.h"

#define DEBUG_TYPE "kiln-fuse-gemm-epilogue"

namespace kiln {
#define GEN_PASS_DEF_KILNFUSEGEMMEPILOGUE
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {
struct FuseGemmEpiloguePass
    : kiln::impl::KilnFuseGemmEpilogueBase<FuseGemmEpiloguePass> {
  void runOnOperation() override {
    SmallVector<Operation *> anchors;
    getOperation().walk([&](Operation *op) {
      if (isa<LinearOp, MatmulOp, BatchMatmulOp>(op) &&
          !isa<FusionOp>(op->getParentOp()) && !op->hasAttr(attr::kNoFuse))
        anchors.push_back(op);
    });
    FusionControlFn takeAll = [](Operation *, Operation *) { return true; };
    IRRewriter rewriter(&getContext());
    for (Operation *anchor : anchors)
      fuseIntoGroup(rewriter,
                    growAnchoredGroup(anchor,
                                      {/*consumers=*/true, /*producers=*/false,
                                       /*broadcastProducers=*/true},
                                      takeAll),
                    FusionKind::gemm_epilogue);
  }
};
} // namespace
