//===- Patchify.cpp - non-overlapping convolutions as GEMMs ---------------===//
//
// Mechanics: im2col of a convolution whose windows tile the input exactly
// is reshape [N, OH, KH, OW, KW, C] -> permute [N, OH, OW, KH, KW, C] ->
// reshape [N, OH, OW, KH*KW*C]; the weight [O, KH, KW, C] is the same
// constant seen as [O, KH*KW*C]. Policy: every such convolution (stride ==
// kernel, no padding, dilation 1, one group, constant weight).
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "kiln-patchify"

namespace kiln {
#define GEN_PASS_DEF_KILNPATCHIFY
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The constant `value` seen with `type` (same elements, row-major), or null.
Value reshapedConstant(PatternRewriter &rewriter, Location loc, Value value,
                       RankedTensorType type) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return {};
  Attribute attr = constant.getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(attr))
    return ConstantOp::create(rewriter, loc, dense.reshape(type));
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr))
    return ConstantOp::create(rewriter, loc,
                              DenseResourceElementsAttr::get(type, resource.getRawHandle()));
  return {};
}

struct PatchConvToLinear : OpRewritePattern<Conv2dOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Conv2dOp conv, PatternRewriter &rewriter) const override {
    auto inputType = cast<RankedTensorType>(conv.getInput().getType());
    auto weightType = cast<RankedTensorType>(conv.getWeight().getType());
    ArrayRef<int64_t> in = inputType.getShape(), w = weightType.getShape();
    ArrayRef<int64_t> out = conv.getType().getShape();
    ArrayRef<int64_t> strides = conv.getStrides();
    if (conv.getGroups() != 1 || llvm::any_of(conv.getPadding(), [](int64_t p) { return p; }) ||
        llvm::any_of(conv.getDilation(), [](int64_t d) { return d != 1; }) ||
        strides[0] != w[1] || strides[1] != w[2] || in[1] != out[1] * w[1] ||
        in[2] != out[2] * w[2] || (w[1] == 1 && w[2] == 1))
      return rewriter.notifyMatchFailure(conv, "not a convolution over whole patches");
    Location loc = conv.getLoc();
    int64_t patch = w[1] * w[2] * w[3];
    Type element = inputType.getElementType();
    Value weight = reshapedConstant(rewriter, loc, conv.getWeight(),
                                    RankedTensorType::get({w[0], patch}, element));
    if (!weight)
      return rewriter.notifyMatchFailure(conv, "the weight is not a constant");
    auto split = ReshapeOp::create(
        rewriter, loc, RankedTensorType::get({in[0], out[1], w[1], out[2], w[2], in[3]}, element),
        conv.getInput());
    auto gathered = PermuteOp::create(
        rewriter, loc, RankedTensorType::get({in[0], out[1], out[2], w[1], w[2], in[3]}, element),
        split, rewriter.getDenseI64ArrayAttr({0, 1, 3, 2, 4, 5}));
    auto rows = ReshapeOp::create(
        rewriter, loc, RankedTensorType::get({in[0], out[1], out[2], patch}, element), gathered);
    rewriter.replaceOpWithNewOp<LinearOp>(conv, conv.getType(), rows, weight, conv.getBias());
    return success();
  }
};

struct PatchifyPass : kiln::impl::KilnPatchifyBase<PatchifyPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<PatchConvToLinear>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
