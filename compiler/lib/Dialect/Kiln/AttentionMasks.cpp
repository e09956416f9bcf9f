//===- AttentionMasks.cpp - constant masks that say "causal" --------------===//
//
// Hugging Face's GPT-2, Llama and their kin hand scaled_dot_product_attention
// a causal mask as a tensor: [1 or B, 1, S, S], 0 where the key is at or before
// the query and the dtype's lowest value after it (or a boolean tril).
// Freezing folds it to a constant. Read as a mask, it costs the kernel a
// load per score and the blocks above the diagonal, which it cannot skip;
// the causal flag skips them (half the products at S = 128) and reads
// nothing. The two compute the same softmax: an additive value of -1e4 or
// less makes exp() underflow to exactly 0 in fp32 for any score a model
// produces, and every row keeps its diagonal, so no row is all masked.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace kiln;

std::optional<std::vector<double>> kiln::constantElements(ConstantOp constant) {
  auto type = cast<RankedTensorType>(constant.getType());
  Type element = type.getElementType();
  const int64_t count = type.getNumElements();
  std::vector<double> values;
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue())) {
    if (auto floatType = dyn_cast<FloatType>(element)) {
      if (dense.isSplat())
        return std::vector<double>(count, dense.getSplatValue<APFloat>().convertToDouble());
      for (const APFloat &v : dense.getValues<APFloat>())
        values.push_back(v.convertToDouble());
      return values;
    }
    if (auto integer = dyn_cast<IntegerType>(element)) {
      auto read = [&](const APInt &v) {
        return integer.getWidth() == 1 ? static_cast<double>(!v.isZero())
                                       : static_cast<double>(v.getSExtValue());
      };
      if (dense.isSplat())
        return std::vector<double>(count, read(dense.getSplatValue<APInt>()));
      for (const APInt &v : dense.getValues<APInt>())
        values.push_back(read(v));
      return values;
    }
    return std::nullopt;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue());
  AsmResourceBlob *blob = resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob || !element.isIntOrFloat())
    return std::nullopt;
  const unsigned width = element.getIntOrFloatBitWidth();
  const unsigned bytes = width == 1 ? 1 : width / 8;
  ArrayRef<char> data = blob->getData();
  if (width % 8 != 0 && width != 1)
    return std::nullopt;
  if (data.size() != static_cast<size_t>(count) * bytes)
    return std::nullopt;
  values.reserve(count);
  for (int64_t i = 0; i < count; ++i) {
    uint64_t raw = 0;
    std::memcpy(&raw, data.data() + i * bytes, bytes);
    if (width == 1)
      values.push_back(raw != 0);
    else if (auto floatType = dyn_cast<FloatType>(element))
      values.push_back(
          APFloat(floatType.getFloatSemantics(), APInt(width, raw)).convertToDouble());
    else
      values.push_back(static_cast<double>(APInt(width, raw).getSExtValue()));
  }
  return values;
}

namespace {

/// An additive mask entry at or below this removes its key: exp() of it
/// plus any score under ~1e4 - 88 is 0 in fp32.
constexpr double kRemovedKey = -1.0e4;

/// Whether `mask` is the [S, S] causal mask in every batch and head of
/// attention whose queries and keys both number S (Hugging Face expands it
/// over the batch: [B, 1, S, S]).
bool isCausalMask(Value mask, int64_t queries, int64_t keys) {
  auto constant = mask.getDefiningOp<ConstantOp>();
  if (!constant || queries != keys)
    return false;
  auto type = cast<RankedTensorType>(mask.getType());
  ArrayRef<int64_t> shape = type.getShape();
  if (shape.size() < 2 || shape[shape.size() - 2] != queries || shape.back() != keys)
    return false;
  std::optional<std::vector<double>> values = constantElements(constant);
  if (!values)
    return false;
  const bool boolean = type.getElementType().isInteger(1);
  const int64_t slices = type.getNumElements() / (queries * keys);
  for (int64_t slice = 0; slice < slices; ++slice)
    for (int64_t query = 0; query < queries; ++query)
      for (int64_t key = 0; key < keys; ++key) {
        double value = (*values)[(slice * queries + query) * keys + key];
        bool kept = boolean ? value != 0.0 : value == 0.0;
        bool removed = boolean ? value == 0.0 : value <= kRemovedKey;
        if (key <= query ? !kept : !removed)
          return false;
      }
  return true;
}

struct CausalMaskToFlag : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
    Value mask = op.getMask();
    if (!mask)
      return failure();
    ArrayRef<int64_t> query = cast<RankedTensorType>(op.getQuery().getType()).getShape();
    ArrayRef<int64_t> key = cast<RankedTensorType>(op.getKey().getType()).getShape();
    if (!isCausalMask(mask, query[query.size() - 2], key[key.size() - 2]))
      return failure();
    rewriter.replaceOpWithNewOp<AttentionOp>(op, op.getType(), op.getQuery(), op.getKey(),
                                             op.getValue(), Value(), op.getScaleAttr(),
                                             rewriter.getUnitAttr());
    return success();
  }
};

/// Whether every element of the constant `value` removes its key: false, or
/// an additive -1e4 or less.
bool removesEveryKey(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  std::optional<std::vector<double>> values =
      constant ? constantElements(constant) : std::nullopt;
  if (!values)
    return false;
  const bool boolean = cast<RankedTensorType>(value.getType()).getElementType().isInteger(1);
  for (double v : *values)
    if (boolean ? v != 0.0 : v > kRemovedKey)
      return false;
  return true;
}

/// A mask made by a where whose condition is a constant, from a narrower
/// mask the scores broadcast over as well:
/// - a condition that is one value throughout chooses one operand:
///   transformers builds BERT's padding mask as where(true [1, 1, S, 1],
///   keys [B, 1, 1, S], false), a [B, 1, S, S] tensor written by its own
///   kernel and read per score, where [B, 1, 1, S] is read per key;
/// - a causal condition whose other operand removes every key is the chosen
///   operand with the causal flag: GPT-2's and Llama's mask with padding,
///   where(tril [1, 1, S, S], keys [B, 1, 1, S], false).
struct MaskThroughConstantWhere : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
    Value mask = op.getMask();
    auto where = mask ? mask.getDefiningOp<WhereOp>() : WhereOp();
    auto condition = where ? where.getCondition().getDefiningOp<ConstantOp>() : ConstantOp();
    std::optional<std::vector<double>> values =
        condition ? constantElements(condition) : std::nullopt;
    if (!values || values->empty())
      return failure();
    Value narrower;
    bool causal = op.getCausal();
    if (llvm::all_of(*values, [](double v) { return v != 0.0; })) {
      narrower = where.getOnTrue();
    } else if (llvm::all_of(*values, [](double v) { return v == 0.0; })) {
      narrower = where.getOnFalse();
    } else {
      ArrayRef<int64_t> query = cast<RankedTensorType>(op.getQuery().getType()).getShape();
      ArrayRef<int64_t> key = cast<RankedTensorType>(op.getKey().getType()).getShape();
      if (!isCausalMask(where.getCondition(), query[query.size() - 2], key[key.size() - 2]) ||
          !removesEveryKey(where.getOnFalse()))
        return failure();
      narrower = where.getOnTrue();
      causal = true;
    }
    auto narrowerType = cast<RankedTensorType>(narrower.getType());
    auto maskType = cast<RankedTensorType>(mask.getType());
    // The same element type, and no more dimensions than the mask (each of
    // its sizes the mask's or 1), so the scores broadcast over it alike.
    if (narrowerType.getElementType() != maskType.getElementType() ||
        narrowerType.getRank() > maskType.getRank())
      return failure();
    ArrayRef<int64_t> outer = maskType.getShape().take_back(narrowerType.getRank());
    for (auto [size, full] : llvm::zip(narrowerType.getShape(), outer))
      if (size != full && size != 1)
        return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.getMaskMutable().assign(narrower);
      if (causal)
        op.setCausal(true);
    });
    return success();
  }
};

} // namespace

void AttentionOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<CausalMaskToFlag, MaskThroughConstantWhere>(context);
}
