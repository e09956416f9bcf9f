//===- StridedView.h - views of a tensor through permute/slice/reshape -*- C++ -*-===//
//
// A chain of kiln.permute, kiln.slice and kiln.reshape ops moves no data:
// each element of its result is one element of the chain's root at an
// offset plus a dot product of its coordinates with strides. Kernels that
// read their operands at run-time strides (attention) use this to read the
// root in place, and the fusion passes to decide whether they can.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_STRIDEDVIEW_H
#define KILN_DIALECT_KILN_STRIDEDVIEW_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace kiln {

struct StridedView {
  /// The first value up the chain not made by a view op.
  mlir::Value root;
  /// The view's shape and, per dimension, the root-element step.
  llvm::SmallVector<int64_t> shape, strides;
  int64_t offset = 0;
  /// The view ops from the viewed value up to the root.
  llvm::SmallVector<mlir::Operation *> chain;
};

/// `value` as a strided view of the root of its permute/slice/reshape chain
/// (the root is taken as contiguous, row-major). Nothing when a reshape
/// merges dimensions that the view does not keep adjacent in memory. With
/// `stopAt`, the walk also ends at (and roots the view in) a value it
/// accepts.
std::optional<StridedView>
stridedViewOf(mlir::Value value, llvm::function_ref<bool(mlir::Value)> stopAt = nullptr);

/// The first value up `value`'s permute/slice/reshape chain not made by
/// one of them.
mlir::Value viewRoot(mlir::Value value);

/// For `value` made from the root of its permute/reshape chain: the
/// permutation q with value == reshape(permute(root, q)), when the chain
/// moves whole root dimensions only (an attention result's permute, a
/// reshape merging heads, a transpose of sequence and batch: one permute
/// of the result, then a free reshape).
std::optional<llvm::SmallVector<int64_t>> permutationBeforeReshape(mlir::Value value);

/// Whether every use of `value` leads, through permute, slice and reshape
/// ops alone, to an operand that `accept` takes (a view may be shared: q,
/// k and v sliced from one permuted projection). False for an unused value.
bool onlyViewedInto(mlir::Value value, llvm::function_ref<bool(mlir::OpOperand &)> accept);

/// The strides of `newShape` over the same elements as a view of `shape`
/// with `strides`, if a view can express them (PyTorch's `view` rule).
std::optional<llvm::SmallVector<int64_t>> reshapeStrides(llvm::ArrayRef<int64_t> shape,
                                                         llvm::ArrayRef<int64_t> strides,
                                                         llvm::ArrayRef<int64_t> newShape);

} // namespace kiln

#endif // KILN_DIALECT_KILN_STRIDEDVIEW_H
