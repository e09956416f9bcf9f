//===- KilnOps.h - the kiln dialect's ops -----------------------*- C++ -*-===//

#ifndef KILN_DIALECT_KILN_KILNOPS_H
#define KILN_DIALECT_KILN_KILNOPS_H

#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "kiln/Dialect/Kiln/KilnOps.h.inc"

#endif // KILN_DIALECT_KILN_KILNOPS_H
