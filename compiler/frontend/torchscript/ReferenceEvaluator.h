//===- ReferenceEvaluator.h - run kiln IR on the CPU with ATen --*- C++ -*-===//
//
// The semantics kiln's kernels must reproduce, executed op by op with ATen's
// CPU kernels: it checks, without a GPU, that import and every graph pass
// keep the model's function. Reduced-precision ops accumulate in fp32 (GEMM,
// normalization statistics, softmax), as kiln's kernels do.
//
// Internal to this folder: the interface speaks at::Tensor.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_TORCHSCRIPT_REFERENCEEVALUATOR_H
#define KILN_FRONTEND_TORCHSCRIPT_REFERENCEEVALUATOR_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

namespace kiln::frontend {

/// Runs `function` on `inputs`. Returns nothing and sets `error` (naming the
/// op) on an op it cannot evaluate or a result whose shape or dtype differs
/// from the IR's type.
std::optional<std::vector<at::Tensor>>
evaluateReference(mlir::func::FuncOp function,
                  const std::vector<at::Tensor> &inputs, std::string &error);

std::optional<c10::ScalarType> scalarTypeOf(mlir::Type elementType);

/// The data of a kiln.constant as a CPU tensor of its type.
std::optional<at::Tensor> constantValue(mlir::Operation *constant,
                                        std::string &error);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_TORCHSCRIPT_REFERENCEEVALUATOR_H
