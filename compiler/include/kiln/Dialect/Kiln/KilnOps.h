//===- KilnOps.h - the kiln dialect's ops -----------------------*- C++ -*-===//

#ifndef KILN_DIALECT_KILN_KILNOPS_H
#define KILN_DIALECT_KILN_KILNOPS_H

#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "kiln/Dialect/Kiln/KilnOps.h.inc"

#include <optional>
#include <vector>

namespace kiln {

/// The value of a float constant that holds one value throughout (rank 0 or
/// a splat), or nothing.
std::optional<double> splatFloatValue(mlir::Value value);

/// Every element of an integer, boolean or float constant (dense or a
/// resource) as a double, in row-major order; nothing for other constants.
std::optional<std::vector<double>> constantElements(ConstantOp constant);

/// The bytes of a constant's value of `type`, row-major (a splat expanded;
/// dense or a resource blob), or nothing.
std::optional<std::vector<char>> constantValueBytes(mlir::Attribute value,
                                               mlir::RankedTensorType type);

/// A constant of `type` whose elements are `bytes` (row-major, the
/// element type's own encoding), as a resource blob named after `name`.
ConstantOp makeRawConstant(mlir::OpBuilder &builder, mlir::Location loc,
                           mlir::RankedTensorType type, llvm::ArrayRef<char> bytes,
                           llvm::StringRef name);

/// A constant of float `type` holding `values` (row-major) rounded to
/// nearest even, as a resource blob named after `name`.
ConstantOp makeFloatConstant(mlir::OpBuilder &builder, mlir::Location loc,
                             mlir::RankedTensorType type, llvm::ArrayRef<double> values,
                             llvm::StringRef name);

/// The dimensions a reduce_sum, reduce_mean or reduce_max reduces.
llvm::ArrayRef<int64_t> reducedDims(mlir::Operation *reduce);

} // namespace kiln

#endif // KILN_DIALECT_KILN_KILNOPS_H
