//===- kiln-translate.cpp - kiln IR -> CUDA C++ for FileCheck -------------===//
//
//   kiln-translate --kiln-to-cuda input.mlir
//
// Prints the kernel of every launch of the module, in program order, each
// after a line giving its launch in the first image (labelled
// `<function>_k<index>`) and its tensor maps. It reads the same ops the
// artifact writer serializes: fusion groups are first given kernels by
// kiln-select-kernels (for the default images, sm_90a and sm_80; a written
// `kiln.kernel` is kept, so a test forces a variant by writing it) and
// lowered by kiln-lower-launches; IR already lowered is read as it is.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "kiln/Passes/Passes.h"
#include "kiln/codegen/CudaEmitter.h"
#include "kiln/codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;

namespace {
/// One launch as the first image runs it, with its kernel's source.
struct PrintedLaunch {
  std::string label;
  kiln::LaunchConfigAttr config;
  kiln::CudaKernelOp kernel;
  unsigned inputs = 0, outputs = 0;
  mlir::DenseI64ArrayAttr workspace; // offset and bytes in the arena, if any
};
} // namespace

/// The launches of `op`, which must be a module (lowered here when it holds
/// fusion groups); fails with an error.
static FailureOr<std::vector<PrintedLaunch>> launchesOf(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("expected a module");
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(kiln::createKilnSelectKernels());
  pm.addPass(kiln::createKilnLowerLaunches());
  if (failed(pm.run(module)))
    return failure();
  std::vector<PrintedLaunch> launches;
  for (auto fn : module.getOps<func::FuncOp>()) {
    unsigned index = 0;
    for (auto launch : fn.getBody().getOps<kiln::LaunchOp>()) {
      auto config = cast<kiln::LaunchConfigAttr>(launch.getImages()[0]);
      launches.push_back({(fn.getName() + "_k" + Twine(index++)).str(), config,
                          module.lookupSymbol<kiln::CudaKernelOp>(config.getKernel()),
                          static_cast<unsigned>(launch.getInputs().size()),
                          static_cast<unsigned>(launch.getResults().size()),
                          launch->getAttrOfType<DenseI64ArrayAttr>(kiln::attr::kWorkspace)});
    }
  }
  return launches;
}

static void registerDialects(DialectRegistry &registry) {
  registry.insert<kiln::KilnDialect, func::FuncDialect>();
}

int main(int argc, char **argv) {
  TranslateFromMLIRRegistration toCuda(
      "kiln-to-cuda", "print the CUDA kernel of every launch of the module",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto launches = launchesOf(op);
        if (failed(launches))
          return failure();
        for (PrintedLaunch &l : *launches) {
          ArrayRef<int64_t> grid = l.config.getGrid();
          os << "// === kernel " << l.label << " grid(" << grid[0] << ", " << grid[1] << ", "
             << grid[2] << ") block(" << l.config.getBlock() << ") shared("
             << l.config.getShared() << ") inputs(" << l.inputs << ") outputs(" << l.outputs
             << ")";
          if (!l.config.getCluster().empty()) {
            os << " cluster(";
            llvm::interleaveComma(l.config.getCluster(), os);
            os << ")";
          }
          if (l.workspace)
            os << " workspace(" << l.workspace[0] << ", " << l.workspace[1] << ")";
          if (!l.config.getScalars().empty()) {
            os << " integers(";
            llvm::interleaveComma(l.config.getScalars(), os);
            os << ")";
          }
          os << "\n";
          // Tensor maps as the runtime will encode them (sizes innermost first).
          if (ArrayAttr maps = l.config.getTensorMaps())
            for (Attribute attribute : maps) {
              auto map = cast<kiln::TensorMapAttr>(attribute);
              os << "// tensor map of in" << map.getInput() << ": dims [";
              llvm::interleaveComma(map.getDims(), os);
              os << "] box [";
              llvm::interleaveComma(map.getBox(), os);
              os << "] strides [";
              llvm::interleaveComma(map.getStrides(), os);
              os << "]\n";
            }
          os << l.kernel.getSource();
        }
        return success();
      },
      registerDialects);
  TranslateFromMLIRRegistration toPtx(
      "kiln-to-sm90a-ptx",
      "compile the kernel of every launch with NVRTC for sm_90a and print its PTX",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto launches = launchesOf(op);
        if (failed(launches))
          return failure();
        for (PrintedLaunch &l : *launches) {
          kiln::codegen::EmittedKernel kernel;
          kernel.name = l.kernel.getSymName().str();
          kernel.source = l.kernel.getSource().str();
          std::string error;
          auto compiled = kiln::codegen::compileKernel(kernel, "sm_90a", error);
          if (!compiled)
            return op->emitError(error);
          os << "// === ptx " << l.label << "\n" << compiled->ptx;
        }
        return success();
      },
      registerDialects);
  return failed(mlirTranslateMain(argc, argv, "kiln translation driver"));
}
