//===- Passes.h - kiln's code generation passes -----------------*- C++ -*-===//

#ifndef KILN_CODEGEN_PASSES_H
#define KILN_CODEGEN_PASSES_H

#include "kiln/Dialect/Kiln/KilnDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "kiln/codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/codegen/Passes.h.inc"

} // namespace kiln

#endif // KILN_CODEGEN_PASSES_H
