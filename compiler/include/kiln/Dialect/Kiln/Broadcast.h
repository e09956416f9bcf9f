//===- Broadcast.h - NumPy/PyTorch shape broadcasting -----------*- C++ -*-===//
//
// Shapes align at their last dimension; a size-1 dimension stretches to the
// other operand's size; a missing leading dimension counts as 1. Kept free of
// op types so verifiers, the frontend and unit tests share one definition.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_BROADCAST_H
#define KILN_DIALECT_KILN_BROADCAST_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace kiln {

/// Where two shapes fail to broadcast: the dimension, counted from the front
/// of each shape (so a diagnostic can name it as the user wrote it).
struct BroadcastConflict {
  int64_t lhsDim;
  int64_t rhsDim;
};

/// The broadcast of `lhs` and `rhs`, or the first conflicting dimension pair
/// (scanning from the innermost dimension) in `conflict`.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs,
                BroadcastConflict *conflict = nullptr);

} // namespace kiln

#endif // KILN_DIALECT_KILN_BROADCAST_H
