//===- FuseAttention.cpp - the attention pattern into kiln.attention ------===//
//
// Algorithm:
//   1. Match, from each softmax over the last dimension whose only user is
//      the lhs of a batch_matmul `p v`, backwards through an optional mask
//      (add of a broadcast tensor, where(keep, scores, -big), or
//      masked_fill's where(drop, -big, scores)), optional
//      scalar multiplies/divides, to a batch_matmul `q k^T` with k^T a
//      permute (k is then the same permute with its last two dims swapped;
//      the permutes compose, so a split-heads permute is absorbed). Every intermediate must have
//      that single use. Rewrite the chain into one kiln.attention.
//   2. Move the permute of a q/k/v projection's input behind the projection
//      (permuteAfterProjection), so that it joins the operands' views, and
//      the transpose after an output projection before it
//      (transposeBeforeOutputProjection), so that the attention writes its
//      result in the order the projection reads.
//   3. Outline every kiln.attention with its elementwise consumers over its
//      result shape as `kiln.fusion attention` (growAnchoredGroup). The
//      group also takes q, k and v's permute/slice/reshape chains (the
//      split-heads view of a QKV projection) and a merge-heads permute of
//      its result, when they have no other user and keep the head dimension
//      contiguous: the kernel reads and writes those views in place, so the
//      layout changes cost no kernel of their own.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/FusionUtils.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/Kiln/Broadcast.h"
#include "kiln/Dialect/Kiln/StridedView.h"

#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "kiln-fuse-attention"

namespace kiln {
#define GEN_PASS_DEF_KILNFUSEATTENTION
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

bool singleUse(Value value) { return value.hasOneUse(); }

struct Match {
  Value query, keySource, value, mask;
  SmallVector<int64_t> keyPermutation; // key = permute(keySource, this)
  double scale = 1.0;
  bool invertMask = false; // the condition marks what to drop
  BatchMatmulOp output;
  SmallVector<Operation *> chain; // to erase, consumers first
};

/// k^T is `permute(x, p)`: k is `permute(x, p')` with p' = p with its last
/// two entries swapped (x itself when p' is the identity). The key's source
/// and p', or nothing.
std::optional<std::pair<Value, SmallVector<int64_t>>> keyOf(Value transposed) {
  auto permute = transposed.getDefiningOp<PermuteOp>();
  if (!permute || permute.getPermutation().size() < 3)
    return std::nullopt;
  SmallVector<int64_t> p(permute.getPermutation());
  std::swap(p[p.size() - 2], p[p.size() - 1]);
  return std::make_pair(permute.getInput(), p);
}

std::optional<Match> matchAttention(SoftmaxOp softmax) {
  auto type = cast<RankedTensorType>(softmax.getType());
  int64_t dim = static_cast<int64_t>(softmax.getDim());
  if (softmax.getLog() || dim != type.getRank() - 1 || type.getRank() < 3 ||
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
    std::optional<double> fillFalse = splatFloatValue(where.getOnFalse());
    std::optional<double> fillTrue = splatFloatValue(where.getOnTrue());
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
    std::optional<double> c = splatFloatValue(op->getOperand(1));
    Value rest = op->getOperand(0);
    if (!c && isa<MulOp>(op)) {
      c = splatFloatValue(op->getOperand(0));
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
  auto key = keyOf(product.getRhs());
  if (!key || m.scale <= 0)
    return std::nullopt;
  m.keySource = key->first;
  m.keyPermutation = key->second;
  // kiln.attention takes q, k, v with equal leading dims (no broadcast).
  auto q = cast<RankedTensorType>(m.query.getType()).getShape();
  auto kt = cast<RankedTensorType>(product.getRhs().getType()).getShape();
  SmallVector<int64_t> k(kt);
  std::swap(k[k.size() - 2], k[k.size() - 1]);
  auto v = cast<RankedTensorType>(m.value.getType()).getShape();
  if (q.size() != k.size() || q.size() != v.size() ||
      q.drop_back(2) != ArrayRef<int64_t>(k).drop_back(2) || q.drop_back(2) != v.drop_back(2))
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

/// The view ops between a q/k/v operand and the tensor they view, when the
/// attention kernel can read that tensor in place: the chain stops at a
/// value with users outside this attention's views (a QKV projection's
/// result, sliced three ways, is the root; a permute of it that only the
/// three slices read, as nn.MultiheadAttention's slow path makes, is
/// read through) and the head dimension stays contiguous. Otherwise
/// nothing.
SmallVector<Operation *> absorbableView(Value operand, Operation *anchor) {
  if (!operand.hasOneUse())
    return {};
  auto shared = [&](Value value) {
    if (value == operand)
      return false;
    Operation *def = value.getDefiningOp();
    return def->hasAttr(attr::kNoFuse) ||
           !(value.hasOneUse() ||
             (isa<PermuteOp, SliceOp, ReshapeOp>(def) &&
              onlyViewedInto(value, [&](OpOperand &use) {
                return use.getOwner() == anchor && use.getOperandNumber() < 3;
              })));
  };
  std::optional<StridedView> view = stridedViewOf(operand, shared);
  if (!view || view->chain.empty() || view->strides.back() != 1 ||
      view->chain.front()->hasAttr(attr::kNoFuse))
    return {};
  return view->chain;
}

/// The permute of the attention's result that keeps the head dimension last
/// (merge heads: [B, H, S, D] -> [B, S, H, D]) when it is the result's only
/// user and the group holds nothing else to store.
Operation *absorbableMergeHeads(AttentionOp anchor, const llvm::SetVector<Operation *> &group) {
  if (group.size() != 1 || !anchor.getResult().hasOneUse())
    return nullptr;
  auto permute = dyn_cast<PermuteOp>(*anchor.getResult().getUsers().begin());
  if (!permute || permute->getBlock() != anchor->getBlock() || permute->hasAttr(attr::kNoFuse))
    return nullptr;
  ArrayRef<int64_t> order = permute.getPermutation();
  return order.back() == static_cast<int64_t>(order.size()) - 1 ? permute.getOperation()
                                                                : nullptr;
}

/// A projection of a permuted input that feeds only attention operands
/// (nn.MultiheadAttention's slow path makes its input sequence-first before
/// the packed in-projection): linear(permute(x)) is permute(linear(x)) when
/// the permute keeps the last dimension last. The permute then joins the
/// view chain that the attention kernel reads in place, and the copy it
/// took goes.
void permuteAfterProjection(IRRewriter &rewriter, Value operand) {
  std::optional<StridedView> view = stridedViewOf(operand);
  if (!view)
    return;
  auto projection = view->root.getDefiningOp<LinearOp>();
  if (!projection)
    return;
  auto permute = projection.getInput().getDefiningOp<PermuteOp>();
  if (!permute || permute.getPermutation().back() !=
                      static_cast<int64_t>(permute.getPermutation().size()) - 1)
    return;
  if (!onlyViewedInto(projection.getResult(), [](OpOperand &use) {
        return isa<AttentionOp>(use.getOwner()) && use.getOperandNumber() < 3;
      }))
    return;
  auto resultType = cast<RankedTensorType>(projection.getType());
  auto inputType = cast<RankedTensorType>(permute.getInput().getType());
  SmallVector<int64_t> shape = llvm::to_vector(inputType.getShape());
  shape.back() = resultType.getShape().back();
  rewriter.setInsertionPoint(projection);
  auto moved = LinearOp::create(rewriter, projection.getLoc(), resultType.clone(shape),
                                permute.getInput(), projection.getWeight(),
                                projection.getBias());
  auto after = PermuteOp::create(rewriter, permute.getLoc(), resultType, moved.getResult(),
                                 permute.getPermutationAttr());
  rewriter.replaceOp(projection, after.getResult());
  if (permute->use_empty())
    rewriter.eraseOp(permute);
}

/// Erases `op` and then each producer up a view chain left without users.
void eraseDeadChain(IRRewriter &rewriter, Operation *op) {
  while (op && op->use_empty()) {
    Operation *producer =
        op->getNumOperands() ? op->getOperand(0).getDefiningOp() : nullptr;
    rewriter.eraseOp(op);
    op = isa_and_nonnull<PermuteOp, ReshapeOp, SliceOp>(producer) ? producer : nullptr;
  }
}

/// The output projection of a sequence-first attention (the slow path
/// again): linear(reshape(permute(attention))) reshaped and transposed back
/// to batch-first. Rows are independent, so the transpose moves onto the
/// projection's input, and the input's view chain becomes one permute of
/// the attention's result (which the kernel writes in place) and a free
/// reshape: the copy the transpose took goes.
void transposeBeforeOutputProjection(IRRewriter &rewriter, AttentionOp attention) {
  auto rootedAtAttention = [&](Value v) { return viewRoot(v) == attention.getResult(); };
  SmallVector<LinearOp> projections;
  SmallVector<Value> frontier = {attention.getResult()};
  while (!frontier.empty()) {
    Value v = frontier.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<PermuteOp, ReshapeOp>(user))
        frontier.push_back(user->getResult(0));
      else if (auto linear = dyn_cast<LinearOp>(user);
               linear && linear.getInput() == v && rootedAtAttention(v))
        projections.push_back(linear);
    }
  }
  for (LinearOp linear : projections) {
    if (!linear->hasOneUse())
      continue;
    Operation *user = *linear->user_begin();
    auto reshape = dyn_cast<ReshapeOp>(user);
    if (reshape && !reshape->hasOneUse())
      continue;
    auto permute = dyn_cast<PermuteOp>(reshape ? *reshape->user_begin() : user);
    auto outType = cast<RankedTensorType>(linear.getType());
    if (!permute || permute.getPermutation().back() !=
                        static_cast<int64_t>(permute.getPermutation().size()) - 1)
      continue;
    if (reshape && cast<RankedTensorType>(reshape.getType()).getShape().back() !=
                       outType.getShape().back())
      continue;
    auto inputType = cast<RankedTensorType>(linear.getInput().getType());
    int64_t features = inputType.getShape().back();
    rewriter.setInsertionPoint(permute);
    Value input = linear.getInput();
    if (reshape) {
      SmallVector<int64_t> shape = llvm::to_vector(reshape.getType().getShape());
      shape.back() = features;
      input = ReshapeOp::create(rewriter, reshape.getLoc(), inputType.clone(shape), input);
    }
    SmallVector<int64_t> permuted = llvm::to_vector(permute.getType().getShape());
    permuted.back() = features;
    input = PermuteOp::create(rewriter, permute.getLoc(), inputType.clone(permuted), input,
                              permute.getPermutationAttr());
    // One permute of the attention's result, then a reshape, when the
    // chain moves whole dimensions.
    if (std::optional<SmallVector<int64_t>> order = permutationBeforeReshape(input)) {
      auto resultType = cast<RankedTensorType>(attention.getType());
      SmallVector<int64_t> shape;
      for (int64_t d : *order)
        shape.push_back(resultType.getShape()[d]);
      Value ordered =
          PermuteOp::create(rewriter, permute.getLoc(), resultType.clone(shape),
                            attention.getResult(), rewriter.getDenseI64ArrayAttr(*order));
      Operation *chain = input.getDefiningOp();
      input = ReshapeOp::create(rewriter, permute.getLoc(), input.getType(), ordered);
      eraseDeadChain(rewriter, chain);
    }
    auto moved = LinearOp::create(rewriter, linear.getLoc(), permute.getType(), input,
                                  linear.getWeight(), linear.getBias());
    rewriter.replaceOp(permute, moved.getResult());
    if (reshape)
      rewriter.eraseOp(reshape);
    Operation *oldInput = linear.getInput().getDefiningOp();
    rewriter.eraseOp(linear);
    if (isa_and_nonnull<PermuteOp, ReshapeOp>(oldInput))
      eraseDeadChain(rewriter, oldInput);
  }
}

struct FuseAttentionPass : kiln::impl::KilnFuseAttentionBase<FuseAttentionPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<SoftmaxOp> softmaxes;
    getOperation().walk([&](SoftmaxOp op) { softmaxes.push_back(op); });
    for (SoftmaxOp softmax : softmaxes) {
      if (softmax->hasAttr(attr::kNoFuse))
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
      Value key = m->keySource;
      bool identity = llvm::all_of(llvm::enumerate(m->keyPermutation), [](auto e) {
        return static_cast<int64_t>(e.index()) == e.value();
      });
      if (!identity) {
        auto sourceType = cast<RankedTensorType>(key.getType());
        SmallVector<int64_t> shape;
        for (int64_t d : m->keyPermutation)
          shape.push_back(sourceType.getShape()[d]);
        key = PermuteOp::create(rewriter, m->output.getLoc(), sourceType.clone(shape), key,
                                rewriter.getDenseI64ArrayAttr(m->keyPermutation));
      }
      auto attention = AttentionOp::create(
          rewriter, m->output.getLoc(), m->output.getType(), m->query, key, m->value,
          m->mask, rewriter.getF64FloatAttr(m->scale), UnitAttr());
      rewriter.replaceOp(m->output, attention.getResult());
      Operation *transposedKey = cast<BatchMatmulOp>(m->chain.back()).getRhs().getDefiningOp();
      for (Operation *op : llvm::drop_begin(m->chain))
        if (op->use_empty())
          rewriter.eraseOp(op);
      // k^T, now unused: later fusion passes must not meet dead ops.
      if (transposedKey && transposedKey->use_empty())
        rewriter.eraseOp(transposedKey);
    }
    SmallVector<AttentionOp> anchors;
    getOperation().walk([&](AttentionOp op) {
      if (!isa<FusionOp>(op->getParentOp()) && !op->hasAttr(attr::kNoFuse))
        anchors.push_back(op);
    });
    for (AttentionOp anchor : anchors) {
      for (Value operand : {anchor.getQuery(), anchor.getKey(), anchor.getValue()})
        permuteAfterProjection(rewriter, operand);
      transposeBeforeOutputProjection(rewriter, anchor);
    }
    FusionControlFn takeAll = [](Operation *, Operation *) { return true; };
    for (AttentionOp anchor : anchors) {
      llvm::SetVector<Operation *> group =
          growAnchoredGroup(anchor, {/*consumers=*/true, /*producers=*/false}, takeAll);
      if (Operation *merge = absorbableMergeHeads(anchor, group))
        group.insert(merge);
      for (Value operand : {anchor.getQuery(), anchor.getKey(), anchor.getValue()})
        for (Operation *view : absorbableView(operand, anchor))
          group.insert(view);
      fuseIntoGroup(rewriter, group, FusionKind::attention);
    }
  }
};

} // namespace
