//===- KilnVerify.h - compare kiln IR with LibTorch numerically -*- C++ -*-===//

#ifndef KILN_FRONTEND_TORCHSCRIPT_KILNVERIFY_H
#define KILN_FRONTEND_TORCHSCRIPT_KILNVERIFY_H

#include "TorchScriptModule.h"

#include "kiln/Dialect/Kiln/KilnDialect.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace kiln::frontend {

/// Tolerance on the relative L2 error ||kiln - torch|| / ||torch|| by element
/// type (f32 1e-5, f16/bf16 1e-2, integers and bool exact) or by compute
/// precision (fp32 1e-5, tf32 1e-3, fp16/bf16 1e-2).
double toleranceFor(const std::string &dtype);
double toleranceFor(Precision precision);

/// Draws fresh random inputs for `specs`, runs LibTorch on the original
/// module and the reference evaluator on `imported` and `optimized`, and
/// appends to `report` one line per (stage, output) with the max abs and the
/// relative L2 error. The optimized IR computes in the precision its
/// function records (`kiln.precision`, fp32 without one) and is held to the
/// looser of its output type's and that precision's tolerance. False if any error exceeds its tolerance or a run
/// fails; when LibTorch itself fails on the inputs, `failure` says why
/// (with how to give integer inputs' values) and nothing is compared.
bool verifyAgainstTorch(TorchScriptModule &model,
                        const std::vector<InputSpec> &specs,
                        mlir::ModuleOp imported, mlir::ModuleOp optimized,
                        std::string &report, std::string &failure);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_TORCHSCRIPT_KILNVERIFY_H
