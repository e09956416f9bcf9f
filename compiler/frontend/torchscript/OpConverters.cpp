//===- OpConverters.cpp - one converter per TorchScript operator ----------===//
//
// Each converter reads its node's inputs (tensors through Importer::operand,
// arguments as constants) and the specialized result type, and builds kiln
// ops. The result type observed when the model ran settles PyTorch's type
// promotion: operands are cast to the result's element type (a 0-dim Double
// constant from a traced Python number takes the tensor's type, as in
// PyTorch), so converters never re-derive the promotion rules.
//
//===----------------------------------------------------------------------===//

#include "ConverterHelpers.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/constants.h>

#include <array>
#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::frontend;

namespace {

//===----------------------------------------------------------------------===//
// Argument helpers
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Converter builders
//===----------------------------------------------------------------------===//

template <typename OpTy>
Converter unary() {
  return [](Importer &im, const Node *node) -> LogicalResult {
    auto p = primaryOperand(im, node);
    if (!p)
      return failure();
    auto [type, loc, input] = *p;
    im.bind(node, OpTy::create(im.builder, loc, type, input));
    return success();
  };
}

/// `aten::add(self, other, alpha)` and friends: other * alpha when alpha != 1.
template <typename OpTy>
Converter binary(bool hasAlpha) {
  return [hasAlpha](Importer &im, const Node *node) -> LogicalResult {
    RankedTensorType type = im.resultType(node);
    if (!type)
      return failure();
    Location loc = im.locationOf(node);
    Value lhs = im.operand(node->input(0), elementOf(type), loc);
    Value rhs = im.operand(node->input(1), elementOf(type), loc);
    if (!lhs || !rhs)
      return failure();
    if (hasAlpha) {
      auto alpha = torch::jit::toIValue(node->input(2));
      if (!alpha) {
        emitError(loc) << node->kind().toQualString() << ": alpha must be constant";
        return failure();
      }
      double value = alpha->toScalar().toDouble();
      if (value != 1.0) {
        Value scale = im.operand(node->input(2), elementOf(type), loc);
        auto rhsType = cast<RankedTensorType>(rhs.getType());
        rhs = MulOp::create(im.builder, loc, rhsType, rhs, scale);
      }
    }
    im.bind(node, OpTy::create(im.builder, loc, type, lhs, rhs));
    return success();
  };
}

/// Ops whose result is the input with a new shape: view, reshape, flatten,
/// squeeze, unsqueeze. The specialized result type carries the shape.
LogicalResult convertReshape(Importer &im, const Node *node) {
  auto p = primaryOperand(im, node);
  if (!p)
    return failure();
  auto [type, loc, input] = *p;
  im.bind(node, input.getType() == type
                    ? input
                    : Value(ReshapeOp::create(im.builder, loc, type, input)));
  return success();
}

/// Ops that return their input, converted to the observed result type:
/// contiguous, clone, detach, dropout in eval mode, and to(dtype), type_as
/// and friends (Importer::operand inserts the kiln.cast when types differ).
LogicalResult convertIdentity(Importer &im, const Node *node) {
  auto p = primaryOperand(im, node);
  if (!p)
    return failure();
  im.bind(node, p->input);
  return success();
}

LogicalResult convertDropout(Importer &im, const Node *node) {
  std::optional<bool> train = constantArg<bool>(im, node, 2);
  if (!train)
    return failure();
  if (*train) {
    emitError(im.locationOf(node))
        << "dropout in training mode: call model.eval() before exporting";
    return failure();
  }
  return convertIdentity(im, node);
}

LogicalResult emitPermute(Importer &im, const Node *node,
                          ArrayRef<int64_t> permutation) {
  auto p = primaryOperand(im, node);
  if (!p)
    return failure();
  auto [type, loc, input] = *p;
  im.bind(node, PermuteOp::create(im.builder, loc, type, input,
                                  im.builder.getDenseI64ArrayAttr(permutation)));
  return success();
}


LogicalResult convertTranspose(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  if (!type)
    return failure();
  int64_t rank = type.getRank();
  auto d0 = constantArg<int64_t>(im, node, 1), d1 = constantArg<int64_t>(im, node, 2);
  if (!d0 || !d1)
    return failure();
  auto a = normalizeDim(im, node, *d0, rank), b = normalizeDim(im, node, *d1, rank);
  if (!a || !b)
    return failure();
  SmallVector<int64_t> permutation = identityPermutation(rank);
  std::swap(permutation[*a], permutation[*b]);
  return emitPermute(im, node, permutation);
}

LogicalResult convertT(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  if (!type)
    return failure();
  if (type.getRank() < 2)
    return convertIdentity(im, node);
  return emitPermute(im, node, {1, 0});
}

LogicalResult convertPermute(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  auto dims = constantArg<std::vector<int64_t>>(im, node, 1);
  if (!type || !dims)
    return failure();
  SmallVector<int64_t> permutation;
  for (int64_t dim : *dims) {
    auto normalized = normalizeDim(im, node, dim, type.getRank());
    if (!normalized)
      return failure();
    permutation.push_back(*normalized);
  }
  return emitPermute(im, node, permutation);
}

LogicalResult convertLinear(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  if (!type)
    return failure();
  Location loc = im.locationOf(node);
  Type element = elementOf(type);
  Value input = im.operand(node->input(0), element, loc);
  Value weight = im.operand(node->input(1), element, loc);
  Value bias = isNone(node, 2) ? Value() : im.operand(node->input(2), element, loc);
  if (!input || !weight || (!isNone(node, 2) && !bias))
    return failure();
  if (cast<RankedTensorType>(weight.getType()).getRank() != 2) {
    emitError(loc) << "aten::linear with a " << cast<RankedTensorType>(weight.getType()).getRank()
                   << "-D weight is not supported (needs [out_features, in_features])";
    return failure();
  }
  im.bind(node, LinearOp::create(im.builder, loc, type, input, weight, bias));
  return success();
}

LogicalResult convertMatmul(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  if (!type)
    return failure();
  Location loc = im.locationOf(node);
  Value lhs = im.operand(node->input(0), elementOf(type), loc);
  Value rhs = im.operand(node->input(1), elementOf(type), loc);
  if (!lhs || !rhs)
    return failure();
  int64_t lhsRank = cast<RankedTensorType>(lhs.getType()).getRank();
  int64_t rhsRank = cast<RankedTensorType>(rhs.getType()).getRank();
  if (lhsRank < 2 || rhsRank < 2) {
    emitError(loc) << "aten::matmul with a 1-D operand (a vector product) is "
                      "not supported; unsqueeze it to a matrix";
    return failure();
  }
  if (lhsRank == 2 && rhsRank == 2)
    im.bind(node, MatmulOp::create(im.builder, loc, type, lhs, rhs));
  else
    im.bind(node, BatchMatmulOp::create(im.builder, loc, type, lhs, rhs));
  return success();
}

LogicalResult convertGelu(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  auto approximate = constantArg<std::string>(im, node, 1);
  if (!type || !approximate)
    return failure();
  Location loc = im.locationOf(node);
  std::optional<GeluApproximation> mode = symbolizeGeluApproximation(*approximate);
  if (!mode) {
    emitError(loc) << "aten::gelu: unknown approximate='" << *approximate << "'";
    return failure();
  }
  Value input = im.operand(node->input(0), elementOf(type), loc);
  if (!input)
    return failure();
  im.bind(node, GeluOp::create(im.builder, loc, type, input, *mode));
  return success();
}

LogicalResult convertLayerNorm(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  auto normalized = constantArg<std::vector<int64_t>>(im, node, 1);
  auto eps = constantArg<double>(im, node, 4);
  if (!type || !normalized || !eps)
    return failure();
  Location loc = im.locationOf(node);
  Type element = elementOf(type);
  Value input = im.operand(node->input(0), element, loc);
  Value weight = isNone(node, 2) ? Value() : im.operand(node->input(2), element, loc);
  Value bias = isNone(node, 3) ? Value() : im.operand(node->input(3), element, loc);
  if (!input || (!isNone(node, 2) && !weight) || (!isNone(node, 3) && !bias))
    return failure();
  int64_t axis = type.getRank() - static_cast<int64_t>(normalized->size());
  im.bind(node, LayerNormOp::create(im.builder, loc, type, input, weight, bias,
                                    im.builder.getI64IntegerAttr(axis),
                                    im.builder.getF64FloatAttr(*eps)));
  return success();
}

/// aten::rms_norm(input, normalized_shape, weight?, eps?): eps None is the
/// input type's machine epsilon, as in PyTorch.
LogicalResult convertRmsNorm(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  auto normalized = constantArg<std::vector<int64_t>>(im, node, 1);
  if (!type || !normalized)
    return failure();
  double eps;
  if (isNone(node, 3)) {
    auto input = node->input(0)->type()->cast<c10::TensorType>();
    std::optional<c10::ScalarType> dtype = input ? input->scalarType() : std::nullopt;
    eps = dtype == c10::kHalf       ? 0.0009765625
          : dtype == c10::kBFloat16 ? 0.0078125
          : dtype == c10::kDouble   ? 2.220446049250313e-16
                                    : 1.1920928955078125e-07;
  } else {
    auto given = constantArg<double>(im, node, 3);
    if (!given)
      return failure();
    eps = *given;
  }
  Location loc = im.locationOf(node);
  Type element = elementOf(type);
  Value input = im.operand(node->input(0), element, loc);
  Value weight = isNone(node, 2) ? Value() : im.operand(node->input(2), element, loc);
  if (!input || (!isNone(node, 2) && !weight))
    return failure();
  int64_t axis = type.getRank() - static_cast<int64_t>(normalized->size());
  im.bind(node, LayerNormOp::create(im.builder, loc, type, input, weight, Value(),
                                    im.builder.getI64IntegerAttr(axis),
                                    im.builder.getF64FloatAttr(eps), im.builder.getUnitAttr()));
  return success();
}

LogicalResult convertSoftmax(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  auto dim = constantArg<int64_t>(im, node, 1);
  if (!type || !dim)
    return failure();
  auto normalized = normalizeDim(im, node, *dim, type.getRank());
  if (!normalized)
    return failure();
  Location loc = im.locationOf(node);
  Value input = im.operand(node->input(0), elementOf(type), loc);
  if (!input)
    return failure();
  im.bind(node, SoftmaxOp::create(im.builder, loc, type, input, *normalized));
  return success();
}

LogicalResult convertClamp(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  if (!type)
    return failure();
  Location loc = im.locationOf(node);
  FloatAttr bounds[2];
  for (int i = 0; i < 2; ++i) {
    if (isNone(node, 1 + i))
      continue;
    auto value = torch::jit::toIValue(node->input(1 + i));
    if (!value || !(value->isDouble() || value->isInt())) {
      emitError(loc) << "aten::clamp with tensor bounds is not supported";
      return failure();
    }
    bounds[i] = im.builder.getF64FloatAttr(value->toScalar().toDouble());
  }
  Value input = im.operand(node->input(0), elementOf(type), loc);
  if (!input)
    return failure();
  im.bind(node, ClampOp::create(im.builder, loc, type, input, bounds[0], bounds[1]));
  return success();
}

/// clamp_min(self, min) / clamp_max(self, max): a clamp bounded on one side
/// (F.normalize's clamp_min(norm, eps)).
template <bool kMin> LogicalResult convertClampOneSide(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  if (!type)
    return failure();
  Location loc = im.locationOf(node);
  auto value = torch::jit::toIValue(node->input(1));
  if (!value || !(value->isDouble() || value->isInt())) {
    emitError(loc) << node->kind().toQualString() << " with a tensor bound is not supported";
    return failure();
  }
  FloatAttr bound = im.builder.getF64FloatAttr(value->toScalar().toDouble());
  Value input = im.operand(node->input(0), elementOf(type), loc);
  if (!input)
    return failure();
  im.bind(node, ClampOp::create(im.builder, loc, type, input, kMin ? bound : FloatAttr(),
                                kMin ? FloatAttr() : bound));
  return success();
}

/// linalg_vector_norm(self, ord, dim, keepdim, dtype): for ord 2 the square
/// root of the sum of squares, for ord 1 the sum of magnitudes, for ord inf
/// the largest magnitude, over `dim` (all dimensions when None).
LogicalResult convertVectorNorm(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  if (!type)
    return failure();
  Location loc = im.locationOf(node);
  auto ord = torch::jit::toIValue(node->input(1));
  auto keepdim = constantArg<bool>(im, node, 3);
  if (!ord || !(ord->isDouble() || ord->isInt()) || !keepdim)
    return failure();
  double p = ord->toScalar().toDouble();
  if (p != 2.0 && p != 1.0 && !std::isinf(p)) {
    emitError(loc) << "aten::linalg_vector_norm of order " << p
                   << " (kiln computes orders 1, 2 and inf)";
    return failure();
  }
  if (std::isinf(p) && p < 0) {
    emitError(loc) << "aten::linalg_vector_norm of order -inf is not supported";
    return failure();
  }
  Value input = im.operand(node->input(0), elementOf(type), loc);
  if (!input)
    return failure();
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  SmallVector<int64_t> dims;
  if (!isNone(node, 2)) {
    auto given = constantArg<std::vector<int64_t>>(im, node, 2);
    if (!given)
      return failure();
    for (int64_t dim : *given) {
      auto d = normalizeDim(im, node, dim, rank);
      if (!d)
        return failure();
      dims.push_back(*d);
    }
  }
  if (dims.empty())
    dims = identityPermutation(rank);
  llvm::sort(dims);
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  auto reduced = [&](Value value) -> Value {
    DenseI64ArrayAttr attr = im.builder.getDenseI64ArrayAttr(dims);
    UnitAttr keep = *keepdim ? im.builder.getUnitAttr() : UnitAttr();
    if (std::isinf(p))
      return ReduceMaxOp::create(im.builder, loc, type, value, attr, keep);
    return ReduceSumOp::create(im.builder, loc, type, value, attr, keep);
  };
  Value result;
  if (p == 2.0)
    result = SqrtOp::create(im.builder, loc, type,
                            reduced(MulOp::create(im.builder, loc, inputType, input, input)));
  else
    result = reduced(AbsOp::create(im.builder, loc, inputType, input));
  im.bind(node, result);
  return success();
}

/// hardtanh(self, min_val, max_val): a clamp to the node's own bounds
/// (nn.ReLU6 traces to hardtanh(x, 0, 6); nn.Hardtanh's defaults are -1, 1).
LogicalResult convertHardtanh(Importer &im, const Node *node) {
  Location loc = im.locationOf(node);
  double bounds[2];
  for (int i = 0; i < 2; ++i) {
    auto value = torch::jit::toIValue(node->input(1 + i));
    if (!value || !(value->isDouble() || value->isInt())) {
      emitError(loc) << "aten::hardtanh with a bound that is not a constant number is not "
                        "supported";
      return failure();
    }
    bounds[i] = value->toScalar().toDouble();
  }
  auto p = primaryOperand(im, node);
  if (!p)
    return failure();
  auto [type, primaryLoc, input] = *p;
  im.bind(node, ClampOp::create(im.builder, primaryLoc, type, input,
                                im.builder.getF64FloatAttr(bounds[0]),
                                im.builder.getF64FloatAttr(bounds[1])));
  return success();
}

/// `clamp` spelled as an activation with fixed bounds: relu6.
Converter fixedClamp(double lo, double hi) {
  return [lo, hi](Importer &im, const Node *node) -> LogicalResult {
    auto p = primaryOperand(im, node);
    if (!p)
      return failure();
    auto [type, loc, input] = *p;
    im.bind(node, ClampOp::create(im.builder, loc, type, input,
                                  im.builder.getF64FloatAttr(lo),
                                  im.builder.getF64FloatAttr(hi)));
    return success();
  };
}

/// sum.dim_IntList / mean.dim: (self, dims, keepdim, dtype).
template <typename OpTy>
LogicalResult convertReduce(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  auto dims = constantArg<std::vector<int64_t>>(im, node, 1);
  auto keepdim = constantArg<bool>(im, node, 2);
  if (!type || !dims || !keepdim)
    return failure();
  Location loc = im.locationOf(node);
  Value input = im.operand(node->input(0), elementOf(type), loc);
  if (!input)
    return failure();
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  SmallVector<int64_t> normalized;
  for (int64_t dim : *dims) {
    auto d = normalizeDim(im, node, dim, rank);
    if (!d)
      return failure();
    normalized.push_back(*d);
  }
  if (normalized.empty()) // an empty list reduces everything
    normalized = identityPermutation(rank);
  llvm::sort(normalized);
  normalized.erase(std::unique(normalized.begin(), normalized.end()), normalized.end());
  im.bind(node, OpTy::create(im.builder, loc, type, input,
                             im.builder.getDenseI64ArrayAttr(normalized),
                             *keepdim ? im.builder.getUnitAttr() : UnitAttr()));
  return success();
}

/// sum(self, dtype) / mean(self, dtype): every element into a 0-D tensor.
template <typename OpTy>
LogicalResult convertReduceAll(Importer &im, const Node *node) {
  auto p = primaryOperand(im, node);
  if (!p)
    return failure();
  auto [type, loc, input] = *p;
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  im.bind(node, OpTy::create(im.builder, loc, type, input,
                             im.builder.getDenseI64ArrayAttr(identityPermutation(rank)),
                             UnitAttr()));
  return success();
}

/// rsub(self, other, alpha) = other - alpha * self.
LogicalResult convertRsub(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  if (!type)
    return failure();
  Location loc = im.locationOf(node);
  Value self = im.operand(node->input(0), elementOf(type), loc);
  Value other = im.operand(node->input(1), elementOf(type), loc);
  auto alpha = torch::jit::toIValue(node->input(2));
  if (!self || !other || !alpha)
    return failure();
  if (alpha->toScalar().toDouble() != 1.0) {
    Value scale = im.operand(node->input(2), elementOf(type), loc);
    self = MulOp::create(im.builder, loc, self.getType(), self, scale);
  }
  im.bind(node, SubOp::create(im.builder, loc, type, other, self));
  return success();
}

LogicalResult convertDiv(Importer &im, const Node *node) {
  if (node->inputs().size() > 2 && !isNone(node, 2)) {
    emitError(im.locationOf(node))
        << "aten::div with a rounding_mode is not supported";
    return failure();
  }
  return binary<DivOp>(false)(im, node);
}

} // namespace

const std::unordered_map<std::string, Converter> &
kiln::frontend::converterRegistry() {
  static const ConverterMap registry = [] {
  ConverterMap map = {
      // Contractions and normalizations.
      {"aten::linear", convertLinear},
      {"aten::matmul", convertMatmul},
      {"aten::mm", convertMatmul},
      {"aten::bmm", convertMatmul},
      {"aten::layer_norm", convertLayerNorm},
      {"aten::rms_norm", convertRmsNorm},
      {"aten::softmax.int", convertSoftmax},
      {"aten::sum.dim_IntList", convertReduce<ReduceSumOp>},
      {"aten::mean.dim", convertReduce<ReduceMeanOp>},
      {"aten::sum", convertReduceAll<ReduceSumOp>},
      {"aten::mean", convertReduceAll<ReduceMeanOp>},
      // Elementwise binary, tensor and scalar forms.
      {"aten::add.Tensor", binary<AddOp>(true)},
      {"aten::add.Scalar", binary<AddOp>(true)},
      {"aten::sub.Tensor", binary<SubOp>(true)},
      {"aten::sub.Scalar", binary<SubOp>(true)},
      {"aten::rsub.Scalar", convertRsub},
      {"aten::rsub.Tensor", convertRsub},
      {"aten::mul.Tensor", binary<MulOp>(false)},
      {"aten::mul.Scalar", binary<MulOp>(false)},
      {"aten::div.Tensor", convertDiv},
      {"aten::div.Scalar", convertDiv},
      {"aten::div.Tensor_mode", convertDiv},
      {"aten::maximum", binary<MaxOp>(false)},
      {"aten::minimum", binary<MinOp>(false)},
      {"aten::pow.Tensor_Scalar", binary<PowOp>(false)},
      {"aten::pow.Tensor_Tensor", binary<PowOp>(false)},
      // Elementwise unary.
      {"aten::relu", unary<ReluOp>()},
      {"aten::tanh", unary<TanhOp>()},
      {"aten::sigmoid", unary<SigmoidOp>()},
      {"aten::silu", unary<SiluOp>()},
      {"aten::neg", unary<NegOp>()},
      {"aten::abs", unary<AbsOp>()},
      {"aten::exp", unary<ExpOp>()},
      {"aten::log", unary<LogOp>()},
      {"aten::sqrt", unary<SqrtOp>()},
      {"aten::rsqrt", unary<RsqrtOp>()},
      {"aten::erf", unary<ErfOp>()},
      {"aten::gelu", convertGelu},
      {"aten::clamp", convertClamp},
      {"aten::clamp_min", convertClampOneSide<true>},
      {"aten::clamp_max", convertClampOneSide<false>},
      {"aten::linalg_vector_norm", convertVectorNorm},
      {"aten::relu6", fixedClamp(0.0, 6.0)},
      {"aten::hardtanh", convertHardtanh},
      // Shape and layout.
      {"aten::view", convertReshape},
      {"aten::reshape", convertReshape},
      {"aten::flatten.using_ints", convertReshape},
      {"aten::unflatten.int", convertReshape},
      {"aten::unsqueeze", convertReshape},
      {"aten::squeeze.dim", convertReshape},
      {"aten::squeeze", convertReshape},
      {"aten::transpose.int", convertTranspose},
      // Aliases TorchScript's tracer normalizes to transpose and torch.export
      // keeps (MaxViT).
      {"aten::swapaxes", convertTranspose},
      {"aten::swapdims", convertTranspose},
      {"aten::t", convertT},
      {"aten::permute", convertPermute},
      {"aten::contiguous", convertIdentity},
      {"aten::clone", convertIdentity},
      {"aten::detach", convertIdentity},
      {"aten::alias", convertIdentity},
      {"aten::dropout", convertDropout},
      {"aten::feature_dropout", convertDropout},
      // Element type changes.
      {"aten::to.dtype", convertIdentity},
      {"aten::to.dtype_layout", convertIdentity},
      {"aten::to.device", convertIdentity},
      {"aten::to.other", convertIdentity},
      {"aten::to.prim_Device", convertIdentity},
      {"aten::type_as", convertIdentity},
      {"aten::float", convertIdentity},
      {"aten::half", convertIdentity},
      {"aten::bfloat16", convertIdentity},
  };
  addConvConverters(map);
  addTransformerConverters(map);
  addShapeConverters(map);
  return map;
  }();
  return registry;
}
