//===- SetPrecision.cpp - compute a function in a chosen precision --------===//
//
// fp16/bf16 algorithm:
//   1. Cast each floating-point argument to the target type at entry.
//   2. Give every op's floating-point results the target element type (kiln
//      ops are generic over float types, so their verifiers hold).
//   3. Rewrite floating-point constants' data in the target type.
//   4. Cast each result back to the function's declared result type.
//   5. Casts that became identities fold away in the next canonicalization.
// tf32: mark every contraction `kiln.tf32`. fp32: no change. The function
// records its precision (`kiln.precision`) either way.
// io-dtype f16/bf16 (with the matching precision): steps 1 and 4 change the
// signature instead of casting. A clamp's positive lower bound under the
// target's smallest positive value is raised to it (it guards a division).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Passes/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Threading.h"
#include "kiln/Dialect/Kiln/FloatRounding.h"
#include "llvm/ADT/APFloat.h"

#include <algorithm>
#include <cstring>
#include <optional>

#define DEBUG_TYPE "kiln-set-precision"

namespace kiln {
#define GEN_PASS_DEF_KILNSETPRECISION
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

Type withElement(Type type, Type element) {
  return cast<RankedTensorType>(type).clone(element);
}

/// The constant's value in `element`, rounded to nearest even.
ElementsAttr convertConstant(MLIRContext *context, ElementsAttr value, FloatType element) {
  auto type = cast<RankedTensorType>(value.getType()).clone(element);
  const llvm::fltSemantics &semantics = element.getFloatSemantics();
  auto convert = [&](APFloat v) {
    bool lossy;
    v.convert(semantics, APFloat::rmNearestTiesToEven, &lossy);
    return v;
  };
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat())
      return DenseElementsAttr::get(type, convert(dense.getSplatValue<APFloat>()));
    SmallVector<APFloat> values;
    for (APFloat v : dense.getValues<APFloat>())
      values.push_back(convert(v));
    return DenseElementsAttr::get(type, values);
  }
  auto resource = cast<DenseResourceElementsAttr>(value);
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob)
    return {};
  auto source = cast<FloatType>(cast<RankedTensorType>(value.getType()).getElementType());
  unsigned fromBytes = source.getWidth() / 8, toBytes = element.getWidth() / 8;
  ArrayRef<char> bytes = blob->getData();
  int64_t count = bytes.size() / fromBytes;
  // Written in place in the new blob: a model's weights are large.
  AsmResourceBlob blobOut =
      HeapAsmResourceBlob::allocate(count * toBytes, /*align=*/64, /*dataIsMutable=*/true);
  char *converted = blobOut.getMutableData().data();
  auto slow = [&](int64_t i) {
    uint64_t raw = 0;
    std::memcpy(&raw, bytes.data() + i * fromBytes, fromBytes);
    APFloat v(source.getFloatSemantics(), APInt(source.getWidth(), raw));
    uint64_t out = convert(v).bitcastToAPInt().getZExtValue();
    std::memcpy(converted + i * toBytes, &out, toBytes);
  };
  // In slices over the context's threads: BERT-base's 110M weights took
  // 1.5 s on one core.
  constexpr int64_t kSlice = int64_t(1) << 20;
  const bool fast = source.isF32() && (element.isF16() || element.isBF16());
  const bool toHalf = element.isF16();
  auto convertSlice = [&](size_t slice) {
    const int64_t begin = int64_t(slice) * kSlice, end = std::min(count, begin + kSlice);
    for (int64_t i = begin; i < end; ++i) {
      if (fast) {
        // fp32 to a 16-bit type: bit arithmetic, APFloat for what it leaves.
        uint32_t raw;
        std::memcpy(&raw, bytes.data() + 4 * i, 4);
        if (std::optional<uint16_t> out = roundFloatBits(raw, toHalf)) {
          std::memcpy(converted + 2 * i, &*out, 2);
          continue;
        }
      }
      slow(i);
    }
  };
  parallelFor(context, 0, static_cast<size_t>((count + kSlice - 1) / kSlice), convertSlice);
  return DenseResourceElementsAttr::get(type, resource.getRawHandle().getKey(),
                                        std::move(blobOut));
}

LogicalResult lowerPrecision(func::FuncOp fn, FloatType target, bool computeTypeIO) {
  if (fn.getBody().empty())
    return success();
  OpBuilder builder(fn.getContext());
  Block &entry = fn.getBody().front();
  builder.setInsertionPointToStart(&entry);
  llvm::SmallPtrSet<Operation *, 8> entryCasts;
  for (BlockArgument arg : entry.getArguments()) {
    if (!isFloatTensor(arg.getType()) ||
        cast<RankedTensorType>(arg.getType()).getElementType() == target)
      continue;
    if (computeTypeIO) {
      arg.setType(withElement(arg.getType(), target));
      continue;
    }
    auto cast = kiln::CastOp::create(builder, arg.getLoc(),
                               withElement(arg.getType(), target), arg);
    arg.replaceAllUsesExcept(cast, cast);
    entryCasts.insert(cast);
  }
  WalkResult walk = fn.walk([&](Operation *op) -> WalkResult {
    if (isa<func::FuncOp, func::ReturnOp>(op) || entryCasts.contains(op))
      return WalkResult::advance();
    if (auto constant = dyn_cast<kiln::ConstantOp>(op)) {
      if (!isFloatTensor(constant.getType()) ||
          constant.getType().getElementType() == target)
        return WalkResult::advance();
      ElementsAttr converted = convertConstant(fn.getContext(), constant.getValue(), target);
      if (!converted)
        return constant.emitOpError("has no data to convert to ") << target;
      constant.setValueAttr(converted);
      constant.getResult().setType(cast<RankedTensorType>(converted.getType()));
      return WalkResult::advance();
    }
    // A positive lower bound is an epsilon guarding a division (F.normalize's
    // 1e-12): rounded to 0 in fp16 it guards nothing, and a zero vector
    // (Swin V2's padded keys) normalizes to 0 / 0. It becomes the type's
    // smallest positive value instead, so the result is 0, as in fp32.
    if (auto clamp = dyn_cast<kiln::ClampOp>(op); clamp && clamp.getMinAttr() &&
                                                  isFloatTensor(clamp.getType())) {
      const double lower = clamp.getMinAttr().getValueAsDouble();
      const double smallest =
          APFloat::getSmallest(target.getFloatSemantics()).convertToDouble();
      if (lower > 0 && lower < smallest)
        clamp.setMinAttr(FloatAttr::get(Float64Type::get(op->getContext()), smallest));
    }
    for (Value result : op->getResults())
      if (isFloatTensor(result.getType()))
        result.setType(withElement(result.getType(), target));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (isFloatTensor(arg.getType()))
            arg.setType(withElement(arg.getType(), target));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // Results go back to the declared types, or the signature takes the
  // compute type.
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  builder.setInsertionPoint(ret);
  SmallVector<Type> results(fn.getResultTypes());
  for (size_t index = 0; index < results.size(); ++index) {
    Value value = ret.getOperand(index);
    if (computeTypeIO && isFloatTensor(results[index]))
      results[index] = withElement(results[index], target);
    if (value.getType() != results[index])
      ret.setOperand(index,
                     kiln::CastOp::create(builder, ret.getLoc(), results[index], value));
  }
  fn.setType(FunctionType::get(fn.getContext(), entry.getArgumentTypes(), results));
  return success();
}

struct SetPrecisionPass : kiln::impl::KilnSetPrecisionBase<SetPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    Builder b(&getContext());
    const bool computeTypeIO = ioDtype != "declared";
    const StringRef name = stringifyPrecision(precision);
    if (computeTypeIO && !((ioDtype == "f16" && precision == Precision::fp16) ||
                           (ioDtype == "bf16" && precision == Precision::bf16))) {
      fn.emitError("io-dtype '")
          << ioDtype << "' needs the matching precision (f16 with fp16, bf16 with bf16; "
          << "'declared' keeps the model's types), not '" << name << "'";
      return signalPassFailure();
    }
    fn->setAttr(attr::kPrecision, PrecisionAttr::get(&getContext(), precision));
    FloatType target;
    switch (precision) {
    case Precision::fp32:
      return;
    case Precision::tf32:
      fn.walk([&](Operation *op) {
        if (isa<LinearOp, MatmulOp, BatchMatmulOp>(op))
          op->setAttr(attr::kTf32, b.getUnitAttr());
      });
      return;
    case Precision::fp16:
      target = b.getF16Type();
      break;
    case Precision::bf16:
      target = b.getBF16Type();
      break;
    }
    if (failed(lowerPrecision(fn, target, computeTypeIO)))
      signalPassFailure();
  }
};
} // namespace
