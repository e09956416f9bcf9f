//===- IdentityGather.cpp - a gather that picks every row in order --------===//
//
// transformers' mask utilities index the flattened padding mask with
// batch * S + position (arange arithmetic that kiln-fold-constants turns
// into a constant): a gather of rows 0, 1, 2, ... of the table, in order.
// That is the table itself under another shape, a reshape, which costs no
// kernel where a gather costs one.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace kiln;

namespace {

struct IdentityGatherToReshape : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op, PatternRewriter &rewriter) const override {
    auto indices = op.getIndices().getDefiningOp<ConstantOp>();
    auto tableType = cast<RankedTensorType>(op.getTable().getType());
    auto indexType = cast<RankedTensorType>(op.getIndices().getType());
    if (!indices || indexType.getNumElements() != tableType.getShape()[0])
      return failure();
    std::optional<std::vector<double>> values = constantElements(indices);
    if (!values)
      return failure();
    for (size_t row = 0; row < values->size(); ++row)
      if ((*values)[row] != static_cast<double>(row))
        return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getTable());
    return success();
  }
};

} // namespace

void GatherOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<IdentityGatherToReshape>(context);
}
