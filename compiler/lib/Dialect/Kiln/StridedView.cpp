//===- StridedView.cpp - views of a tensor through permute/slice/reshape --===//

#include "kiln/Dialect/Kiln/StridedView.h"

#include "kiln/Dialect/Kiln/KilnOps.h"

using namespace mlir;

std::optional<SmallVector<int64_t>> kiln::reshapeStrides(ArrayRef<int64_t> shape,
                                                         ArrayRef<int64_t> strides,
                                                         ArrayRef<int64_t> newShape) {
  // Walk the old dimensions in chunks that are contiguous with each other
  // (stride[d] == stride[d + 1] * size[d + 1]); each chunk must map onto a
  // run of new dimensions of the same element count.
  SmallVector<int64_t> newStrides(newShape.size(), 1);
  int64_t numel = 1;
  for (int64_t size : shape)
    numel *= size;
  if (numel == 0) {
    // No element is ever addressed: any strides do.
    for (int64_t d = static_cast<int64_t>(newShape.size()) - 2; d >= 0; --d)
      newStrides[d] = newStrides[d + 1] * std::max<int64_t>(newShape[d + 1], 1);
    return newStrides;
  }
  int64_t viewD = static_cast<int64_t>(newShape.size()) - 1;
  int64_t chunkBaseStride = strides.empty() ? 1 : strides.back();
  int64_t tensorNumel = 1, viewNumel = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    tensorNumel *= shape[d];
    if (d == 0 || (shape[d - 1] != 1 && strides[d - 1] != tensorNumel * chunkBaseStride)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1)) {
        newStrides[viewD] = viewNumel * chunkBaseStride;
        viewNumel *= newShape[viewD];
        --viewD;
      }
      if (viewNumel != tensorNumel)
        return std::nullopt;
      if (d > 0) {
        chunkBaseStride = strides[d - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  if (viewD != -1)
    return std::nullopt;
  return newStrides;
}

std::optional<kiln::StridedView> kiln::stridedViewOf(Value value,
                                                     llvm::function_ref<bool(Value)> stopAt) {
  SmallVector<Operation *> chain;
  Value root = value;
  while (Operation *op = root.getDefiningOp()) {
    if (!isa<PermuteOp, SliceOp, ReshapeOp>(op) || (stopAt && stopAt(root)))
      break;
    chain.push_back(op);
    root = op->getOperand(0);
  }
  StridedView view;
  view.root = root;
  view.chain = chain;
  view.shape = llvm::to_vector(cast<RankedTensorType>(root.getType()).getShape());
  view.strides.assign(view.shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(view.shape.size()) - 2; d >= 0; --d)
    view.strides[d] = view.strides[d + 1] * view.shape[d + 1];
  // Apply the ops root-first.
  for (Operation *op : llvm::reverse(chain)) {
    ArrayRef<int64_t> result = cast<RankedTensorType>(op->getResult(0).getType()).getShape();
    if (auto permute = dyn_cast<PermuteOp>(op)) {
      SmallVector<int64_t> strides;
      for (int64_t d : permute.getPermutation())
        strides.push_back(view.strides[d]);
      view.strides = strides;
    } else if (auto slice = dyn_cast<SliceOp>(op)) {
      for (size_t d = 0; d < view.strides.size(); ++d) {
        view.offset += slice.getOffsets()[d] * view.strides[d];
        view.strides[d] *= slice.getStrides()[d];
      }
    } else {
      auto strides = reshapeStrides(view.shape, view.strides, result);
      if (!strides)
        return std::nullopt;
      view.strides = *strides;
    }
    view.shape = llvm::to_vector(result);
  }
  return view;
}

namespace {
bool viewedInto(Value value, llvm::function_ref<bool(OpOperand &)> accept, int depth) {
  // Model view chains are a handful of ops long; a longer one is not read.
  if (depth > 16 || value.use_empty())
    return false;
  for (OpOperand &use : value.getUses()) {
    Operation *owner = use.getOwner();
    if (isa<kiln::PermuteOp, kiln::SliceOp, kiln::ReshapeOp>(owner)
            ? !viewedInto(owner->getResult(0), accept, depth + 1)
            : !accept(use))
      return false;
  }
  return true;
}
} // namespace

bool kiln::onlyViewedInto(Value value, llvm::function_ref<bool(OpOperand &)> accept) {
  return viewedInto(value, accept, 0);
}
