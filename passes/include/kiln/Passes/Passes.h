//===- Passes.h - kiln's graph passes ---------------------------*- C++ -*-===//

#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "kiln/Passes/KernelSelection.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "kiln/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Passes/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_PASSES_H
