//===- ViewPatterns.cpp - canonicalization of kiln's data movement -------===//
//
// The canonicalization patterns of reshape, permute and concat: chains of
// views that move no data become one reshape or permute, views move before
// an input's entry cast, a linear over flattened rows takes its rows as they
// were, and nested concats along one dimension become one.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Dialect/Kiln/StridedView.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace kiln;

namespace {

ArrayRef<int64_t> shapeOf(Value v) { return cast<RankedTensorType>(v.getType()).getShape(); }

/// permute(reshape(permute(x))) and longer chains whose elements land in
/// x's row-major order (NHWC -> NCHW -> flatten -> transpose, for one) are
/// reshape(x): no data moves.
struct ContiguousViewToReshape : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PermuteOp op, PatternRewriter &rewriter) const override {
    std::optional<StridedView> view = stridedViewOf(op.getResult());
    if (!view || view->offset != 0 ||
        !llvm::any_of(view->chain, [](Operation *link) { return isa<ReshapeOp>(link); }) ||
        llvm::any_of(view->chain, [](Operation *link) { return isa<SliceOp>(link); }))
      return failure();
    int64_t expected = 1;
    for (int64_t d = static_cast<int64_t>(view->shape.size()) - 1; d >= 0; --d) {
      if (view->shape[d] != 1 && view->strides[d] != expected)
        return failure();
      expected *= view->shape[d];
    }
    if (view->root.getType() == op.getType())
      rewriter.replaceOp(op, view->root);
    else
      rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), view->root);
    return success();
  }
};

/// Whether `value` is a function argument or a view chain of one.
static bool viewsAnArgument(Value value) {
  std::optional<StridedView> view = stridedViewOf(value);
  return view && isa<BlockArgument>(view->root);
}

/// view(cast(x)) -> cast(view(x)) for a cast used once whose operand is a
/// function argument or a view of one (the entry cast of a model compiled
/// below its traced precision): the views then compose with the input's
/// own layout change, and one kernel loads at the composed index and casts.
template <typename ViewOp> struct ViewBeforeEntryCast : OpRewritePattern<ViewOp> {
  using OpRewritePattern<ViewOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ViewOp op, PatternRewriter &rewriter) const override {
    auto cast = op.getInput().template getDefiningOp<CastOp>();
    if (!cast || !cast->hasOneUse() || !viewsAnArgument(cast.getInput()))
      return failure();
    // A reshape lets the cast pass only on its way to a permute: the cast
    // must end up with the last permute's shape to share its kernel.
    if (isa<ReshapeOp>(op) &&
        !llvm::all_of(op->getUsers(), [](Operation *user) { return isa<PermuteOp>(user); }))
      return failure();
    auto inputType = mlir::cast<RankedTensorType>(cast.getInput().getType());
    Operation *moved = rewriter.clone(*op);
    moved->setOperand(0, cast.getInput());
    moved->getResult(0).setType(op.getType().clone(inputType.getElementType()));
    rewriter.replaceOpWithNewOp<CastOp>(op, op.getType(), moved->getResult(0));
    return success();
  }
};

/// A permute/reshape chain with two or more permutes whose elements are
/// some reshape of the root, permuted (NCHW -> NHWC, then ViT's patch
/// im2col): one reshape and one permute, so one kernel moves the data.
struct ComposePermuteChain : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PermuteOp op, PatternRewriter &rewriter) const override {
    std::optional<StridedView> view = stridedViewOf(op.getResult());
    if (!view || view->offset != 0 ||
        llvm::count_if(view->chain, [](Operation *link) { return isa<PermuteOp>(link); }) < 2 ||
        llvm::any_of(view->chain, [](Operation *link) { return isa<SliceOp>(link); }))
      return failure();
    // Dims of size > 1 by decreasing stride must tile memory contiguously.
    SmallVector<int64_t> order, units;
    for (int64_t d = 0; d < static_cast<int64_t>(view->shape.size()); ++d)
      (view->shape[d] == 1 ? units : order).push_back(d);
    llvm::stable_sort(order, [&](int64_t a, int64_t b) {
      return view->strides[a] > view->strides[b];
    });
    int64_t expected = 1;
    for (int64_t d : llvm::reverse(order)) {
      if (view->strides[d] != expected)
        return failure();
      expected *= view->shape[d];
    }
    order.append(units.begin(), units.end());
    SmallVector<int64_t> shape, permutation(order.size());
    for (auto [position, d] : llvm::enumerate(order)) {
      shape.push_back(view->shape[d]);
      permutation[d] = static_cast<int64_t>(position);
    }
    auto type = op.getType();
    auto reshaped = ReshapeOp::create(rewriter, op.getLoc(), type.clone(shape), view->root);
    rewriter.replaceOpWithNewOp<PermuteOp>(op, type, reshaped,
                                           rewriter.getDenseI64ArrayAttr(permutation));
    return success();
  }
};

/// reshape(linear(reshape(x) : [rows, K]) : [rows, N]) -> linear(x) when
/// the outer reshape gives back x's leading dims: a linear maps the last
/// dimension and treats the others as rows, whatever their shape.
struct LinearOverFlattenedRows : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    auto linear = op.getInput().getDefiningOp<LinearOp>();
    if (!linear || !linear->hasOneUse())
      return failure();
    auto flatten = linear.getInput().getDefiningOp<ReshapeOp>();
    if (!flatten)
      return failure();
    ArrayRef<int64_t> original = shapeOf(flatten.getInput());
    ArrayRef<int64_t> flat = shapeOf(flatten.getResult());
    ArrayRef<int64_t> result = op.getType().getShape();
    if (original.empty() || flat.empty() || result.empty() || original.back() != flat.back() ||
        result.drop_back() != original.drop_back() ||
        result.back() != shapeOf(linear.getResult()).back())
      return failure();
    rewriter.replaceOpWithNewOp<LinearOp>(op, op.getType(), flatten.getInput(),
                                          linear.getWeight(), linear.getBias());
    return success();
  }
};

/// A concat of a concat along the same dimension, the inner one used only
/// there: one concat of all the pieces, so one kernel copies them.
/// Inception's torch.cat([a, torch.cat([b, c], 1), d], 1) arrives nested
/// from torch.export (TorchScript's freezing flattens it).
struct FlattenNestedConcat : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op, PatternRewriter &rewriter) const override {
    SmallVector<Value> inputs;
    bool flattened = false;
    for (Value input : op.getInputs()) {
      auto inner = input.getDefiningOp<ConcatOp>();
      if (inner && inner.getDim() == op.getDim() && inner->hasOneUse()) {
        llvm::append_range(inputs, inner.getInputs());
        flattened = true;
      } else {
        inputs.push_back(input);
      }
    }
    if (!flattened)
      return failure();
    rewriter.replaceOpWithNewOp<ConcatOp>(op, op.getType(), inputs, op.getDim());
    return success();
  }
};

} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<LinearOverFlattenedRows, ViewBeforeEntryCast<ReshapeOp>>(context);
}

void PermuteOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<ContiguousViewToReshape, ComposePermuteChain, ViewBeforeEntryCast<PermuteOp>>(
      context);
}

void ConcatOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<FlattenNestedConcat>(context);
}
