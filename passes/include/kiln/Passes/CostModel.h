//===- CostModel.h - FLOPs and bytes of kiln ops and groups -----*- C++ -*-===//
//
// The numbers behind `kiln-compile --report` and the roofline: arithmetic
// per op, and the fewest bytes a kernel must move (each input read once, each
// result written once).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_COSTMODEL_H
#define KILN_PASSES_COSTMODEL_H

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kiln {

int64_t bytesOf(mlir::Type tensorType);
/// Floating-point (or integer) operations `op` performs; 0 for data movement.
int64_t flopsOf(mlir::Operation *op);
/// Whether `op` needs a kernel of its own when not fused: reshapes are views
/// and constants are data.
bool needsKernel(mlir::Operation *op);

struct KernelStats {
  std::string kind;           // fusion kind, or the op name outside groups
  std::vector<std::string> ops; // op names inside, in order
  std::string resultTypes;
  int64_t flops = 0;
  int64_t bytes = 0;          // fused: inputs + results, once each
  int64_t unfusedKernels = 0; // the same ops, each its own kernel
  int64_t unfusedBytes = 0;
  /// The artifact's kernel for this launch, when the caller wrote one.
  std::string kernelName;
  /// A fusion group's tuning key (KernelTuning.h) and its `#kiln.kernel`
  /// configuration where selection has run: what a tuner records.
  std::string tuningKey, kernelConfig;
};

struct FusionReport {
  std::string function;
  std::vector<KernelStats> kernels;
  int64_t flops = 0, bytes = 0, unfusedKernels = 0, unfusedBytes = 0;
  /// From kiln-plan-memory when it ran: the arena and what it would be
  /// without reuse.
  int64_t arenaBytes = -1, intermediateBytes = -1;
};

FusionReport analyzeKernels(mlir::func::FuncOp function);
void printReport(llvm::raw_ostream &os, const FusionReport &report);

} // namespace kiln

#endif // KILN_PASSES_COSTMODEL_H
