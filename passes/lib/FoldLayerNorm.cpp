//===- FoldLayerNorm.cpp - a layer norm's normalization into its linear ---===//
//
// Mechanics: W' = W diag(gamma) rounded to W's type, c = W' summed along K
// (from the rounded values, so that the correction cancels exactly what the
// GEMM multiplied), d = W beta + b, all in doubles; the linear on x returns
// fp32 and `rstd (acc - mean c) + d` (RMSNorm: `rstd acc + b`) rounds once
// to the old result's type.
// Policy: linears alone read the norm (each folds; one row_moments serves
// them all), 16-bit operands, the last dimension, constant weights, and an
// output of at least `min-bytes`.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/Kiln/FloatRounding.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Parallel.h"

#include <atomic>
#include <cmath>
#include <cstring>

#define DEBUG_TYPE "kiln-fold-layer-norm"

namespace kiln {
#define GEN_PASS_DEF_KILNFOLDLAYERNORM
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A constant operand's elements, `fill` repeated `count` times for an
/// absent one, nothing for an operand that is not a constant.
std::optional<std::vector<double>> elementsOr(Value operand, size_t count, double fill) {
  if (!operand)
    return std::vector<double>(count, fill);
  auto constant = operand.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  std::optional<std::vector<double>> values = constantElements(constant);
  if (!values || values->size() != count)
    return std::nullopt;
  return values;
}

/// A norm to fold: its gamma (the norm's weight, or the constant that
/// multiplies a norm without one: Hugging Face's RMSNorm scales after
/// rounding back to the model's type) and the linears that alone read it
/// (a packed projection; a gated MLP's gate and up-projection).
struct FoldSite {
  LayerNormOp norm;
  MulOp scale; // the multiply by gamma, when it is apart
  Value gamma;
  SmallVector<LinearOp> linears;
};

/// The multiply of `norm`'s result by a constant along the last dimension
/// that is the norm's only user, or nothing.
MulOp separateScale(LayerNormOp norm) {
  if (norm.getWeight() || !norm->hasOneUse())
    return MulOp();
  auto mul = dyn_cast<MulOp>(*norm->user_begin());
  if (!mul || mul.getType() != norm.getType())
    return MulOp();
  Value other = mul.getLhs() == norm.getResult() ? mul.getRhs() : mul.getLhs();
  auto shape = cast<RankedTensorType>(other.getType()).getShape();
  const int64_t K = cast<RankedTensorType>(norm.getType()).getShape().back();
  if (!other.getDefiningOp<ConstantOp>() || shape.empty() || shape.back() != K ||
      !llvm::all_of(shape.drop_back(), [](int64_t d) { return d == 1; }))
    return MulOp();
  return mul;
}

/// What folds at `norm`, when the fold applies to every reader.
std::optional<FoldSite> foldSite(LayerNormOp norm, int64_t minBytes) {
  auto type = cast<RankedTensorType>(norm.getType());
  Type element = type.getElementType();
  const bool lastDimension = static_cast<int64_t>(norm.getAxis()) == type.getRank() - 1;
  if (minBytes < 0 || !lastDimension ||
      !(element.isF16() || element.isBF16()) || norm->hasAttr(attr::kNoFuse) ||
      isa<FusionOp>(norm->getParentOp()) || norm->use_empty() ||
      type.getNumElements() * 2 < minBytes)
    return std::nullopt;
  FoldSite site{norm, separateScale(norm), norm.getWeight(), {}};
  Value normalized = norm.getResult();
  if (site.scale) {
    normalized = site.scale.getResult();
    site.gamma = site.scale.getLhs() == norm.getResult() ? site.scale.getRhs()
                                                         : site.scale.getLhs();
  }
  for (OpOperand &use : normalized.getUses()) {
    auto linear = dyn_cast<LinearOp>(use.getOwner());
    if (!linear || use.getOperandNumber() != 0 || linear->hasAttr(attr::kNoFuse) ||
        cast<RankedTensorType>(linear.getType()).getElementType() != element ||
        !linear.getWeight().getDefiningOp<ConstantOp>())
      return std::nullopt;
    site.linears.push_back(linear);
  }
  if (site.linears.empty())
    return std::nullopt;
  return site;
}

/// A linear's folded constants: W' (in W's encoding), c and d.
struct FoldedConstants {
  std::vector<char> weight;
  std::vector<double> sums, shifts;
};

/// `linear`'s constants with `norm` folded in; nothing when an operand is
/// not a readable constant or W gamma leaves W's type's range.
std::optional<FoldedConstants> foldedConstants(const FoldSite &site, LinearOp linear) {
  LayerNormOp norm = site.norm;
  auto weightType = cast<RankedTensorType>(linear.getWeight().getType());
  const int64_t N = weightType.getShape()[0], K = weightType.getShape()[1];
  // The weight's millions of elements as bits (APFloat, element by element,
  // took 12 s of ViT-B/16's compile); gamma, beta and the bias are short.
  auto weightConstant = linear.getWeight().getDefiningOp<ConstantOp>();
  std::optional<std::vector<char>> weight =
      constantValueBytes(weightConstant.getValue(), weightType);
  std::optional<std::vector<double>> gamma = elementsOr(site.gamma, K, 1.0);
  std::optional<std::vector<double>> beta = elementsOr(norm.getBias(), K, 0.0);
  std::optional<std::vector<double>> bias = elementsOr(linear.getBias(), N, 0.0);
  if (!weight || !gamma || !beta || !bias)
    return std::nullopt;

  // W gamma: a product of two 16-bit values is exact in fp32 (at most 22
  // significant bits), so one rounding to W's type follows.
  const bool half = weightType.getElementType().isF16();
  std::vector<float> gammaFloat(gamma->begin(), gamma->end());
  FoldedConstants folded{std::vector<char>(weight->size()), std::vector<double>(N),
                         std::vector<double>(N)};
  std::atomic<bool> representable{true};
  // Rows on every core: ViT-B/16's 24 folds are 45 million elements.
  llvm::parallelFor(0, N, [&](size_t n) {
    double sum = 0.0, shift = (*bias)[n];
    for (int64_t k = 0; k < K; ++k) {
      uint16_t bits;
      std::memcpy(&bits, weight->data() + 2 * (n * K + k), 2);
      const float w = widenHalfBits(bits, half), product = w * gammaFloat[k];
      uint32_t productBits;
      std::memcpy(&productBits, &product, 4);
      std::optional<uint16_t> rounded = roundFloatBits(productBits, half);
      if (!rounded || !std::isfinite(product)) {
        representable = false;
        return;
      }
      std::memcpy(folded.weight.data() + 2 * (n * K + k), &*rounded, 2);
      sum += widenHalfBits(*rounded, half);
      shift += static_cast<double>(w) * (*beta)[k];
    }
    folded.sums[n] = sum;
    folded.shifts[n] = shift;
  });
  if (!representable)
    return std::nullopt;
  return folded;
}

/// Rewrites every linear of `site` onto one row_moments of the norm's
/// input; nothing changes when any cannot fold.
void fold(OpBuilder &builder, const FoldSite &site) {
  LayerNormOp norm = site.norm;
  ArrayRef<LinearOp> linears = site.linears;
  SmallVector<FoldedConstants> constants;
  for (LinearOp linear : linears) {
    std::optional<FoldedConstants> folded = foldedConstants(site, linear);
    if (!folded)
      return;
    constants.push_back(std::move(*folded));
  }
  builder.setInsertionPoint(norm);
  auto moments = RowMomentsOp::create(builder, norm.getLoc(), norm.getInput(),
                                      norm.getEps().convertToDouble(), norm.getRms());
  for (auto [index, folded] : llvm::enumerate(constants)) {
    LinearOp linear = linears[index];
    builder.setInsertionPoint(linear);
    Location loc = linear.getLoc();
    auto weightType = cast<RankedTensorType>(linear.getWeight().getType());
    auto resultType = cast<RankedTensorType>(linear.getType());
    auto accumulators = resultType.clone(builder.getF32Type());
    auto columns = RankedTensorType::get({weightType.getShape()[0]}, builder.getF32Type());
    Value weight = makeRawConstant(builder, loc, weightType, folded.weight, "ln_folded_weight");
    // RMSNorm subtracts nothing: rstd x W'^T + b.
    Value columnSums =
        norm.getRms() ? Value()
                      : makeFloatConstant(builder, loc, columns, folded.sums, "ln_folded_sums");
    // No beta and no bias (Llama's RMSNorm and projections): nothing to add.
    const bool shifts = llvm::any_of(folded.shifts, [](double d) { return d != 0.0; });
    Value shift = shifts ? makeFloatConstant(builder, loc, columns, folded.shifts,
                                             "ln_folded_bias")
                         : Value();
    Value acc = LinearOp::create(builder, loc, accumulators, norm.getInput(), weight, Value());
    Value centered = acc;
    if (columnSums) {
      Value centering =
          MulOp::create(builder, loc, accumulators, moments.getMean(), columnSums);
      centered = SubOp::create(builder, loc, accumulators, acc, centering);
    }
    Value scaledRows = MulOp::create(builder, loc, accumulators, centered, moments.getRstd());
    Value shifted =
        shift ? AddOp::create(builder, loc, accumulators, scaledRows, shift) : scaledRows;
    Value result = CastOp::create(builder, loc, resultType, shifted);
    linear.getResult().replaceAllUsesWith(result);
    linear.erase();
  }
  if (MulOp scale = site.scale)
    scale.erase();
  norm.erase();
}

struct FoldLayerNormPass : kiln::impl::KilnFoldLayerNormBase<FoldLayerNormPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<FoldSite> sites;
    getOperation().walk([&](LayerNormOp norm) {
      if (std::optional<FoldSite> site = foldSite(norm, minBytes))
        sites.push_back(std::move(*site));
    });
    OpBuilder builder(&getContext());
    for (const FoldSite &site : sites)
      fold(builder, site);
  }
};

} // namespace
