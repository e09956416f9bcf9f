//===- FoldAffine.cpp - per-channel scale and shift into layer weights ----===//
//
// Mechanics: read a constant's elements as doubles (dense or resource
// blobs), build a new constant of the same element type; the patterns
// replace `mul(layer, scale)` / `add(layer, shift)` by a layer with new
// weights. Policy: only when the layer's result has that one user and the
// constant varies at most along the output channel.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/APFloat.h"

#include <cstring>

#define DEBUG_TYPE "kiln-fold-affine"

namespace kiln {
#define GEN_PASS_DEF_KILNFOLDAFFINE
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The elements of a float constant as doubles, or nothing.
std::optional<std::vector<double>> readFloats(ConstantOp constant) {
  if (!isa<FloatType>(cast<RankedTensorType>(constant.getType()).getElementType()))
    return std::nullopt;
  return constantElements(constant);
}

/// Per-output-channel values of a constant that broadcasts into a result
/// whose last dimension has `channels` entries and varies at most along it.
/// The constant may be reshaped on the way (a reshape keeps the elements'
/// order): a BatchNorm exported by torch.export arrives as [C, 1, 1]
/// constants, reshaped to [1, 1, 1, C] when the layout goes channels-last.
std::optional<std::vector<double>> perChannel(Value operand, int64_t channels) {
  Value source = operand;
  while (auto reshape = source.getDefiningOp<ReshapeOp>())
    source = reshape.getInput();
  auto constant = source.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  ArrayRef<int64_t> shape = cast<RankedTensorType>(operand.getType()).getShape();
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    if (shape[d] != 1)
      return std::nullopt;
  int64_t last = shape.empty() ? 1 : shape.back();
  if (last != 1 && last != channels)
    return std::nullopt;
  auto values = readFloats(constant);
  if (!values)
    return std::nullopt;
  std::vector<double> out(channels);
  for (int64_t c = 0; c < channels; ++c)
    out[c] = (*values)[last == 1 ? 0 : c];
  return out;
}

/// The layer's weight and bias with `scale` and `shift` applied per output
/// channel (weight dimension 0, bias element). False when they are not
/// constants.
bool foldInto(PatternRewriter &rewriter, Operation *layer, Value weight, Value bias,
              ArrayRef<double> scale, ArrayRef<double> shift, Value &newWeight,
              Value &newBias) {
  auto weightConstant = weight.getDefiningOp<ConstantOp>();
  ConstantOp biasConstant = bias ? bias.getDefiningOp<ConstantOp>() : ConstantOp();
  if (!weightConstant || (bias && !biasConstant))
    return false;
  auto weights = readFloats(weightConstant);
  if (!weights)
    return false;
  int64_t channels = scale.size();
  std::vector<double> biases(channels, 0.0);
  if (biasConstant) {
    auto read = readFloats(biasConstant);
    if (!read)
      return false;
    biases = *read;
  }
  auto weightType = cast<RankedTensorType>(weight.getType());
  int64_t perChannel = weightType.getNumElements() / channels;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t i = 0; i < perChannel; ++i)
      (*weights)[c * perChannel + i] *= scale[c];
    biases[c] = biases[c] * scale[c] + shift[c];
  }
  Location loc = layer->getLoc();
  newWeight = makeFloatConstant(rewriter, loc, weightType, *weights, "folded_weight");
  newBias = makeFloatConstant(rewriter, loc,
                         RankedTensorType::get({channels}, weightType.getElementType()),
                         biases, "folded_bias");
  return true;
}

/// mul(layer, scale) or add(layer, shift), either operand order.
template <typename BinaryOp, bool IsScale>
struct FoldIntoLayer : OpRewritePattern<BinaryOp> {
  using OpRewritePattern<BinaryOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(BinaryOp op, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      Value layerValue = op->getOperand(side), other = op->getOperand(1 - side);
      Operation *layer = layerValue.getDefiningOp();
      if (!layer || !isa<Conv2dOp, LinearOp>(layer) || !layerValue.hasOneUse() ||
          op.getType() != layerValue.getType() || isa<FusionOp>(layer->getParentOp()))
        continue;
      auto type = cast<RankedTensorType>(layerValue.getType());
      int64_t channels = type.getShape().back();
      auto values = perChannel(other, channels);
      if (!values)
        continue;
      std::vector<double> scale(channels, 1.0), shift(channels, 0.0);
      (IsScale ? scale : shift) = *values;
      Value weight, bias, newWeight, newBias;
      if (auto conv = dyn_cast<Conv2dOp>(layer)) {
        weight = conv.getWeight();
        bias = conv.getBias();
      } else {
        auto linear = cast<LinearOp>(layer);
        weight = linear.getWeight();
        bias = linear.getBias();
      }
      rewriter.setInsertionPoint(layer);
      if (!foldInto(rewriter, layer, weight, bias, scale, shift, newWeight, newBias))
        continue;
      rewriter.modifyOpInPlace(layer, [&] {
        if (auto conv = dyn_cast<Conv2dOp>(layer)) {
          conv.getWeightMutable().assign(newWeight);
          if (bias)
            conv.getBiasMutable().assign(newBias);
          else
            conv.getBiasMutable().append(newBias);
        } else {
          auto linear = cast<LinearOp>(layer);
          linear.getWeightMutable().assign(newWeight);
          if (bias)
            linear.getBiasMutable().assign(newBias);
          else
            linear.getBiasMutable().append(newBias);
        }
      });
      rewriter.replaceOp(op, layerValue);
      return success();
    }
    return failure();
  }
};

struct FoldAffinePass : kiln::impl::KilnFoldAffineBase<FoldAffinePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldIntoLayer<MulOp, true>, FoldIntoLayer<AddOp, false>>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
