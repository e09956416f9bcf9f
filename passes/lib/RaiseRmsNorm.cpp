//===- RaiseRmsNorm.cpp - RMSNorm written out, as one normalization -------===//
//
// Mechanics: Llama's, T5's and Mistral's RMSNorm trace to
//   p = pow(x, 2); m = reduce_mean(p, trailing dims, keepdim);
//   a = add(m, eps); r = rsqrt(a); y = mul(x, r)
// (operands of add and mul in either order). The chain becomes
// kiln.layer_norm rms over those dims, which FuseNormalization turns into
// one row kernel with the weight's mul and its other neighbours; left as
// it was, it took a reduction kernel, an elementwise kernel and a tensor
// of squares written by the producer.
// Policy: every such chain whose intermediates have no other use and whose
// eps is a positive scalar constant. Run before the precision pass, so that
// eps is the model's and the statistics stay fp32 whatever the precision.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "kiln-raise-rms-norm"

namespace kiln {
#define GEN_PASS_DEF_KILNRAISERMSNORM
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A constant holding one element (rank 0, or every size 1).
bool holdsOneElement(Value value) {
  return cast<RankedTensorType>(value.getType()).getNumElements() == 1;
}

/// `op`'s operand other than `known`, when `known` is one of its two.
Value otherOperand(Operation *op, Value known) {
  if (op->getOperand(0) == known)
    return op->getOperand(1);
  if (op->getOperand(1) == known)
    return op->getOperand(0);
  return {};
}

/// The RMSNorm chain ending at `mul`: (x, eps, first reduced dim).
struct RmsChain {
  Value input;
  double eps;
  int64_t axis;
  SmallVector<Operation *> dead; // rsqrt, add, reduce_mean, pow
};

std::optional<RmsChain> matchChain(MulOp mul) {
  for (Value factor : {mul.getLhs(), mul.getRhs()}) {
    auto rsqrt = factor.getDefiningOp<RsqrtOp>();
    if (!rsqrt || !rsqrt->hasOneUse())
      continue;
    Value x = otherOperand(mul, factor);
    auto add = rsqrt.getInput().getDefiningOp<AddOp>();
    if (!add || !add->hasOneUse())
      continue;
    for (Value meanValue : {add.getLhs(), add.getRhs()}) {
      auto mean = meanValue.getDefiningOp<ReduceMeanOp>();
      Value epsValue = otherOperand(add, meanValue);
      std::optional<double> eps = splatFloatValue(epsValue);
      if (!mean || !mean->hasOneUse() || !mean.getKeepdim() || !eps || !(*eps > 0) ||
          !holdsOneElement(epsValue))
        continue;
      auto pow = mean.getInput().getDefiningOp<PowOp>();
      std::optional<double> exponent = pow ? splatFloatValue(pow.getRhs()) : std::nullopt;
      if (!pow || !pow->hasOneUse() || pow.getLhs() != x || exponent != 2.0 ||
          !holdsOneElement(pow.getRhs()))
        continue;
      // The reduced dims must be the trailing ones, and the result x's shape.
      auto type = cast<RankedTensorType>(x.getType());
      ArrayRef<int64_t> dims = mean.getDims();
      int64_t rank = type.getRank();
      bool trailing = !dims.empty();
      for (auto [index, dim] : llvm::enumerate(dims))
        trailing &= dim == rank - static_cast<int64_t>(dims.size()) + static_cast<int64_t>(index);
      if (!trailing || mul.getType() != type)
        continue;
      return RmsChain{x, *eps, dims.front(), {rsqrt, add, mean, pow}};
    }
  }
  return std::nullopt;
}

struct RaiseRmsNormPass : kiln::impl::KilnRaiseRmsNormBase<RaiseRmsNormPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<MulOp> muls;
    getOperation().walk([&](MulOp mul) { muls.push_back(mul); });
    IRRewriter rewriter(&getContext());
    for (MulOp mul : muls) {
      std::optional<RmsChain> chain = matchChain(mul);
      if (!chain)
        continue;
      rewriter.setInsertionPoint(mul);
      auto norm = LayerNormOp::create(rewriter, mul.getLoc(), mul.getType(), chain->input,
                                      Value(), Value(), rewriter.getI64IntegerAttr(chain->axis),
                                      rewriter.getF64FloatAttr(chain->eps),
                                      rewriter.getUnitAttr());
      rewriter.replaceOp(mul, norm.getResult());
      for (Operation *op : chain->dead)
        rewriter.eraseOp(op);
    }
  }
};

} // namespace
