//===- FusionVerifier.cpp - what a kiln.fusion group may hold ---------------===//
//
// kiln.fusion's region verifier: the body's arguments and yield match the
// group's inputs and results, and each kernel family holds one anchor of its
// kind with the elementwise ops, constants and data movement its kernel
// can fold. Each message is exercised by test/Dialect/Kiln/invalid.mlir.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KernelShapes.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Dialect/Kiln/StridedView.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace kiln;

/// In an attention group: a permute/slice/reshape chain from a group input
/// whose end is the attention's query, key or value (read in place by the
/// kernel), or a permute of the attention's result keeping the last
/// dimension last (stored in place).
static bool isAttentionView(Operation &op, Block &body) {
  if (auto permute = dyn_cast<PermuteOp>(op);
      permute && permute.getInput().getDefiningOp<AttentionOp>()) {
    ArrayRef<int64_t> order = permute.getPermutation();
    return order.back() == static_cast<int64_t>(order.size()) - 1;
  }
  // A view of a group input. It need not be a strided view itself (batch
  // and heads merged into one dimension are split again further on): the
  // attention's operands must be, which the kernel's shapes check.
  Value root = viewRoot(op.getResult(0));
  if (!isa<BlockArgument>(root) || root.getParentBlock() != &body)
    return false;
  // Every use leads, through views, to the attention's query, key or value.
  return onlyViewedInto(op.getResult(0), [](OpOperand &use) {
    return isa<AttentionOp>(use.getOwner()) && use.getOperandNumber() < 3;
  });
}

LogicalResult FusionOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments but the group has "
           << getInputs().size() << " inputs";
  for (auto [index, pair] : llvm::enumerate(
           llvm::zip(body.getArgumentTypes(), getInputs().getTypes())))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError("body argument ")
             << index << " has type " << std::get<0>(pair) << " but input "
             << index << " has type " << std::get<1>(pair);
  if (getResults().empty())
    return emitOpError("must produce at least one result");
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError("body must end in kiln.yield");
  if (yield.getValues().size() != getResults().size())
    return emitOpError("yields ")
           << yield.getValues().size() << " values but the group has "
           << getResults().size() << " results";
  for (auto [index, pair] : llvm::enumerate(
           llvm::zip(yield.getValues().getTypes(), getResults().getTypes())))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError("yielded value ")
             << index << " has type " << std::get<0>(pair) << " but result "
             << index << " has type " << std::get<1>(pair);
  // What each kernel family can hold: one anchor of its kind (the GEMM, the
  // normalization, the convolution, the pooling, at least one reduction)
  // plus elementwise ops and constants. Data movement that a kernel folds
  // into its loads may sit on group inputs: permute, slice and concat in
  // elementwise groups; the NCHW -> NHWC permute of a convolution's input.
  // Attention groups are not constrained yet.
  StringRef kindName = stringifyFusionKind(getKind());
  StringRef article = StringRef("aeiou").contains(kindName.front()) ? "an " : "a ";
  int anchors = 0;
  for (Operation &op : body.without_terminator()) {
    if (!isa_and_nonnull<KilnDialect>(op.getDialect()))
      return emitOpError("body may hold only kiln ops, found '")
             << op.getName() << "'";
    if (isa<FusionOp>(op))
      return emitOpError("fusion groups do not nest");
    bool elementwise =
        op.hasTrait<OpTrait::KilnElementwise>() || isa<ConstantOp>(op);
    bool anchor = false;
    bool onInputs = llvm::all_of(op.getOperands(), [&](Value v) {
      return isa<BlockArgument>(v) && v.getParentBlock() == &body;
    });
    switch (getKind()) {
    case FusionKind::elementwise:
      if (isa<PermuteOp, SliceOp, ConcatOp, GatherOp, CumsumOp>(op)) {
        if (!onInputs)
          return emitOpError("an elementwise group holds '")
                 << op.getName() << "' only on the group's inputs";
        elementwise = true;
      }
      break;
    case FusionKind::gemm_epilogue:
      anchor = isa<LinearOp, MatmulOp, BatchMatmulOp>(op);
      break;
    case FusionKind::normalization:
      anchor = isa<LayerNormOp, SoftmaxOp, RowMomentsOp>(op);
      break;
    case FusionKind::reduction:
      anchor = isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op);
      break;
    case FusionKind::conv_epilogue:
      anchor = isa<Conv2dOp>(op);
      if (auto mean = dyn_cast<ReduceMeanOp>(op)) {
        // The global average pool the kernel's epilogue sums (GlobalPool).
        if (!globalPoolOf(mean))
          return emitOpError("a conv_epilogue group holds 'kiln.reduce_mean' only as the "
                             "mean over dims [1, 2] of a value it computes, yielded as "
                             "its one result");
        elementwise = true;
      }
      if (auto permute = dyn_cast<PermuteOp>(op)) {
        bool layoutChange =
            onInputs && permute.getPermutation() == ArrayRef<int64_t>{0, 2, 3, 1} &&
            permute->hasOneUse() && isa<Conv2dOp>(*permute->user_begin()) &&
            cast<Conv2dOp>(*permute->user_begin()).getInput() == permute.getResult();
        if (!layoutChange)
          return emitOpError("a conv_epilogue group holds 'kiln.permute' only as the "
                             "NCHW -> NHWC permute [0, 2, 3, 1] of an input that feeds "
                             "the convolution's input alone");
        elementwise = true;
      }
      if (isa<ConcatOp, SliceOp>(op)) {
        // The channel concat a 1x1 convolution reads in place, and the
        // strided slices of inputs under it (channelConcatParts).
        Operation *concat = isa<SliceOp>(op) && op.hasOneUse() ? *op.user_begin() : &op;
        auto conv = isa<ConcatOp>(concat) && concat->hasOneUse()
                        ? dyn_cast<Conv2dOp>(*concat->user_begin())
                        : Conv2dOp();
        std::optional<SmallVector<ConvInputPart, 2>> parts;
        if (conv && conv.getInput() == concat->getResult(0))
          parts = channelConcatParts(conv);
        if (!parts || !llvm::all_of(*parts, [&](const ConvInputPart &part) {
              auto arg = dyn_cast<BlockArgument>(part.source);
              return arg && arg.getOwner() == &body;
            }))
          return emitOpError("a conv_epilogue group holds '")
                 << op.getName()
                 << "' only as the channel concat of inputs (whole or strided slices from "
                    "the origin) that a 1x1 convolution reads alone";
        elementwise = true;
      }
      break;
    case FusionKind::pooling:
      anchor = isa<Pool2dOp>(op);
      break;
    case FusionKind::attention:
      anchor = isa<AttentionOp>(op);
      if (isa<PermuteOp, SliceOp, ReshapeOp>(op)) {
        if (!isAttentionView(op, body))
          return emitOpError("an attention group holds '")
                 << op.getName()
                 << "' only as a view of an input that feeds the attention's query, key or "
                    "value, or as a permute of the attention's result that keeps the last "
                    "dimension last";
        elementwise = true;
      }
      break;
    }
    anchors += anchor;
    if (!elementwise && !anchor)
      return emitOpError() << article << kindName << " group cannot hold '"
                           << op.getName() << "'";
  }
  const char *anchorNames = nullptr;
  switch (getKind()) {
  case FusionKind::gemm_epilogue: anchorNames = "linear, matmul or batch_matmul"; break;
  case FusionKind::normalization: anchorNames = "layer_norm or softmax"; break;
  case FusionKind::conv_epilogue: anchorNames = "conv2d"; break;
  case FusionKind::pooling: anchorNames = "pool2d"; break;
  case FusionKind::attention: anchorNames = "attention"; break;
  default: break;
  }
  if (anchorNames && anchors != 1)
    return emitOpError() << article << kindName << " group holds exactly one "
                         << anchorNames << ", found " << anchors;
  if (getKind() == FusionKind::reduction && anchors == 0)
    return emitOpError("a reduction group holds at least one reduction");
  return success();
}
