//===- ElementCode.h - per-element CUDA code for elementwise ops -*- C++ -*-===//
//
// Shared by the three kernel emitters: given the index variable of an output
// element, emits `float vN = ...;` lines computing kiln elementwise ops, with
// group inputs loaded at their broadcast offsets and cloned constants as
// literals. Everything is computed in fp32 registers; a cast to fp16/bf16
// rounds through the narrow type so the value matches the reference.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_ELEMENTCODE_H
#define KILN_CODEGEN_ELEMENTCODE_H

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <string>

namespace kiln::codegen {

/// The CUDA type of an element type (`float`, `__half`, ...).
std::string cudaType(mlir::Type element);
/// A float literal that round-trips (`5.000000000e-01f`, `INFINITY`).
std::string floatLiteral(double value);
/// Row-major strides of `shape`.
llvm::SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape);

class ElementCode {
public:
  /// Elements are numbered `index` over `iterationShape`, the shape every
  /// op of the group computes; inputs of other shapes broadcast.
  ElementCode(FusionOp group, llvm::ArrayRef<int64_t> iterationShape,
              std::string index, std::string indent);

  /// Emits `op` (elementwise, a cloned constant, or a permute, slice,
  /// concat or gather of group inputs, which loads at the index-mapped
  /// position). Comparisons give 1.0f / 0.0f; a broadcast is the identity.
  /// Fails with an error at the op when it has no CUDA form.
  mlir::LogicalResult emit(mlir::Operation *op);
  /// The float expression of `value`; group inputs are loaded on first use.
  std::string valueOf(mlir::Value value);
  /// `value` as the kernel holds it: an i32 or i64 value as an exact `long
  /// long` (integers in fp32 would be exact only below 2^24), anything else
  /// as a float (a bool as 1.0f / 0.0f).
  std::string heldOf(mlir::Value value);
  /// Names `value` (e.g. a GEMM accumulator or a normalized element).
  void bind(mlir::Value value, std::string expression) {
    names[value] = std::move(expression);
  }
  /// `out<resultIndex>[index] = ...` for the yielded value (at `at`, an
  /// index expression, when given); with `deferStores`, recorded in
  /// `deferredStores` instead of written into `code`.
  void store(unsigned resultIndex, mlir::Value value, llvm::StringRef at = {});
  /// A store left for an epilogue functor's store() (see EpilogueFunctor.h),
  /// so that the functor's compute() only loads and the main loop can issue
  /// many elements' loads before any of their stores.
  struct DeferredStore {
    unsigned result;
    std::string at, type, value;
    /// Whether `value` is held as a `long long` (else a float).
    bool integer = false;
    /// For an fp16 result whose last ops an epilogue that packs pairs of
    /// elements can take in half2 arithmetic (a GELU, a ReLU, an add of an
    /// fp16 input read at the element's own index): the expression those
    /// ops start from, which the epilogue rounds into a pair, and each op's
    /// call, first op first, `%` standing for the pair so far and `inputs`
    /// for the input's pair. Empty where the result ends otherwise.
    std::string packedBase;
    llvm::SmallVector<std::string> packedSteps;
  };
  /// Also names each input read at the element's own index `in<K>_element`
  /// instead of loading `in<K>[index]`: the functor's element() takes it as
  /// a parameter, so that compute() passes one load and compute_pair() the
  /// halves of one load for two elements.
  bool deferStores = false;
  llvm::SmallVector<DeferredStore> deferredStores;
  /// Inputs read at the element's own index (a residual, not a bias): what
  /// an epilogue functor's prefetch() pulls into L2 ahead of time.
  llvm::SmallVector<unsigned> elementLoads;
  /// Also names each input indexed by the last coordinate alone (a layer
  /// norm's weight and bias) `in<K>_column` instead of loading it, listed
  /// in `columnLoads`: a caller that walks runs of adjacent elements of a
  /// row loads them as vectors.
  bool namesColumnLoads = false;
  llvm::SmallVector<unsigned> columnLoads;
  /// Where the caller has them (a GEMM's epilogue: its m and n), the
  /// element's row (the index over every dimension but the last) and
  /// column: an input broadcast along the row ([..., 1], a row statistic)
  /// is read at `rowIndex` and one along the columns ([N], a bias) at
  /// `columnIndex`, expressions the compiler sees repeat across a thread's
  /// elements, instead of at coordinates divided out of the index.
  std::string rowIndex, columnIndex;
  /// The offset of element `index` in input `argument` (broadcasting).
  std::string offsetOf(mlir::BlockArgument argument);
  /// Whether the code so far computes a coordinate of the iteration shape
  /// (a broadcast or a data movement): it then names the shape's sizes.
  bool indexesByShape() const { return !coordinates.empty(); }
  /// Whether it computes a coordinate other than `dim`'s (a normalization's
  /// rows, where only the row length `dim` may be named).
  bool indexesByShapeBeyond(unsigned dim) const {
    return llvm::any_of(coordinates, [&](const auto &entry) { return entry.first != dim; });
  }

  std::string code;

private:
  /// Fills `store`'s packedBase and packedSteps for `value`.
  void findPackedSteps(mlir::Value value, DeferredStore &store);
  std::string fresh(const std::string &expression, bool integer = false);
  /// The exact integer expression of a value held as an integer or a bool.
  std::string integerOperand(mlir::Value value);
  mlir::LogicalResult emitDataMovement(mlir::Operation *op);
  mlir::LogicalResult emitInteger(mlir::Operation *op);
  std::string integerOf(mlir::Value value);
  std::string comparison(mlir::Operation *op, llvm::StringRef symbol);
  std::string coordinate(unsigned dim);

  FusionOp group;
  llvm::SmallVector<int64_t> shape;
  std::string index, indent;
  llvm::DenseMap<mlir::Value, std::string> names;
  /// Values held as `long long` (see heldOf).
  llvm::DenseSet<mlir::Value> integers;
  llvm::DenseMap<unsigned, std::string> coordinates;
  unsigned counter = 0;
};

} // namespace kiln::codegen

#endif // KILN_CODEGEN_ELEMENTCODE_H
