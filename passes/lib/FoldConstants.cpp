//===- FoldConstants.cpp - integer and boolean ops on constants -----------===//
//
// Mechanics: read a constant's elements (dense or resource blobs) as int64
// or double, evaluate one elementwise op over them with broadcasting, and
// build a dense constant of the result. Policy: only ops whose operands are
// all constants, whose result holds integers or booleans, and whose result
// has at most max-elements elements (see Passes.td for why).
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Passes.h"

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstring>

#define DEBUG_TYPE "kiln-fold-constants"

namespace kiln {
#define GEN_PASS_DEF_KILNFOLDCONSTANTS
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A constant's elements: integers and booleans as int64, floats as double.
struct Elements {
  bool integral = true;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  double at(size_t i) const { return integral ? static_cast<double>(ints[i]) : floats[i]; }
  int64_t intAt(size_t i) const {
    return integral ? ints[i] : static_cast<int64_t>(std::trunc(floats[i]));
  }
};

bool integralType(Type element) { return isa<IntegerType>(element); }

std::optional<Elements> readConstant(ConstantOp constant, int64_t maxElements) {
  auto type = cast<RankedTensorType>(constant.getType());
  Type element = type.getElementType();
  int64_t count = type.getNumElements();
  if (count > maxElements)
    return std::nullopt;
  Elements out;
  out.integral = integralType(element);
  auto push = [&](int64_t i, double f) {
    if (out.integral)
      out.ints.push_back(i);
    else
      out.floats.push_back(f);
  };
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue())) {
    if (element.isInteger(1)) {
      for (bool b : dense.getValues<bool>())
        push(b, 0);
    } else if (out.integral) {
      for (const APInt &v : dense.getValues<APInt>())
        push(v.getSExtValue(), 0);
    } else if (isa<FloatType>(element)) {
      for (const APFloat &v : dense.getValues<APFloat>())
        push(0, v.convertToDouble());
    } else {
      return std::nullopt;
    }
    // A splat yields one element.
    if (dense.isSplat()) {
      out.ints.resize(out.integral ? count : 0, out.integral ? out.ints[0] : 0);
      out.floats.resize(out.integral ? 0 : count, out.integral ? 0 : out.floats[0]);
    }
    return out;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue());
  AsmResourceBlob *blob = resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob)
    return std::nullopt;
  unsigned width = element.getIntOrFloatBitWidth();
  unsigned bytes = element.isInteger(1) ? 1 : width / 8;
  ArrayRef<char> data = blob->getData();
  if (data.size() != static_cast<size_t>(count) * bytes)
    return std::nullopt;
  for (int64_t i = 0; i < count; ++i) {
    uint64_t raw = 0;
    std::memcpy(&raw, data.data() + i * bytes, bytes);
    if (element.isInteger(1))
      push(raw != 0, 0);
    else if (out.integral)
      push(APInt(width, raw).getSExtValue(), 0);
    else if (auto f = dyn_cast<FloatType>(element))
      push(0, APFloat(f.getFloatSemantics(), APInt(width, raw)).convertToDouble());
    else
      return std::nullopt;
  }
  return out;
}

/// `value` wrapped to the width of `element` (PyTorch's integers wrap).
int64_t wrapTo(Type element, int64_t value) {
  unsigned width = element.getIntOrFloatBitWidth();
  if (width == 1)
    return value != 0;
  return APInt(64, static_cast<uint64_t>(value)).trunc(width).getSExtValue();
}

/// Offsets of each result element in an operand of `shape`, broadcasting
/// (shapes aligned on their last dimension, size-1 dimensions repeated).
std::vector<int64_t> broadcastOffsets(ArrayRef<int64_t> result, ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : result)
    count *= d;
  std::vector<int64_t> strides(result.size(), 0);
  int64_t stride = 1;
  for (int64_t k = static_cast<int64_t>(shape.size()) - 1; k >= 0; --k) {
    int64_t r = static_cast<int64_t>(result.size()) - shape.size() + k;
    strides[r] = shape[k] == 1 ? 0 : stride;
    stride *= shape[k];
  }
  std::vector<int64_t> offsets(count);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, offset = 0;
    for (int64_t r = static_cast<int64_t>(result.size()) - 1; r >= 0; --r) {
      offset += (rest % result[r]) * strides[r];
      rest /= result[r];
    }
    offsets[i] = offset;
  }
  return offsets;
}

/// The result of `op` on constant operands, as int64 per element; nullopt
/// for an op this pass does not evaluate.
std::optional<std::vector<int64_t>> evaluate(Operation *op, ArrayRef<Elements> in,
                                             RankedTensorType resultType) {
  ArrayRef<int64_t> shape = resultType.getShape();
  Type element = resultType.getElementType();
  // A reshape keeps the elements in order; every other op broadcasts its
  // operands to the result's shape.
  std::vector<std::vector<int64_t>> offsets;
  for (Value operand : op->getOperands()) {
    ArrayRef<int64_t> operandShape = cast<RankedTensorType>(operand.getType()).getShape();
    if (isa<ReshapeOp>(op) || operandShape.size() > shape.size())
      break;
    offsets.push_back(broadcastOffsets(shape, operandShape));
  }
  if (!isa<ReshapeOp>(op) && offsets.size() != op->getNumOperands())
    return std::nullopt;
  int64_t count = resultType.getNumElements();
  std::vector<int64_t> out(count);
  // Integer arithmetic in uint64 (wrapping, never undefined), floats in
  // double (comparisons only).
  auto binary = [&](auto intOp, auto floatOp) {
    for (int64_t i = 0; i < count; ++i) {
      size_t a = offsets[0][i], b = offsets[1][i];
      out[i] = in[0].integral && in[1].integral ? intOp(in[0].ints[a], in[1].ints[b])
                                                : floatOp(in[0].at(a), in[1].at(b));
    }
  };
  auto wrapping = [](auto f) {
    return [f](int64_t a, int64_t b) {
      return static_cast<int64_t>(f(static_cast<uint64_t>(a), static_cast<uint64_t>(b)));
    };
  };
  auto compare = [&](auto cmp) { binary(cmp, cmp); };
  auto noFloat = [](double, double) -> int64_t { return 0; };
  bool handled =
      llvm::TypeSwitch<Operation *, bool>(op)
          .Case([&](AddOp) { binary(wrapping([](uint64_t a, uint64_t b) { return a + b; }), noFloat); return in[0].integral && in[1].integral; })
          .Case([&](SubOp) { binary(wrapping([](uint64_t a, uint64_t b) { return a - b; }), noFloat); return in[0].integral && in[1].integral; })
          .Case([&](MulOp) { binary(wrapping([](uint64_t a, uint64_t b) { return a * b; }), noFloat); return in[0].integral && in[1].integral; })
          .Case([&](MaxOp) { binary([](int64_t a, int64_t b) { return std::max(a, b); }, noFloat); return in[0].integral && in[1].integral; })
          .Case([&](MinOp) { binary([](int64_t a, int64_t b) { return std::min(a, b); }, noFloat); return in[0].integral && in[1].integral; })
          .Case([&](LtOp) { compare([](auto a, auto b) -> int64_t { return a < b; }); return true; })
          .Case([&](LeOp) { compare([](auto a, auto b) -> int64_t { return a <= b; }); return true; })
          .Case([&](GtOp) { compare([](auto a, auto b) -> int64_t { return a > b; }); return true; })
          .Case([&](GeOp) { compare([](auto a, auto b) -> int64_t { return a >= b; }); return true; })
          .Case([&](EqOp) { compare([](auto a, auto b) -> int64_t { return a == b; }); return true; })
          .Case([&](NeOp) { compare([](auto a, auto b) -> int64_t { return a != b; }); return true; })
          .Case([&](NegOp) {
            for (int64_t i = 0; i < count; ++i)
              out[i] = static_cast<int64_t>(0 - static_cast<uint64_t>(in[0].ints[offsets[0][i]]));
            return in[0].integral;
          })
          .Case([&](AbsOp) {
            for (int64_t i = 0; i < count; ++i) {
              int64_t v = in[0].ints[offsets[0][i]];
              out[i] = v < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(v)) : v;
            }
            return in[0].integral;
          })
          .Case([&](WhereOp) {
            if (!in[1].integral || !in[2].integral)
              return false;
            for (int64_t i = 0; i < count; ++i)
              out[i] = in[0].intAt(offsets[0][i]) != 0 ? in[1].ints[offsets[1][i]]
                                                        : in[2].ints[offsets[2][i]];
            return true;
          })
          .Case([&](CastOp) {
            // To a boolean: non-zero; float to integer: toward zero, as
            // PyTorch's cast does (out-of-range floats are not folded).
            for (int64_t i = 0; i < count; ++i) {
              size_t a = offsets[0][i];
              if (element.isInteger(1)) {
                out[i] = in[0].at(a) != 0.0;
              } else if (in[0].integral) {
                out[i] = in[0].ints[a];
              } else {
                double v = in[0].floats[a];
                if (!(std::fabs(v) < 9.2e18))
                  return false;
                out[i] = static_cast<int64_t>(std::trunc(v));
              }
            }
            return true;
          })
          .Case([&](BroadcastOp) {
            for (int64_t i = 0; i < count; ++i)
              out[i] = in[0].intAt(offsets[0][i]);
            return in[0].integral;
          })
          .Case([&](ReshapeOp) {
            for (int64_t i = 0; i < count; ++i)
              out[i] = in[0].ints[i];
            return in[0].integral;
          })
          .Default([](Operation *) { return false; });
  if (!handled)
    return std::nullopt;
  for (int64_t &v : out)
    v = wrapTo(element, v);
  return out;
}

DenseElementsAttr denseOf(RankedTensorType type, ArrayRef<int64_t> values) {
  Type element = type.getElementType();
  if (element.isInteger(1)) {
    SmallVector<bool> bits(values.begin(), values.end());
    return DenseElementsAttr::get(type, ArrayRef<bool>(bits));
  }
  unsigned width = element.getIntOrFloatBitWidth();
  SmallVector<APInt> ints;
  for (int64_t v : values)
    ints.push_back(APInt(width, static_cast<uint64_t>(v), /*isSigned=*/true, /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, ints);
}

struct KilnFoldConstantsPass : public kiln::impl::KilnFoldConstantsBase<KilnFoldConstantsPass> {
  using KilnFoldConstantsBase::KilnFoldConstantsBase;

  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation().walk([&](Operation *op) {
      if (op->getNumResults() == 1 && op->getNumOperands() > 0 &&
          !isa<ConstantOp, FusionOp>(op) && !op->getParentOfType<FusionOp>())
        candidates.push_back(op);
    });
    // Program order: an op's operands folded before it is looked at.
    for (Operation *op : candidates) {
      auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
      if (!resultType || !integralType(resultType.getElementType()) ||
          resultType.getNumElements() > maxElements)
        continue;
      SmallVector<Elements> operands;
      for (Value operand : op->getOperands()) {
        auto constant = operand.getDefiningOp<ConstantOp>();
        std::optional<Elements> elements =
            constant ? readConstant(constant, maxElements) : std::nullopt;
        if (!elements)
          break;
        operands.push_back(std::move(*elements));
      }
      if (operands.size() != op->getNumOperands())
        continue;
      std::optional<std::vector<int64_t>> values = evaluate(op, operands, resultType);
      if (!values)
        continue;
      OpBuilder builder(op);
      auto folded = ConstantOp::create(builder, op->getLoc(), denseOf(resultType, *values));
      op->getResult(0).replaceAllUsesWith(folded.getResult());
      op->erase();
    }
    // Constants left without users go with the canonicalizer that follows.
  }
};

} // namespace
