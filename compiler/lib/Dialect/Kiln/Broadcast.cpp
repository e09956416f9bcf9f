//===- Broadcast.cpp - NumPy/PyTorch shape broadcasting -------------------===//

#include "kiln/Dialect/Kiln/Broadcast.h"

#include <algorithm>

using namespace kiln;

std::optional<llvm::SmallVector<int64_t>>
kiln::broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs,
                      BroadcastConflict *conflict) {
  size_t rank = std::max(lhs.size(), rhs.size());
  llvm::SmallVector<int64_t> result(rank, 1);
  // Walk from the innermost dimension, where the shapes are aligned.
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    if (l != r && l != 1 && r != 1) {
      if (conflict)
        *conflict = {static_cast<int64_t>(lhs.size() - 1 - i),
                     static_cast<int64_t>(rhs.size() - 1 - i)};
      return std::nullopt;
    }
    result[rank - 1 - i] = l == 1 ? r : l;
  }
  return result;
}
