//===- ElementCode.cpp - per-element CUDA code for elementwise ops --------===//

#include "ElementCode.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

std::string kiln::codegen::cudaType(Type element) {
  if (element.isF32())
    return "float";
  if (element.isF16())
    return "__half";
  if (element.isBF16())
    return "__nv_bfloat16";
  if (element.isInteger(64))
    return "long long";
  if (element.isInteger(32))
    return "int";
  if (element.isInteger(1))
    return "bool";
  return "<unsupported>";
}

std::string kiln::codegen::floatLiteral(double value) {
  if (std::isnan(value))
    return "NAN";
  if (std::isinf(value))
    return value > 0 ? "INFINITY" : "-INFINITY";
  char text[48];
  std::snprintf(text, sizeof(text), "%.9ef", value);
  return text;
}

SmallVector<int64_t> kiln::codegen::stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

ElementCode::ElementCode(FusionOp group, ArrayRef<int64_t> iterationShape,
                         std::string index, std::string indent)
    : group(group), shape(iterationShape), index(std::move(index)),
      indent(std::move(indent)) {}

std::string ElementCode::fresh(const std::string &expression, bool integer) {
  std::string name = "v" + std::to_string(counter++);
  code += indent + (integer ? "const long long " : "const float ") + name + " = " + expression +
          ";\n";
  return name;
}

/// Whether a tensor of `type` is held as an exact integer (i32, i64), not
/// a float (bools are 1.0f / 0.0f).
static bool heldAsInteger(Type type) {
  Type element = cast<RankedTensorType>(type).getElementType();
  return isa<IntegerType>(element) && !element.isInteger(1);
}

std::string ElementCode::coordinate(unsigned dim) {
  auto found = coordinates.find(dim);
  if (found != coordinates.end())
    return found->second;
  SmallVector<int64_t> strides = stridesOf(shape);
  std::string name = "c" + std::to_string(dim) + "_" + std::to_string(counter++);
  int64_t elements = 1;
  for (int64_t d : shape)
    elements *= d;
  // Under 2^31 elements the index fits 32 bits, and a 32-bit division by a
  // constant is one multiply-high where a 64-bit one takes a dozen
  // instructions and their registers (Swin V2-B's fp32 attention-bias
  // epilogue spilled with three of them per element).
  if (elements < (int64_t(1) << 31))
    code += indent + "const long long " + name + " = (long long)(((unsigned)" + index + " / " +
            std::to_string(strides[dim]) + "u) % " + std::to_string(shape[dim]) + "u);\n";
  else
    code += indent + "const long long " + name + " = (" + index + " / " +
            std::to_string(strides[dim]) + "LL) % " + std::to_string(shape[dim]) + "LL;\n";
  coordinates[dim] = name;
  return name;
}

std::string ElementCode::offsetOf(BlockArgument argument) {
  ArrayRef<int64_t> in = cast<RankedTensorType>(argument.getType()).getShape();
  if (in == ArrayRef<int64_t>(shape))
    return index;
  int64_t count = 1;
  for (int64_t d : in)
    count *= d;
  if (count == 1)
    return "0";
  if (!rowIndex.empty() && in.size() == shape.size() && in.back() == 1 &&
      in.drop_back() == ArrayRef<int64_t>(shape).drop_back())
    return rowIndex;
  if (!columnIndex.empty() && in.back() == shape.back() &&
      llvm::all_of(in.drop_back(), [](int64_t d) { return d == 1; }))
    return columnIndex;
  SmallVector<int64_t> strides = stridesOf(in);
  std::string offset;
  size_t lead = shape.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == 1)
      continue;
    std::string term = coordinate(d + lead) +
                       (strides[d] == 1 ? "" : " * " + std::to_string(strides[d]) + "LL");
    offset += (offset.empty() ? "" : " + ") + term;
  }
  return offset.empty() ? "0" : offset;
}

std::string ElementCode::heldOf(Value value) {
  auto found = names.find(value);
  if (found != names.end())
    return found->second;
  auto argument = cast<BlockArgument>(value);
  const std::string input = "in" + std::to_string(argument.getArgNumber());
  std::string element;
  if (ArrayRef<int64_t> in = cast<RankedTensorType>(argument.getType()).getShape();
      namesColumnLoads && in != ArrayRef<int64_t>(shape) && !in.empty() && !shape.empty() &&
      in.back() == shape.back() && in.back() > 1 &&
      llvm::all_of(in.drop_back(), [](int64_t d) { return d == 1; })) {
    if (!llvm::is_contained(columnLoads, argument.getArgNumber()))
      columnLoads.push_back(argument.getArgNumber());
    element = input + "_column";
  } else {
    std::string offset = offsetOf(argument);
    const bool ownIndex = offset == index;
    if (ownIndex && !llvm::is_contained(elementLoads, argument.getArgNumber()))
      elementLoads.push_back(argument.getArgNumber());
    element = deferStores && ownIndex ? input + "_element" : input + "[" + offset + "]";
  }
  if (heldAsInteger(value.getType())) {
    integers.insert(value);
    return names[value] = fresh("(long long)" + element, /*integer=*/true);
  }
  return names[value] = fresh("kiln::to_float(" + element + ")");
}

std::string ElementCode::valueOf(Value value) {
  std::string held = heldOf(value);
  return integers.contains(value) ? "((float)" + held + ")" : held;
}

std::string ElementCode::integerOperand(Value value) {
  std::string held = heldOf(value);
  if (integers.contains(value))
    return held;
  // A bool (1.0f / 0.0f), or a float the IR converts with a cast.
  return "((long long)" + held + ")";
}

void ElementCode::store(unsigned resultIndex, Value value, StringRef at) {
  Type element = cast<RankedTensorType>(value.getType()).getElementType();
  if (deferStores) {
    deferredStores.push_back({resultIndex, at.empty() ? index : at.str(), cudaType(element),
                              heldOf(value), integers.contains(value), {}, {}});
    if (element.isF16())
      findPackedSteps(value, deferredStores.back());
    return;
  }
  // kiln::from_float has a `long long` overload: integers store exactly.
  code += indent + "out" + std::to_string(resultIndex) + "[" + (at.empty() ? index : at.str()) +
          "] = kiln::from_float<" + cudaType(element) + ">(" + heldOf(value) + ");\n";
}

void ElementCode::findPackedSteps(Value value, DeferredStore &store) {
  // Every op's operands and result are fp16 tensors in the model, each
  // rounded as it is computed: rounding the value the steps start from
  // into a pair, and each step's result in half2 arithmetic, is what
  // PyTorch computes (exactly, for the add and the ReLU).
  // KILN_EPILOGUE_HALF2 is a diagnostic for timing and checking both ways:
  // "0" keeps every op in fp32, "exact" stops at a GELU (it and what it
  // reads stay in fp32), as KILN_GELU_ERF=tail does at an erf GELU.
  const char *half2Setting = std::getenv("KILN_EPILOGUE_HALF2");
  const std::string mode = half2Setting ? half2Setting : "";
  const char *erfSetting = std::getenv("KILN_GELU_ERF");
  const bool erfTail = erfSetting && std::string(erfSetting) == "tail";
  if (mode == "0")
    return;
  auto ownF16Input = [&](Value operand) {
    auto argument = dyn_cast<BlockArgument>(operand);
    return argument && llvm::is_contained(elementLoads, argument.getArgNumber()) &&
           cast<RankedTensorType>(argument.getType()).getElementType().isF16();
  };
  llvm::SmallVector<std::string> steps;
  while (Operation *op = value.getDefiningOp()) {
    if (auto gelu = dyn_cast<GeluOp>(op)) {
      const bool tanh = gelu.getApproximate() == GeluApproximation::tanh;
      if (mode == "exact" || (erfTail && !tanh))
        break;
      steps.push_back(tanh ? "kiln::approx::gelu_tanh_half2(%)"
                           : "kiln::approx::gelu_erf_half2(%)");
      value = gelu.getInput();
    } else if (auto relu = dyn_cast<ReluOp>(op)) {
      steps.push_back("kiln::relu_half2(%)");
      value = relu.getInput();
    } else if (auto add = dyn_cast<AddOp>(op);
               add && (ownF16Input(add.getLhs()) || ownF16Input(add.getRhs()))) {
      steps.push_back("kiln::add_half2(%, inputs)");
      value = ownF16Input(add.getRhs()) ? add.getLhs() : add.getRhs();
    } else {
      break;
    }
  }
  if (steps.empty())
    return;
  store.packedBase = valueOf(value);
  store.packedSteps.assign(steps.rbegin(), steps.rend());
}

/// The literal of a splat or scalar constant.
static std::string constantLiteral(ConstantOp op) {
  auto dense = cast<DenseElementsAttr>(op.getValue());
  Type element = op.getType().getElementType();
  if (isa<FloatType>(element))
    return floatLiteral(dense.getSplatValue<APFloat>().convertToDouble());
  APInt v = dense.getSplatValue<APInt>();
  return floatLiteral(element.isInteger(1) ? double(v.getZExtValue())
                                           : double(v.getSExtValue()));
}

/// The row-major offset of `coords` in a tensor of `shape` (size-1
/// dimensions contribute nothing).
static std::string linearOffset(ArrayRef<std::string> coords, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides = stridesOf(shape);
  std::string offset;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    offset += (offset.empty() ? "" : " + ") + ("(" + coords[d] + ")") +
              (strides[d] == 1 ? "" : " * " + std::to_string(strides[d]) + "LL");
  }
  return offset.empty() ? "0" : offset;
}

/// permute, slice and concat of group inputs: each output element loads
/// the input element it comes from. The op must produce the kernel's
/// iteration shape (no broadcasting of a moved tensor).
LogicalResult ElementCode::emitDataMovement(Operation *op) {
  auto resultShape = cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  if (resultShape != ArrayRef<int64_t>(shape))
    return op->emitOpError("in a fused kernel must produce the kernel's iteration shape ")
           << "(" << shape.size() << "-D, " << llvm::join(llvm::map_range(shape, [](int64_t v) {
                return std::to_string(v);
              }), "x")
           << ")";
  for (Value operand : op->getOperands())
    if (!isa<BlockArgument>(operand))
      return op->emitOpError("in a fused kernel moves data only from inputs of the group");
  const bool integer = heldAsInteger(op->getResult(0).getType());
  auto load = [&](Value operand, const std::string &offset) {
    std::string element =
        "in" + std::to_string(cast<BlockArgument>(operand).getArgNumber()) + "[" + offset + "]";
    return integer ? "(long long)" + element : "kiln::to_float(" + element + ")";
  };
  auto shapeOf = [](Value v) { return cast<RankedTensorType>(v.getType()).getShape(); };
  size_t rank = shape.size();
  std::string expression;
  if (auto permute = dyn_cast<PermuteOp>(op)) {
    SmallVector<std::string> coords(rank);
    for (size_t i = 0; i < rank; ++i)
      coords[permute.getPermutation()[i]] = coordinate(i);
    expression = load(permute.getInput(), linearOffset(coords, shapeOf(permute.getInput())));
  } else if (auto slice = dyn_cast<SliceOp>(op)) {
    SmallVector<std::string> coords(rank);
    for (size_t d = 0; d < rank; ++d)
      coords[d] = std::to_string(slice.getOffsets()[d]) + "LL + " + coordinate(d) +
                  (slice.getStrides()[d] == 1
                       ? ""
                       : " * " + std::to_string(slice.getStrides()[d]) + "LL");
    expression = load(slice.getInput(), linearOffset(coords, shapeOf(slice.getInput())));
  } else if (auto cumsum = dyn_cast<CumsumOp>(op)) {
    // Each element sums its own prefix along `dim`: quadratic in the
    // dimension, which models keep short where they use it (position ids
    // from a mask), and no scan across threads. Integers sum exactly;
    // floats in fp32.
    const unsigned dim = static_cast<unsigned>(cumsum.getDim());
    const int64_t stride = stridesOf(shape)[dim];
    std::string along = coordinate(dim), sum = "s" + std::to_string(counter++);
    code += indent + (integer ? "long long " : "float ") + sum + " = 0;\n" + indent +
            "for (long long j = 0; j <= " + along + "; ++j)\n" + indent + "  " + sum +
            " += " + load(cumsum.getInput(), index + " - (" + along + " - j) * " +
                                                  std::to_string(stride) + "LL") +
            ";\n";
    expression = sum;
  } else if (auto gather = dyn_cast<GatherOp>(op)) {
    // Result coordinates: the index's, then the table row's. The index is
    // read as an integer and clamped to [0, V), so a bad id reads a real row.
    ArrayRef<int64_t> indexShape = shapeOf(gather.getIndices());
    ArrayRef<int64_t> tableShape = shapeOf(gather.getTable());
    std::string row = "g" + std::to_string(counter++);
    SmallVector<std::string> indexCoords, rowCoords = {row};
    for (size_t d = 0; d < rank; ++d)
      (d < indexShape.size() ? indexCoords : rowCoords).push_back(coordinate(d));
    code += indent + "const long long " + row + " = min(max((long long)in" +
            std::to_string(cast<BlockArgument>(gather.getIndices()).getArgNumber()) + "[" +
            linearOffset(indexCoords, indexShape) + "], 0LL), " +
            std::to_string(tableShape[0] - 1) + "LL);\n";
    expression = load(gather.getTable(), linearOffset(rowCoords, tableShape));
  } else {
    auto concat = cast<ConcatOp>(op);
    unsigned dim = concat.getDim();
    std::string along = coordinate(dim);
    // c < end0 ? input0 : c < end1 ? input1 : ... : inputLast; only the
    // selected branch loads.
    int64_t start = 0;
    for (auto [index, input] : llvm::enumerate(concat.getInputs())) {
      SmallVector<std::string> coords;
      for (size_t d = 0; d < rank; ++d)
        coords.push_back(d == dim ? along + " - " + std::to_string(start) + "LL"
                                  : coordinate(d));
      std::string value = load(input, linearOffset(coords, shapeOf(input)));
      start += shapeOf(input)[dim];
      bool last = index + 1 == concat.getInputs().size();
      expression += last ? value
                         : "(" + along + " < " + std::to_string(start) + "LL) ? " + value +
                               " : ";
    }
    expression = "(" + expression + ")";
  }
  if (integer)
    integers.insert(op->getResult(0));
  names[op->getResult(0)] = fresh(expression, integer);
  return success();
}

/// The exact integer expression of `value` when it is an integer group
/// input (loaded at its broadcast offset), an integer splat constant, or a
/// broadcast of one; empty otherwise.
std::string ElementCode::integerOf(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!isa<IntegerType>(type.getElementType()) || type.getElementType().isInteger(1))
    return "";
  if (auto argument = dyn_cast<BlockArgument>(value))
    return "(long long)in" + std::to_string(argument.getArgNumber()) + "[" +
           offsetOf(argument) + "]";
  if (auto constant = value.getDefiningOp<ConstantOp>()) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (dense && dense.isSplat())
      return "(" + std::to_string(dense.getSplatValue<APInt>().getSExtValue()) + "LL)";
  }
  if (auto broadcast = value.getDefiningOp<BroadcastOp>())
    return integerOf(broadcast.getInput());
  if (integers.contains(value))
    return names[value];
  return "";
}

/// A comparison, as 1.0f / 0.0f. Integer operands that are inputs or
/// constants compare exactly as integers; floats compare after rounding to
/// their element type (an fp16 sum is compared as the fp16 the reference
/// holds, since a comparison turns the last bit into a whole one).
std::string ElementCode::comparison(Operation *op, StringRef symbol) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  std::string l = integerOf(lhs), r = integerOf(rhs);
  if (l.empty() || r.empty()) {
    auto rounded = [&](Value v) {
      Type element = cast<RankedTensorType>(v.getType()).getElementType();
      std::string x = valueOf(v);
      bool narrow = element.isF16() || element.isBF16();
      return narrow && !isa<BlockArgument>(v) && !v.getDefiningOp<ConstantOp>()
                 ? "kiln::to_float(kiln::from_float<" + cudaType(element) + ">(" + x + "))"
                 : x;
    };
    l = rounded(lhs);
    r = rounded(rhs);
  }
  return "((" + l + " " + symbol.str() + " " + r + ") ? 1.0f : 0.0f)";
}

/// x ^ y; a constant exponent of 2, 3, 0.5, -0.5, -1 or -2 as products and
/// square roots, as ATen's pow does for a scalar exponent (GPT-2's GELU
/// cubes its input: powf would cost a log and an exp per element).
static std::string power(PowOp pow, const std::string &base, const std::string &exponent) {
  if (std::optional<double> constant = splatFloatValue(pow.getRhs())) {
    const double y = *constant;
    if (y == 2.0)
      return "(" + base + " * " + base + ")";
    if (y == 3.0)
      return "(" + base + " * " + base + " * " + base + ")";
    if (y == 0.5)
      return "sqrtf(" + base + ")";
    if (y == -0.5)
      return "rsqrtf(" + base + ")";
    if (y == -1.0)
      return "(1.0f / " + base + ")";
    if (y == -2.0)
      return "(1.0f / (" + base + " * " + base + "))";
  }
  return "powf(" + base + ", " + exponent + ")";
}

/// An op with an i32 or i64 result, held as an exact `long long`: PyTorch's
/// integer semantics (truncating casts from floats, two's-complement
/// wrap-around at 32 bits for i32) where fp32 would round past 2^24.
LogicalResult ElementCode::emitInteger(Operation *op) {
  Type element = cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  auto operand = [&](unsigned i) { return integerOperand(op->getOperand(i)); };
  // i32 arithmetic wraps as PyTorch's does.
  auto wrapped = [&](const std::string &expression) {
    return element.isInteger(32) ? "(long long)(int)(" + expression + ")" : expression;
  };
  std::string expression =
      llvm::TypeSwitch<Operation *, std::string>(op)
          .Case([&](ConstantOp c) {
            auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
            return dense && dense.isSplat()
                       ? "(" + std::to_string(dense.getSplatValue<APInt>().getSExtValue()) +
                             "LL)"
                       : std::string();
          })
          .Case([&](AddOp) { return wrapped("(" + operand(0) + " + " + operand(1) + ")"); })
          .Case([&](SubOp) { return wrapped("(" + operand(0) + " - " + operand(1) + ")"); })
          .Case([&](MulOp) { return wrapped("(" + operand(0) + " * " + operand(1) + ")"); })
          .Case([&](NegOp) { return wrapped("(-" + operand(0) + ")"); })
          .Case([&](AbsOp) {
            std::string x = operand(0);
            return wrapped("(" + x + " < 0 ? -" + x + " : " + x + ")");
          })
          .Case([&](MaxOp) { return "max(" + operand(0) + ", " + operand(1) + ")"; })
          .Case([&](MinOp) { return "min(" + operand(0) + ", " + operand(1) + ")"; })
          .Case([&](ClampOp c) {
            std::string x = operand(0);
            if (c.getMaxAttr())
              x = "min(" + x + ", " +
                  std::to_string(
                      static_cast<long long>(std::floor(c.getMaxAttr().getValueAsDouble()))) +
                  "LL)";
            if (c.getMinAttr())
              x = "max(" + x + ", " +
                  std::to_string(
                      static_cast<long long>(std::ceil(c.getMinAttr().getValueAsDouble()))) +
                  "LL)";
            return x;
          })
          .Case([&](WhereOp) {
            std::string condition = heldOf(op->getOperand(0));
            condition = integers.contains(op->getOperand(0)) ? "(" + condition + " != 0)"
                                                             : "(" + condition + " != 0.0f)";
            std::string a = operand(1), b = operand(2);
            return "(" + condition + " ? " + a + " : " + b + ")";
          })
          .Case([&](CastOp c) {
            Value input = c.getInput();
            std::string x = heldOf(input);
            if (integers.contains(input))
              return wrapped(x);
            Type from = cast<RankedTensorType>(input.getType()).getElementType();
            // A bool is 1.0f / 0.0f; a float truncates toward zero.
            return from.isInteger(1) ? "(" + x + " != 0.0f ? 1LL : 0LL)"
                                     : wrapped("(long long)" + x);
          })
          .Default([](Operation *) { return std::string(); });
  if (expression.empty())
    return op->emitOpError("on ") << element
                                  << " tensors in a fused kernel is not supported by kiln's "
                                     "code generator yet";
  integers.insert(op->getResult(0));
  names[op->getResult(0)] = fresh(expression, /*integer=*/true);
  return success();
}

LogicalResult ElementCode::emit(Operation *op) {
  if (isa<PermuteOp, SliceOp, ConcatOp, GatherOp, CumsumOp>(op))
    return emitDataMovement(op);
  // A broadcast is the identity here: every value is already read at the
  // broadcast position of the kernel's element.
  if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    names[broadcast.getResult()] = heldOf(broadcast.getInput());
    if (integers.contains(broadcast.getInput()))
      integers.insert(broadcast.getResult());
    return success();
  }
  if (op->getNumResults() == 1 && heldAsInteger(op->getResult(0).getType()))
    return emitInteger(op);
  if (isa<EqOp, NeOp, LtOp, LeOp, GtOp, GeOp>(op)) {
    StringRef symbol = llvm::TypeSwitch<Operation *, StringRef>(op)
                           .Case([](EqOp) { return "=="; })
                           .Case([](NeOp) { return "!="; })
                           .Case([](LtOp) { return "<"; })
                           .Case([](LeOp) { return "<="; })
                           .Case([](GtOp) { return ">"; })
                           .Default([](Operation *) { return ">="; });
    names[op->getResult(0)] = fresh(comparison(op, symbol));
    return success();
  }
  // Load operands in order before building the expression: the order in
  // which `+` evaluates its operands is unspecified.
  std::vector<std::string> operands;
  for (Value v : op->getOperands())
    operands.push_back(valueOf(v));
  auto operand = [&](unsigned i) { return operands[i]; };
  Type resultElement;
  if (op->getNumResults() == 1)
    resultElement = cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  // A half result is rounded to 11 (or 8) bits: the hardware approximations
  // (kiln_common.cuh's kiln::approx) are exact enough and several times
  // cheaper.
  const bool halfResult = resultElement && (resultElement.isF16() || resultElement.isBF16());
  const std::string fast = halfResult ? "approx::" : "";
  std::string expression =
      llvm::TypeSwitch<Operation *, std::string>(op)
          .Case([&](ConstantOp c) {
            auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
            return dense && dense.isSplat() ? constantLiteral(c) : std::string();
          })
          .Case([&](AddOp) { return "(" + operand(0) + " + " + operand(1) + ")"; })
          .Case([&](SubOp) { return "(" + operand(0) + " - " + operand(1) + ")"; })
          .Case([&](MulOp) { return "(" + operand(0) + " * " + operand(1) + ")"; })
          .Case([&](DivOp) {
            return halfResult ? "kiln::approx::div(" + operand(0) + ", " + operand(1) + ")"
                              : "(" + operand(0) + " / " + operand(1) + ")";
          })
          .Case([&](MaxOp) { return "kiln::nan_max(" + operand(0) + ", " + operand(1) + ")"; })
          .Case([&](MinOp) { return "kiln::nan_min(" + operand(0) + ", " + operand(1) + ")"; })
          .Case([&](PowOp pow) { return power(pow, operand(0), operand(1)); })
          .Case([&](NegOp) { return "(-" + operand(0) + ")"; })
          .Case([&](AbsOp) { return "fabsf(" + operand(0) + ")"; })
          .Case([&](ReluOp) { return "kiln::relu(" + operand(0) + ")"; })
          .Case([&](ExpOp) { return (halfResult ? "kiln::approx::exp(" : "expf(") + operand(0) + ")"; })
          .Case([&](LogOp) { return "logf(" + operand(0) + ")"; })
          .Case([&](SqrtOp) { return "sqrtf(" + operand(0) + ")"; })
          .Case([&](RsqrtOp) { return "rsqrtf(" + operand(0) + ")"; })
          .Case([&](TanhOp) { return "tanhf(" + operand(0) + ")"; })
          .Case([&](SigmoidOp) { return "kiln::" + fast + "sigmoid(" + operand(0) + ")"; })
          .Case([&](ErfOp) { return (halfResult ? "kiln::approx::erf(" : "erff(") + operand(0) + ")"; })
          .Case([&](SiluOp) { return "kiln::" + fast + "silu(" + operand(0) + ")"; })
          .Case([&](GeluOp g) {
            if (g.getApproximate() == GeluApproximation::tanh)
              return "kiln::" + fast + "gelu_tanh(" + operand(0) + ")";
            // KILN_GELU_ERF=tail: a diagnostic for timing the erf GELU's
            // epilogue with 14% fewer instructions on the GPU machine
            // (kiln::approx::gelu_erf_tail; the source, and so the kernel
            // cache's key, differs).
            const char *form = std::getenv("KILN_GELU_ERF");
            const bool tail = halfResult && form && std::string(form) == "tail";
            return "kiln::" + fast + (tail ? "gelu_erf_tail(" : "gelu_erf(") + operand(0) + ")";
          })
          .Case([&](ClampOp c) {
            std::string lo = c.getMinAttr() ? floatLiteral(c.getMinAttr().getValueAsDouble())
                                             : "-INFINITY";
            std::string hi = c.getMaxAttr() ? floatLiteral(c.getMaxAttr().getValueAsDouble())
                                             : "INFINITY";
            return "kiln::clamp(" + operand(0) + ", " + lo + ", " + hi + ")";
          })
          .Case([&](CastOp c) {
            Type to = c.getType().getElementType();
            if (to.isF32())
              return operand(0);
            if (to.isInteger(1))
              return "(" + operand(0) + " != 0.0f ? 1.0f : 0.0f)";
            if (isa<IntegerType>(to))
              return "truncf(" + operand(0) + ")";
            // Round through the narrow type, as the tensor would hold it.
            return "kiln::to_float(kiln::from_float<" + cudaType(to) + ">(" +
                   operand(0) + "))";
          })
          .Case([&](WhereOp) {
            return "(" + operand(0) + " != 0.0f ? " + operand(1) + " : " +
                   operand(2) + ")";
          })
          .Default([](Operation *) { return std::string(); });
  if (expression.empty())
    return op->emitOpError("has no CUDA form in an elementwise kernel");
  // A rounding to 16 bits stays an expression on its operand's variable: a
  // store (or a packed pair) of it then rounds once, not through a float
  // (EpilogueFunctor.cpp's withoutRounding), and repeated uses are one
  // conversion to the compiler.
  auto rounding = dyn_cast<CastOp>(op);
  const bool roundsToHalf = rounding && isa<FloatType>(rounding.getType().getElementType()) &&
                            !rounding.getType().getElementType().isF32() &&
                            isa<FloatType>(rounding.getInput().getType().getElementType());
  if (isa<ConstantOp>(op) || roundsToHalf)
    names[op->getResult(0)] = expression;
  else
    names[op->getResult(0)] = fresh(expression);
  return success();
}
