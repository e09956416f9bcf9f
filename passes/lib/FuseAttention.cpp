//===- FuseAttention.cpp - the attention pattern into kiln.attention ------===//
//
// Algorithm:
//   1. Match, from each softmax over the last dimension whose only user is
//      the lhs of a batch_matmul `p v`, backwards through an optional mask
//      (add of a broadcast tensor, where(keep, scores, -big), or
//      masked_fill's where(drop, -big, scores)), optional
//      scalar multiplies/divides, to a batch_matmul `q k^T` with k^T a
//      permute swapping the last two dims of k. Every intermediate must have
//      that single use. Rewrite the chain into one kiln.attention.
//   2. Outline every kiln.attention with its elementwise consumers over its
//      result shape as `kiln.fusion attention` (growAnchoredGroup).
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/FusionUtils.h"
#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/Kiln/Broadcast.h"

#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "kiln-fuse-attention"

namespace kiln {
#define GEN_PASS_DEF_KILNFUSEATTENTION
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The value of a rank-0 or splat float constant.
std::optional<double> scalarConstant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

bool singleUse(Value value) { return value.hasOneUse(); }

struct Match {
  Value query, key, value, mask;
  double scale = 1.0;
  bool invertMask = false; // the condition marks what to drop
  BatchMatmulOp output;
  SmallVector<Operation *> chain; // to erase, consumers first
};

/// q k^T: the key, when `transposed` swaps the last two dims of a value.
Value keyOf(Value transposed) {
  auto permute = transposed.getDefiningOp<PermuteOp>();
  if (!permute)
    return {};
  ArrayRef<int64_t> p = permute.getPermutation();
  int64_t rank = p.size();
  for (int64_t i = 0; i < rank - 2; ++i)
    if (p[i] != i)
      return {};
  if (rank < 3 || p[rank - 2] != rank - 1 || p[rank - 1] != rank - 2)
    return {};
  return permute.getInput();
}

std::optional<Match> matchAttention(SoftmaxOp softmax) {
  auto type = cast<RankedTensorType>(softmax.getType());
  if (softmax.getLog() || softmax.getDim() != type.getRank() - 1 || type.getRank() < 3 ||
      !singleUse(softmax.getResult()) || isa<FusionOp>(softmax->getParentOp()))
    return std::nullopt;
  Match m;
  m.output = dyn_cast<BatchMatmulOp>(*softmax->user_begin());
  if (!m.output || m.output.getLhs() != softmax.getResult())
    return std::nullopt;
  m.value = m.output.getRhs();
  m.chain = {m.output, softmax};
  Value scores = softmax.getInput();
  // The mask: additive, or a where that fills masked scores.
  if (auto add = scores.getDefiningOp<AddOp>(); add && singleUse(scores)) {
    for (int side = 0; side < 2; ++side) {
      Value other = add->getOperand(1 - side);
      if (add->getOperand(side).getDefiningOp<BatchMatmulOp>() ||
          add->getOperand(side).getDefiningOp<MulOp>() ||
          add->getOperand(side).getDefiningOp<DivOp>()) {
        m.mask = other;
        scores = add->getOperand(side);
        m.chain.push_back(add);
        break;
      }
    }
  } else if (auto where = scores.getDefiningOp<WhereOp>(); where && singleUse(scores)) {
    // where(keep, scores, -big), or masked_fill's where(drop, -big, scores).
    std::optional<double> fillFalse = scalarConstant(where.getOnFalse());
    std::optional<double> fillTrue = scalarConstant(where.getOnTrue());
    if (fillFalse && *fillFalse <= -1e4) {
      m.mask = where.getCondition();
      scores = where.getOnTrue();
      m.chain.push_back(where);
    } else if (fillTrue && *fillTrue <= -1e4) {
      m.invertMask = true;
      m.mask = where.getCondition();
      scores = where.getOnFalse();
      m.chain.push_back(where);
    }
  }
  // Scalar scales.
  while (singleUse(scores)) {
    Operation *op = scores.getDefiningOp();
    if (!op || !isa<MulOp, DivOp>(op))
      break;
    std::optional<double> c = scalarConstant(op->getOperand(1));
    Value rest = op->getOperand(0);
    if (!c && isa<MulOp>(op)) {
      c = scalarConstant(op->getOperand(0));
      rest = op->getOperand(1);
    }
    if (!c || *c == 0.0)
      return std::nullopt;
    m.scale *= isa<MulOp>(op) ? *c : 1.0 / *c;
    m.chain.push_back(op);
    scores = rest;
  }
  auto product = scores.getDefiningOp<BatchMatmulOp>();
  if (!product || !singleUse(scores))
    return std::nullopt;
  m.chain.push_back(product);
  m.query = product.getLhs();
  m.key = keyOf(product.getRhs());
  if (!m.key || m.scale <= 0)
    return std::nullopt;
  // kiln.attention takes q, k, v with equal leading dims (no broadcast).
  auto q = cast<RankedTensorType>(m.query.getType()).getShape();
  auto k = cast<RankedTensorType>(m.key.getType()).getShape();
  auto v = cast<RankedTensorType>(m.value.getType()).getShape();
  if (q.size() != k.size() || q.size() != v.size() || q.drop_back(2) != k.drop_back(2) ||
      q.drop_back(2) != v.drop_back(2))
    return std::nullopt;
  if (m.mask) {
    auto maskType = cast<RankedTensorType>(m.mask.getType());
    Type element = maskType.getElementType();
    if (!element.isInteger(1) && element != type.getElementType())
      return std::nullopt;
    auto shape = broadcastShapes(type.getShape(), maskType.getShape());
    if (!shape || ArrayRef<int64_t>(*shape) != type.getShape())
      return std::nullopt;
  }
  return m;
}

struct FuseAttentionPass : kiln::impl::KilnFuseAttentionBase<FuseAttentionPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<SoftmaxOp> softmaxes;
    getOperation().walk([&](SoftmaxOp op) { softmaxes.push_back(op); });
    for (SoftmaxOp softmax : softmaxes) {
      if (softmax->hasAttr("kiln.no_fuse"))
        continue;
      std::optional<Match> m = matchAttention(softmax);
      if (!m)
        continue;
      rewriter.setInsertionPoint(m->output);
      if (m->invertMask) {
        // keep = (drop == false)
        auto maskType = cast<RankedTensorType>(m->mask.getType());
        auto no = ConstantOp::create(
            rewriter, m->output.getLoc(),
            DenseElementsAttr::get(RankedTensorType::get({}, rewriter.getI1Type()), false));
        m->mask = EqOp::create(rewriter, m->output.getLoc(), maskType, m->mask, no);
      }
      auto attention = AttentionOp::create(
          rewriter, m->output.getLoc(), m->output.getType(), m->query, m->key, m->value,
          m->mask, rewriter.getF64FloatAttr(m->scale), UnitAttr());
      rewriter.replaceOp(m->output, attention.getResult());
      for (Operation *op : llvm::drop_begin(m->chain))
        if (op->use_empty())
          rewriter.eraseOp(op);
    }
    SmallVector<AttentionOp> anchors;
    getOperation().walk([&](AttentionOp op) {
      if (!isa<FusionOp>(op->getParentOp()) && !op->hasAttr("kiln.no_fuse"))
        anchors.push_back(op);
    });
    FusionControlFn takeAll = [](Operation *, Operation *) { return true; };
    for (AttentionOp anchor : anchors)
      fuseIntoGroup(rewriter,
                    growAnchoredGroup(anchor, {/*consumers=*/true, /*producers=*/false},
                                      takeAll),
                    FusionKind::attention);
  }
};

} // namespace
