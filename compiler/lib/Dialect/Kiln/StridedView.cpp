//===- StridedView.cpp - views of a tensor through permute/slice/reshape --===//

#include "kiln/Dialect/Kiln/StridedView.h"

#include "kiln/Dialect/Kiln/KilnOps.h"

using namespace mlir;
using namespace kiln;

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

namespace {
/// A view dimension as factors (size, stride), outermost first: a reshape
/// that merges dimensions not adjacent in memory (sequence-first attention
/// merging batch and heads) keeps both, and a later reshape that splits them
/// apart again recovers plain strides.
using Factor = std::pair<int64_t, int64_t>;
using FactoredDim = SmallVector<Factor, 2>;

/// The dimensions of `newShape` over the factors of `dims`, or nothing when
/// a new dimension's boundary falls inside a factor it does not divide.
std::optional<SmallVector<FactoredDim>> reshapeFactors(ArrayRef<FactoredDim> dims,
                                                       ArrayRef<int64_t> newShape) {
  SmallVector<Factor> factors;
  for (const FactoredDim &dim : dims)
    for (Factor f : dim)
      if (f.first != 1)
        factors.push_back(f);
  SmallVector<FactoredDim> result(newShape.size());
  // Innermost first: each new dimension takes factors from the back,
  // splitting one whose size is a multiple of what is still needed.
  for (int64_t d = static_cast<int64_t>(newShape.size()) - 1; d >= 0; --d) {
    int64_t need = newShape[d];
    FactoredDim taken;
    while (need > 1) {
      if (factors.empty())
        return std::nullopt;
      auto [size, stride] = factors.back();
      if (size <= need) {
        if (need % size != 0)
          return std::nullopt;
        taken.insert(taken.begin(), factors.pop_back_val());
        need /= size;
      } else {
        if (size % need != 0)
          return std::nullopt;
        taken.insert(taken.begin(), Factor{need, stride});
        factors.back() = Factor{size / need, stride * need};
        need = 1;
      }
    }
    result[d] = taken;
  }
  if (!factors.empty())
    return std::nullopt;
  return result;
}

/// One stride for a dimension whose factors are contiguous with each other.
std::optional<int64_t> strideOf(const FactoredDim &dim) {
  if (dim.empty())
    return 1;
  for (size_t i = 0; i + 1 < dim.size(); ++i)
    if (dim[i].second != dim[i + 1].second * dim[i + 1].first)
      return std::nullopt;
  return dim.back().second;
}
} // namespace

namespace {
/// A value as factored dimensions of the root of its view chain (taken as
/// contiguous, row-major): what stridedViewOf and permutationBeforeReshape
/// both read. Nothing when a reshape splits inside a factor it does not
/// divide or a slice cuts a dimension of several factors; `empty` for a
/// root without elements.
struct FactoredView {
  Value root;
  SmallVector<Operation *> chain;
  SmallVector<FactoredDim> dims;
  int64_t offset = 0;
  bool empty = false;
};

std::optional<FactoredView> factorView(Value value, llvm::function_ref<bool(Value)> stopAt) {
  FactoredView view;
  view.root = value;
  while (Operation *op = view.root.getDefiningOp()) {
    if (!isa<PermuteOp, SliceOp, ReshapeOp>(op) || (stopAt && stopAt(view.root)))
      break;
    view.chain.push_back(op);
    view.root = op->getOperand(0);
  }
  ArrayRef<int64_t> rootShape = cast<RankedTensorType>(view.root.getType()).getShape();
  SmallVector<FactoredDim> &dims = view.dims;
  dims.resize(rootShape.size());
  int64_t step = 1;
  for (int64_t d = static_cast<int64_t>(rootShape.size()) - 1; d >= 0; --d) {
    if (rootShape[d] != 1)
      dims[d].push_back({rootShape[d], step});
    step *= rootShape[d];
  }
  if (step == 0) {
    view.empty = true;
    return view;
  }
  // Apply the ops root-first.
  for (Operation *op : llvm::reverse(view.chain)) {
    ArrayRef<int64_t> result = cast<RankedTensorType>(op->getResult(0).getType()).getShape();
    if (auto permute = dyn_cast<PermuteOp>(op)) {
      SmallVector<FactoredDim> permuted;
      for (int64_t d : permute.getPermutation())
        permuted.push_back(dims[d]);
      dims = permuted;
    } else if (auto slice = dyn_cast<SliceOp>(op)) {
      for (size_t d = 0; d < dims.size(); ++d) {
        int64_t offset = slice.getOffsets()[d], stride = slice.getStrides()[d];
        if (result[d] == 1) {
          // One index: an offset into this dimension, whatever its factors.
          int64_t index = offset;
          for (auto it = dims[d].rbegin(); it != dims[d].rend(); ++it) {
            view.offset += (index % it->first) * it->second;
            index /= it->first;
          }
          dims[d].clear();
          continue;
        }
        int64_t full = 1;
        for (Factor f : dims[d])
          full *= f.first;
        if (offset == 0 && stride == 1 && result[d] == full)
          continue;
        std::optional<int64_t> single = strideOf(dims[d]);
        if (!single)
          return std::nullopt;
        view.offset += offset * *single;
        dims[d] = {Factor{result[d], *single * stride}};
      }
    } else {
      std::optional<SmallVector<FactoredDim>> reshaped = reshapeFactors(dims, result);
      if (!reshaped)
        return std::nullopt;
      dims = *reshaped;
    }
  }
  return view;
}
} // namespace

Value kiln::viewRoot(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (!isa<PermuteOp, SliceOp, ReshapeOp>(op))
      break;
    value = op->getOperand(0);
  }
  return value;
}

std::optional<SmallVector<int64_t>> kiln::permutationBeforeReshape(Value value) {
  std::optional<FactoredView> view =
      factorView(value, [](Value v) { return static_cast<bool>(v.getDefiningOp<SliceOp>()); });
  if (!view || view->empty)
    return std::nullopt;
  ArrayRef<int64_t> rootShape = cast<RankedTensorType>(view->root.getType()).getShape();
  // Every factor must be a whole root dimension (size and contiguous
  // stride); their order is the permutation, size-1 dimensions last.
  SmallVector<int64_t> rootStrides(rootShape.size());
  int64_t step = 1;
  for (int64_t d = static_cast<int64_t>(rootShape.size()) - 1; d >= 0; --d) {
    rootStrides[d] = step;
    step *= rootShape[d];
  }
  SmallVector<int64_t> order;
  for (const FactoredDim &dim : view->dims)
    for (Factor f : dim) {
      auto it = llvm::find_if(llvm::seq<int64_t>(0, rootShape.size()), [&](int64_t d) {
        return rootShape[d] == f.first && rootStrides[d] == f.second;
      });
      if (it == llvm::seq<int64_t>(0, rootShape.size()).end())
        return std::nullopt;
      order.push_back(*it);
    }
  for (int64_t d = 0; d < static_cast<int64_t>(rootShape.size()); ++d)
    if (rootShape[d] == 1)
      order.push_back(d);
  if (order.size() != rootShape.size())
    return std::nullopt;
  return order;
}

std::optional<kiln::StridedView> kiln::stridedViewOf(Value value,
                                                     llvm::function_ref<bool(Value)> stopAt) {
  std::optional<FactoredView> factored = factorView(value, stopAt);
  if (!factored)
    return std::nullopt;
  StridedView view;
  view.root = factored->root;
  view.chain = factored->chain;
  view.offset = factored->offset;
  view.shape = llvm::to_vector(cast<RankedTensorType>(value.getType()).getShape());
  if (factored->empty) {
    // An empty tensor addresses no element: any strides will do.
    view.strides.assign(view.shape.size(), 1);
    for (int64_t d = static_cast<int64_t>(view.shape.size()) - 2; d >= 0; --d)
      view.strides[d] = view.strides[d + 1] * std::max<int64_t>(view.shape[d + 1], 1);
    return view;
  }
  for (const FactoredDim &dim : factored->dims) {
    std::optional<int64_t> stride = strideOf(dim);
    if (!stride)
      return std::nullopt;
    view.strides.push_back(*stride);
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
