//===- RuntimeSizes.cpp - which groups may take their sizes at launch ------===//
//
// runtime-sizes' rule (kiln-select-kernels): a kernel whose source names no
// size is one kernel for every group of its configuration and epilogue. It
// may, where the group's code indexes nothing by the shape: every op around
// the anchor elementwise (a data movement maps coordinates), every input
// read at the element's own index or along the one dimension the kernel
// keeps (a GEMM's bias by column, a normalization's row vectors), and
// every result of the anchor's shape.
//
//===----------------------------------------------------------------------===//

#include "HopperTiles.h"

#include "kiln/Dialect/Kiln/KilnDialect.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::selection;

namespace {

/// Whether `group`'s code around `anchor` (whose result has `shape`)
/// indexes by the element alone: `allowed` says which inputs of another
/// shape than `shape` it may read (an operand of the anchor, a vector along
/// the kept dimension). `why` names what holds the sizes in the source, for
/// the remarks ("sizes" or "rows").
bool indexedByElement(FusionOp group, Operation *anchor, llvm::StringRef what,
                      llvm::function_ref<bool(BlockArgument, ArrayRef<int64_t>)> allowed,
                      std::string &why) {
  Block &body = group.getBody().front();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(anchor->getResult(0).getType()).getShape();
  for (Operation &op : body.without_terminator())
    if (&op != anchor && !op.hasTrait<kiln::OpTrait::KilnElementwise>() &&
        !isa<ConstantOp>(op)) {
      why = what.str() + " in the source: its " + op.getName().getStringRef().str() +
            " indexes by the shape";
      return false;
    }
  for (BlockArgument argument : body.getArguments()) {
    auto type = cast<RankedTensorType>(argument.getType());
    if (type.getShape() != shape && type.getNumElements() != 1 &&
        !allowed(argument, type.getShape())) {
      why = what.str() + " in the source: input " + str(argument.getArgNumber()) +
            " is broadcast over the result";
      return false;
    }
  }
  for (Value value : cast<YieldOp>(body.getTerminator()).getValues())
    if (cast<RankedTensorType>(value.getType()).getShape() != shape) {
      why = what.str() + " in the source: a result of another shape than the " +
            anchor->getName().stripDialect().str() + "'s";
      return false;
    }
  return true;
}

} // namespace

bool kiln::selection::runtimeSizesApply(FusionOp group, const GemmShape &s, std::string &why) {
  if (s.batch != 1 || s.N % 8 != 0) {
    why = "sizes in the source: runtime sizes take no batch and N % 8 == 0";
    return false;
  }
  Value bias;
  if (auto linear = dyn_cast<LinearOp>(s.anchor))
    bias = linear.getBias();
  auto operand = [&](BlockArgument argument, ArrayRef<int64_t>) {
    return argument == s.anchor->getOperand(0) || argument == s.anchor->getOperand(1) ||
           argument == bias;
  };
  if (!indexedByElement(group, s.anchor, "sizes", operand, why))
    return false;
  why = "sizes at run time";
  return true;
}

bool kiln::selection::runtimeRowsApply(FusionOp group, const NormalizationShape &shape,
                                       std::string &why) {
  auto alongRow = [&](BlockArgument, ArrayRef<int64_t> dims) {
    return !dims.empty() && dims.back() == shape.rowLength &&
           llvm::all_of(dims.drop_back(), [](int64_t d) { return d == 1; });
  };
  if (!indexedByElement(group, shape.anchor, "rows", alongRow, why))
    return false;
  why = "rows at run time";
  return true;
}
