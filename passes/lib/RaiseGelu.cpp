//===- RaiseGelu.cpp - GELU written out, as one kiln.gelu -----------------===//
//
// Mechanics: GPT-2's NewGELU, FastGELU and the erf GELU of older Hugging
// Face code trace to a chain of scalar arithmetic around one tanh or erf:
//   0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3))))
//   x * 0.5 * (1 + erf(x / sqrt(2)))
// The argument of tanh (or erf) is read as a polynomial in x, so that every
// way of writing it (pow or products, the factor inside or out, a division
// by sqrt(2)) matches; its coefficients, the outer factor and the 1 are
// compared with the exact ones. The chain becomes kiln.gelu, whose kernels
// use the closed forms in kiln_common.cuh (for half results,
// x / (1 + exp(-2u)) instead of tanhf: 8 ops and a libdevice tanh were
// a third of GPT-2's FFN up-projection at batch 32).
// Policy: the coefficients may differ from the exact ones by the rounding
// of a bf16 constant (an fp16 or bf16 trace stores them rounded), so the
// raised op computes the GELU the model meant, at least as exactly as the
// chain did. Runs before kiln-set-precision, on the model's own constants.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <array>
#include <cmath>

#define DEBUG_TYPE "kiln-raise-gelu"

namespace kiln {
#define GEN_PASS_DEF_KILNRAISEGELU
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// bf16 keeps 8 significant bits: a constant rounded to it is within 2^-9
/// of the exact one; twice that allows a product of two rounded constants.
constexpr double kCoefficientTolerance = 4e-3;

bool near(double value, double exact) {
  return std::abs(value - exact) <= kCoefficientTolerance * std::abs(exact);
}

/// The value of a constant holding one element (rank 0, or every size 1).
std::optional<double> scalarConstant(Value value) {
  if (cast<RankedTensorType>(value.getType()).getNumElements() != 1)
    return std::nullopt;
  return splatFloatValue(value);
}

/// c0 + c1 x + c2 x^2 + c3 x^3.
using Cubic = std::array<double, 4>;

std::optional<Cubic> product(const Cubic &a, const Cubic &b) {
  Cubic result{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      if (a[i] == 0.0 || b[j] == 0.0)
        continue;
      if (i + j > 3)
        return std::nullopt;
      result[i + j] += a[i] * b[j];
    }
  return result;
}

/// `value` as a polynomial of degree at most 3 in `x`, when it is built
/// from x and scalar constants by +, -, *, / (by a constant), negation and
/// integer powers.
std::optional<Cubic> cubicIn(Value value, Value x, int depth = 0) {
  if (value == x)
    return Cubic{0.0, 1.0, 0.0, 0.0};
  if (std::optional<double> constant = scalarConstant(value))
    return Cubic{*constant, 0.0, 0.0, 0.0};
  Operation *op = value.getDefiningOp();
  if (!op || depth > 16)
    return std::nullopt;
  auto operands = [&]() -> std::optional<std::pair<Cubic, Cubic>> {
    std::optional<Cubic> lhs = cubicIn(op->getOperand(0), x, depth + 1);
    std::optional<Cubic> rhs = lhs ? cubicIn(op->getOperand(1), x, depth + 1) : std::nullopt;
    if (!rhs)
      return std::nullopt;
    return std::make_pair(*lhs, *rhs);
  };
  if (isa<AddOp, SubOp>(op)) {
    auto pair = operands();
    if (!pair)
      return std::nullopt;
    double sign = isa<SubOp>(op) ? -1.0 : 1.0;
    Cubic sum;
    for (int i = 0; i < 4; ++i)
      sum[i] = pair->first[i] + sign * pair->second[i];
    return sum;
  }
  if (isa<MulOp>(op)) {
    auto pair = operands();
    return pair ? product(pair->first, pair->second) : std::nullopt;
  }
  if (auto div = dyn_cast<DivOp>(op)) {
    std::optional<double> divisor = scalarConstant(div.getRhs());
    std::optional<Cubic> dividend = divisor && *divisor != 0.0
                                        ? cubicIn(div.getLhs(), x, depth + 1)
                                        : std::nullopt;
    if (!dividend)
      return std::nullopt;
    for (double &coefficient : *dividend)
      coefficient /= *divisor;
    return dividend;
  }
  if (auto neg = dyn_cast<NegOp>(op)) {
    std::optional<Cubic> input = cubicIn(neg->getOperand(0), x, depth + 1);
    if (input)
      for (double &coefficient : *input)
        coefficient = -coefficient;
    return input;
  }
  if (auto pow = dyn_cast<PowOp>(op)) {
    std::optional<double> exponent = scalarConstant(pow.getRhs());
    if (!exponent || (*exponent != 1.0 && *exponent != 2.0 && *exponent != 3.0))
      return std::nullopt;
    std::optional<Cubic> base = cubicIn(pow.getLhs(), x, depth + 1);
    std::optional<Cubic> result = base;
    for (int i = 1; result && i < static_cast<int>(*exponent); ++i)
      result = product(*result, *base);
    return result;
  }
  return std::nullopt;
}

/// `gate` as 1 + tanh(u) or 1 + erf(u): the tanh or erf.
Operation *gateFunction(Value gate) {
  auto add = gate.getDefiningOp<AddOp>();
  if (!add)
    return nullptr;
  for (auto [function, one] : {std::pair(add.getLhs(), add.getRhs()),
                               std::pair(add.getRhs(), add.getLhs())}) {
    std::optional<double> constant = scalarConstant(one);
    Operation *op = function.getDefiningOp();
    if (constant && near(*constant, 1.0) && op && isa<TanhOp, ErfOp>(op))
      return op;
  }
  return nullptr;
}

/// `half` as c * x or x * c: (x, c).
std::optional<std::pair<Value, double>> scaledInput(Value half) {
  auto mul = half.getDefiningOp<MulOp>();
  if (!mul)
    return std::nullopt;
  for (auto [input, factor] : {std::pair(mul.getLhs(), mul.getRhs()),
                               std::pair(mul.getRhs(), mul.getLhs())})
    if (std::optional<double> constant = scalarConstant(factor))
      return std::make_pair(input, *constant);
  return std::nullopt;
}

/// The GELU's input and form when `mul` is the last op of one written out.
std::optional<std::pair<Value, GeluApproximation>> matchGelu(MulOp mul) {
  for (auto [gate, half] : {std::pair(mul.getLhs(), mul.getRhs()),
                            std::pair(mul.getRhs(), mul.getLhs())}) {
    Operation *function = gateFunction(gate);
    std::optional<std::pair<Value, double>> scaled = scaledInput(half);
    if (!function || !scaled || !near(scaled->second, 0.5))
      continue;
    Value x = scaled->first;
    if (x.getType() != mul.getType() ||
        !cast<RankedTensorType>(x.getType()).getElementType().isFloat())
      continue;
    std::optional<Cubic> argument = cubicIn(function->getOperand(0), x);
    if (!argument || (*argument)[0] != 0.0 || (*argument)[2] != 0.0)
      continue;
    const double a1 = (*argument)[1], a3 = (*argument)[3];
    if (isa<TanhOp>(function) && near(a1, std::sqrt(2.0 / M_PI)) && a3 != 0.0 &&
        near(a3 / a1, 0.044715))
      return std::make_pair(x, GeluApproximation::tanh);
    if (isa<ErfOp>(function) && near(a1, M_SQRT1_2) && a3 == 0.0)
      return std::make_pair(x, GeluApproximation::none);
  }
  return std::nullopt;
}

struct RaiseGeluPass : kiln::impl::KilnRaiseGeluBase<RaiseGeluPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<MulOp> muls;
    getOperation().walk([&](MulOp mul) { muls.push_back(mul); });
    IRRewriter rewriter(&getContext());
    for (MulOp mul : muls) {
      std::optional<std::pair<Value, GeluApproximation>> gelu = matchGelu(mul);
      if (!gelu)
        continue;
      rewriter.setInsertionPoint(mul);
      auto raised = GeluOp::create(rewriter, mul.getLoc(), mul.getType(), gelu->first,
                                   gelu->second);
      SmallVector<Operation *> worklist;
      for (Value operand : mul->getOperands())
        if (Operation *producer = operand.getDefiningOp())
          worklist.push_back(producer);
      rewriter.replaceOp(mul, raised.getResult());
      // The chain's ops that nothing else reads (a shared pow(x, 3) stays).
      llvm::SmallPtrSet<Operation *, 16> erased;
      while (!worklist.empty()) {
        Operation *op = worklist.pop_back_val();
        if (erased.contains(op) || !isOpTriviallyDead(op))
          continue;
        erased.insert(op);
        for (Value operand : op->getOperands())
          if (Operation *producer = operand.getDefiningOp())
            worklist.push_back(producer);
        rewriter.eraseOp(op);
      }
    }
  }
};

} // namespace
