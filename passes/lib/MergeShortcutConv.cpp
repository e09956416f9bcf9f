//===- MergeShortcutConv.cpp - a projection shortcut into the last conv ---===//
//
// Mechanics: add(conv_a(h), conv_b(x)) of two 1x1, unpadded, one-group
// convolutions with constant weights (and biases) and one result type is
// one 1x1 convolution over their inputs side by side along channels:
//
//   conv2d(concat(h, slice(x, strides [1, s, s, 1])), [W_a | W_b], b_a + b_b)
//
// A stride-s convolution's input enters as the strided slice it reads. The
// weights are joined byte for byte per output channel; the bias sum is
// rounded once to the element type.
// Policy: 16-bit operands, input channels a multiple of 8 on both sides
// (TMA's 16-byte strides), a result of at least `min-bytes`, and a primary
// target whose convolutions run as conv_wgmma (the only main loop that reads
// a channel concat in place; elsewhere the concat would be copied).
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Target/Target.h"

#include "mlir/IR/Builders.h"

#include <cstring>

#define DEBUG_TYPE "kiln-merge-shortcut-conv"

namespace kiln {
#define GEN_PASS_DEF_KILNMERGESHORTCUTCONV
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A 1x1 convolution that can join another: unpadded, one group, constant
/// weight and bias, 16-bit, C % 8 == 0, and read only by `add`.
bool joinable(Conv2dOp conv, AddOp add) {
  ArrayRef<int64_t> w = conv.getWeight().getType().getShape();
  Type element = conv.getType().getElementType();
  return !conv->hasAttr(attr::kNoFuse) && conv->hasOneUse() && *conv->user_begin() == add &&
         w[1] == 1 && w[2] == 1 && w[3] % 8 == 0 && conv.getGroups() == 1 &&
         llvm::all_of(conv.getPadding(), [](int64_t v) { return v == 0; }) &&
         (element.isF16() || element.isBF16()) &&
         conv.getWeight().getDefiningOp<ConstantOp>() &&
         (!conv.getBias() || conv.getBias().getDefiningOp<ConstantOp>());
}

/// The input a strided 1x1 convolution reads: the input itself at stride
/// 1, else its slice of every stride-th row and column.
Value readInput(OpBuilder &builder, Conv2dOp conv) {
  ArrayRef<int64_t> strides = conv.getStrides();
  Value input = conv.getInput();
  if (strides[0] == 1 && strides[1] == 1)
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(conv.getType().getShape());
  shape[3] = type.getShape()[3];
  return SliceOp::create(builder, conv.getLoc(), type.clone(shape), input,
                         builder.getDenseI64ArrayAttr({0, 0, 0, 0}),
                         builder.getDenseI64ArrayAttr({1, strides[0], strides[1], 1}));
}

/// Replaces `add` by one convolution over both convolutions' inputs.
LogicalResult merge(OpBuilder &builder, AddOp add, Conv2dOp a, Conv2dOp b) {
  auto weightA = cast<RankedTensorType>(a.getWeight().getType());
  auto weightB = cast<RankedTensorType>(b.getWeight().getType());
  std::optional<std::vector<char>> bytesA = constantValueBytes(
      a.getWeight().getDefiningOp<ConstantOp>().getValue(), weightA);
  std::optional<std::vector<char>> bytesB = constantValueBytes(
      b.getWeight().getDefiningOp<ConstantOp>().getValue(), weightB);
  if (!bytesA || !bytesB)
    return failure();
  const int64_t outputs = weightA.getShape()[0];
  const int64_t channelsA = weightA.getShape()[3], channelsB = weightB.getShape()[3];
  const size_t rowA = bytesA->size() / outputs, rowB = bytesB->size() / outputs;
  std::vector<char> joined(bytesA->size() + bytesB->size());
  for (int64_t o = 0; o < outputs; ++o) {
    std::memcpy(joined.data() + o * (rowA + rowB), bytesA->data() + o * rowA, rowA);
    std::memcpy(joined.data() + o * (rowA + rowB) + rowA, bytesB->data() + o * rowB, rowB);
  }
  std::vector<double> bias(outputs, 0.0);
  for (Value operand : {a.getBias(), b.getBias()}) {
    if (!operand)
      continue;
    std::optional<std::vector<double>> values =
        constantElements(operand.getDefiningOp<ConstantOp>());
    if (!values || values->size() != static_cast<size_t>(outputs))
      return failure();
    for (int64_t o = 0; o < outputs; ++o)
      bias[o] += (*values)[o];
  }

  Location loc = builder.getFusedLoc({a.getLoc(), b.getLoc(), add.getLoc()});
  builder.setInsertionPoint(add);
  Value inputA = readInput(builder, a), inputB = readInput(builder, b);
  auto inputType = cast<RankedTensorType>(inputA.getType());
  SmallVector<int64_t> concatShape(inputType.getShape());
  concatShape[3] = channelsA + channelsB;
  auto concat = ConcatOp::create(builder, loc, inputType.clone(concatShape),
                                 ValueRange{inputA, inputB}, /*dim=*/3);
  concat->setAttr(attr::kReadInPlace, builder.getUnitAttr());
  Value input = concat.getResult();
  Value weight = makeRawConstant(builder, loc,
                                 weightA.clone({outputs, 1, 1, channelsA + channelsB}), joined,
                                 "shortcut_weight");
  Value biasValue;
  if (a.getBias() || b.getBias())
    biasValue = makeFloatConstant(builder, loc,
                                  RankedTensorType::get({outputs}, weightA.getElementType()),
                                  bias, "shortcut_bias");
  auto merged = Conv2dOp::create(builder, loc, a.getType(), input, weight, biasValue,
                                 builder.getDenseI64ArrayAttr({1, 1}),
                                 builder.getDenseI64ArrayAttr({0, 0, 0, 0}),
                                 builder.getDenseI64ArrayAttr({1, 1}), /*groups=*/1);
  add.getResult().replaceAllUsesWith(merged.getResult());
  add.erase();
  a.erase();
  b.erase();
  return success();
}

struct MergeShortcutConvPass
    : kiln::impl::KilnMergeShortcutConvBase<MergeShortcutConvPass> {
  using Base::Base;

  void runOnOperation() override {
    if (minBytes < 0 || !convWgmma)
      return;
    std::string error;
    std::optional<TargetDescription> description =
        describeTargets(std::vector<std::string>(targets.begin(), targets.end()), error);
    // An unknown target is kiln-select-kernels' error to report.
    if (!description || description->primary().tensorCores != TensorCoreGeneration::Wgmma)
      return;
    SmallVector<AddOp> adds;
    getOperation().walk([&](AddOp add) {
      if (!isa<FusionOp>(add->getParentOp()))
        adds.push_back(add);
    });
    OpBuilder builder(&getContext());
    for (AddOp add : adds) {
      auto a = add.getLhs().getDefiningOp<Conv2dOp>();
      auto b = add.getRhs().getDefiningOp<Conv2dOp>();
      if (!a || !b || a == b || a.getType() != add.getType() || b.getType() != add.getType() ||
          !joinable(a, add) || !joinable(b, add) ||
          a.getInput().getType().getElementType() != b.getInput().getType().getElementType())
        continue;
      auto type = cast<RankedTensorType>(add.getType());
      if (type.getNumElements() * 2 < minBytes)
        continue;
      (void)merge(builder, add, a, b);
    }
  }
};

} // namespace
