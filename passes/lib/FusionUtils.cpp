//===- FusionUtils.cpp - mechanics of forming kiln.fusion groups ----------===//

#include "kiln/Passes/FusionUtils.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace kiln;

bool kiln::isElementwiseFusible(Operation *op) {
  return op->hasTrait<OpTrait::KilnElementwise>() &&
         !isa_and_nonnull<FusionOp>(op->getParentOp());
}

bool kiln::isCloneableConstant(Operation *op) {
  auto constant = dyn_cast_if_present<ConstantOp>(op);
  if (!constant)
    return false;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  return dense && (dense.isSplat() || constant.getType().getRank() == 0);
}

bool kiln::areElementwiseFusable(Operation *producer, Operation *consumer) {
  if (!isElementwiseFusible(producer) || !isElementwiseFusible(consumer) ||
      producer->getBlock() != consumer->getBlock() ||
      producer->getNumResults() != 1 || consumer->getNumResults() != 1)
    return false;
  auto producerType = cast<RankedTensorType>(producer->getResult(0).getType());
  auto consumerType = cast<RankedTensorType>(consumer->getResult(0).getType());
  // A smaller producer broadcast into the consumer would be recomputed per
  // output element; it stays outside and enters as a broadcast input.
  return producerType.getShape() == consumerType.getShape();
}

/// The op of `block` that holds `op` (itself, or an ancestor when `op` sits
/// in a nested region).
static Operation *inBlock(Block *block, Operation *op) {
  return block->findAncestorOpInBlock(*op);
}

bool kiln::wouldCreateCycle(const llvm::SetVector<Operation *> &ops) {
  if (ops.empty())
    return false;
  Block *block = ops.front()->getBlock();
  Operation *last = ops.front();
  for (Operation *op : ops)
    if (last->isBeforeInBlock(op))
      last = op;
  // Walk forward from the set's outside users; reaching the set again means
  // an outside op sits between two members. Ops after the set's last member
  // cannot feed it (uses follow definitions), so the walk stops there.
  SmallVector<Operation *> worklist;
  llvm::SmallPtrSet<Operation *, 16> visited;
  auto pushUsers = [&](Operation *op) {
    for (Operation *user : op->getUsers())
      if (Operation *owner = inBlock(block, user))
        if (visited.insert(owner).second)
          worklist.push_back(owner);
  };
  for (Operation *op : ops)
    for (Operation *user : op->getUsers())
      if (Operation *owner = inBlock(block, user))
        if (!ops.contains(owner) && visited.insert(owner).second)
          worklist.push_back(owner);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (ops.contains(op))
      return true;
    if (last->isBeforeInBlock(op))
      continue;
    pushUsers(op);
  }
  return false;
}

namespace {
/// Whether every operand of `op` has fewer elements than `shape`: each is
/// broadcast into it, none read at the element's own index.
bool isBroadcastOnly(Operation *op, ArrayRef<int64_t> shape) {
  int64_t elements = 1;
  for (int64_t d : shape)
    elements *= d;
  return llvm::all_of(op->getOperandTypes(), [&](Type type) {
    return cast<RankedTensorType>(type).getNumElements() < elements;
  });
}
} // namespace

llvm::SetVector<Operation *>
kiln::growAnchoredGroup(Operation *anchor, const AnchoredGrowth &growth,
                        const FusionControlFn &control) {
  llvm::SetVector<Operation *> group;
  group.insert(anchor);
  Block *block = anchor->getBlock();
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(anchor->getResult(0).getType()).getShape();
  // A prologue computes the anchor's input: the same shape but for row
  // moments, whose results are a row's.
  ArrayRef<int64_t> inputShape =
      anchor->getNumOperands()
          ? cast<RankedTensorType>(anchor->getOperand(0).getType()).getShape()
          : shape;
  auto joinableAt = [&](Operation *op, ArrayRef<int64_t> expected) {
    return op && op->getBlock() == block && !group.contains(op) &&
           isElementwiseFusible(op) && !op->hasAttr(attr::kNoFuse) &&
           op->getNumResults() == 1 &&
           cast<RankedTensorType>(op->getResult(0).getType()).getShape() == expected;
  };
  auto joinable = [&](Operation *op) { return joinableAt(op, shape); };
  auto tryAdd = [&](Operation *candidate) {
    llvm::SetVector<Operation *> grown = group;
    grown.insert(candidate);
    if (wouldCreateCycle(grown))
      return false;
    group.insert(candidate);
    return true;
  };
  // Grow to a fixed point: each added op may open new edges.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < group.size(); ++i) {
      Operation *member = group[i];
      if (growth.consumers)
        for (Operation *user : llvm::to_vector(member->getUsers())) {
          Operation *owner = inBlock(block, user);
          if (joinable(owner) && control(member, owner))
            changed |= tryAdd(owner);
        }
      if (growth.producers && (member == anchor || member->isBeforeInBlock(anchor)))
        for (Value operand : member->getOperands()) {
          Operation *producer = operand.getDefiningOp();
          if (joinableAt(producer, inputShape) && control(producer, member))
            changed |= tryAdd(producer);
        }
      if (growth.broadcastProducers && member != anchor && anchor->isBeforeInBlock(member))
        for (Value operand : member->getOperands()) {
          Operation *producer = operand.getDefiningOp();
          if (joinable(producer) && isBroadcastOnly(producer, shape) &&
              llvm::all_of(producer->getUsers(),
                           [&](Operation *user) { return group.contains(inBlock(block, user)); }) &&
              control(producer, member))
            changed |= tryAdd(producer);
        }
    }
  }
  return group;
}

FusionOp kiln::fuseIntoGroup(RewriterBase &rewriter,
                             const llvm::SetVector<Operation *> &ops,
                             FusionKind kind) {
  assert(!ops.empty() && "fusing an empty group");
  Block *block = ops.front()->getBlock();
  SmallVector<Operation *> ordered(ops.begin(), ops.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  auto inGroup = [&](Operation *op) {
    Operation *owner = op ? inBlock(block, op) : nullptr;
    return owner && ops.contains(owner);
  };

  llvm::SetVector<Value> inputs;
  llvm::SetVector<Operation *> clonedConstants;
  SmallVector<Value> outputs;
  for (Operation *op : ordered) {
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (inGroup(producer))
        continue;
      // Small constants are cloned for elementwise users; anchors (a GEMM's
      // bias, a convolution's weights) read their operands from memory.
      bool elementwiseUsersOnly = llvm::all_of(operand.getUsers(), [&](Operation *user) {
        return !inGroup(user) || user->hasTrait<OpTrait::KilnElementwise>();
      });
      if (isCloneableConstant(producer) && elementwiseUsersOnly)
        clonedConstants.insert(producer);
      else
        inputs.insert(operand);
    }
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return !inGroup(user); }))
        outputs.push_back(result);
  }

  rewriter.setInsertionPointAfter(ordered.back());
  Location loc = rewriter.getFusedLoc(llvm::to_vector(
      llvm::map_range(ordered, [](Operation *op) { return op->getLoc(); })));
  auto fusion = FusionOp::create(rewriter, loc, ValueRange(outputs).getTypes(),
                                 kind, inputs.getArrayRef());
  Block *body = rewriter.createBlock(&fusion.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  rewriter.setInsertionPointToStart(body);
  for (Operation *constant : clonedConstants)
    rewriter.clone(*constant, mapping);
  for (Operation *op : ordered)
    rewriter.clone(*op, mapping);
  SmallVector<Value> yielded = llvm::to_vector(
      llvm::map_range(outputs, [&](Value v) { return mapping.lookup(v); }));
  YieldOp::create(rewriter, loc, yielded);

  for (auto [original, replacement] : llvm::zip(outputs, fusion.getResults()))
    rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &use) {
      return !inGroup(use.getOwner());
    });
  for (Operation *op : llvm::reverse(ordered))
    rewriter.eraseOp(op);
  for (Operation *constant : clonedConstants)
    if (constant->use_empty())
      rewriter.eraseOp(constant);
  // An outside user of an extra result may sit before the group's position.
  sortTopologically(block);
  return fusion;
}
