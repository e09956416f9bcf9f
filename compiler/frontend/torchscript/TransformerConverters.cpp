//===- TransformerConverters.cpp - converters for attention models --------===//
//
// Attention, embeddings, and the indexing, masking and splitting ops that
// traced ViT, BERT and GPT-2 graphs are made of. Shapes come from the
// specializing run (the observed result types), so slices and splits only
// need their offsets from the arguments.
//
//===----------------------------------------------------------------------===//

#include "ConverterHelpers.h"

#include "kiln/Dialect/Kiln/Broadcast.h"

#include <ATen/ATen.h>

#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::frontend;

namespace {

/// The kiln value of a tensor input in its own element type.
Value ownTypeOperand(Importer &im, const Node *node, size_t index, Location loc) {
  RankedTensorType type = im.tensorType(node->input(index), loc);
  return type ? im.operand(node->input(index), type.getElementType(), loc) : Value();
}

/// scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal,
/// *, scale, enable_gqa).
LogicalResult convertScaledDotProductAttention(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  auto dropout = constantArg<double>(im, node, 4);
  auto causal = constantArg<bool>(im, node, 5);
  if (!type || !dropout || !causal)
    return failure();
  Location loc = im.locationOf(node);
  if (*dropout != 0.0) {
    emitError(loc) << "scaled_dot_product_attention with dropout_p = " << *dropout
                   << ": export the model in eval mode with dropout off";
    return failure();
  }
  if (node->inputs().size() > 7) {
    auto gqa = constantArg<bool>(im, node, 7);
    if (!gqa)
      return failure();
    if (*gqa) {
      emitError(loc) << "scaled_dot_product_attention with enable_gqa is not supported";
      return failure();
    }
  }
  Type element = elementOf(type);
  Value q = im.operand(node->input(0), element, loc);
  Value k = im.operand(node->input(1), element, loc);
  Value v = im.operand(node->input(2), element, loc);
  if (!q || !k || !v)
    return failure();
  Value mask;
  if (!isNone(node, 3)) {
    RankedTensorType maskType = im.tensorType(node->input(3), loc);
    if (!maskType)
      return failure();
    bool boolean = maskType.getElementType().isInteger(1);
    mask = im.operand(node->input(3), boolean ? maskType.getElementType() : element, loc);
    if (!mask)
      return failure();
  }
  int64_t headSize = cast<RankedTensorType>(q.getType()).getShape().back();
  double scale = 1.0 / std::sqrt(static_cast<double>(headSize));
  if (node->inputs().size() > 6 && !isNone(node, 6)) {
    auto given = constantArg<double>(im, node, 6);
    if (!given)
      return failure();
    scale = *given;
  }
  if (cast<RankedTensorType>(q.getType()).getRank() < 3) {
    emitError(loc) << "scaled_dot_product_attention on rank-"
                   << cast<RankedTensorType>(q.getType()).getRank()
                   << " tensors is not supported (needs [..., L, E])";
    return failure();
  }
  im.bind(node, AttentionOp::create(im.builder, loc, type, q, k, v, mask,
                                    im.builder.getF64FloatAttr(scale),
                                    *causal ? im.builder.getUnitAttr() : UnitAttr()));
  return success();
}

/// embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse) and
/// index_select(self, 0, index): rows of a table.
LogicalResult emitGather(Importer &im, const Node *node, size_t tableIndex, size_t idsIndex) {
  RankedTensorType type = im.resultType(node);
  if (!type)
    return failure();
  Location loc = im.locationOf(node);
  Value table = im.operand(node->input(tableIndex), elementOf(type), loc);
  Value ids = ownTypeOperand(im, node, idsIndex, loc);
  if (!table || !ids)
    return failure();
  Type idType = cast<RankedTensorType>(ids.getType()).getElementType();
  if (!idType.isInteger(64) && !idType.isInteger(32)) {
    emitError(loc) << node->kind().toQualString() << ": indices must be integers";
    return failure();
  }
  im.bind(node, GatherOp::create(im.builder, loc, type, table, ids));
  return success();
}

LogicalResult convertEmbedding(Importer &im, const Node *node) { return emitGather(im, node, 0, 1); }

LogicalResult convertIndexSelect(Importer &im, const Node *node) {
  auto dim = constantArg<int64_t>(im, node, 1);
  RankedTensorType type = im.resultType(node);
  if (!dim || !type)
    return failure();
  if (*dim != 0 && *dim != -type.getRank()) {
    emitError(im.locationOf(node)) << "aten::index_select along dimension " << *dim
                                   << " is not supported (only dimension 0)";
    return failure();
  }
  return emitGather(im, node, 0, 2);
}

/// cumsum(self, dim, *, dtype=None): the result type (i64 for integer and
/// bool inputs, or `dtype`) is the one the trace observed.
LogicalResult convertCumsum(Importer &im, const Node *node) {
  auto dim = constantArg<int64_t>(im, node, 1);
  RankedTensorType type = im.resultType(node);
  if (!dim || !type)
    return failure();
  Location loc = im.locationOf(node);
  Value input = ownTypeOperand(im, node, 0, loc);
  if (!input)
    return failure();
  const int64_t rank = type.getRank();
  if (*dim < -rank || *dim >= rank) {
    emitError(loc) << "aten::cumsum along dimension " << *dim << " of a rank-" << rank
                   << " tensor";
    return failure();
  }
  // A float dtype for an integer input: sum the converted values.
  Type from = cast<RankedTensorType>(input.getType()).getElementType();
  if (isa<FloatType>(type.getElementType()) && !isa<FloatType>(from))
    input = CastOp::create(im.builder, loc, cast<RankedTensorType>(input.getType())
                                                .clone(type.getElementType()),
                           input);
  else if (isa<FloatType>(from) && !isa<FloatType>(type.getElementType())) {
    emitError(loc) << "aten::cumsum of floats into " << type.getElementType()
                   << " is not supported";
    return failure();
  }
  im.bind(node, CumsumOp::create(im.builder, loc, type, input, *dim < 0 ? *dim + rank : *dim));
  return success();
}

/// expand / expand_as: a broadcast to the observed shape.
LogicalResult convertExpand(Importer &im, const Node *node) {
  auto p = primaryOperand(im, node);
  if (!p)
    return failure();
  auto [type, loc, input] = *p;
  im.bind(node, input.getType() == type
                    ? input
                    : Value(BroadcastOp::create(im.builder, loc, type, input)));
  return success();
}

/// A start index as PyTorch clamps it into [0, size].
int64_t clampIndex(std::optional<int64_t> index, int64_t fallback, int64_t size) {
  int64_t i = index ? *index : fallback;
  if (i < 0)
    i += size;
  return std::clamp<int64_t>(i, 0, size);
}

Value sliceAlong(Importer &im, Location loc, Value input, RankedTensorType type, int64_t dim,
                 int64_t offset, int64_t step) {
  int64_t rank = type.getRank();
  SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
  offsets[dim] = offset;
  strides[dim] = step;
  return SliceOp::create(im.builder, loc, type, input, im.builder.getDenseI64ArrayAttr(offsets),
                         im.builder.getDenseI64ArrayAttr(strides));
}

/// slice.Tensor(self, dim, start, end, step).
LogicalResult convertSlice(Importer &im, const Node *node) {
  auto p = primaryOperand(im, node);
  auto dimArg = constantArg<int64_t>(im, node, 1);
  auto step = constantArg<int64_t>(im, node, 4);
  if (!p || !dimArg || !step)
    return failure();
  auto [type, loc, input] = *p;
  auto inputType = cast<RankedTensorType>(input.getType());
  auto dim = normalizeDim(im, node, *dimArg, inputType.getRank());
  if (!dim)
    return failure();
  if (input.getType() == type) {
    im.bind(node, input);
    return success();
  }
  std::optional<int64_t> start = torch::jit::constant_as<int64_t>(node->input(2));
  int64_t offset = clampIndex(start, 0, inputType.getShape()[*dim]);
  im.bind(node, sliceAlong(im, loc, input, type, *dim, offset, *step));
  return success();
}

/// select.int(self, dim, index): a slice of size 1, reshaped.
LogicalResult convertSelect(Importer &im, const Node *node) {
  auto p = primaryOperand(im, node);
  auto dimArg = constantArg<int64_t>(im, node, 1);
  auto index = constantArg<int64_t>(im, node, 2);
  if (!p || !dimArg || !index)
    return failure();
  auto [type, loc, input] = *p;
  auto inputType = cast<RankedTensorType>(input.getType());
  auto dim = normalizeDim(im, node, *dimArg, inputType.getRank());
  if (!dim)
    return failure();
  int64_t size = inputType.getShape()[*dim];
  int64_t i = *index < 0 ? *index + size : *index;
  if (i < 0 || i >= size) {
    emitError(loc) << "aten::select: index " << *index << " is out of range for size " << size;
    return failure();
  }
  SmallVector<int64_t> shape(inputType.getShape());
  shape[*dim] = 1;
  Value slice = sliceAlong(im, loc, input, inputType.clone(shape), *dim, i, 1);
  im.bind(node, ReshapeOp::create(im.builder, loc, type, slice));
  return success();
}

/// The list producers prim::ListUnpack splits: nothing to build here.
LogicalResult convertListProducer(Importer &, const Node *) { return success(); }

/// prim::ListUnpack of split / split_with_sizes / chunk / unbind: one slice
/// per output, consecutive along the split dimension.
LogicalResult convertListUnpack(Importer &im, const Node *node) {
  Location loc = im.locationOf(node);
  const Node *producer = node->input(0)->node();
  std::string kind = converterKey(producer);
  bool unbind = kind == "aten::unbind.int";
  if (kind != "aten::split.Tensor" && kind != "aten::split_with_sizes" &&
      kind != "aten::chunk" && !unbind) {
    emitError(loc) << "prim::ListUnpack of " << kind << " is not supported";
    return failure();
  }
  RankedTensorType inputType = im.tensorType(producer->input(0), loc);
  if (!inputType)
    return failure();
  auto dimArg = constantArg<int64_t>(im, producer, unbind ? 1 : 2);
  if (!dimArg)
    return failure();
  auto dim = normalizeDim(im, producer, *dimArg, inputType.getRank());
  Value input = im.operand(producer->input(0), inputType.getElementType(), loc);
  if (!dim || !input)
    return failure();
  int64_t offset = 0;
  for (const torch::jit::Value *output : node->outputs()) {
    RankedTensorType type = im.tensorType(output, loc);
    if (!type)
      return failure();
    Value part;
    if (unbind) {
      SmallVector<int64_t> shape(inputType.getShape());
      shape[*dim] = 1;
      part = sliceAlong(im, loc, input, inputType.clone(shape), *dim, offset, 1);
      part = ReshapeOp::create(im.builder, loc, type, part);
      offset += 1;
    } else {
      part = sliceAlong(im, loc, input, type, *dim, offset, 1);
      offset += type.getShape()[*dim];
    }
    im.values[output] = part;
  }
  return success();
}

/// masked_fill(self, mask, value): where(mask, value, self).
LogicalResult convertMaskedFill(Importer &im, const Node *node) {
  auto p = primaryOperand(im, node);
  if (!p)
    return failure();
  auto [type, loc, input] = *p;
  Value mask = im.operand(node->input(1), im.builder.getI1Type(), loc);
  Value value = im.operand(node->input(2), elementOf(type), loc);
  if (!mask || !value)
    return failure();
  im.bind(node, WhereOp::create(im.builder, loc, type, mask, value, input));
  return success();
}

/// where(condition, self, other), tensor or scalar branches.
LogicalResult convertWhere(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  if (!type)
    return failure();
  Location loc = im.locationOf(node);
  Value condition = im.operand(node->input(0), im.builder.getI1Type(), loc);
  Value onTrue = im.operand(node->input(1), elementOf(type), loc);
  Value onFalse = im.operand(node->input(2), elementOf(type), loc);
  if (!condition || !onTrue || !onFalse)
    return failure();
  im.bind(node, WhereOp::create(im.builder, loc, type, condition, onTrue, onFalse));
  return success();
}

/// Comparisons: both sides in the type PyTorch would compare them in (the
/// tensor's, or the floating one when a float meets an integer).
template <typename OpTy>
LogicalResult convertCompare(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  if (!type)
    return failure();
  Location loc = im.locationOf(node);
  RankedTensorType lhsType = im.tensorType(node->input(0), loc);
  if (!lhsType)
    return failure();
  Type element = lhsType.getElementType();
  if (!isa<FloatType>(element)) {
    if (node->input(1)->type()->cast<c10::TensorType>()) {
      RankedTensorType rhs = im.tensorType(node->input(1), loc);
      if (!rhs)
        return failure();
      if (isa<FloatType>(rhs.getElementType()))
        element = rhs.getElementType();
    } else if (auto number = torch::jit::toIValue(node->input(1)); number && number->isDouble()) {
      element = im.builder.getF32Type();
    }
  }
  Value lhs = im.operand(node->input(0), element, loc);
  Value rhs = im.operand(node->input(1), element, loc);
  if (!lhs || !rhs)
    return failure();
  im.bind(node, OpTy::create(im.builder, loc, type, lhs, rhs));
  return success();
}

/// log_softmax(self, dim, dtype).
LogicalResult convertLogSoftmax(Importer &im, const Node *node) {
  auto p = primaryOperand(im, node);
  auto dim = constantArg<int64_t>(im, node, 1);
  if (!p || !dim)
    return failure();
  auto [type, loc, input] = *p;
  auto normalized = normalizeDim(im, node, *dim, type.getRank());
  if (!normalized)
    return failure();
  im.bind(node, SoftmaxOp::create(im.builder, loc, type, input,
                                  im.builder.getI64IntegerAttr(*normalized),
                                  im.builder.getUnitAttr()));
  return success();
}

/// addmm(bias, mat1, mat2, beta, alpha) = beta * bias + alpha * mat1 @ mat2
/// (GPT-2's Conv1D). With a constant mat2 and beta = alpha = 1 it is a
/// linear layer whose weight is mat2 transposed at import time; otherwise
/// a matmul, scaled by alpha, plus the bias scaled by beta.
LogicalResult convertAddmm(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  if (!type)
    return failure();
  Location loc = im.locationOf(node);
  auto beta = torch::jit::toIValue(node->input(3)), alpha = torch::jit::toIValue(node->input(4));
  if (!beta || !alpha || !(beta->isDouble() || beta->isInt()) ||
      !(alpha->isDouble() || alpha->isInt())) {
    emitError(loc) << "aten::addmm with a beta or alpha that is not a constant number is not "
                      "supported";
    return failure();
  }
  const double betaValue = beta->toScalar().toDouble(), alphaValue = alpha->toScalar().toDouble();
  Type element = elementOf(type);
  Value bias = im.operand(node->input(0), element, loc);
  Value input = im.operand(node->input(1), element, loc);
  if (!bias || !input)
    return failure();
  auto biasType = cast<RankedTensorType>(bias.getType());
  std::optional<at::Tensor> weight = constantTensorArg(node, 2);
  if (betaValue != 1.0 || alphaValue != 1.0) {
    Value mat2 = im.operand(node->input(2), element, loc);
    if (!mat2)
      return failure();
    Value product = MatmulOp::create(im.builder, loc, type, input, mat2);
    if (alphaValue != 1.0)
      product = MulOp::create(im.builder, loc, type, product,
                              scalarConstant(im.builder, loc, element, alphaValue));
    // beta = 0 ignores the bias, NaN and infinity included, as PyTorch does.
    if (betaValue == 0.0) {
      im.bind(node, product);
      return success();
    }
    if (betaValue != 1.0)
      bias = MulOp::create(im.builder, loc, biasType, bias,
                           scalarConstant(im.builder, loc, element, betaValue));
    im.bind(node, AddOp::create(im.builder, loc, type, product, bias));
    return success();
  }
  if (weight && weight->dim() == 2 && biasType.getRank() == 1) {
    Value w = im.constantTensor(weight->t().contiguous(), weightName(node, 2), loc);
    if (!w)
      return failure();
    w = im.castTo(w, element, loc);
    im.bind(node, LinearOp::create(im.builder, loc, type, input, w, bias));
    return success();
  }
  Value mat2 = im.operand(node->input(2), element, loc);
  if (!mat2)
    return failure();
  Value product = MatmulOp::create(im.builder, loc, type, input, mat2);
  im.bind(node, AddOp::create(im.builder, loc, type, product, bias));
  return success();
}

/// ones_like, zeros_like, full_like, new_ones, new_zeros, new_full and
/// friends: a splat of the observed type. `valueIndex` < 0: the fill is
/// `fill`.
Converter splatLike(double fill, int valueIndex = -1) {
  return [fill, valueIndex](Importer &im, const Node *node) -> LogicalResult {
    RankedTensorType type = im.resultType(node);
    if (!type)
      return failure();
    Location loc = im.locationOf(node);
    double value = fill;
    if (valueIndex >= 0) {
      auto given = torch::jit::toIValue(node->input(valueIndex));
      if (!given || !(given->isDouble() || given->isInt() || given->isBool())) {
        emitError(loc) << node->kind().toQualString() << ": the fill value must be constant";
        return failure();
      }
      value = given->toScalar().toDouble();
    }
    Type element = elementOf(type);
    Attribute attr;
    if (isa<FloatType>(element))
      attr = FloatAttr::get(element, value);
    else
      attr = IntegerAttr::get(element, static_cast<int64_t>(value));
    im.bind(node, ConstantOp::create(im.builder, loc, DenseElementsAttr::get(type, attr)));
    return success();
  };
}

/// [B, S, E] -> [B, H, S, E/H].
Value splitHeads(Importer &im, Location loc, Value x, int64_t heads) {
  auto type = cast<RankedTensorType>(x.getType());
  auto shape = type.getShape();
  auto split = type.clone({shape[0], shape[1], heads, shape[2] / heads});
  Value reshaped = ReshapeOp::create(im.builder, loc, split, x);
  return permuteValue(im, loc, reshaped, {0, 2, 1, 3});
}

/// _native_multi_head_attention(query, key, value, embed_dim, num_head,
/// qkv_weight, qkv_bias, proj_weight, proj_bias, mask, need_weights,
/// average_attn_weights, mask_type): nn.MultiheadAttention's inference fast
/// path (batch first), as torchvision's ViT traces. Self-attention projects
/// q, k and v with one GEMM.
LogicalResult convertNativeMultiHeadAttention(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  auto embed = constantArg<int64_t>(im, node, 3);
  auto heads = constantArg<int64_t>(im, node, 4);
  if (!type || !embed || !heads)
    return failure();
  Location loc = im.locationOf(node);
  if (!isNone(node, 9)) {
    emitError(loc) << "aten::_native_multi_head_attention with a mask is not supported";
    return failure();
  }
  if (node->outputs().size() > 1 && node->output(1)->hasUses()) {
    emitError(loc) << "aten::_native_multi_head_attention: the attention weights are used; "
                      "call it with need_weights=False";
    return failure();
  }
  if (type.getRank() != 3 || *heads <= 0 || *embed % *heads != 0) {
    emitError(loc) << "aten::_native_multi_head_attention: needs [batch, sequence, "
                      "embedding] inputs and heads dividing the embedding";
    return failure();
  }
  Type element = elementOf(type);
  auto qkvWeight = constantTensorArg(node, 5), qkvBias = constantTensorArg(node, 6);
  if (!qkvWeight || !qkvBias || qkvWeight->dim() != 2 || qkvWeight->size(0) != 3 * *embed) {
    emitError(loc) << "aten::_native_multi_head_attention needs constant [3E, E] in-projection "
                      "weights and bias";
    return failure();
  }
  auto project = [&](const torch::jit::Value *input, int64_t part, int64_t parts) -> Value {
    Value x = im.operand(input, element, loc);
    if (!x)
      return {};
    int64_t rows = qkvWeight->size(0) / 3 * parts;
    Value w = im.constantTensor(qkvWeight->narrow(0, part * (rows / parts), rows).contiguous(),
                                weightName(node, 5) + "_" + std::to_string(part), loc);
    Value b = im.constantTensor(qkvBias->narrow(0, part * (rows / parts), rows).contiguous(),
                                weightName(node, 6) + "_" + std::to_string(part), loc);
    if (!w || !b)
      return {};
    w = im.castTo(w, element, loc);
    b = im.castTo(b, element, loc);
    auto xType = cast<RankedTensorType>(x.getType());
    auto outType = xType.clone({xType.getShape()[0], xType.getShape()[1], rows});
    return LinearOp::create(im.builder, loc, outType, x, w, b);
  };
  Value q, k, v;
  if (node->input(0) == node->input(1) && node->input(1) == node->input(2)) {
    Value qkv = project(node->input(0), 0, 3);
    if (!qkv)
      return failure();
    auto qkvType = cast<RankedTensorType>(qkv.getType());
    auto partType = qkvType.clone({qkvType.getShape()[0], qkvType.getShape()[1], *embed});
    q = sliceAlong(im, loc, qkv, partType, 2, 0, 1);
    k = sliceAlong(im, loc, qkv, partType, 2, *embed, 1);
    v = sliceAlong(im, loc, qkv, partType, 2, 2 * *embed, 1);
  } else {
    q = project(node->input(0), 0, 1);
    k = project(node->input(1), 1, 1);
    v = project(node->input(2), 2, 1);
    if (!q || !k || !v)
      return failure();
  }
  q = splitHeads(im, loc, q, *heads);
  k = splitHeads(im, loc, k, *heads);
  v = splitHeads(im, loc, v, *heads);
  auto headsType = cast<RankedTensorType>(q.getType());
  double scale = 1.0 / std::sqrt(static_cast<double>(*embed / *heads));
  Value attention = AttentionOp::create(im.builder, loc, headsType, q, k, v, Value(),
                                        im.builder.getF64FloatAttr(scale), UnitAttr());
  Value merged = permuteValue(im, loc, attention, {0, 2, 1, 3});
  merged = ReshapeOp::create(im.builder, loc, type, merged);
  Value projWeight = im.operand(node->input(7), element, loc);
  Value projBias = im.operand(node->input(8), element, loc);
  if (!projWeight || !projBias)
    return failure();
  im.bind(node, LinearOp::create(im.builder, loc, type, merged, projWeight, projBias));
  return success();
}

/// index.Tensor(self, indices): advanced indexing whose index tensors cover
/// the leading dimensions (the mask lookups Hugging Face's masking utilities
/// trace to). The flat index sum(idx_i * stride_i) picks rows of self viewed
/// as [d0 * ... * dk-1, rest...].
LogicalResult convertIndex(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  if (!type)
    return failure();
  Location loc = im.locationOf(node);
  RankedTensorType selfType = im.tensorType(node->input(0), loc);
  if (!selfType)
    return failure();
  Value self = im.operand(node->input(0), selfType.getElementType(), loc);
  if (!self)
    return failure();
  Type i64 = im.builder.getI64Type();
  // The index tensors: built in the graph, or a constant list (folded).
  SmallVector<Value> indices;
  const Node *list = node->input(1)->node();
  if (list->kind() == c10::prim::ListConstruct) {
    for (const torch::jit::Value *index : list->inputs()) {
      if (index->type()->kind() == c10::TypeKind::NoneType) {
        indices.push_back(Value());
        continue;
      }
      RankedTensorType indexType = im.tensorType(index, loc);
      if (!indexType)
        return failure();
      if (indexType.getElementType().isInteger(1)) {
        emitError(loc) << "aten::index with boolean (mask) indices is not supported";
        return failure();
      }
      indices.push_back(im.operand(index, i64, loc));
      if (!indices.back())
        return failure();
    }
  } else if (auto constant = torch::jit::toIValue(node->input(1)); constant && constant->isList()) {
    for (const c10::IValue &entry : constant->toListRef()) {
      if (entry.isNone()) {
        indices.push_back(Value());
        continue;
      }
      if (!entry.isTensor() || entry.toTensor().scalar_type() == c10::kBool) {
        emitError(loc) << "aten::index with boolean or non-tensor indices is not supported";
        return failure();
      }
      indices.push_back(im.constantTensor(entry.toTensor().to(c10::kLong), "", loc));
      if (!indices.back())
        return failure();
    }
  } else {
    emitError(loc) << "aten::index with indices not built in the graph is not supported";
    return failure();
  }
  ArrayRef<int64_t> shape = selfType.getShape();
  size_t k = indices.size();
  if (k == 0 || k > shape.size()) {
    emitError(loc) << "aten::index with " << k << " indices into a rank-" << shape.size()
                   << " tensor is not supported";
    return failure();
  }
  Value flat;
  int64_t stride = 1;
  for (size_t i = k; i-- > 0;) {
    Value idx = indices[i];
    if (!idx) {
      emitError(loc) << "aten::index with a None (':') among the leading indices is not "
                        "supported";
      return failure();
    }
    // Negative indices count from the end, as in PyTorch.
    auto idxType = cast<RankedTensorType>(idx.getType());
    Value size = scalarConstant(im.builder, loc, i64, static_cast<double>(shape[i]));
    Value zero = scalarConstant(im.builder, loc, i64, 0.0);
    Value negative = LtOp::create(im.builder, loc, idxType.clone(im.builder.getI1Type()), idx, zero);
    Value wrapped = AddOp::create(im.builder, loc, idxType, idx, size);
    idx = WhereOp::create(im.builder, loc, idxType, negative, wrapped, idx);
    if (stride != 1) {
      Value s = scalarConstant(im.builder, loc, i64, static_cast<double>(stride));
      idx = MulOp::create(im.builder, loc, idxType, idx, s);
    }
    if (!flat) {
      flat = idx;
    } else {
      auto flatType = cast<RankedTensorType>(flat.getType());
      auto sum = broadcastShapes(flatType.getShape(), idxType.getShape());
      if (!sum) {
        emitError(loc) << "aten::index: the index tensors do not broadcast together";
        return failure();
      }
      flat = AddOp::create(im.builder, loc, RankedTensorType::get(*sum, i64), flat, idx);
    }
    stride *= shape[i];
  }
  SmallVector<int64_t> tableShape{stride};
  tableShape.append(shape.begin() + k, shape.end());
  Value table = ReshapeOp::create(im.builder, loc, selfType.clone(tableShape), self);
  im.bind(node, GatherOp::create(im.builder, loc, type, table, flat));
  return success();
}

/// Boolean logic as selects: a & b = b where a else false, a | b = true
/// where a else b, ~a = (a == false). Integer operands are not supported.
template <bool IsAnd>
LogicalResult convertLogic(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  if (!type)
    return failure();
  Location loc = im.locationOf(node);
  if (!type.getElementType().isInteger(1)) {
    emitError(loc) << node->kind().toQualString() << " on integers is not supported (only "
                   << "booleans)";
    return failure();
  }
  Value a = im.operand(node->input(0), type.getElementType(), loc);
  Value b = im.operand(node->input(1), type.getElementType(), loc);
  if (!a || !b)
    return failure();
  Value fixed = scalarConstant(im.builder, loc, type.getElementType(), IsAnd ? 0.0 : 1.0);
  im.bind(node, IsAnd ? WhereOp::create(im.builder, loc, type, a, b, fixed)
                      : WhereOp::create(im.builder, loc, type, a, fixed, b));
  return success();
}

LogicalResult convertNot(Importer &im, const Node *node) {
  auto p = primaryOperand(im, node);
  if (!p)
    return failure();
  auto [type, loc, input] = *p;
  if (!type.getElementType().isInteger(1)) {
    emitError(loc) << node->kind().toQualString() << " on integers is not supported";
    return failure();
  }
  Value no = scalarConstant(im.builder, loc, type.getElementType(), 0.0);
  im.bind(node, EqOp::create(im.builder, loc, type, input, no));
  return success();
}

} // namespace

void kiln::frontend::addTransformerConverters(ConverterMap &map) {
  map.insert({
      {"aten::scaled_dot_product_attention", convertScaledDotProductAttention},
      {"aten::_native_multi_head_attention", convertNativeMultiHeadAttention},
      {"aten::embedding", convertEmbedding},
      {"aten::index_select", convertIndexSelect},
      {"aten::cumsum", convertCumsum},
      {"aten::expand", convertExpand},
      {"aten::expand_as", convertExpand},
      {"aten::slice.Tensor", convertSlice},
      {"aten::select.int", convertSelect},
      {"aten::split.Tensor", convertListProducer},
      {"aten::split_with_sizes", convertListProducer},
      {"aten::chunk", convertListProducer},
      {"aten::unbind.int", convertListProducer},
      {"prim::ListUnpack", convertListUnpack},
      {"aten::masked_fill.Scalar", convertMaskedFill},
      {"aten::masked_fill.Tensor", convertMaskedFill},
      {"aten::where.self", convertWhere},
      {"aten::where.ScalarOther", convertWhere},
      {"aten::where.ScalarSelf", convertWhere},
      {"aten::where.Scalar", convertWhere},
      {"aten::eq.Tensor", convertCompare<EqOp>},
      {"aten::eq.Scalar", convertCompare<EqOp>},
      {"aten::ne.Tensor", convertCompare<NeOp>},
      {"aten::ne.Scalar", convertCompare<NeOp>},
      {"aten::lt.Tensor", convertCompare<LtOp>},
      {"aten::lt.Scalar", convertCompare<LtOp>},
      {"aten::le.Tensor", convertCompare<LeOp>},
      {"aten::le.Scalar", convertCompare<LeOp>},
      {"aten::gt.Tensor", convertCompare<GtOp>},
      {"aten::gt.Scalar", convertCompare<GtOp>},
      {"aten::ge.Tensor", convertCompare<GeOp>},
      {"aten::ge.Scalar", convertCompare<GeOp>},
      {"aten::log_softmax.int", convertLogSoftmax},
      {"aten::index.Tensor", convertIndex},
      {"aten::__and__.Tensor", convertLogic<true>},
      {"aten::bitwise_and.Tensor", convertLogic<true>},
      {"aten::logical_and", convertLogic<true>},
      {"aten::__or__.Tensor", convertLogic<false>},
      {"aten::bitwise_or.Tensor", convertLogic<false>},
      {"aten::logical_or", convertLogic<false>},
      {"aten::bitwise_not", convertNot},
      {"aten::logical_not", convertNot},
      {"aten::addmm", convertAddmm},
      {"aten::ones_like", splatLike(1.0)},
      {"aten::zeros_like", splatLike(0.0)},
      {"aten::full_like", splatLike(0.0, 1)},
      {"aten::new_ones", splatLike(1.0)},
      {"aten::new_zeros", splatLike(0.0)},
      {"aten::new_full", splatLike(0.0, 2)},
      {"aten::ones", splatLike(1.0)},
      {"aten::zeros", splatLike(0.0)},
      {"aten::full", splatLike(0.0, 1)},
  });
}
