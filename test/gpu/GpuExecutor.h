//===- GpuExecutor.h - run compiled kiln IR on the GPU, for tests -*- C++ -*-===//
//
// A test-only executor: compiles every kernel of a function with NVRTC for
// the device's architecture, places intermediates at the offsets
// kiln-plan-memory chose, uploads weights, launches the kernels in order and
// returns the function's results. Outputs are poisoned with NaN first, so an
// element a kernel forgets to write fails the comparison.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_GPU_GPUEXECUTOR_H
#define KILN_TEST_GPU_GPUEXECUTOR_H

#include "kiln/codegen/CudaEmitter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace kiln::testing {

/// Runs `function` on the GPU. Throws kiln::rt::Error (NoDeviceError when
/// there is no GPU) or std::runtime_error naming what failed.
/// The module's kernels as the compiler would emit them: kiln-select-kernels
/// (default targets; configurations written in the IR are kept), then the
/// code generator.
mlir::FailureOr<std::vector<codegen::EmittedKernel>> emitSelectedKernels(mlir::ModuleOp module);

std::vector<at::Tensor> runOnGpu(mlir::func::FuncOp function,
                                 const std::vector<at::Tensor> &inputs);

/// ||actual - expected|| / ||expected|| in float64 (NaN if either has a NaN).
double relativeL2(const at::Tensor &actual, const at::Tensor &expected);

} // namespace kiln::testing

#endif // KILN_TEST_GPU_GPUEXECUTOR_H
