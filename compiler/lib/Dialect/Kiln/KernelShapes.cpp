//===- KernelShapes.cpp - the problem a fusion group poses ----------------===//

#include "kiln/Dialect/Kiln/KernelShapes.h"

using namespace mlir;
using namespace kiln;

namespace {
int64_t elements(Type type) {
  int64_t n = 1;
  for (int64_t d : cast<RankedTensorType>(type).getShape())
    n *= d;
  return n;
}

template <typename AnchorOp> AnchorOp anchorOf(FusionOp group) {
  AnchorOp found;
  group.getBody().front().walk([&](AnchorOp op) { found = op; });
  return found;
}
} // namespace

std::optional<SmallVector<ConvInputPart, 2>> kiln::channelConcatParts(Conv2dOp conv) {
  auto concat = conv.getInput().getDefiningOp<ConcatOp>();
  ArrayRef<int64_t> w = conv.getWeight().getType().getShape();
  if (!concat || concat.getDim() != 3 || w[1] != 1 || w[2] != 1 || conv.getGroups() != 1 ||
      llvm::any_of(conv.getStrides(), [](int64_t v) { return v != 1; }) ||
      llvm::any_of(conv.getPadding(), [](int64_t v) { return v != 0; }))
    return std::nullopt;
  ArrayRef<int64_t> out = conv.getType().getShape();
  SmallVector<ConvInputPart, 2> parts;
  for (Value operand : concat.getInputs()) {
    ConvInputPart part;
    part.source = operand;
    if (auto slice = operand.getDefiningOp<SliceOp>()) {
      ArrayRef<int64_t> offsets = slice.getOffsets(), strides = slice.getStrides();
      ArrayRef<int64_t> from = slice.getInput().getType().getShape();
      if (llvm::any_of(offsets, [](int64_t v) { return v != 0; }) || strides[0] != 1 ||
          strides[3] != 1 || from[0] != out[0] ||
          from[3] != slice.getType().getShape()[3])
        return std::nullopt;
      part.slice = slice;
      part.source = slice.getInput();
      part.strideH = strides[1];
      part.strideW = strides[2];
    }
    auto type = cast<RankedTensorType>(operand.getType());
    if (type.getRank() != 4 || type.getShape()[0] != out[0] || type.getShape()[1] != out[1] ||
        type.getShape()[2] != out[2])
      return std::nullopt;
    part.channels = type.getShape()[3];
    parts.push_back(part);
  }
  return parts;
}

bool kiln::isPlainGemmConv(Conv2dOp conv) {
  ArrayRef<int64_t> w = conv.getWeight().getType().getShape();
  return w[1] == 1 && w[2] == 1 &&
         llvm::all_of(conv.getStrides(), [](int64_t v) { return v == 1; }) &&
         llvm::all_of(conv.getPadding(), [](int64_t v) { return v == 0; }) &&
         conv.getGroups() == 1 && !conv.getInput().getDefiningOp<PermuteOp>() &&
         !channelConcatParts(conv);
}

std::optional<ConvShape> kiln::convShapeOf(FusionOp group) {
  if (group.getKind() != FusionKind::conv_epilogue)
    return std::nullopt;
  Conv2dOp conv = anchorOf<Conv2dOp>(group);
  if (!conv)
    return std::nullopt;
  ArrayRef<int64_t> in = conv.getInput().getType().getShape();
  ArrayRef<int64_t> w = conv.getWeight().getType().getShape();
  ArrayRef<int64_t> out = conv.getType().getShape();
  ConvShape shape;
  shape.conv = conv;
  shape.groups = conv.getGroups();
  shape.M = out[0] * out[1] * out[2];
  shape.outChannels = out[3];
  shape.inChannelsPerGroup = in[3] / shape.groups;
  shape.reduction = w[1] * w[2] * shape.inChannelsPerGroup;
  shape.depthwise = shape.groups > 1 && shape.groups == in[3] && w[3] == 1;
  shape.layoutChange = static_cast<bool>(conv.getInput().getDefiningOp<PermuteOp>());
  if (std::optional<SmallVector<ConvInputPart, 2>> parts = channelConcatParts(conv))
    shape.parts = std::move(*parts);
  shape.plainGemm = isPlainGemmConv(conv);
  shape.element = conv.getType().getElementType();
  return shape;
}

std::optional<GlobalPool> kiln::globalPoolOf(ReduceMeanOp mean) {
  auto group = dyn_cast_or_null<FusionOp>(mean->getParentOp());
  auto input = dyn_cast<RankedTensorType>(mean.getInput().getType());
  if (!group || group.getKind() != FusionKind::conv_epilogue || !input ||
      input.getRank() != 4 || mean.getDims() != ArrayRef<int64_t>{1, 2} ||
      isa<BlockArgument>(mean.getInput()) || !mean->hasOneUse() ||
      !isa<YieldOp>(*mean->user_begin()) || group.getNumResults() != 1)
    return std::nullopt;
  ArrayRef<int64_t> shape = input.getShape();
  return GlobalPool{mean, shape[0], shape[1] * shape[2]};
}

std::optional<GlobalPool> kiln::globalPoolOf(FusionOp group) {
  if (group.getKind() != FusionKind::conv_epilogue || group.getBody().empty())
    return std::nullopt;
  auto yield = dyn_cast<YieldOp>(group.getBody().front().back());
  if (!yield || yield.getValues().size() != 1)
    return std::nullopt;
  auto mean = yield.getValues()[0].getDefiningOp<ReduceMeanOp>();
  return mean ? globalPoolOf(mean) : std::nullopt;
}

StemGeometry kiln::stemGeometryOf(const ConvShape &shape) {
  Conv2dOp conv = shape.conv;
  ArrayRef<int64_t> w = conv.getWeight().getType().getShape();
  ArrayRef<int64_t> out = conv.getType().getShape();
  StemGeometry g;
  g.batch = out[0];
  g.outH = out[1];
  g.outW = out[2];
  g.KH = w[1];
  g.KW = w[2];
  g.C = shape.inChannelsPerGroup;
  g.SW = conv.getStrides()[1];
  g.DW = conv.getDilation()[1];
  g.O = shape.outChannels;
  return g;
}

int64_t kiln::depthwisePatchSharedBytes(const ConvShape &shape, int64_t rows, int64_t columns) {
  Conv2dOp conv = shape.conv;
  ArrayRef<int64_t> w = conv.getWeight().getType().getShape();
  ArrayRef<int64_t> strides = conv.getStrides(), dilation = conv.getDilation();
  const int64_t windowRows = (rows - 1) * strides[0] + (w[1] - 1) * dilation[0] + 1,
                windowColumns = (columns - 1) * strides[1] + (w[2] - 1) * dilation[1] + 1;
  return (w[1] * w[2] + windowRows * windowColumns) *
         depthwiseSlice(shape.groups * shape.inChannelsPerGroup) * 2;
}

std::optional<GemmShape> kiln::gemmShapeOf(FusionOp group) {
  if (std::optional<ConvShape> conv = convShapeOf(group)) {
    if (!conv->plainGemm)
      return std::nullopt;
    GemmShape shape;
    shape.anchor = conv->conv;
    shape.M = conv->M;
    shape.N = conv->outChannels;
    shape.K = conv->inChannelsPerGroup;
    shape.element = conv->conv.getInput().getType().getElementType();
    return shape;
  }
  if (group.getKind() != FusionKind::gemm_epilogue)
    return std::nullopt;
  Operation *anchor = nullptr;
  for (Operation &op : group.getBody().front())
    if (isa<LinearOp, MatmulOp, BatchMatmulOp>(op))
      anchor = &op;
  if (!anchor)
    return std::nullopt;
  Value lhs = anchor->getOperand(0);
  auto resultType = cast<RankedTensorType>(anchor->getResult(0).getType());
  ArrayRef<int64_t> lhsShape = cast<RankedTensorType>(lhs.getType()).getShape();
  GemmShape shape;
  shape.anchor = anchor;
  shape.kMajorB = isa<LinearOp>(anchor);
  shape.K = lhsShape.back();
  shape.N = resultType.getShape().back();
  shape.element = cast<RankedTensorType>(lhs.getType()).getElementType();
  if (shape.kMajorB) {
    shape.M = elements(lhs.getType()) / shape.K;
  } else {
    shape.M = lhsShape[lhsShape.size() - 2];
    for (int64_t d : resultType.getShape().drop_back(2))
      shape.batch *= d;
    ArrayRef<int64_t> rhsShape =
        cast<RankedTensorType>(anchor->getOperand(1).getType()).getShape();
    for (int64_t d : lhsShape.drop_back(2))
      shape.batchA *= d;
    for (int64_t d : rhsShape.drop_back(2))
      shape.batchB *= d;
    // One B for every batch of A: A's matrices are consecutive rows of one
    // [batch x M, K] matrix, and so are C's.
    if (shape.batchB == 1 && shape.batchA == shape.batch) {
      shape.M *= shape.batch;
      shape.batch = shape.batchA = 1;
    }
  }
  return shape;
}

namespace {
/// An attention operand as a strided view of a group input: the input
/// itself, or permute/slice/reshape ops of it inside the group that keep the
/// last dimension contiguous.
std::optional<StridedView> operandView(Value operand) {
  std::optional<StridedView> view = stridedViewOf(operand);
  if (!view || !isa<BlockArgument>(view->root) || view->strides.back() != 1)
    return std::nullopt;
  return view;
}
} // namespace

std::optional<NormalizationShape> kiln::normalizationShapeOf(FusionOp group) {
  if (group.getKind() != FusionKind::normalization)
    return std::nullopt;
  NormalizationShape shape;
  for (Operation &op : group.getBody().front())
    if (isa<LayerNormOp, SoftmaxOp, RowMomentsOp>(op))
      shape.anchor = &op;
  if (!shape.anchor)
    return std::nullopt;
  auto type = cast<RankedTensorType>(shape.anchor->getOperand(0).getType());
  int64_t axis = type.getRank() - 1;
  if (auto norm = dyn_cast<LayerNormOp>(shape.anchor))
    axis = norm.getAxis();
  shape.rowLength = 1;
  for (int64_t d = axis; d < type.getRank(); ++d)
    shape.rowLength *= type.getShape()[d];
  shape.rows = type.getNumElements() / std::max<int64_t>(shape.rowLength, 1);
  return shape;
}

std::optional<MiddleReductionShape> kiln::middleReductionShapeOf(FusionOp group) {
  if (group.getKind() != FusionKind::reduction)
    return std::nullopt;
  Operation *anchor = nullptr;
  for (Operation &op : group.getBody().front())
    if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op))
      anchor = &op;
  if (!anchor || !isa<BlockArgument>(anchor->getOperand(0)))
    return std::nullopt;
  auto type = cast<RankedTensorType>(anchor->getOperand(0).getType());
  ArrayRef<int64_t> dims = reducedDims(anchor);
  const int64_t rank = type.getRank();
  if (dims.empty() || dims.back() == rank - 1)
    return std::nullopt;
  for (size_t i = 1; i < dims.size(); ++i)
    if (dims[i] != dims[i - 1] + 1)
      return std::nullopt;
  Type element = type.getElementType();
  if (!isa<FloatType>(element) ||
      (element.getIntOrFloatBitWidth() != 16 && element.getIntOrFloatBitWidth() != 32))
    return std::nullopt;
  MiddleReductionShape shape;
  shape.vector = 128 / element.getIntOrFloatBitWidth();
  for (int64_t d = 0; d < rank; ++d)
    (d < dims.front() ? shape.outer : d <= dims.back() ? shape.length : shape.inner) *=
        type.getDimSize(d);
  if (shape.inner % shape.vector != 0 || shape.inner / shape.vector > 256)
    return std::nullopt;
  return shape;
}

bool kiln::overlappedAttentionSpills(AttentionOp attention) {
  Value mask = attention.getMask();
  if (!mask)
    return false;
  auto type = cast<RankedTensorType>(mask.getType());
  return !type.getElementType().isInteger(1) && type.getRank() >= 2 &&
         type.getDimSize(type.getRank() - 2) != 1;
}

std::optional<MatrixRows> kiln::matrixRowsOf(const StridedView &view) {
  const size_t rank = view.shape.size();
  auto type = dyn_cast<RankedTensorType>(view.root.getType());
  if (rank < 2 || !type || !type.hasStaticShape() || view.strides[rank - 1] != 1)
    return std::nullopt;
  const int64_t rowStride = view.strides[rank - 2], width = view.shape[rank - 1];
  // TMA: a row stride of whole 16 bytes (fp16/bf16), under 2^31 rows.
  if (rowStride <= 0 || rowStride % 8 != 0 || type.getNumElements() % rowStride != 0 ||
      type.getNumElements() / rowStride >= (int64_t(1) << 31))
    return std::nullopt;
  // The furthest column any (batch, head) reaches, with no carry into the
  // row: the lead strides' parts within a row, each at its largest index.
  int64_t column = view.offset % rowStride + width;
  for (size_t d = 0; d + 2 < rank; ++d)
    column += (view.strides[d] % rowStride) * (view.shape[d] - 1);
  if (column > rowStride)
    return std::nullopt;
  return MatrixRows{type.getNumElements() / rowStride, rowStride};
}

std::optional<AttentionShape> kiln::attentionShapeOf(FusionOp group) {
  if (group.getKind() != FusionKind::attention)
    return std::nullopt;
  AttentionShape shape;
  shape.attention = anchorOf<AttentionOp>(group);
  if (!shape.attention)
    return std::nullopt;
  shape.q = operandView(shape.attention.getQuery());
  shape.k = operandView(shape.attention.getKey());
  shape.v = operandView(shape.attention.getValue());
  shape.element = cast<RankedTensorType>(shape.attention.getQuery().getType()).getElementType();
  // cp.async moves 16-byte chunks: every row must start 16-byte aligned.
  auto chunkAligned = [](const std::optional<StridedView> &view) {
    return view && view->offset % 8 == 0 && view->strides[view->strides.size() - 2] % 8 == 0;
  };
  shape.rowsChunkAligned = chunkAligned(shape.q) && chunkAligned(shape.k) && chunkAligned(shape.v);
  return shape;
}
