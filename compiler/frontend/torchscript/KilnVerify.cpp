//===- KilnVerify.cpp - compare kiln IR with LibTorch numerically ---------===//
//
// Float inputs are drawn fresh (another seed than the specializing run), so
// the check covers values the compiler never saw; integer inputs keep their
// meaning (exampleInput: the declared range, a mask of ones). LibTorch runs the frozen
// module as the user would; a NaN anywhere fails.
//
//===----------------------------------------------------------------------===//

#include "KilnVerify.h"
#include "ReferenceEvaluator.h"
#include "TorchScriptState.h"

#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Dialect/Kiln/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <torch/csrc/jit/runtime/interpreter.h>

#include <cstdio>

using namespace kiln::frontend;

double kiln::frontend::toleranceFor(const std::string &dtype) {
  if (dtype == "f32")
    return 1e-5;
  if (dtype == "f16" || dtype == "bf16")
    return 1e-2;
  return 0.0;
}

double kiln::frontend::toleranceFor(Precision precision) {
  switch (precision) {
  case Precision::fp32:
    return 1e-5;
  case Precision::tf32:
    return 1e-3;
  case Precision::fp16:
  case Precision::bf16:
    return 1e-2;
  }
  return 0.0;
}

namespace {
struct Error {
  double maxAbs = 0, relL2 = 0;
};

Error compare(const at::Tensor &actual, const at::Tensor &expected) {
  at::Tensor a = actual.to(c10::kDouble), e = expected.to(c10::kDouble);
  Error error;
  error.maxAbs = (a - e).abs().max().item<double>();
  double norm = e.norm().item<double>();
  double diff = (a - e).norm().item<double>();
  error.relL2 = norm > 0 ? diff / norm : diff;
  return error;
}

std::optional<mlir::func::FuncOp> forwardOf(mlir::ModuleOp module) {
  if (auto fn = module.lookupSymbol<mlir::func::FuncOp>("forward"))
    return fn;
  return std::nullopt;
}
} // namespace

bool kiln::frontend::verifyAgainstTorch(TorchScriptModule &model,
                                        const std::vector<InputSpec> &specs,
                                        mlir::ModuleOp imported,
                                        mlir::ModuleOp optimized,
                                        std::string &report, std::string &failure) {
  TorchScriptModule::State &state = model.state();
  std::vector<std::string> names = model.inputNames();
  std::vector<at::Tensor> inputs(names.size());
  std::vector<std::string> drawnIntegers;
  at::manual_seed(20261129);
  for (const InputSpec &spec : specs) {
    size_t index = std::find(names.begin(), names.end(), spec.name) - names.begin();
    bool drawn = false;
    inputs[index] = exampleInput(spec, drawn);
    if (drawn)
      drawnIntegers.push_back(spec.name);
  }

  std::vector<at::Tensor> expected;
  try {
    if (state.exportedGraph) {
      // A torch.export archive: its graph's ATen ops, run by the interpreter.
      torch::jit::Stack stack(inputs.begin(), inputs.end());
      torch::jit::Code code(state.exportedGraph, "forward");
      torch::jit::InterpreterState interpreter(code);
      interpreter.run(stack);
      for (const c10::IValue &value : stack)
        for (const at::Tensor &tensor : flattenOutputValue(value))
          expected.push_back(tensor);
    } else {
      std::vector<c10::IValue> args(inputs.begin(), inputs.end());
      expected = flattenOutputValue(state.frozen.forward(args));
    }
  } catch (const std::exception &e) {
    failure = "LibTorch failed on the verification inputs " + summarizeInterpreterError(e.what()) +
              drawnIntegersHint(drawnIntegers);
    return false;
  }

  bool ok = true;
  char line[256];
  std::pair<const char *, mlir::ModuleOp> stages[] = {{"imported", imported},
                                                      {"optimized", optimized}};
  for (auto [stage, module] : stages) {
    std::optional<mlir::func::FuncOp> fn = forwardOf(module);
    Precision precision = Precision::fp32;
    if (fn)
      if (auto recorded = (*fn)->getAttrOfType<PrecisionAttr>(attr::kPrecision))
        precision = recorded.getValue();
    std::string error;
    // Compiled with --io-dtype, the optimized function takes the compute
    // type: the same values, rounded as a caller holding them would have.
    std::vector<at::Tensor> stageInputs = inputs;
    if (fn)
      for (auto [input, type] : llvm::zip(stageInputs, fn->getArgumentTypes())) {
        auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type);
        if (!tensor || !at::isFloatingType(input.scalar_type()))
          continue;
        mlir::Type element = tensor.getElementType();
        if (element.isF16())
          input = input.to(c10::kHalf);
        else if (element.isBF16())
          input = input.to(c10::kBFloat16);
      }
    std::optional<std::vector<at::Tensor>> actual =
        fn ? evaluateReference(*fn, stageInputs, error) : std::nullopt;
    if (!actual) {
      report += std::string(stage) + ": " + (fn ? error : "no @forward") + "\n";
      ok = false;
      continue;
    }
    if (actual->size() != expected.size()) {
      report += std::string(stage) + ": " + std::to_string(actual->size()) +
                " outputs, LibTorch gives " + std::to_string(expected.size()) + "\n";
      ok = false;
      continue;
    }
    for (size_t i = 0; i < actual->size(); ++i) {
      std::string dtype = dtypeName((*actual)[i].scalar_type());
      Error err = compare((*actual)[i], expected[i]);
      double tolerance = toleranceFor(dtype);
      if (std::string(stage) == "optimized")
        tolerance = std::max(tolerance, toleranceFor(precision));
      bool pass = err.relL2 <= tolerance && !std::isnan(err.relL2) &&
                  !std::isnan(err.maxAbs);
      ok &= pass;
      std::snprintf(line, sizeof(line),
                    "verify %-9s output %zu (%s): max abs %.3e, rel L2 %.3e "
                    "(tolerance %.0e) %s\n",
                    stage, i, dtype.c_str(), err.maxAbs, err.relL2, tolerance,
                    pass ? "ok" : "FAIL");
      report += line;
    }
  }
  return ok;
}
