//===- KilnOps.cpp - verifiers, folders and custom syntax of kiln ops -----===//
//
// Every verifier error names the operand, dimension and sizes involved, since
// these errors reach users whose model failed to import or whose pass broke
// the IR. Each message is exercised by test/Dialect/Kiln/invalid.mlir. The
// data movement's canonicalization patterns are in ViewPatterns.cpp, the
// fusion group's verifier in FusionVerifier.cpp.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Dialect/Kiln/Broadcast.h"
#include "kiln/Dialect/Kiln/Window.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstring>
#include <numeric>

using namespace mlir;
using namespace kiln;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// A shape as diagnostics print it: `[4, 8]`.
static std::string fmt(ArrayRef<int64_t> dims) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(dims, os);
  os << "]";
  return text;
}

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
static ArrayRef<int64_t> shapeOf(Type t) {
  return cast<RankedTensorType>(t).getShape();
}
static int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}
static Type elementTypeOf(Type t) {
  return cast<RankedTensorType>(t).getElementType();
}

/// All `values` (operands then results) share one element type: kiln never
/// promotes implicitly, the frontend inserts kiln.cast where PyTorch would.
static LogicalResult verifySameElementType(Operation *op) {
  Type expected;
  for (Type t : llvm::concat<Type>(llvm::to_vector(op->getOperandTypes()),
                                   llvm::to_vector(op->getResultTypes()))) {
    Type element = elementTypeOf(t);
    if (!expected)
      expected = element;
    else if (element != expected)
      return op->emitOpError(
                 "operands and result must share one element type, got ")
             << expected << " and " << element;
  }
  return success();
}

static LogicalResult verifyResultShape(Operation *op,
                                       ArrayRef<int64_t> expected) {
  auto actual = cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  if (actual != expected)
    return op->emitOpError("result shape ")
           << fmt(actual) << " does not match the expected shape "
           << fmt(expected);
  return success();
}

static LogicalResult verifyDimInRange(Operation *op, StringRef what,
                                      int64_t dim, int64_t rank) {
  if (dim < 0 || dim >= rank)
    return op->emitOpError()
           << what << " " << dim << " is out of range for a rank-" << rank
           << " input";
  return success();
}

/// Broadcasts the shapes of `operands` pairwise, naming the operands of the
/// first conflict, and checks the result has the broadcast shape.
static LogicalResult verifyBroadcastShapes(Operation *op, ArrayRef<Value> operands,
                                           ArrayRef<StringRef> names) {
  SmallVector<int64_t> shape(shapeOf(operands[0]));
  for (size_t i = 1; i < operands.size(); ++i) {
    BroadcastConflict conflict{};
    auto next = broadcastShapes(shape, shapeOf(operands[i]), &conflict);
    if (!next) {
      ArrayRef<int64_t> rhs = shapeOf(operands[i]);
      // Name the conflicting dimension of the later operand as written.
      return op->emitOpError("operands are not broadcast-compatible: ")
             << names[i] << " " << fmt(rhs) << " has size "
             << rhs[conflict.rhsDim] << " in dimension " << conflict.rhsDim
             << " where the other operands have " << shape[conflict.lhsDim];
    }
    shape = std::move(*next);
  }
  return verifyResultShape(op, shape);
}

static LogicalResult verifyBroadcast(Operation *op, ArrayRef<Value> operands,
                                     ArrayRef<StringRef> names) {
  if (failed(verifySameElementType(op)))
    return failure();
  return verifyBroadcastShapes(op, operands, names);
}

//===----------------------------------------------------------------------===//
// Custom assembly: `T` when both operands and the result share a type, else
// `T1, T2 -> T3`.
//===----------------------------------------------------------------------===//

static ParseResult parseBroadcastTypes(OpAsmParser &parser, Type &lhs,
                                       Type &rhs, Type &result) {
  if (parser.parseType(lhs))
    return failure();
  if (succeeded(parser.parseOptionalComma()))
    return failure(parser.parseType(rhs) || parser.parseArrow() ||
                   parser.parseType(result));
  rhs = result = lhs;
  return success();
}

static void printBroadcastTypes(OpAsmPrinter &printer, Operation *, Type lhs,
                                Type rhs, Type result) {
  if (lhs == rhs && rhs == result) {
    printer << lhs;
    return;
  }
  printer << lhs << ", " << rhs << " -> " << result;
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::verify() {
  if (!isa<DenseElementsAttr, DenseResourceElementsAttr>(getValue()))
    return emitOpError(
        "value must be a dense or dense_resource elements attribute");
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult ClampOp::verify() {
  std::optional<double> lo, hi;
  if (auto min = getMinAttr())
    lo = min.getValueAsDouble();
  if (auto max = getMaxAttr())
    hi = max.getValueAsDouble();
  if (!lo && !hi)
    return emitOpError("needs at least one of 'min' and 'max'");
  for (std::optional<double> bound : {lo, hi})
    if (bound && std::isnan(*bound))
      return emitOpError("bounds must not be NaN");
  if (lo && hi && *lo > *hi)
    return emitOpError("min (")
           << *lo << ") is greater than max (" << *hi << ")";
  if (isa<IntegerType>(elementTypeOf(getType())))
    for (std::optional<double> bound : {lo, hi})
      if (bound && std::trunc(*bound) != *bound)
        return emitOpError("an integer tensor needs integral bounds, got ")
               << *bound;
  return success();
}

LogicalResult CastOp::verify() {
  if (getInput().getType().getShape() != getType().getShape())
    return emitOpError("result shape ")
           << fmt(shapeOf(getType())) << " must equal the input shape "
           << fmt(shapeOf(getInput()));
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

#define KILN_BINARY_VERIFIER(OP)                                               \
  LogicalResult OP::verify() {                                                 \
    return verifyBroadcast(*this, {getLhs(), getRhs()}, {"lhs", "rhs"});       \
  }
KILN_BINARY_VERIFIER(AddOp)
KILN_BINARY_VERIFIER(SubOp)
KILN_BINARY_VERIFIER(MulOp)
KILN_BINARY_VERIFIER(DivOp)
KILN_BINARY_VERIFIER(MaxOp)
KILN_BINARY_VERIFIER(MinOp)
KILN_BINARY_VERIFIER(PowOp)
#undef KILN_BINARY_VERIFIER

#define KILN_COMPARE_VERIFIER(OP)                                              \
  LogicalResult OP::verify() {                                                 \
    if (elementTypeOf(getLhs().getType()) != elementTypeOf(getRhs().getType())) \
      return emitOpError("compares ")                                          \
             << elementTypeOf(getLhs().getType()) << " with "                  \
             << elementTypeOf(getRhs().getType())                              \
             << ": operands must share one element type";                     \
    return verifyBroadcastShapes(*this, {getLhs(), getRhs()}, {"lhs", "rhs"}); \
  }
KILN_COMPARE_VERIFIER(EqOp)
KILN_COMPARE_VERIFIER(NeOp)
KILN_COMPARE_VERIFIER(LtOp)
KILN_COMPARE_VERIFIER(LeOp)
KILN_COMPARE_VERIFIER(GtOp)
KILN_COMPARE_VERIFIER(GeOp)
#undef KILN_COMPARE_VERIFIER

LogicalResult BroadcastOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  return verifyBroadcastShapes(*this, {getInput(), getResult()}, {"input", "result"});
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    if (dense.isSplat())
      return DenseElementsAttr::get(getType(), dense.getSplatValue<Attribute>());
  return {};
}

LogicalResult AttentionOp::verify() {
  Type element = elementTypeOf(getQuery().getType());
  if (elementTypeOf(getKey().getType()) != element ||
      elementTypeOf(getValue().getType()) != element || elementTypeOf(getType()) != element)
    return emitOpError("query, key, value and result must share one element type");
  int64_t rank = rankOf(getQuery());
  if (rank < 3)
    return emitOpError("query must have rank >= 3 ([..., Sq, D]), got shape ")
           << fmt(shapeOf(getQuery()));
  if (rankOf(getKey()) != rank || rankOf(getValue()) != rank)
    return emitOpError("query, key and value must have one rank, got ")
           << fmt(shapeOf(getQuery())) << ", " << fmt(shapeOf(getKey())) << ", "
           << fmt(shapeOf(getValue()));
  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKey()), v = shapeOf(getValue());
  if (q.drop_back(2) != k.drop_back(2) || q.drop_back(2) != v.drop_back(2))
    return emitOpError("query, key and value must share their leading dimensions, got ")
           << fmt(q) << ", " << fmt(k) << ", " << fmt(v);
  if (q.back() != k.back())
    return emitOpError("query has head size ") << q.back() << " but key has " << k.back();
  if (k[rank - 2] != v[rank - 2])
    return emitOpError("key has ") << k[rank - 2] << " positions but value has "
                                   << v[rank - 2];
  if (getScale().convertToDouble() <= 0)
    return emitOpError("scale must be positive");
  SmallVector<int64_t> scores(q.drop_back(1));
  scores.push_back(k[rank - 2]);
  if (Value mask = getMask()) {
    Type maskElement = elementTypeOf(mask.getType());
    if (!maskElement.isInteger(1) && maskElement != element)
      return emitOpError("mask must be boolean or of the query's element type, got ")
             << maskElement;
    auto broadcast = broadcastShapes(scores, shapeOf(mask));
    if (!broadcast || ArrayRef<int64_t>(*broadcast) != ArrayRef<int64_t>(scores))
      return emitOpError("mask ") << fmt(shapeOf(mask)) << " does not broadcast to the scores "
                                  << fmt(scores);
  }
  SmallVector<int64_t> expected(q.drop_back(1));
  expected.push_back(v.back());
  return verifyResultShape(*this, expected);
}

LogicalResult GatherOp::verify() {
  if (elementTypeOf(getTable().getType()) != elementTypeOf(getType()))
    return emitOpError("result must have the table's element type");
  if (rankOf(getTable()) < 1)
    return emitOpError("table must have rank >= 1");
  SmallVector<int64_t> expected(shapeOf(getIndices()));
  ArrayRef<int64_t> table = shapeOf(getTable());
  expected.append(table.begin() + 1, table.end());
  return verifyResultShape(*this, expected);
}

/// The raw bytes of a constant's elements (dense, splat expanded, or a
/// resource blob), or nothing.
std::optional<std::vector<char>> kiln::constantValueBytes(Attribute value, RankedTensorType type) {
  if (!value || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  if (bits % 8 != 0)
    return std::nullopt;
  size_t bytes = bits / 8, count = type.getNumElements();
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    ArrayRef<char> raw = dense.getRawData();
    if (raw.size() != (dense.isSplat() ? bytes : bytes * count))
      return std::nullopt;
    std::vector<char> out(bytes * count);
    for (size_t i = 0; i < count; ++i)
      std::memcpy(out.data() + i * bytes, raw.data() + (dense.isSplat() ? 0 : i * bytes), bytes);
    return out;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
      if (blob->getData().size() == bytes * count)
        return std::vector<char>(blob->getData().begin(), blob->getData().end());
  return std::nullopt;
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  // Embedding rows picked by constant ids (position and token-type
  // embeddings): a constant.
  auto tableType = cast<RankedTensorType>(getTable().getType());
  auto indexType = cast<RankedTensorType>(getIndices().getType());
  auto indices = dyn_cast_if_present<DenseElementsAttr>(adaptor.getIndices());
  if (!indices || tableType.getElementType().isInteger(1))
    return {};
  std::optional<std::vector<char>> table = constantValueBytes(adaptor.getTable(), tableType);
  if (!table)
    return {};
  int64_t rows = tableType.getShape()[0];
  size_t rowBytes = rows ? table->size() / rows : 0;
  std::vector<char> out;
  out.reserve(rowBytes * indexType.getNumElements());
  for (APInt index : indices.getValues<APInt>()) {
    int64_t i = index.getSExtValue();
    if (i < 0 || i >= rows)
      return {};
    out.insert(out.end(), table->begin() + i * rowBytes, table->begin() + (i + 1) * rowBytes);
  }
  return DenseElementsAttr::getFromRawBuffer(getType(), out);
}

LogicalResult WhereOp::verify() {
  Type valueElement = elementTypeOf(getOnTrue().getType());
  if (valueElement != elementTypeOf(getOnFalse().getType()) ||
      valueElement != elementTypeOf(getType()))
    return emitOpError(
               "on_true, on_false and the result must share one element "
               "type, got ")
           << valueElement << ", " << elementTypeOf(getOnFalse().getType())
           << " and " << elementTypeOf(getType());
  return verifyBroadcastShapes(*this, {getCondition(), getOnTrue(), getOnFalse()},
                               {"condition", "on_true", "on_false"});
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  // fp16 and bf16 operands may give their fp32 accumulators unrounded (a
  // layer norm folded into the linear corrects them before rounding).
  Type operands = elementTypeOf(getInput().getType());
  Type result = elementTypeOf(getType());
  if (result != operands && !(result.isF32() && (operands.isF16() || operands.isBF16())))
    return emitOpError("result must have the operands' element type, or f32 for f16 or bf16 "
                       "operands, got ")
           << operands << " and " << result;
  for (Value operand : getOperands())
    if (elementTypeOf(operand.getType()) != operands)
      return emitOpError("operands must share one element type, got ")
             << operands << " and " << elementTypeOf(operand.getType());
  int64_t rank = rankOf(getInput());
  if (rank < 1)
    return emitOpError("input must have rank >= 1");
  if (rankOf(getWeight()) != 2)
    return emitOpError(
               "weight must be 2-D [out_features, in_features], got shape ")
           << fmt(shapeOf(getWeight()));
  ArrayRef<int64_t> in = shapeOf(getInput()), w = shapeOf(getWeight());
  if (in.back() != w[1])
    return emitOpError("input's last dimension (")
           << in.back() << ") does not match the weight's in_features (" << w[1]
           << ")";
  if (getBias() && shapeOf(getBias()) != ArrayRef<int64_t>{w[0]})
    return emitOpError("bias must have shape [")
           << w[0] << "] (out_features), got " << fmt(shapeOf(getBias()));
  SmallVector<int64_t> expected(in.drop_back());
  expected.push_back(w[0]);
  return verifyResultShape(*this, expected);
}

/// Checks a window attribute: `count` entries, each at least `minimum`.
static LogicalResult verifyWindowAttr(Operation *op, StringRef name, ArrayRef<int64_t> values,
                                      size_t count, int64_t minimum) {
  if (values.size() != count)
    return op->emitOpError() << name << " must have " << count << " entries, got "
                             << values.size();
  for (int64_t v : values)
    if (v < minimum)
      return op->emitOpError() << name << " entries must be >= " << minimum << ", got "
                               << fmt(values);
  return success();
}

LogicalResult Conv2dOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  if (rankOf(getInput()) != 4)
    return emitOpError("input must be 4-D [N, H, W, C], got shape ") << fmt(shapeOf(getInput()));
  if (rankOf(getWeight()) != 4)
    return emitOpError("weight must be 4-D [O, KH, KW, C / groups], got shape ")
           << fmt(shapeOf(getWeight()));
  if (failed(verifyWindowAttr(*this, "strides", getStrides(), 2, 1)) ||
      failed(verifyWindowAttr(*this, "padding", getPadding(), 4, 0)) ||
      failed(verifyWindowAttr(*this, "dilation", getDilation(), 2, 1)))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getInput()), w = shapeOf(getWeight());
  int64_t groups = getGroups();
  if (groups < 1 || in[3] % groups != 0 || w[0] % groups != 0)
    return emitOpError("groups (") << groups << ") must divide the input channels (" << in[3]
                                   << ") and the output channels (" << w[0] << ")";
  if (w[3] != in[3] / groups)
    return emitOpError("weight has ")
           << w[3] << " input channels per group; the input has " << in[3] << " in "
           << groups << (groups == 1 ? " group" : " groups");
  if (getBias() && shapeOf(getBias()) != ArrayRef<int64_t>{w[0]})
    return emitOpError("bias must have shape [") << w[0] << "], got "
                                                 << fmt(shapeOf(getBias()));
  ArrayRef<int64_t> s = getStrides(), p = getPadding(), d = getDilation();
  int64_t oh = convOutputSize(in[1], w[1], s[0], p[0], p[2], d[0]);
  int64_t ow = convOutputSize(in[2], w[2], s[1], p[1], p[3], d[1]);
  if (oh <= 0 || ow <= 0)
    return emitOpError("the ") << w[1] << "x" << w[2] << " window does not fit the padded "
                               << in[1] << "x" << in[2] << " input";
  return verifyResultShape(*this, {in[0], oh, ow, w[0]});
}

LogicalResult Pool2dOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  if (rankOf(getInput()) != 4)
    return emitOpError("input must be 4-D [N, H, W, C], got shape ") << fmt(shapeOf(getInput()));
  if (failed(verifyWindowAttr(*this, "kernel", getKernel(), 2, 1)) ||
      failed(verifyWindowAttr(*this, "strides", getStrides(), 2, 1)) ||
      failed(verifyWindowAttr(*this, "padding", getPadding(), 4, 0)))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getInput()), k = getKernel(), s = getStrides(),
                    p = getPadding();
  if (p[0] * 2 > k[0] || p[2] * 2 > k[0] || p[1] * 2 > k[1] || p[3] * 2 > k[1])
    return emitOpError("padding ") << fmt(p) << " must be at most half the kernel "
                                   << fmt(k);
  if (getCountIncludePad() && getKind() != PoolKind::avg)
    return emitOpError("count_include_pad applies to average pooling only");
  int64_t oh = poolOutputSize(in[1], k[0], s[0], p[0], p[2], getCeilMode());
  int64_t ow = poolOutputSize(in[2], k[1], s[1], p[1], p[3], getCeilMode());
  if (oh <= 0 || ow <= 0)
    return emitOpError("the ") << k[0] << "x" << k[1] << " window does not fit the padded "
                               << in[1] << "x" << in[2] << " input";
  return verifyResultShape(*this, {in[0], oh, ow, in[3]});
}

/// Checks the `[..., M, K] x [..., K, N]` contraction and returns the matrix
/// part of the result shape, `[M, N]`.
static FailureOr<SmallVector<int64_t>> verifyContraction(Operation *op,
                                                         Value lhs, Value rhs) {
  ArrayRef<int64_t> l = shapeOf(lhs), r = shapeOf(rhs);
  if (l.back() != r[r.size() - 2])
    return op->emitOpError("contracting dimensions differ: lhs has K = ")
           << l.back() << ", rhs has K = " << r[r.size() - 2];
  return SmallVector<int64_t>{l[l.size() - 2], r.back()};
}

LogicalResult MatmulOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  std::pair<StringRef, Value> named[] = {{"lhs", getLhs()}, {"rhs", getRhs()}};
  for (auto [name, value] : named)
    if (rankOf(value) != 2)
      return emitOpError() << name << " must be 2-D, got shape "
                           << fmt(shapeOf(value))
                           << " (batched products are kiln.batch_matmul)";
  auto mn = verifyContraction(*this, getLhs(), getRhs());
  if (failed(mn))
    return failure();
  return verifyResultShape(*this, *mn);
}

LogicalResult BatchMatmulOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  std::pair<StringRef, Value> named[] = {{"lhs", getLhs()}, {"rhs", getRhs()}};
  for (auto [name, value] : named)
    if (rankOf(value) < 2)
      return emitOpError() << name << " must have rank >= 2, got shape "
                           << fmt(shapeOf(value));
  if (rankOf(getLhs()) < 3 && rankOf(getRhs()) < 3)
    return emitOpError("needs a batch dimension on at least one operand "
                       "(2-D products are kiln.matmul)");
  auto mn = verifyContraction(*this, getLhs(), getRhs());
  if (failed(mn))
    return failure();
  ArrayRef<int64_t> lBatch = shapeOf(getLhs()).drop_back(2);
  ArrayRef<int64_t> rBatch = shapeOf(getRhs()).drop_back(2);
  BroadcastConflict conflict{};
  auto batch = broadcastShapes(lBatch, rBatch, &conflict);
  if (!batch)
    return emitOpError(
               "batch dimensions are not broadcast-compatible: lhs has ")
           << lBatch[conflict.lhsDim] << " in dimension " << conflict.lhsDim
           << ", rhs has " << rBatch[conflict.rhsDim] << " in dimension "
           << conflict.rhsDim;
  batch->append(mn->begin(), mn->end());
  return verifyResultShape(*this, *batch);
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

template <typename ReduceOp> static LogicalResult verifyReduce(ReduceOp op) {
  if (failed(verifySameElementType(op)))
    return failure();
  ArrayRef<int64_t> dims = op.getDims();
  int64_t rank = rankOf(op.getInput());
  if (dims.empty())
    return op.emitOpError("needs at least one dimension to reduce");
  for (int64_t dim : dims)
    if (failed(verifyDimInRange(op, "dimension", dim, rank)))
      return failure();
  for (size_t i = 1; i < dims.size(); ++i)
    if (dims[i] <= dims[i - 1])
      return op.emitOpError("dims must be sorted and distinct, got ")
             << fmt(dims);
  SmallVector<int64_t> expected;
  ArrayRef<int64_t> in = shapeOf(op.getInput());
  for (int64_t d = 0; d < rank; ++d) {
    if (!llvm::is_contained(dims, d))
      expected.push_back(in[d]);
    else if (op.getKeepdim())
      expected.push_back(1);
  }
  return verifyResultShape(op, expected);
}

LogicalResult ReduceSumOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMeanOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduce(*this); }

LogicalResult SoftmaxOp::verify() {
  return verifyDimInRange(*this, "dim", getDim(), getType().getRank());
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  if (getInput().getType() != getType())
    return emitOpError("result type ")
           << getType() << " must equal the input type "
           << getInput().getType();
  int64_t rank = getType().getRank();
  if (failed(verifyDimInRange(*this, "axis", getAxis(), rank)))
    return failure();
  ArrayRef<int64_t> normalized = getType().getShape().drop_front(getAxis());
  std::pair<StringRef, Value> named[] = {{"weight", getWeight()},
                                         {"bias", getBias()}};
  for (auto [name, value] : named)
    if (value && shapeOf(value) != normalized)
      return emitOpError() << name << " shape " << fmt(shapeOf(value))
                           << " must equal the normalized shape "
                           << fmt(normalized);
  if (!(getEps().convertToDouble() > 0.0))
    return emitOpError("eps must be positive, got ")
           << getEps().convertToDouble();
  if (getRms() && getBias())
    return emitOpError("rms normalization takes no bias");
  return success();
}

void RowMomentsOp::build(OpBuilder &builder, OperationState &state, Value input, double eps,
                         bool rms) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape = llvm::to_vector(type.getShape());
  if (!shape.empty())
    shape.back() = 1;
  auto statistics = RankedTensorType::get(shape, builder.getF32Type());
  build(builder, state, statistics, statistics, input, builder.getF64FloatAttr(eps),
        rms ? builder.getUnitAttr() : UnitAttr());
}

LogicalResult RowMomentsOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  if (input.getRank() < 1 || input.getShape().back() < 1)
    return emitOpError("needs an input with a non-empty last dimension, got shape ")
           << fmt(input.getShape());
  SmallVector<int64_t> expected = llvm::to_vector(input.getShape());
  expected.back() = 1;
  if (shapeOf(getMean()) != ArrayRef<int64_t>(expected))
    return emitOpError("statistics must have shape ")
           << fmt(expected) << " (the input's with its last dimension 1), got "
           << fmt(shapeOf(getMean()));
  if (!(getEps().convertToDouble() > 0.0))
    return emitOpError("eps must be positive, got ") << getEps().convertToDouble();
  return success();
}

ConstantOp kiln::makeFloatConstant(OpBuilder &builder, Location loc, RankedTensorType type,
                                   ArrayRef<double> values, StringRef name) {
  auto element = cast<FloatType>(type.getElementType());
  const unsigned bytes = element.getWidth() / 8;
  std::vector<char> data(values.size() * bytes);
  for (size_t i = 0; i < values.size(); ++i) {
    APFloat v(values[i]);
    bool lossy;
    v.convert(element.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lossy);
    uint64_t raw = v.bitcastToAPInt().getZExtValue();
    std::memcpy(data.data() + i * bytes, &raw, bytes);
  }
  return makeRawConstant(builder, loc, type, data, name);
}

ConstantOp kiln::makeRawConstant(OpBuilder &builder, Location loc, RankedTensorType type,
                                 ArrayRef<char> bytes, StringRef name) {
  auto attr = DenseResourceElementsAttr::get(
      type, name, HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, /*align=*/64));
  return ConstantOp::create(builder, loc, attr);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  int64_t from = getInput().getType().getNumElements();
  int64_t to = getType().getNumElements();
  if (from != to)
    return emitOpError("element count changes from ") << from << " to " << to;
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // A reshape of a reshape needs only the first one's input.
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  // Reshaping a constant only changes its type.
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(getType());
  return {};
}

LogicalResult PermuteOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  ArrayRef<int64_t> perm = getPermutation();
  int64_t rank = rankOf(getInput());
  if (static_cast<int64_t>(perm.size()) != rank)
    return emitOpError("permutation has ")
           << perm.size() << " entries for a rank-" << rank << " input";
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  for (int64_t i = 0; i < rank; ++i)
    if (sorted[i] != i)
      return emitOpError("permutation ")
             << fmt(perm) << " is not a permutation of 0.." << rank - 1;
  ArrayRef<int64_t> in = shapeOf(getInput());
  SmallVector<int64_t> expected;
  for (int64_t p : perm)
    expected.push_back(in[p]);
  return verifyResultShape(*this, expected);
}

OpFoldResult PermuteOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    if (dense.isSplat())
      return DenseElementsAttr::get(getType(), dense.getSplatValue<Attribute>());
  bool identity = llvm::all_of(llvm::enumerate(perm), [](auto entry) {
    return static_cast<int64_t>(entry.index()) == entry.value();
  });
  if (identity)
    return getInput();
  // permute(permute(x, inner), outer): result dim i is x's dim inner[outer[i]].
  if (auto producer = getInput().getDefiningOp<PermuteOp>()) {
    ArrayRef<int64_t> inner = producer.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(inner[p]);
    getInputMutable().assign(producer.getInput());
    setPermutation(composed);
    return getResult();
  }
  return {};
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  if (failed(verifySameElementType(*this)))
    return failure();
  int64_t rank = rankOf(getInputs()[0]);
  if (failed(verifyDimInRange(*this, "dim", getDim(), rank)))
    return failure();
  SmallVector<int64_t> expected(shapeOf(getInputs()[0]));
  for (auto [index, input] : llvm::enumerate(getInputs().drop_front())) {
    ArrayRef<int64_t> shape = shapeOf(input);
    if (static_cast<int64_t>(shape.size()) != rank)
      return emitOpError("input ") << index + 1 << " has rank " << shape.size()
                                   << " where input 0 has rank " << rank;
    for (int64_t d = 0; d < rank; ++d)
      if (d != static_cast<int64_t>(getDim()) && shape[d] != expected[d])
        return emitOpError("input ")
               << index + 1 << " has size " << shape[d] << " in dimension " << d
               << " where input 0 has " << expected[d];
    expected[getDim()] += shape[getDim()];
  }
  return verifyResultShape(*this, expected);
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return getInputs()[0];
  return {};
}

LogicalResult CumsumOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  if (in.getShape() != out.getShape())
    return emitOpError("result shape must be the input's");
  if (getDim() >= static_cast<uint64_t>(in.getRank()))
    return emitOpError("dim ") << getDim() << " is out of range for rank " << in.getRank();
  if (isa<FloatType>(in.getElementType()) && !isa<FloatType>(out.getElementType()))
    return emitOpError("running sums of floats stay floats");
  return success();
}

LogicalResult SliceOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  int64_t rank = rankOf(getInput());
  ArrayRef<int64_t> in = shapeOf(getInput()), out = getType().getShape();
  std::pair<StringRef, ArrayRef<int64_t>> named[] = {{"offsets", getOffsets()},
                                                     {"strides", getStrides()}};
  for (auto [name, list] : named)
    if (static_cast<int64_t>(list.size()) != rank)
      return emitOpError() << name << " has " << list.size()
                           << " entries for a rank-" << rank << " input";
  if (static_cast<int64_t>(out.size()) != rank)
    return emitOpError("result rank ")
           << out.size() << " must equal the input rank " << rank;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t offset = getOffsets()[d], stride = getStrides()[d];
    if (stride < 1)
      return emitOpError("stride in dimension ")
             << d << " must be >= 1, got " << stride;
    if (offset < 0)
      return emitOpError("offset in dimension ")
             << d << " must be non-negative, got " << offset;
    if (out[d] > 0 && offset + (out[d] - 1) * stride >= in[d])
      return emitOpError("dimension ")
             << d << ": " << out[d] << " elements from offset " << offset
             << " with stride " << stride << " run past the input size "
             << in[d];
  }
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  bool whole = getInput().getType() == getType() &&
               llvm::all_of(getOffsets(), [](int64_t o) { return o == 0; }) &&
               llvm::all_of(getStrides(), [](int64_t s) { return s == 1; });
  return whole ? OpFoldResult(getInput()) : OpFoldResult();
}

#define GET_OP_CLASSES
#include "kiln/Dialect/Kiln/KilnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Queries shared by passes and code generation
//===----------------------------------------------------------------------===//

std::optional<double> kiln::splatFloatValue(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

ArrayRef<int64_t> kiln::reducedDims(Operation *reduce) {
  return llvm::TypeSwitch<Operation *, ArrayRef<int64_t>>(reduce)
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>([](auto op) { return op.getDims(); })
      .Default([](Operation *) { return ArrayRef<int64_t>(); });
}
