//===- CostModel.cpp - FLOPs and bytes of kiln ops and groups -------------===//

#include "kiln/Passes/CostModel.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Passes/KernelTuning.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace kiln;

int64_t kiln::bytesOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 0;
  int64_t bits = tensor.getElementType().getIntOrFloatBitWidth();
  return tensor.getNumElements() * std::max<int64_t>(bits / 8, 1);
}

static int64_t elementsOf(Type type) {
  return cast<RankedTensorType>(type).getNumElements();
}

int64_t kiln::flopsOf(Operation *op) {
  return llvm::TypeSwitch<Operation *, int64_t>(op)
      .Case([](LinearOp o) {
        int64_t mn = elementsOf(o.getType());
        int64_t k = o.getWeight().getType().getShape()[1];
        return 2 * mn * k + (o.getBias() ? mn : 0);
      })
      .Case<MatmulOp, BatchMatmulOp>([](auto o) {
        auto lhs = o.getLhs().getType().getShape();
        return 2 * elementsOf(o.getType()) * lhs.back();
      })
      .Case([](Conv2dOp o) {
        // Multiply-adds per output element: KH * KW * C / groups.
        auto w = o.getWeight().getType().getShape();
        int64_t outputs = elementsOf(o.getType());
        return 2 * outputs * w[1] * w[2] * w[3] + (o.getBias() ? outputs : 0);
      })
      .Case([](Pool2dOp o) {
        auto k = o.getKernel();
        return elementsOf(o.getType()) * k[0] * k[1];
      })
      .Case([](AttentionOp o) {
        // q k^T and p v, plus the softmax over the scores.
        auto q = o.getQuery().getType().getShape();
        auto v = o.getValue().getType().getShape();
        int64_t rows = elementsOf(o.getQuery().getType()) / q.back(); // batch * Sq
        int64_t keys = v[v.size() - 2];
        int64_t flops = 2 * rows * keys * (q.back() + v.back()) + 5 * rows * keys;
        return o.getCausal() ? flops / 2 : flops;
      })
      .Case([](LayerNormOp o) { return 8 * elementsOf(o.getType()); })
      // A sum, a difference and a square's add an element.
      .Case([](RowMomentsOp o) { return 4 * elementsOf(o.getInput().getType()); })
      .Case([](SoftmaxOp o) { return 5 * elementsOf(o.getType()); })
      .Case([](CumsumOp o) { return elementsOf(o.getType()); })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(
          [](auto o) { return elementsOf(o.getInput().getType()); })
      .Case<ConstantOp, ReshapeOp, PermuteOp, ConcatOp, SliceOp, CastOp, GatherOp,
            BroadcastOp>(
          [](Operation *) { return int64_t(0); })
      .Default([](Operation *o) -> int64_t {
        if (o->hasTrait<OpTrait::KilnElementwise>() && o->getNumResults() == 1)
          return elementsOf(o->getResult(0).getType());
        return 0;
      });
}

bool kiln::needsKernel(Operation *op) {
  return !isa<ConstantOp, ReshapeOp, YieldOp, func::ReturnOp>(op);
}

/// Bytes an op moves on its own: its operands (constants included, as
/// weights are read) and its results.
static int64_t unfusedBytesOf(Operation *op) {
  int64_t bytes = 0;
  for (OpOperand &operand : op->getOpOperands())
    bytes += isa<GatherOp, SliceOp>(op) && operand.getOperandNumber() == 0
                 ? bytesOf(op->getResult(0).getType()) // the rows a lookup reads
                 : bytesOf(operand.get().getType());
  for (Type t : op->getResultTypes())
    bytes += bytesOf(t);
  return bytes;
}

/// Bytes a kernel reads of group input `argument`: all of it, unless every
/// use only looks part of it up (an embedding table through a gather, a
/// slice), then what those read.
static int64_t bytesReadOf(BlockArgument argument) {
  int64_t whole = bytesOf(argument.getType()), read = 0;
  for (OpOperand &use : argument.getUses()) {
    Operation *user = use.getOwner();
    if (!isa<GatherOp, SliceOp>(user) || use.getOperandNumber() != 0)
      return whole;
    read += bytesOf(user->getResult(0).getType());
  }
  return std::min(read, whole);
}

static std::string typesText(TypeRange types) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(types, os, [&](Type t) {
    auto tensor = cast<RankedTensorType>(t);
    for (int64_t d : tensor.getShape())
      os << d << "x";
    os << tensor.getElementType();
  });
  return text;
}

FusionReport kiln::analyzeKernels(func::FuncOp function) {
  FusionReport report;
  report.function = function.getName().str();
  for (Operation &op : function.getBody().front()) {
    if (!needsKernel(&op))
      continue;
    KernelStats stats;
    stats.resultTypes = typesText(op.getResultTypes());
    if (auto group = dyn_cast<FusionOp>(op)) {
      stats.kind = stringifyFusionKind(group.getKind()).str();
      stats.tuningKey = kernelTuningKey(group);
      if (Attribute kernel = group->getAttr(attr::kKernel)) {
        llvm::raw_string_ostream os(stats.kernelConfig);
        kernel.print(os);
      }
      for (BlockArgument argument : group.getBody().front().getArguments())
        stats.bytes += bytesReadOf(argument);
      for (Operation &inner : group.getBody().front()) {
        if (!needsKernel(&inner))
          continue;
        stats.ops.push_back(inner.getName().stripDialect().str());
        stats.flops += flopsOf(&inner);
        stats.unfusedKernels += 1;
        stats.unfusedBytes += unfusedBytesOf(&inner);
      }
    } else {
      stats.kind = op.getName().stripDialect().str();
      stats.ops.push_back(stats.kind);
      stats.flops = flopsOf(&op);
      for (Value input : op.getOperands())
        stats.bytes += bytesOf(input.getType());
      stats.unfusedKernels = 1;
      stats.unfusedBytes = unfusedBytesOf(&op);
    }
    for (Type t : op.getResultTypes())
      stats.bytes += bytesOf(t);
    report.flops += stats.flops;
    report.bytes += stats.bytes;
    report.unfusedKernels += stats.unfusedKernels;
    report.unfusedBytes += stats.unfusedBytes;
    report.kernels.push_back(std::move(stats));
  }
  if (auto arena = function->getAttrOfType<IntegerAttr>(attr::kArenaBytes))
    report.arenaBytes = arena.getInt();
  if (auto total = function->getAttrOfType<IntegerAttr>(attr::kIntermediateBytes))
    report.intermediateBytes = total.getInt();
  return report;
}

void kiln::printReport(llvm::raw_ostream &os, const FusionReport &report) {
  os << "kiln kernels of @" << report.function << "\n";
  // With an artifact, each row names its kernel as the profiler does.
  bool named = llvm::any_of(report.kernels,
                            [](const KernelStats &k) { return !k.kernelName.empty(); });
  os << llvm::format("  %-3s %-14s %-44s %-24s %12s %12s", "#", "kind", "ops", "result",
                     "MFLOP", "KiB moved");
  os << (named ? "  kernel\n" : "\n");
  for (auto [index, k] : llvm::enumerate(report.kernels)) {
    std::string ops = llvm::join(k.ops, ", ");
    if (ops.size() > 44)
      ops = ops.substr(0, 41) + "...";
    os << llvm::format("  %-3zu %-14s %-44s %-24s %12.3f %12.1f", index, k.kind.c_str(),
                       ops.c_str(), k.resultTypes.c_str(), k.flops / 1e6, k.bytes / 1024.0);
    os << (named ? "  " + k.kernelName + "\n" : std::string("\n"));
  }
  os << llvm::format("  %zu kernels (unfused: %lld kernels), %.3f MFLOP, "
                     "%.1f KiB moved (unfused: %.1f KiB)",
                     report.kernels.size(), (long long)report.unfusedKernels,
                     report.flops / 1e6, report.bytes / 1024.0,
                     report.unfusedBytes / 1024.0);
  if (report.arenaBytes >= 0)
    os << llvm::format(", arena %.1f KiB for %.1f KiB of intermediates",
                       report.arenaBytes / 1024.0,
                       report.intermediateBytes / 1024.0);
  os << "\n";
}
