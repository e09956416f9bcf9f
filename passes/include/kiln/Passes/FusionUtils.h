//===- FusionUtils.h - mechanics of forming kiln.fusion groups --*- C++ -*-===//
//
// What may be fused and how a set of ops becomes one kiln.fusion region. No
// policy lives here: the fusion passes decide *whether* to fuse through a
// control function and call these to check *whether they can* and to do it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_FUSIONUTILS_H
#define KILN_PASSES_FUSIONUTILS_H

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

namespace kiln {

/// Decides, for an edge `producer -> consumer` that the mechanics allow,
/// whether the fusion pass should take it. The default policy takes all.
using FusionControlFn =
    std::function<bool(mlir::Operation *producer, mlir::Operation *consumer)>;

/// An op an elementwise group may hold: a kiln elementwise op.
bool isElementwiseFusible(mlir::Operation *op);

/// A constant small enough to clone into a group's body instead of passing
/// it as an input: rank 0 or a splat.
bool isCloneableConstant(mlir::Operation *op);

/// Both ops elementwise, in one block, and computing over the same index
/// space (equal result shapes), so one kernel can compute both per element.
bool areElementwiseFusable(mlir::Operation *producer, mlir::Operation *consumer);

/// How an anchored group (a GEMM or a normalization with its neighbours)
/// may grow.
struct AnchoredGrowth {
  /// Absorb elementwise users computed over the anchor's result shape.
  bool consumers = true;
  /// Absorb elementwise producers of the anchor's input (same shape).
  bool producers = false;
  /// Absorb an elementwise producer of an absorbed consumer when each of its
  /// operands broadcasts into the result shape (an outer product of a row's
  /// and a column's values) and only the group reads it: the kernel
  /// recomputes it per element instead of reading it in full from memory.
  bool broadcastProducers = false;
};

/// The anchor plus every elementwise neighbour that computes over the
/// anchor's result shape, reachable through fusible edges the control
/// function accepts, without a cycle. Ops marked `kiln.no_fuse` never join.
llvm::SetVector<mlir::Operation *>
growAnchoredGroup(mlir::Operation *anchor, const AnchoredGrowth &growth,
                  const FusionControlFn &control);

/// True if grouping `ops` would create a cycle: some op outside the set both
/// depends on the set and feeds it. `ops` must share one block.
bool wouldCreateCycle(const llvm::SetVector<mlir::Operation *> &ops);

/// Moves `ops` (one block, any order) into a new kiln.fusion of `kind` that
/// takes every value they use from outside (cloneable constants are cloned
/// into the body instead) and returns every result used outside. Uses are
/// rewired; the block is re-sorted so each use follows its definition.
FusionOp fuseIntoGroup(mlir::RewriterBase &rewriter,
                       const llvm::SetVector<mlir::Operation *> &ops,
                       FusionKind kind);

} // namespace kiln

#endif // KILN_PASSES_FUSIONUTILS_H
