//===- kiln-opt.cpp - MLIR optimizer driver with kiln's dialect and pas ---===//
//
// The tool lit tests run passes with: the kiln dialect, func, and every kiln
// pass and pipeline, plus MLIR's generic transforms (canonicalize, cse).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "kiln/Passes/Passes.h"
#include "kiln/codegen/Passes.h"
#include "kiln/Passes/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  kiln::registerKilnPasses();
  kiln::registerKilnCodegenPasses();
  kiln::registerKilnPipelines();
  mlir::DialectRegistry registry;
  registry.insert<kiln::KilnDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "kiln optimizer driver\n", registry));
}
