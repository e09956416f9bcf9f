//===- ConvConverters.cpp - converters for convolutional networks ---------===//
//
// kiln's convolution and pooling ops are channels-last (NHWC); PyTorch's are
// NCHW. Each converter wraps its op in permutes (NCHW -> NHWC before, back
// after) and lays constant weights out channels-last at import time; the
// layout pass then cancels the permutes between consecutive ops.
//
//===----------------------------------------------------------------------===//

#include "ConverterHelpers.h"

#include <ATen/ATen.h>

#include <array>

using namespace mlir;
using namespace kiln;
using namespace kiln::frontend;

namespace {
constexpr int64_t kToChannelsLast[] = {0, 2, 3, 1};
constexpr int64_t kToChannelsFirst[] = {0, 3, 1, 2};

/// A list argument of one or two ints (PyTorch's `_pair`), as two values.
std::optional<std::array<int64_t, 2>> pairArg(Importer &im, const Node *node, size_t index,
                                              const char *what) {
  auto values = constantArg<std::vector<int64_t>>(im, node, index);
  if (!values)
    return std::nullopt;
  if (values->size() == 1)
    return std::array<int64_t, 2>{(*values)[0], (*values)[0]};
  if (values->size() == 2)
    return std::array<int64_t, 2>{(*values)[0], (*values)[1]};
  emitError(im.locationOf(node)) << node->kind().toQualString() << ": " << what
                                 << " must have 1 or 2 entries for a 2-D op, got "
                                 << values->size();
  return std::nullopt;
}

/// Shared by aten::_convolution and aten::conv2d once the arguments are read.
/// `padding` is [top, left, bottom, right].
LogicalResult emitConv2d(Importer &im, const Node *node, std::array<int64_t, 2> stride,
                         std::array<int64_t, 4> padding, std::array<int64_t, 2> dilation,
                         int64_t groups) {
  RankedTensorType type = im.resultType(node);
  if (!type)
    return failure();
  Location loc = im.locationOf(node);
  if (type.getRank() != 4 && type.getRank() != 3) {
    emitError(loc) << node->kind().toQualString() << ": only 1-D and 2-D convolutions (3-D "
                   << "and 4-D tensors) are supported, this one has a " << type.getRank()
                   << "-D result";
    return failure();
  }
  // A 1-D convolution (Whisper's audio stem) is a 2-D one of height 1:
  // [N, C, L] read as [N, C, 1, L], the kernel [O, C/g, K] as [O, C/g, 1, K].
  const bool oneD = type.getRank() == 3;
  auto asHeightOne = [&](Value value) -> Value {
    auto t = cast<RankedTensorType>(value.getType());
    auto tall = RankedTensorType::get({t.getShape()[0], t.getShape()[1], 1, t.getShape()[2]},
                                      t.getElementType());
    return ReshapeOp::create(im.builder, loc, tall, value);
  };
  if (oneD) {
    stride = {1, stride[1]};
    padding = {0, padding[1], 0, padding[3]};
    dilation = {1, dilation[1]};
  }
  RankedTensorType type4 =
      oneD ? RankedTensorType::get({type.getShape()[0], type.getShape()[1], 1, type.getShape()[2]},
                                   type.getElementType())
           : type;
  Type element = elementOf(type);
  Value input = im.operand(node->input(0), element, loc);
  if (!input)
    return failure();
  if (oneD)
    input = asHeightOne(input);
  // Weights: [O, C/g, KH, KW] -> [O, KH, KW, C/g], at import time when constant.
  Value weight;
  if (std::optional<at::Tensor> w = constantTensorArg(node, 1)) {
    at::Tensor w4 = oneD ? w->unsqueeze(2) : *w;
    weight = im.constantTensor(w4.permute({0, 2, 3, 1}).contiguous(), weightName(node, 1), loc);
    if (weight)
      weight = im.castTo(weight, element, loc);
  } else {
    weight = im.operand(node->input(1), element, loc);
    if (weight)
      weight = permuteValue(im, loc, oneD ? asHeightOne(weight) : weight, kToChannelsLast);
  }
  Value bias = isNone(node, 2) ? Value() : im.operand(node->input(2), element, loc);
  if (!weight || (!isNone(node, 2) && !bias))
    return failure();
  Value nhwc = permuteValue(im, loc, input, kToChannelsLast);
  auto conv = Conv2dOp::create(im.builder, loc, permutedType(type4, kToChannelsLast), nhwc,
                               weight, bias, im.builder.getDenseI64ArrayAttr(stride),
                               im.builder.getDenseI64ArrayAttr(padding),
                               im.builder.getDenseI64ArrayAttr(dilation),
                               im.builder.getI64IntegerAttr(groups));
  Value result = permuteValue(im, loc, conv, kToChannelsFirst);
  if (oneD)
    result = ReshapeOp::create(im.builder, loc, type, result);
  im.bind(node, result);
  return success();
}

/// Traced: _convolution(input, weight, bias, stride, padding, dilation,
/// transposed, output_padding, groups, benchmark, deterministic, cudnn, tf32).
LogicalResult convertConvolution(Importer &im, const Node *node) {
  auto stride = pairArg(im, node, 3, "stride");
  auto padding = pairArg(im, node, 4, "padding");
  auto dilation = pairArg(im, node, 5, "dilation");
  auto transposed = constantArg<bool>(im, node, 6);
  auto groups = constantArg<int64_t>(im, node, 8);
  if (!stride || !padding || !dilation || !transposed || !groups)
    return failure();
  if (*transposed) {
    emitError(im.locationOf(node)) << "transposed convolution (ConvTranspose2d) is not "
                                      "supported";
    return failure();
  }
  return emitConv2d(im, node, *stride, {(*padding)[0], (*padding)[1], (*padding)[0], (*padding)[1]},
                    *dilation, *groups);
}

/// Scripted: conv2d(input, weight, bias, stride, padding, dilation, groups),
/// padding either ints or "same" / "valid".
LogicalResult convertConv2d(Importer &im, const Node *node) {
  auto stride = pairArg(im, node, 3, "stride");
  auto dilation = pairArg(im, node, 5, "dilation");
  auto groups = constantArg<int64_t>(im, node, 6);
  if (!stride || !dilation || !groups)
    return failure();
  std::array<int64_t, 4> pad{0, 0, 0, 0};
  // conv2d.padding takes "same"/"valid"; conv2d a list (constant_as would
  // assert on a list read as a string).
  std::optional<std::string> mode;
  if (node->input(4)->type()->kind() == c10::TypeKind::StringType)
    mode = torch::jit::constant_as<std::string>(node->input(4));
  if (mode) {
    if (*mode == "same") {
      RankedTensorType weightType = im.tensorType(node->input(1), im.locationOf(node));
      if (!weightType)
        return failure();
      // A 1-D kernel [O, C/g, K] is 1 x K.
      ArrayRef<int64_t> w = weightType.getShape();
      std::array<int64_t, 2> kernel = {w.size() == 3 ? 1 : w[2], w.back()};
      for (int i = 0; i < 2; ++i) {
        // PyTorch puts the odd element of the total on the bottom/right.
        int64_t total = (*dilation)[i] * (kernel[i] - 1);
        pad[i] = total / 2;
        pad[2 + i] = total - total / 2;
      }
    } else if (*mode != "valid") {
      emitError(im.locationOf(node)) << "aten::conv2d: unknown padding mode '" << *mode << "'";
      return failure();
    }
  } else {
    auto padding = pairArg(im, node, 4, "padding");
    if (!padding)
      return failure();
    pad = {(*padding)[0], (*padding)[1], (*padding)[0], (*padding)[1]};
  }
  return emitConv2d(im, node, *stride, pad, *dilation, *groups);
}

/// Shared by max_pool2d and avg_pool2d: an NHWC kiln.pool2d between permutes.
LogicalResult emitPool2d(Importer &im, const Node *node, PoolKind kind,
                         std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride,
                         std::array<int64_t, 2> padding, bool ceilMode, bool countIncludePad) {
  auto p = primaryOperand(im, node);
  if (!p)
    return failure();
  auto [type, loc, input] = *p;
  if (type.getRank() != 4) {
    emitError(loc) << node->kind().toQualString() << " on a " << type.getRank()
                   << "-D tensor is not supported (needs [N, C, H, W])";
    return failure();
  }
  Value nhwc = permuteValue(im, loc, input, kToChannelsLast);
  auto pool = Pool2dOp::create(
      im.builder, loc, permutedType(type, kToChannelsLast), nhwc,
      PoolKindAttr::get(&im.context, kind), im.builder.getDenseI64ArrayAttr(kernel),
      im.builder.getDenseI64ArrayAttr(stride),
      im.builder.getDenseI64ArrayAttr({padding[0], padding[1], padding[0], padding[1]}),
      ceilMode ? im.builder.getUnitAttr() : UnitAttr(),
      countIncludePad ? im.builder.getUnitAttr() : UnitAttr());
  im.bind(node, permuteValue(im, loc, pool, kToChannelsFirst));
  return success();
}

/// max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode).
LogicalResult convertMaxPool2d(Importer &im, const Node *node) {
  auto kernel = pairArg(im, node, 1, "kernel_size");
  auto strideList = constantArg<std::vector<int64_t>>(im, node, 2);
  auto padding = pairArg(im, node, 3, "padding");
  auto dilation = pairArg(im, node, 4, "dilation");
  auto ceilMode = constantArg<bool>(im, node, 5);
  if (!kernel || !strideList || !padding || !dilation || !ceilMode)
    return failure();
  if ((*dilation)[0] != 1 || (*dilation)[1] != 1) {
    emitError(im.locationOf(node)) << "aten::max_pool2d with dilation is not supported";
    return failure();
  }
  // An empty stride means stride = kernel_size.
  auto stride = strideList->empty() ? kernel : pairArg(im, node, 2, "stride");
  if (!stride)
    return failure();
  return emitPool2d(im, node, PoolKind::max, *kernel, *stride, *padding, *ceilMode, false);
}

/// avg_pool2d(input, kernel_size, stride, padding, ceil_mode,
/// count_include_pad, divisor_override).
LogicalResult convertAvgPool2d(Importer &im, const Node *node) {
  auto kernel = pairArg(im, node, 1, "kernel_size");
  auto strideList = constantArg<std::vector<int64_t>>(im, node, 2);
  auto padding = pairArg(im, node, 3, "padding");
  auto ceilMode = constantArg<bool>(im, node, 4);
  auto includePad = constantArg<bool>(im, node, 5);
  if (!kernel || !strideList || !padding || !ceilMode || !includePad)
    return failure();
  if (node->inputs().size() > 6 && !isNone(node, 6)) {
    emitError(im.locationOf(node)) << "aten::avg_pool2d with divisor_override is not "
                                      "supported";
    return failure();
  }
  auto stride = strideList->empty() ? kernel : pairArg(im, node, 2, "stride");
  if (!stride)
    return failure();
  return emitPool2d(im, node, PoolKind::avg, *kernel, *stride, *padding, *ceilMode,
                    *includePad);
}

/// adaptive_avg_pool2d(input, output_size): a spatial mean for 1x1 (the
/// classifier heads), an average pool when the sizes divide, else refused.
LogicalResult convertAdaptiveAvgPool2d(Importer &im, const Node *node) {
  auto p = primaryOperand(im, node);
  if (!p)
    return failure();
  auto [type, loc, input] = *p;
  auto inputType = cast<RankedTensorType>(input.getType());
  if (type.getRank() != 4) {
    emitError(loc) << "aten::adaptive_avg_pool2d on a " << type.getRank()
                   << "-D tensor is not supported (needs [N, C, H, W])";
    return failure();
  }
  int64_t h = inputType.getShape()[2], w = inputType.getShape()[3];
  int64_t oh = type.getShape()[2], ow = type.getShape()[3];
  if (oh == h && ow == w) {
    im.bind(node, input);
    return success();
  }
  if (oh == 1 && ow == 1) {
    im.bind(node, ReduceMeanOp::create(im.builder, loc, type, input,
                                       im.builder.getDenseI64ArrayAttr({2, 3}),
                                       im.builder.getUnitAttr()));
    return success();
  }
  if (h % oh != 0 || w % ow != 0) {
    emitError(loc) << "aten::adaptive_avg_pool2d from " << h << "x" << w << " to " << oh
                   << "x" << ow << " has uneven windows, which are not supported";
    return failure();
  }
  return emitPool2d(im, node, PoolKind::avg, {h / oh, w / ow}, {h / oh, w / ow}, {0, 0},
                    false, false);
}

/// batch_norm(input, weight, bias, running_mean, running_var, training,
/// momentum, eps, cudnn_enabled) with constant statistics (when freezing did
/// not fold it into a convolution): x * scale + shift, the constants made
/// here, per channel (dimension 1).
LogicalResult convertBatchNorm(Importer &im, const Node *node) {
  auto p = primaryOperand(im, node);
  auto training = constantArg<bool>(im, node, 5);
  auto eps = constantArg<double>(im, node, 7);
  if (!p || !training || !eps)
    return failure();
  auto [type, loc, input] = *p;
  if (*training) {
    emitError(loc) << "batch_norm in training mode: call model.eval() before exporting";
    return failure();
  }
  auto mean = constantTensorArg(node, 3), var = constantTensorArg(node, 4);
  if (!mean || !var) {
    emitError(loc) << "batch_norm without constant running statistics is not supported";
    return failure();
  }
  at::Tensor scale = at::rsqrt(var->to(c10::kDouble) + *eps);
  if (!isNone(node, 1)) {
    auto weight = constantTensorArg(node, 1);
    if (!weight) {
      emitError(loc) << "batch_norm with a non-constant weight is not supported";
      return failure();
    }
    scale = scale * weight->to(c10::kDouble);
  }
  at::Tensor shift = -mean->to(c10::kDouble) * scale;
  if (!isNone(node, 2)) {
    auto bias = constantTensorArg(node, 2);
    if (!bias) {
      emitError(loc) << "batch_norm with a non-constant bias is not supported";
      return failure();
    }
    shift = shift + bias->to(c10::kDouble);
  }
  // [C] -> [C, 1, ..., 1] so it broadcasts along dimension 1.
  std::vector<int64_t> shape{scale.size(0)};
  for (int64_t d = 2; d < type.getRank(); ++d)
    shape.push_back(1);
  std::string name = weightName(node, 3);
  Value scaleValue = im.constantTensor(scale.to(c10::kFloat).reshape(shape), name + "_scale", loc);
  Value shiftValue = im.constantTensor(shift.to(c10::kFloat).reshape(shape), name + "_shift", loc);
  if (!scaleValue || !shiftValue)
    return failure();
  scaleValue = im.castTo(scaleValue, elementOf(type), loc);
  shiftValue = im.castTo(shiftValue, elementOf(type), loc);
  Value scaled = MulOp::create(im.builder, loc, type, input, scaleValue);
  im.bind(node, AddOp::create(im.builder, loc, type, scaled, shiftValue));
  return success();
}

/// hardsigmoid(x) = clamp(x / 6 + 1/2, 0, 1); hardswish(x) = x * hardsigmoid(x).
/// A division by 6, not a product with 1/6: at fp16 precision the constant
/// 1/6 rounds 2.4e-4 low, the same way in every hardswish, and MobileNetV3's
/// output drifted 4e-3 further from fp32 (past PyTorch's own fp16 error);
/// 6 and 1/2 are exact in every float type.
Value hardsigmoid(Importer &im, Location loc, RankedTensorType type, Value x) {
  Type element = elementOf(type);
  Value six = scalarConstant(im.builder, loc, element, 6.0);
  Value half = scalarConstant(im.builder, loc, element, 0.5);
  Value scaled = DivOp::create(im.builder, loc, type, x, six);
  Value shifted = AddOp::create(im.builder, loc, type, scaled, half);
  return ClampOp::create(im.builder, loc, type, shifted, im.builder.getF64FloatAttr(0.0),
                         im.builder.getF64FloatAttr(1.0));
}

LogicalResult convertHardsigmoid(Importer &im, const Node *node) {
  auto p = primaryOperand(im, node);
  if (!p)
    return failure();
  im.bind(node, hardsigmoid(im, p->loc, p->type, p->input));
  return success();
}

LogicalResult convertHardswish(Importer &im, const Node *node) {
  auto p = primaryOperand(im, node);
  if (!p)
    return failure();
  Value gate = hardsigmoid(im, p->loc, p->type, p->input);
  im.bind(node, MulOp::create(im.builder, p->loc, p->type, p->input, gate));
  return success();
}

/// cat(tensors, dim): the list comes from a prim::ListConstruct.
LogicalResult convertCat(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  auto dim = constantArg<int64_t>(im, node, 1);
  if (!type || !dim)
    return failure();
  Location loc = im.locationOf(node);
  const Node *list = node->input(0)->node();
  if (list->kind() != c10::prim::ListConstruct) {
    emitError(loc) << "aten::cat of a list not built in the graph is not supported";
    return failure();
  }
  auto normalized = normalizeDim(im, node, *dim, type.getRank());
  if (!normalized)
    return failure();
  SmallVector<Value> inputs;
  for (const torch::jit::Value *element : list->inputs()) {
    Value v = im.operand(element, elementOf(type), loc);
    if (!v)
      return failure();
    // PyTorch skips empty 1-D tensors in cat.
    if (cast<RankedTensorType>(v.getType()).getNumElements() == 0)
      continue;
    inputs.push_back(v);
  }
  if (inputs.size() == 1)
    im.bind(node, inputs.front());
  else
    im.bind(node, ConcatOp::create(im.builder, loc, type, inputs, *normalized));
  return success();
}

/// A list consumed by the op that reads it (cat); nothing to build.
LogicalResult convertListConstruct(Importer &, const Node *) { return success(); }

} // namespace

void kiln::frontend::addConvConverters(ConverterMap &map) {
  map.insert({
      {"aten::_convolution", convertConvolution},
      {"aten::conv2d", convertConv2d},
      {"aten::conv2d.padding", convertConv2d},
      // torch.export keeps conv1d (TorchScript traces it to _convolution).
      {"aten::conv1d", convertConv2d},
      {"aten::conv1d.padding", convertConv2d},
      // Traced conv2d with padding "same" or "valid": conv2d.padding's arguments.
      {"aten::_convolution_mode", convertConv2d},
      {"aten::batch_norm", convertBatchNorm},
      {"aten::max_pool2d", convertMaxPool2d},
      {"aten::avg_pool2d", convertAvgPool2d},
      {"aten::adaptive_avg_pool2d", convertAdaptiveAvgPool2d},
      {"aten::hardsigmoid", convertHardsigmoid},
      {"aten::hardswish", convertHardswish},
      {"aten::cat", convertCat},
      {"prim::ListConstruct", convertListConstruct},
  });
}
