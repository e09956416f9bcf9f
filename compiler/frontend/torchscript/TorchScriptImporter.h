//===- TorchScriptImporter.h - TorchScript graph -> kiln dialect -*- C++ -*-===//
//
// Imports a loaded, specialized TorchScript module into a `func.func
// @forward` of kiln ops. Free of torch headers.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_TORCHSCRIPT_TORCHSCRIPTIMPORTER_H
#define KILN_FRONTEND_TORCHSCRIPT_TORCHSCRIPTIMPORTER_H

#include "TorchScriptModule.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace kiln::frontend {

/// Imports `module` (already specialize()d). On failure returns null and sets
/// `error`: an unsupported model gets one message listing every unsupported
/// operator with its count and first Python source line.
mlir::OwningOpRef<mlir::ModuleOp> importTorchScript(TorchScriptModule &module,
                                                    mlir::MLIRContext &context,
                                                    std::string &error);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_TORCHSCRIPT_TORCHSCRIPTIMPORTER_H
