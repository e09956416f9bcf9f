//===- MergeProjections.cpp - q/k/v projections into one GEMM -------------===//
//
// Mechanics: concatenate the raw bytes of constant [N_i, K] weights (and
// [N_i] biases) along N; replace each linear by a slice of the merged one's
// last dimension. Policy: only linears whose results reach attention
// operands through view ops alone, since then the slices cost nothing.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Passes.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Dialect/Kiln/StridedView.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/MapVector.h"

#include <cstring>

#define DEBUG_TYPE "kiln-merge-projections"

namespace kiln {
#define GEN_PASS_DEF_KILNMERGEPROJECTIONS
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The bytes of a constant, row-major (a splat expanded), or nothing.
std::optional<std::vector<char>> rawBytes(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  return constantValueBytes(constant.getValue(), cast<RankedTensorType>(constant.getType()));
}

/// Whether every use of `value` ends, through single-use view ops, as the
/// query, key or value of a kiln.attention.
bool onlyFeedsAttention(Value value) {
  if (value.use_empty())
    return false;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto attention = dyn_cast<AttentionOp>(user)) {
      if (use.getOperandNumber() > 2) // the mask
        return false;
      continue;
    }
    if (!isa<PermuteOp, SliceOp, ReshapeOp>(user) || !user->getResult(0).hasOneUse() ||
        !onlyFeedsAttention(user->getResult(0)))
      return false;
  }
  return true;
}

/// What must agree for two projections to merge.
struct Signature {
  Value input;
  int64_t inner;
  Type element;
  bool biased;
  bool operator==(const Signature &other) const {
    return input == other.input && inner == other.inner && element == other.element &&
           biased == other.biased;
  }
};

bool mergeable(LinearOp linear) {
  if (linear->hasAttr(attr::kNoFuse) || !linear.getWeight().getDefiningOp<ConstantOp>() ||
      (linear.getBias() && !linear.getBias().getDefiningOp<ConstantOp>()))
    return false;
  return onlyFeedsAttention(linear.getResult());
}

Value resourceConstant(OpBuilder &builder, Location loc, RankedTensorType type,
                       ArrayRef<char> bytes, StringRef name) {
  auto attr = DenseResourceElementsAttr::get(
      type, name, HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, /*align=*/64));
  return ConstantOp::create(builder, loc, attr);
}

/// Merges `linears` (same signature, in block order) into one.
LogicalResult merge(IRRewriter &rewriter, ArrayRef<LinearOp> linears) {
  std::vector<char> weights, biases;
  int64_t outputs = 0;
  for (LinearOp linear : linears) {
    auto weight = rawBytes(linear.getWeight());
    if (!weight)
      return failure();
    weights.insert(weights.end(), weight->begin(), weight->end());
    if (linear.getBias()) {
      auto bias = rawBytes(linear.getBias());
      if (!bias)
        return failure();
      biases.insert(biases.end(), bias->begin(), bias->end());
    }
    outputs += cast<RankedTensorType>(linear.getWeight().getType()).getShape()[0];
  }
  LinearOp first = linears.front();
  auto weightType = cast<RankedTensorType>(first.getWeight().getType());
  auto resultType = cast<RankedTensorType>(first.getType());
  Location loc = rewriter.getFusedLoc(llvm::to_vector(
      llvm::map_range(linears, [](LinearOp op) { return op.getLoc(); })));
  rewriter.setInsertionPoint(first);
  Value weight = resourceConstant(
      rewriter, loc, weightType.clone({outputs, weightType.getShape()[1]}), weights,
      "merged_projection_weight");
  Value bias;
  if (first.getBias())
    bias = resourceConstant(rewriter, loc,
                            RankedTensorType::get({outputs}, weightType.getElementType()),
                            biases, "merged_projection_bias");
  SmallVector<int64_t> mergedShape(resultType.getShape());
  mergedShape.back() = outputs;
  auto merged = LinearOp::create(rewriter, loc, resultType.clone(mergedShape), first.getInput(),
                                 weight, bias);
  int64_t start = 0, rank = resultType.getRank();
  for (LinearOp linear : linears) {
    SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    offsets.back() = start;
    start += linear.getType().getShape().back();
    rewriter.setInsertionPoint(linear);
    auto slice = SliceOp::create(rewriter, linear.getLoc(), linear.getType(), merged,
                                 rewriter.getDenseI64ArrayAttr(offsets),
                                 rewriter.getDenseI64ArrayAttr(strides));
    rewriter.replaceOp(linear, slice.getResult());
  }
  return success();
}

struct MergeProjectionsPass : kiln::impl::KilnMergeProjectionsBase<MergeProjectionsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    for (Block &block : getOperation().getBody()) {
      llvm::MapVector<Value, SmallVector<LinearOp>> byInput;
      for (auto linear : block.getOps<LinearOp>())
        if (mergeable(linear))
          byInput[linear.getInput()].push_back(linear);
      for (auto &[input, candidates] : byInput) {
        // Groups of one signature, in block order.
        while (!candidates.empty()) {
          auto signatureOf = [](LinearOp op) {
            return Signature{op.getInput(),
                             cast<RankedTensorType>(op.getWeight().getType()).getShape()[1],
                             op.getType().getElementType(), static_cast<bool>(op.getBias())};
          };
          Signature want = signatureOf(candidates.front());
          SmallVector<LinearOp> same, rest;
          for (LinearOp op : candidates)
            (signatureOf(op) == want ? same : rest).push_back(op);
          candidates = rest;
          if (same.size() > 1 && failed(merge(rewriter, same)))
            continue;
        }
      }
    }
  }
};

} // namespace
