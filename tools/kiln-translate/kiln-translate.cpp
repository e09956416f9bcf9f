//===- kiln-translate.cpp - kiln IR -> CUDA C++ for FileCheck -------------===//
//
//   kiln-translate --kiln-to-cuda input.mlir
//
// Prints every kernel the code generator emits for the module's fusion
// groups, each after a line giving its name and launch configuration.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "kiln/codegen/CudaEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;

int main(int argc, char **argv) {
  TranslateFromMLIRRegistration toCuda(
      "kiln-to-cuda", "print the CUDA kernels of kiln fusion groups",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a module");
        auto kernels = kiln::codegen::emitModuleKernels(module);
        if (failed(kernels))
          return failure();
        for (const kiln::codegen::EmittedKernel &k : *kernels)
          os << "// === kernel " << k.name << " grid(" << k.grid[0] << ", "
             << k.grid[1] << ", " << k.grid[2] << ") block(" << k.block
             << ") shared(" << k.dynamicSharedBytes << ") inputs(" << k.numInputs
             << ") outputs(" << k.numOutputs << ")\n"
             << k.source;
        return success();
      },
      [](DialectRegistry &registry) {
        registry.insert<kiln::KilnDialect, func::FuncDialect>();
      });
  TranslateFromMLIRRegistration toPtx(
      "kiln-to-sm90a-ptx",
      "compile every kernel with NVRTC for sm_90a and print its PTX",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a module");
        auto kernels = kiln::codegen::emitModuleKernels(module);
        if (failed(kernels))
          return failure();
        for (const kiln::codegen::EmittedKernel &k : *kernels) {
          std::string error;
          auto compiled = kiln::codegen::compileKernel(k, "sm_90a", error);
          if (!compiled)
            return module.emitError(error);
          os << "// === ptx " << k.name << "\n" << compiled->ptx;
        }
        return success();
      },
      [](DialectRegistry &registry) {
        registry.insert<kiln::KilnDialect, func::FuncDialect>();
      });
  return failed(mlirTranslateMain(argc, argv, "kiln translation driver"));
}
