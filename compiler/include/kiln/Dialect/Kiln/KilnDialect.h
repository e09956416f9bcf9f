//===- KilnDialect.h - the kiln dialect -------------------------*- C++ -*-===//
//
// Declares the dialect, its enums and attributes, and the KilnElementwise
// marker trait. Include KilnOps.h for the ops themselves.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_KILNDIALECT_H
#define KILN_DIALECT_KILN_KILNDIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"

#include "kiln/Dialect/Kiln/KilnEnums.h.inc"
#include "kiln/Dialect/Kiln/KilnOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/Kiln/KilnAttrs.h.inc"

namespace kiln::OpTrait {
/// Marks ops whose every output element depends only on the operand elements
/// at the same broadcast index; the fusion passes rely on it.
template <typename ConcreteType>
class KilnElementwise
    : public mlir::OpTrait::TraitBase<ConcreteType, KilnElementwise> {};
} // namespace kiln::OpTrait

#endif // KILN_DIALECT_KILN_KILNDIALECT_H
