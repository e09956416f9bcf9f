//===- PropagateLayout.cpp - keep convolutional regions channels-last ----===//
//
// Mechanics: three rewrite patterns, applied greedily.
//   SinkThroughElementwise  op(permute(x, toFirst), y...) ->
//                           permute(op(x, toLast(y)...), toFirst)
//   SinkThroughReduce       reduce(permute(x, toFirst), D) ->
//                           permute'(reduce(x, toFirst[D]))
//   SinkUnitReshapeThroughUnary
//                           op(reshape(permute(x, toFirst))) with the
//                           reshape only dropping unit dims ->
//                           reshape(op(permute(x, toFirst)))
//   UnitPermuteToReshape    a permute moving only size-1 dims -> reshape
// The permute folder then cancels permute(permute(x, toFirst), toLast).
// Only channels-first permutes move (downwards), so the patterns cannot
// undo one another. Policy: an elementwise op is rewritten when doing so
// adds no full-size permute: each full-size operand that is not already a
// channels-first permute must have its channels-last permute in the IR.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "kiln-propagate-layout"

namespace kiln {
#define GEN_PASS_DEF_KILNPROPAGATELAYOUT
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

constexpr int64_t kToFirst[] = {0, 3, 1, 2};
constexpr int64_t kToLast[] = {0, 2, 3, 1};

bool isPermute(Value value, ArrayRef<int64_t> permutation) {
  auto permute = value.getDefiningOp<PermuteOp>();
  return permute && permute.getPermutation() == permutation;
}

SmallVector<int64_t> permuteShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> out;
  for (int64_t d : permutation)
    out.push_back(shape[d]);
  return out;
}

/// Whether permuting `shape` keeps the relative order of its dims larger
/// than 1, so the permute is a reshape.
bool movesOnlyUnitDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> permutation) {
  int64_t last = -1;
  for (int64_t d : permutation) {
    if (shape[d] == 1)
      continue;
    if (d < last)
      return false;
    last = d;
  }
  return true;
}

/// An existing `permute(value, kToLast)`, if the IR has one.
PermuteOp existingToLast(Value value) {
  for (Operation *user : value.getUsers())
    if (auto permute = dyn_cast<PermuteOp>(user))
      if (permute.getPermutation() == ArrayRef<int64_t>(kToLast))
        return permute;
  return {};
}

/// `value` (broadcasting into a 4-D NCHW result) brought to channels-last:
/// a reshape when only unit dims move, else a permute (an existing one when
/// there is one).
Value toChannelsLast(PatternRewriter &rewriter, Location loc, Value value) {
  if (isPermute(value, kToFirst))
    return value.getDefiningOp<PermuteOp>().getInput();
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape4(4 - type.getRank(), 1);
  shape4.append(type.getShape().begin(), type.getShape().end());
  auto nhwc = RankedTensorType::get(permuteShape(shape4, kToLast), type.getElementType());
  if (movesOnlyUnitDims(shape4, kToLast))
    return ReshapeOp::create(rewriter, loc, nhwc, value);
  if (PermuteOp existing = existingToLast(value))
    return existing.getResult();
  Value full = value;
  if (type.getRank() != 4)
    full = ReshapeOp::create(rewriter, loc, RankedTensorType::get(shape4, type.getElementType()),
                             value);
  return PermuteOp::create(rewriter, loc, nhwc, full, rewriter.getDenseI64ArrayAttr(kToLast));
}

struct SinkThroughElementwise : RewritePattern {
  SinkThroughElementwise(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!op->hasTrait<kiln::OpTrait::KilnElementwise>() || op->getNumResults() != 1 ||
        isa<FusionOp>(op->getParentOp()))
      return failure();
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    if (type.getRank() != 4)
      return failure();
    bool anyPermuted = false;
    for (Value operand : op->getOperands()) {
      auto operandType = cast<RankedTensorType>(operand.getType());
      bool full = operandType.getShape() == type.getShape();
      if (full && isPermute(operand, kToFirst)) {
        anyPermuted = true;
        continue;
      }
      // A full-size operand still in NCHW would need a new permute kernel.
      if (full && !existingToLast(operand) &&
          !movesOnlyUnitDims(operandType.getShape(), kToLast))
        return rewriter.notifyMatchFailure(op, "a full-size operand has no NHWC copy");
    }
    if (!anyPermuted)
      return failure();
    IRMapping mapping;
    for (Value operand : op->getOperands())
      mapping.map(operand, toChannelsLast(rewriter, op->getLoc(), operand));
    Operation *sunk = rewriter.clone(*op, mapping);
    sunk->getResult(0).setType(
        RankedTensorType::get(permuteShape(type.getShape(), kToLast), type.getElementType()));
    rewriter.replaceOpWithNewOp<PermuteOp>(op, type, sunk->getResult(0),
                                           rewriter.getDenseI64ArrayAttr(kToFirst));
    return success();
  }
};

template <typename ReduceOp>
struct SinkThroughReduce : OpRewritePattern<ReduceOp> {
  using OpRewritePattern<ReduceOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceOp op, PatternRewriter &rewriter) const override {
    if (!isPermute(op.getInput(), kToFirst) || isa<FusionOp>(op->getParentOp()))
      return failure();
    Value nhwc = op.getInput().template getDefiningOp<PermuteOp>().getInput();
    ArrayRef<int64_t> nhwcShape = cast<RankedTensorType>(nhwc.getType()).getShape();
    SmallVector<int64_t> dims;
    for (int64_t d : op.getDims())
      dims.push_back(kToFirst[d]);
    llvm::sort(dims);
    bool keep = op.getKeepdim();
    SmallVector<int64_t> kept; // NHWC dims that survive, in NHWC order
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < 4; ++d) {
      bool reduced = llvm::is_contained(dims, d);
      if (!reduced)
        kept.push_back(d);
      if (!reduced || keep)
        shape.push_back(reduced ? 1 : nhwcShape[d]);
    }
    auto type = cast<RankedTensorType>(op.getType());
    auto reducedType = RankedTensorType::get(shape, type.getElementType());
    Value reduced = ReduceOp::create(rewriter, op.getLoc(), reducedType, nhwc,
                                     rewriter.getDenseI64ArrayAttr(dims),
                                     keep ? rewriter.getUnitAttr() : UnitAttr());
    // Back to the order the original result had.
    SmallVector<int64_t> order;
    if (keep) {
      order.assign(std::begin(kToFirst), std::end(kToFirst));
    } else {
      for (int64_t d = 0; d < 4; ++d)
        if (!llvm::is_contained(op.getDims(), d))
          order.push_back(llvm::find(kept, kToFirst[d]) - kept.begin());
    }
    bool identity = llvm::all_of(llvm::enumerate(order), [](auto e) {
      return static_cast<int64_t>(e.index()) == e.value();
    });
    if (identity)
      rewriter.replaceOp(op, reduced);
    else
      rewriter.replaceOpWithNewOp<PermuteOp>(op, type, reduced,
                                             rewriter.getDenseI64ArrayAttr(order));
    return success();
  }
};

/// Whether `from` and `to` list the same sizes once the 1s are dropped
/// (a reshape that only inserts or removes unit dims).
bool sameBeyondUnitDims(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  auto nonUnit = [](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> sizes;
    for (int64_t size : shape)
      if (size != 1)
        sizes.push_back(size);
    return sizes;
  };
  return nonUnit(from) == nonUnit(to);
}

/// A one-operand elementwise op reading reshape(permute(x, kToFirst)) that
/// only drops unit dims (Conv1d as a convolution of height 1, then GELU on
/// [N, C, L]) is computed on the permuted 4-D value instead, so that
/// SinkThroughElementwise can move the permute past it:
/// op(reshape(permute(x))) -> reshape(op(permute(x))).
struct SinkUnitReshapeThroughUnary : RewritePattern {
  SinkUnitReshapeThroughUnary(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!op->hasTrait<kiln::OpTrait::KilnElementwise>() || op->getNumOperands() != 1 ||
        op->getNumResults() != 1 || isa<FusionOp>(op->getParentOp()))
      return failure();
    auto reshape = op->getOperand(0).getDefiningOp<ReshapeOp>();
    if (!reshape || !isPermute(reshape.getInput(), kToFirst))
      return failure();
    auto permutedType = cast<RankedTensorType>(reshape.getInput().getType());
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    if (!sameBeyondUnitDims(permutedType.getShape(), type.getShape()))
      return failure();
    IRMapping mapping;
    mapping.map(op->getOperand(0), reshape.getInput());
    Operation *wide = rewriter.clone(*op, mapping);
    wide->getResult(0).setType(
        RankedTensorType::get(permutedType.getShape(), type.getElementType()));
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, type, wide->getResult(0));
    return success();
  }
};

struct UnitPermuteToReshape : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PermuteOp op, PatternRewriter &rewriter) const override {
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    if (!movesOnlyUnitDims(inputType.getShape(), op.getPermutation()))
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput());
    return success();
  }
};

struct PropagateLayoutPass : kiln::impl::KilnPropagateLayoutBase<PropagateLayoutPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SinkThroughElementwise, SinkUnitReshapeThroughUnary,
                 SinkThroughReduce<ReduceSumOp>, SinkThroughReduce<ReduceMeanOp>,
                 SinkThroughReduce<ReduceMaxOp>, UnitPermuteToReshape>(&getContext());
    PermuteOp::getCanonicalizationPatterns(patterns, &getContext());
    ReshapeOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
