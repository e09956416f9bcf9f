//===- PlanMemory.cpp - one arena for every intermediate tensor -----------===//
//
// Algorithm:
//   1. Number the ops of the function body. Every result of a kernel op
//      (anything but constants and reshapes) starts a buffer; a reshape's
//      result joins its source's buffer (a view).
//   2. A buffer lives from its defining op to the last op that reads any of
//      its views. Buffers reaching the return are function results and live
//      in the caller's memory instead.
//   3. Greedy by size: place each buffer, largest first (ties: earlier
//      definition), at the lowest aligned offset free of every placed buffer
//      whose lifetime intersects its own.
// Greedy-by-size is within a few percent of optimal on inference graphs,
// whose buffers mostly die one or two kernels after they are made.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Passes/CostModel.h"
#include "kiln/Passes/Passes.h"

#define DEBUG_TYPE "kiln-plan-memory"

namespace kiln {
#define GEN_PASS_DEF_KILNPLANMEMORY
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {
struct Buffer {
  Value value;
  int64_t bytes = 0;
  int64_t first = 0, last = 0;
  bool escapes = false;
  int64_t offset = -1;
};

int64_t alignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

struct PlanMemoryPass : kiln::impl::KilnPlanMemoryBase<PlanMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.getBody().empty())
      return;
    if (alignment <= 0 || (alignment & (alignment - 1))) {
      fn.emitError("alignment must be a power of two, got ")
          << static_cast<int64_t>(alignment);
      return signalPassFailure();
    }
    Block &body = fn.getBody().front();
    llvm::DenseMap<Operation *, int64_t> position;
    for (auto [index, op] : llvm::enumerate(body))
      position[&op] = index;

    std::vector<Buffer> buffers;
    llvm::DenseMap<Value, size_t> bufferOf; // views map to their source's buffer
    for (Operation &op : body) {
      if (auto reshape = dyn_cast<ReshapeOp>(op)) {
        auto source = bufferOf.find(reshape.getInput());
        if (source != bufferOf.end())
          bufferOf[reshape.getResult()] = source->second;
        continue;
      }
      if (!needsKernel(&op))
        continue;
      for (Value result : op.getResults()) {
        bufferOf[result] = buffers.size();
        buffers.push_back({result, bytesOf(result.getType()), position[&op],
                           position[&op]});
      }
    }
    for (Operation &op : body)
      for (Value operand : op.getOperands()) {
        auto it = bufferOf.find(operand);
        if (it == bufferOf.end())
          continue;
        Buffer &buffer = buffers[it->second];
        buffer.last = std::max(buffer.last, position[&op]);
        if (isa<func::ReturnOp>(op))
          buffer.escapes = true;
      }

    std::vector<size_t> order;
    for (size_t i = 0; i < buffers.size(); ++i)
      if (!buffers[i].escapes)
        order.push_back(i);
    llvm::stable_sort(order, [&](size_t a, size_t b) {
      return buffers[a].bytes > buffers[b].bytes;
    });
    int64_t arena = 0, intermediates = 0;
    std::vector<size_t> placed;
    for (size_t index : order) {
      Buffer &buffer = buffers[index];
      intermediates += alignUp(buffer.bytes, alignment);
      // Candidate offsets: 0 and the end of every conflicting buffer.
      std::vector<std::pair<int64_t, int64_t>> busy;
      for (size_t other : placed) {
        const Buffer &o = buffers[other];
        if (o.first <= buffer.last && buffer.first <= o.last)
          busy.push_back({o.offset, o.offset + alignUp(o.bytes, alignment)});
      }
      llvm::sort(busy);
      int64_t offset = 0;
      for (auto [start, end] : busy) {
        if (offset + buffer.bytes <= start)
          break;
        offset = std::max(offset, end);
      }
      buffer.offset = offset;
      arena = std::max(arena, offset + alignUp(buffer.bytes, alignment));
      placed.push_back(index);
    }

    Builder b(&getContext());
    for (Operation &op : body) {
      if (!needsKernel(&op) || isa<ReshapeOp>(op) || op.getNumResults() == 0)
        continue;
      SmallVector<int64_t> offsets;
      for (Value result : op.getResults())
        offsets.push_back(buffers[bufferOf[result]].offset);
      op.setAttr(attr::kOffsets, b.getDenseI64ArrayAttr(offsets));
    }
    fn->setAttr(attr::kArenaBytes, b.getI64IntegerAttr(arena));
    fn->setAttr(attr::kIntermediateBytes, b.getI64IntegerAttr(intermediates));
  }
};
} // namespace
