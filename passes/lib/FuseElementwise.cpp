//===- FuseElementwise.cpp - group elementwise chains into kernels --------===//
//
// Algorithm (one pass over each block, in program order):
//   1. Each elementwise op starts a group of its own.
//   2. For each operand produced by an op already in a group, merge the two
//      groups if the mechanics allow (areElementwiseFusable: same index
//      space), the policy agrees (control function), and the merged set has
//      no cycle through an outside op (wouldCreateCycle).
//   Permutes, slices and concats start groups too (their kernels load the
//   operands at mapped indices), but only take consumers: their operands
//   stay group inputs.
//   3. Each group becomes one kiln.fusion elementwise (fuseIntoGroup), which
//      exports every value used outside, so a multi-use producer is computed
//      once and written once.
// Visiting consumers in program order sees every producer before its
// consumers, so chains and trees of any shape collapse in one pass.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/FusionUtils.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "kiln-fuse-elementwise"

namespace kiln {
#define GEN_PASS_DEF_KILNFUSEELEMENTWISE
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Union of ops into groups; groups are numbered in creation order so the
/// output does not depend on pointer values.
struct Grouping {
  llvm::DenseMap<Operation *, unsigned> groupOf;
  std::vector<llvm::SetVector<Operation *>> groups;

  unsigned create(Operation *op) {
    groups.push_back({});
    groups.back().insert(op);
    return groupOf[op] = groups.size() - 1;
  }
  /// Moves every op of `from` into `into`; `from` is left empty.
  void merge(unsigned into, unsigned from) {
    for (Operation *op : groups[from]) {
      groups[into].insert(op);
      groupOf[op] = into;
    }
    groups[from].clear();
  }
};

/// Permute, slice, concat, gather and cumsum run as elementwise kernels that
/// load their operands at mapped indices, so those operands must be group
/// inputs.
bool isDataMovement(Operation *op) {
  return isa<PermuteOp, SliceOp, ConcatOp, GatherOp, CumsumOp>(op) &&
         !isa_and_nonnull<FusionOp>(op->getParentOp());
}

/// A data-movement op in `ops` reading a value computed inside `ops`.
bool readsInsideGroup(const llvm::SetVector<Operation *> &ops) {
  for (Operation *op : ops)
    if (isDataMovement(op))
      for (Value operand : op->getOperands())
        if (ops.contains(operand.getDefiningOp()))
          return true;
  return false;
}

/// A data-movement producer may feed elementwise consumers of its shape (a
/// cast changes only the element type).
bool fusable(Operation *producer, Operation *consumer) {
  if (isDataMovement(producer))
    return isElementwiseFusible(consumer) && producer->getBlock() == consumer->getBlock() &&
           cast<RankedTensorType>(producer->getResult(0).getType()).getShape() ==
               cast<RankedTensorType>(consumer->getResult(0).getType()).getShape();
  return areElementwiseFusable(producer, consumer);
}

Grouping formGroups(Block &block, const FusionControlFn &control) {
  Grouping grouping;
  for (Operation &op : block) {
    bool movement = isDataMovement(&op);
    if ((!isElementwiseFusible(&op) && !movement) || op.hasAttr(attr::kNoFuse))
      continue;
    unsigned group = grouping.create(&op);
    for (Value operand : movement ? ValueRange() : ValueRange(op.getOperands())) {
      Operation *producer = operand.getDefiningOp();
      auto found = producer ? grouping.groupOf.find(producer)
                            : grouping.groupOf.end();
      if (found == grouping.groupOf.end() || found->second == group)
        continue;
      if (!fusable(producer, &op) || !control(producer, &op))
        continue;
      llvm::SetVector<Operation *> merged = grouping.groups[found->second];
      merged.insert(grouping.groups[group].begin(), grouping.groups[group].end());
      if (wouldCreateCycle(merged) || readsInsideGroup(merged))
        continue;
      grouping.merge(found->second, group);
      group = found->second;
    }
  }
  return grouping;
}

struct FuseElementwisePass
    : kiln::impl::KilnFuseElementwiseBase<FuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    FusionControlFn control = [&](Operation *producer, Operation *consumer) {
      return fuseMultiUse || producer->hasOneUse();
    };
    IRRewriter rewriter(&getContext());
    for (Block &block : getOperation().getBody()) {
      Grouping grouping = formGroups(block, control);
      for (const llvm::SetVector<Operation *> &group : grouping.groups) {
        if (group.empty() || (group.size() == 1 && !wrapSingleOps))
          continue;
        fuseIntoGroup(rewriter, group, FusionKind::elementwise);
      }
    }
  }
};

} // namespace
