//===- kiln-translate.cpp - kiln IR -> CUDA C++ for FileCheck -------------===//
//
//   kiln-translate --kiln-to-cuda input.mlir
//
// Prints every kernel the code generator emits for the module's fusion
// groups, each after a line giving its name and launch configuration.
// Groups without a `kiln.kernel` configuration get kiln-select-kernels'
// choice for the default targets (sm_90a, sm_80); a written one is kept, so
// a test forces a variant by writing it.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "kiln/Passes/Passes.h"
#include "kiln/codegen/CudaEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;

/// The kernels of `op`, which must be a module; fails with an error.
static FailureOr<std::vector<kiln::codegen::EmittedKernel>> kernelsOf(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("expected a module");
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(kiln::createKilnSelectKernels());
  if (failed(pm.run(module)))
    return failure();
  return kiln::codegen::emitModuleKernels(module);
}

static void registerDialects(DialectRegistry &registry) {
  registry.insert<kiln::KilnDialect, func::FuncDialect>();
}

int main(int argc, char **argv) {
  TranslateFromMLIRRegistration toCuda(
      "kiln-to-cuda", "print the CUDA kernels of kiln fusion groups",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto kernels = kernelsOf(op);
        if (failed(kernels))
          return failure();
        for (const kiln::codegen::EmittedKernel &k : *kernels) {
          os << "// === kernel " << k.name << " grid(" << k.grid[0] << ", "
             << k.grid[1] << ", " << k.grid[2] << ") block(" << k.block
             << ") shared(" << k.dynamicSharedBytes << ") inputs(" << k.numInputs
             << ") outputs(" << k.numOutputs << ")\n";
          // Tensor maps as the runtime will encode them (sizes innermost first).
          for (const kiln::codegen::TensorMapArg &map : k.tensorMaps) {
            os << "// tensor map of in" << map.input << ": dims [";
            llvm::interleaveComma(map.dims, os);
            os << "] box [";
            llvm::interleaveComma(map.box, os);
            os << "] strides [";
            llvm::interleaveComma(map.elementStrides, os);
            os << "]\n";
          }
          os << k.source;
        }
        return success();
      },
      registerDialects);
  TranslateFromMLIRRegistration toPtx(
      "kiln-to-sm90a-ptx",
      "compile every kernel with NVRTC for sm_90a and print its PTX",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto kernels = kernelsOf(op);
        if (failed(kernels))
          return failure();
        for (const kiln::codegen::EmittedKernel &k : *kernels) {
          std::string error;
          auto compiled = kiln::codegen::compileKernel(k, "sm_90a", error);
          if (!compiled)
            return op->emitError(error);
          os << "// === ptx " << k.name << "\n" << compiled->ptx;
        }
        return success();
      },
      registerDialects);
  return failed(mlirTranslateMain(argc, argv, "kiln translation driver"));
}
