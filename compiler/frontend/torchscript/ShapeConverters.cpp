//===- ShapeConverters.cpp - stack, roll, repeat, pad, einsum -------------===//
//
// Ops that rearrange elements along one dimension by a pattern fixed at
// import time. Each reads along a dimension by a constant index list
// (takeAlong: the dimension moved to the front, a gather of rows, moved
// back), or concatenates: roll rotates the indices, repeat cycles them,
// reflect / replicate / circular padding mirror, clamp or wrap them, and
// constant padding concatenates splats. einsum becomes permutes, sums and
// one batched matrix product.
//
//===----------------------------------------------------------------------===//

#include "ConverterHelpers.h"

#include <ATen/ATen.h>

using namespace mlir;

namespace kiln::frontend {
namespace {

/// `input` read along `dim` at `indices` (result size indices.size() there).
Value takeAlong(Importer &im, Location loc, Value input, int64_t dim,
                ArrayRef<int64_t> indices) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> toFront{dim};
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      toFront.push_back(d);
  Value front = dim == 0 ? input : permuteValue(im, loc, input, toFront);
  auto frontType = cast<RankedTensorType>(front.getType());
  int64_t rest = frontType.getNumElements() / std::max<int64_t>(frontType.getShape()[0], 1);
  Value table = ReshapeOp::create(im.builder, loc,
                                  frontType.clone({frontType.getShape()[0], rest}), front);
  at::Tensor ids = at::tensor(std::vector<int64_t>(indices.begin(), indices.end()),
                              at::TensorOptions().dtype(c10::kLong));
  Value idsValue = im.constantTensor(ids, "indices", loc);
  int64_t count = static_cast<int64_t>(indices.size());
  Value rows = GatherOp::create(im.builder, loc, frontType.clone({count, rest}), table, idsValue);
  SmallVector<int64_t> shape(frontType.getShape());
  shape[0] = count;
  Value taken = ReshapeOp::create(im.builder, loc, frontType.clone(shape), rows);
  if (dim == 0)
    return taken;
  SmallVector<int64_t> back(rank);
  for (int64_t i = 0; i < rank; ++i)
    back[toFront[i]] = i;
  return permuteValue(im, loc, taken, back);
}

/// stack(tensors, dim): each tensor with a new dimension of 1, concatenated.
LogicalResult convertStack(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  auto dimArg = constantArg<int64_t>(im, node, 1);
  if (!type || !dimArg)
    return failure();
  Location loc = im.locationOf(node);
  const Node *list = node->input(0)->node();
  if (list->kind() != c10::prim::ListConstruct) {
    emitError(loc) << "aten::stack of a list not built in the graph is not supported";
    return failure();
  }
  auto dim = normalizeDim(im, node, *dimArg, type.getRank());
  if (!dim)
    return failure();
  SmallVector<int64_t> one(type.getShape());
  one[*dim] = 1;
  SmallVector<Value> parts;
  for (const torch::jit::Value *element : list->inputs()) {
    Value v = im.operand(element, elementOf(type), loc);
    if (!v)
      return failure();
    parts.push_back(ReshapeOp::create(im.builder, loc, type.clone(one), v));
  }
  im.bind(node, parts.size() == 1
                    ? parts.front()
                    : Value(ConcatOp::create(im.builder, loc, type, parts, *dim)));
  return success();
}

/// roll(self, shifts, dims); without dims, of the flattened tensor.
LogicalResult convertRoll(Importer &im, const Node *node) {
  auto p = primaryOperand(im, node);
  auto shifts = constantArg<std::vector<int64_t>>(im, node, 1);
  auto dims = constantArg<std::vector<int64_t>>(im, node, 2);
  if (!p || !shifts || !dims)
    return failure();
  auto [type, loc, input] = *p;
  Value value = input;
  std::vector<int64_t> along = *dims;
  if (along.empty()) {
    value = ReshapeOp::create(im.builder, loc, type.clone({type.getNumElements()}), input);
    along = {0};
  }
  if (along.size() != shifts->size()) {
    emitError(loc) << "aten::roll: " << shifts->size() << " shifts for " << along.size()
                   << " dimensions";
    return failure();
  }
  for (size_t i = 0; i < along.size(); ++i) {
    auto valueType = cast<RankedTensorType>(value.getType());
    auto dim = normalizeDim(im, node, along[i], valueType.getRank());
    if (!dim)
      return failure();
    int64_t size = valueType.getShape()[*dim];
    int64_t shift = ((*shifts)[i] % size + size) % size;
    if (shift == 0)
      continue;
    SmallVector<int64_t> indices;
    for (int64_t j = 0; j < size; ++j)
      indices.push_back((j - shift + size) % size);
    value = takeAlong(im, loc, value, *dim, indices);
  }
  if (value.getType() != type)
    value = ReshapeOp::create(im.builder, loc, type, value);
  im.bind(node, value);
  return success();
}

/// repeat(self, repeats): leading repeats add dimensions; each dimension's
/// indices cycle through its size.
LogicalResult convertRepeat(Importer &im, const Node *node) {
  auto p = primaryOperand(im, node);
  auto repeats = constantArg<std::vector<int64_t>>(im, node, 1);
  if (!p || !repeats)
    return failure();
  auto [type, loc, input] = *p;
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t added = static_cast<int64_t>(repeats->size()) - inputType.getRank();
  if (added < 0) {
    emitError(loc) << "aten::repeat: " << repeats->size() << " repeats for a rank-"
                   << inputType.getRank() << " tensor";
    return failure();
  }
  SmallVector<int64_t> shape(added, 1);
  shape.append(inputType.getShape().begin(), inputType.getShape().end());
  Value value = ReshapeOp::create(im.builder, loc, inputType.clone(shape), input);
  for (int64_t dim = 0; dim < static_cast<int64_t>(shape.size()); ++dim) {
    if ((*repeats)[dim] == 1)
      continue;
    SmallVector<int64_t> indices;
    for (int64_t j = 0; j < shape[dim] * (*repeats)[dim]; ++j)
      indices.push_back(j % shape[dim]);
    value = takeAlong(im, loc, value, dim, indices);
  }
  im.bind(node, value);
  return success();
}

/// pad(self, pad, mode, value) and constant_pad_nd(self, pad, value): pad
/// lists (before, after) pairs from the last dimension backwards; negative
/// entries crop.
LogicalResult emitPad(Importer &im, const Node *node, const std::string &mode,
                      double fill) {
  auto p = primaryOperand(im, node);
  auto pads = constantArg<std::vector<int64_t>>(im, node, 1);
  if (!p || !pads)
    return failure();
  auto [type, loc, input] = *p;
  Value value = input;
  int64_t rank = type.getRank();
  if (pads->size() % 2 || static_cast<int64_t>(pads->size()) > 2 * rank) {
    emitError(loc) << "aten::pad: " << pads->size() << " padding sizes for a rank-" << rank
                   << " tensor";
    return failure();
  }
  for (size_t pair = 0; pair < pads->size() / 2; ++pair) {
    int64_t dim = rank - 1 - static_cast<int64_t>(pair);
    int64_t before = (*pads)[2 * pair], after = (*pads)[2 * pair + 1];
    auto valueType = cast<RankedTensorType>(value.getType());
    int64_t size = valueType.getShape()[dim];
    if (mode == "constant" && (before < 0 || after < 0)) {
      // Crop first (negative pads), then pad what is left.
      SmallVector<int64_t> kept;
      for (int64_t j = std::max<int64_t>(0, -before); j < size - std::max<int64_t>(0, -after);
           ++j)
        kept.push_back(j);
      if (kept.empty()) {
        emitError(loc) << "aten::pad: cropping " << -std::min(before, after)
                       << " leaves nothing of a dimension of " << size;
        return failure();
      }
      value = takeAlong(im, loc, value, dim, kept);
      valueType = cast<RankedTensorType>(value.getType());
      size = static_cast<int64_t>(kept.size());
      before = std::max<int64_t>(before, 0);
      after = std::max<int64_t>(after, 0);
    }
    if (mode == "constant") {
      SmallVector<Value> parts;
      for (int64_t width : {before, int64_t(-1), after}) {
        if (width == -1) {
          parts.push_back(value);
          continue;
        }
        if (width == 0)
          continue;
        SmallVector<int64_t> shape(valueType.getShape());
        shape[dim] = width;
        auto splatType = valueType.clone(shape);
        Type element = splatType.getElementType();
        Attribute fillAttr =
            isa<FloatType>(element)
                ? Attribute(im.builder.getFloatAttr(element, fill))
                : Attribute(im.builder.getIntegerAttr(element, static_cast<int64_t>(fill)));
        parts.push_back(
            ConstantOp::create(im.builder, loc, DenseElementsAttr::get(splatType, fillAttr)));
      }
      SmallVector<int64_t> shape(valueType.getShape());
      shape[dim] = size + before + after;
      if (parts.size() > 1)
        value = ConcatOp::create(im.builder, loc, valueType.clone(shape), parts, dim);
      continue;
    }
    // Index lists: cropping (negative pads), reflect, replicate, circular.
    if (mode == "reflect" && (before >= size || after >= size)) {
      emitError(loc) << "aten::pad: reflect padding of " << std::max(before, after)
                     << " must be smaller than the dimension it pads (" << size << ")";
      return failure();
    }
    SmallVector<int64_t> indices;
    for (int64_t j = -before; j < size + after; ++j) {
      int64_t i = j;
      if (j < 0 || j >= size) {
        if (mode == "reflect") {
          i = j < 0 ? -j : 2 * (size - 1) - j;
        } else if (mode == "replicate") {
          i = j < 0 ? 0 : size - 1;
        } else if (mode == "circular") {
          i = ((j % size) + size) % size;
        } else {
          emitError(loc) << "aten::pad: mode '" << mode << "' is not supported (constant, "
                         << "reflect, replicate and circular are)";
          return failure();
        }
      }
      indices.push_back(i);
    }
    value = takeAlong(im, loc, value, dim, indices);
  }
  im.bind(node, value);
  return success();
}

LogicalResult convertPad(Importer &im, const Node *node) {
  auto mode = torch::jit::constant_as<std::string>(node->input(2));
  double fill = 0.0;
  if (!isNone(node, 3)) {
    auto value = torch::jit::toIValue(node->input(3));
    if (!value || !(value->isDouble() || value->isInt())) {
      emitError(im.locationOf(node)) << "aten::pad: the fill value must be a constant number";
      return failure();
    }
    fill = value->toScalar().toDouble();
  }
  return emitPad(im, node, mode ? *mode : "constant", fill);
}

LogicalResult convertConstantPad(Importer &im, const Node *node) {
  auto value = torch::jit::toIValue(node->input(2));
  if (!value || !(value->isDouble() || value->isInt())) {
    emitError(im.locationOf(node)) << "aten::constant_pad_nd: the fill value must be a "
                                      "constant number";
    return failure();
  }
  return emitPad(im, node, "constant", value->toScalar().toDouble());
}

/// One einsum operand: its labels, and the value summed over the labels
/// that appear nowhere else.
struct EinsumOperand {
  std::string labels;
  Value value;
};

/// `value` (labelled `labels`) permuted to `order` (a permutation of it).
Value permuteTo(Importer &im, Location loc, Value value, const std::string &labels,
                const std::string &order) {
  if (labels == order)
    return value;
  SmallVector<int64_t> permutation;
  for (char c : order)
    permutation.push_back(static_cast<int64_t>(labels.find(c)));
  return permuteValue(im, loc, value, permutation);
}

/// einsum(equation, tensors): one or two operands, explicit output (`->`),
/// no ellipsis and no repeated label within an operand. Labels only one
/// operand has and the output lacks are summed first; two operands become
/// one batched matrix product: [batch, free of A, contracted] x [batch,
/// contracted, free of B], then the output's order.
LogicalResult convertEinsum(Importer &im, const Node *node) {
  RankedTensorType type = im.resultType(node);
  auto equation = torch::jit::constant_as<std::string>(node->input(0));
  Location loc = im.locationOf(node);
  if (!type || !equation) {
    emitError(loc) << "aten::einsum: the equation must be a constant";
    return failure();
  }
  std::string eq;
  for (char c : *equation)
    if (c != ' ')
      eq += c;
  size_t arrow = eq.find("->");
  auto refuse = [&](const std::string &why) {
    emitError(loc) << "aten::einsum '" << *equation << "': " << why;
    return failure();
  };
  if (arrow == std::string::npos)
    return refuse("an equation without '->' is not supported (write the output labels)");
  if (eq.find("...") != std::string::npos)
    return refuse("'...' is not supported");
  std::string output = eq.substr(arrow + 2);
  std::vector<std::string> inputs;
  for (size_t begin = 0;;) {
    size_t comma = eq.find(',', begin);
    inputs.push_back(eq.substr(begin, std::min(comma, arrow) - begin));
    if (comma == std::string::npos || comma > arrow)
      break;
    begin = comma + 1;
  }
  const Node *list = node->input(1)->node();
  if (list->kind() != c10::prim::ListConstruct || list->inputs().size() != inputs.size())
    return refuse("the operands must be a list built in the graph, one per input term");
  if (inputs.size() > 2)
    return refuse("more than two operands are not supported");
  std::vector<EinsumOperand> operands;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Value v = im.operand(list->input(i), elementOf(type), loc);
    if (!v)
      return failure();
    auto vType = cast<RankedTensorType>(v.getType());
    if (static_cast<int64_t>(inputs[i].size()) != vType.getRank())
      return refuse("term '" + inputs[i] + "' does not match its operand's rank");
    for (size_t a = 0; a < inputs[i].size(); ++a)
      if (inputs[i].find(inputs[i][a], a + 1) != std::string::npos)
        return refuse("a label repeated within one operand (a diagonal) is not supported");
    // Labels no other term has: summed now.
    std::string kept;
    SmallVector<int64_t> summed;
    for (size_t a = 0; a < inputs[i].size(); ++a) {
      char c = inputs[i][a];
      bool elsewhere = output.find(c) != std::string::npos ||
                       (inputs.size() == 2 && inputs[1 - i].find(c) != std::string::npos);
      if (elsewhere)
        kept += c;
      else
        summed.push_back(static_cast<int64_t>(a));
    }
    if (!summed.empty()) {
      SmallVector<int64_t> shape;
      for (size_t a = 0; a < inputs[i].size(); ++a)
        if (!llvm::is_contained(summed, static_cast<int64_t>(a)))
          shape.push_back(vType.getShape()[a]);
      v = ReduceSumOp::create(im.builder, loc, vType.clone(shape), v,
                              im.builder.getDenseI64ArrayAttr(summed), nullptr);
    }
    operands.push_back({kept, v});
  }
  for (char c : output)
    if (operands[0].labels.find(c) == std::string::npos &&
        (operands.size() == 1 || operands[1].labels.find(c) == std::string::npos))
      return refuse(std::string("output label '") + c + "' is in no operand");
  if (operands.size() == 1) {
    im.bind(node, permuteTo(im, loc, operands[0].value, operands[0].labels, output));
    return success();
  }
  const std::string &a = operands[0].labels, &b = operands[1].labels;
  std::string batch, freeA, freeB, contracted;
  for (char c : a) {
    bool inB = b.find(c) != std::string::npos, inOut = output.find(c) != std::string::npos;
    (inB ? (inOut ? batch : contracted) : freeA) += c;
  }
  for (char c : b)
    if (a.find(c) == std::string::npos)
      freeB += c;
  auto sizeOf = [&](const EinsumOperand &operand, char c) {
    return cast<RankedTensorType>(operand.value.getType())
        .getShape()[operand.labels.find(c)];
  };
  auto product = [&](const EinsumOperand &operand, const std::string &labels) {
    int64_t n = 1;
    for (char c : labels)
      n *= sizeOf(operand, c);
    return n;
  };
  for (char c : batch + contracted)
    if (sizeOf(operands[0], c) != sizeOf(operands[1], c))
      return refuse(std::string("label '") + c + "' has two sizes (broadcasting is not "
                                                  "supported)");
  int64_t B = product(operands[0], batch), M = product(operands[0], freeA),
          K = product(operands[0], contracted), N = product(operands[1], freeB);
  Type element = elementOf(type);
  Value lhs = permuteTo(im, loc, operands[0].value, a, batch + freeA + contracted);
  lhs = ReshapeOp::create(im.builder, loc, RankedTensorType::get({B, M, K}, element), lhs);
  Value rhs = permuteTo(im, loc, operands[1].value, b, batch + contracted + freeB);
  rhs = ReshapeOp::create(im.builder, loc, RankedTensorType::get({B, K, N}, element), rhs);
  Value bmm = BatchMatmulOp::create(im.builder, loc, RankedTensorType::get({B, M, N}, element),
                                    lhs, rhs);
  std::string labels = batch + freeA + freeB;
  SmallVector<int64_t> shape;
  for (char c : labels)
    shape.push_back(freeB.find(c) != std::string::npos ? sizeOf(operands[1], c)
                                                       : sizeOf(operands[0], c));
  Value result = ReshapeOp::create(im.builder, loc, RankedTensorType::get(shape, element), bmm);
  im.bind(node, permuteTo(im, loc, result, labels, output));
  return success();
}

} // namespace

void addShapeConverters(ConverterMap &map) {
  map.insert({
      {"aten::stack", convertStack},
      {"aten::roll", convertRoll},
      {"aten::repeat", convertRepeat},
      {"aten::pad", convertPad},
      {"aten::constant_pad_nd", convertConstantPad},
      {"aten::einsum", convertEinsum},
  });
}

} // namespace kiln::frontend
