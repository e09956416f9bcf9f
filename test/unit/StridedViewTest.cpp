//===- StridedViewTest.cpp - views through permute/slice/reshape ----------===//
//
// The strides the attention kernel reads q/k/v at and the canonicalizations
// rely on, checked against the elements PyTorch's view semantics give.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KernelShapes.h"
#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Dialect/Kiln/StridedView.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <vector>

using namespace kiln;
using namespace mlir;

namespace {
std::vector<int64_t> strides(std::vector<int64_t> shape, std::vector<int64_t> from,
                             std::vector<int64_t> to) {
  auto result = reshapeStrides(shape, from, to);
  return result ? std::vector<int64_t>(result->begin(), result->end()) : std::vector<int64_t>{};
}

/// The view of the function's returned value.
std::optional<StridedView> viewOfReturn(MLIRContext &context, OwningOpRef<ModuleOp> &module,
                                        const std::string &ir) {
  context.loadDialect<KilnDialect, func::FuncDialect>();
  module = parseSourceString<ModuleOp>(ir, &context);
  if (!module)
    return std::nullopt;
  auto fn = *module->getOps<func::FuncOp>().begin();
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  return stridedViewOf(ret.getOperand(0));
}
} // namespace

TEST(StridedView, ReshapeOfContiguousSplitsAndMerges) {
  EXPECT_EQ(strides({2, 12}, {12, 1}, {2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(strides({2, 3, 4}, {12, 4, 1}, {6, 4}), (std::vector<int64_t>{4, 1}));
}

TEST(StridedView, ReshapeSplitsAPermutedDimension) {
  // [B=2, S=5, 3*H*D=24] sliced to its first 8 columns, split into heads:
  // rows stay 24 apart, heads 4 apart.
  EXPECT_EQ(strides({2, 5, 8}, {120, 24, 1}, {2, 5, 2, 4}),
            (std::vector<int64_t>{120, 24, 4, 1}));
}

TEST(StridedView, ReshapeRefusesMergingNonAdjacentDims) {
  // A transposed [3, 4] (strides 1, 3) cannot flatten without a copy.
  EXPECT_TRUE(strides({4, 3}, {1, 4}, {12}).empty());
}

TEST(StridedView, SizeOneDimsTakeAnyStride) {
  EXPECT_EQ(strides({1, 6}, {100, 1}, {6, 1}), (std::vector<int64_t>{1, 1}));
}

TEST(StridedView, QkvSplitHeads) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  auto view = viewOfReturn(context, module, R"(
    func.func @f(%x: tensor<2x5x24xf16>) -> tensor<2x2x5x4xf16> {
      %s = kiln.slice %x offsets = [0, 0, 8] strides = [1, 1, 1] : tensor<2x5x24xf16> -> tensor<2x5x8xf16>
      %r = kiln.reshape %s : tensor<2x5x8xf16> -> tensor<2x5x2x4xf16>
      %p = kiln.permute %r [0, 2, 1, 3] : tensor<2x5x2x4xf16> -> tensor<2x2x5x4xf16>
      return %p : tensor<2x2x5x4xf16>
    })");
  ASSERT_TRUE(view);
  EXPECT_TRUE(isa<BlockArgument>(view->root));
  EXPECT_EQ(view->offset, 8);
  EXPECT_EQ(std::vector<int64_t>(view->strides.begin(), view->strides.end()),
            (std::vector<int64_t>{120, 4, 24, 1}));
  EXPECT_EQ(view->chain.size(), 3u);
}

TEST(StridedView, StridedSliceMultipliesStrides) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  auto view = viewOfReturn(context, module, R"(
    func.func @f(%x: tensor<6x8xf32>) -> tensor<3x4xf32> {
      %s = kiln.slice %x offsets = [1, 0] strides = [2, 2] : tensor<6x8xf32> -> tensor<3x4xf32>
      return %s : tensor<3x4xf32>
    })");
  ASSERT_TRUE(view);
  EXPECT_EQ(view->offset, 8);
  EXPECT_EQ(std::vector<int64_t>(view->strides.begin(), view->strides.end()),
            (std::vector<int64_t>{16, 2}));
}

TEST(StridedView, StopsWhereAsked) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  context.loadDialect<KilnDialect, func::FuncDialect>();
  module = parseSourceString<ModuleOp>(R"(
    func.func @f(%x: tensor<4x6xf32>) -> tensor<6x4xf32> {
      %r = kiln.reshape %x : tensor<4x6xf32> -> tensor<24xf32>
      %b = kiln.reshape %r : tensor<24xf32> -> tensor<4x6xf32>
      %p = kiln.permute %b [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
      return %p : tensor<6x4xf32>
    })", &context);
  ASSERT_TRUE(module);
  auto fn = *module->getOps<func::FuncOp>().begin();
  Value result = cast<func::ReturnOp>(fn.getBody().front().getTerminator()).getOperand(0);
  auto view = stridedViewOf(
      result, [](Value v) { return cast<RankedTensorType>(v.getType()).getRank() == 1; });
  ASSERT_TRUE(view);
  EXPECT_EQ(cast<RankedTensorType>(view->root.getType()).getRank(), 1);
  EXPECT_EQ(view->chain.size(), 2u);
}

// nn.MultiheadAttention's slow path (sequence first, what torch.export
// records): q of the packed projection [S=3, N=2, 3 * E=24] merges batch and
// heads into one dimension, [S, N * H, D], transposes it and splits it back
// into [N, H, S, D]. The merged dimension is not one stride (batch 24 apart,
// heads 2 apart), but the split restores both.
TEST(StridedView, MergedDimensionSplitBackIsAView) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  auto view = viewOfReturn(context, module, R"(
    func.func @f(%qkv: tensor<3x2x24xf16>) -> tensor<2x4x3x2xf16> {
      %u = kiln.reshape %qkv : tensor<3x2x24xf16> -> tensor<1x3x2x3x8xf16>
      %p = kiln.permute %u [3, 1, 2, 0, 4] : tensor<1x3x2x3x8xf16> -> tensor<3x3x2x1x8xf16>
      %r = kiln.reshape %p : tensor<3x3x2x1x8xf16> -> tensor<3x3x2x8xf16>
      %q = kiln.slice %r offsets = [1, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<3x3x2x8xf16> -> tensor<1x3x2x8xf16>
      %m = kiln.reshape %q : tensor<1x3x2x8xf16> -> tensor<3x8x2xf16>
      %t = kiln.permute %m [1, 0, 2] : tensor<3x8x2xf16> -> tensor<8x3x2xf16>
      %s = kiln.reshape %t : tensor<8x3x2xf16> -> tensor<2x4x3x2xf16>
      return %s : tensor<2x4x3x2xf16>
    })");
  ASSERT_TRUE(view);
  EXPECT_EQ(view->offset, 8); // the k third of each row
  EXPECT_EQ(std::vector<int64_t>(view->strides.begin(), view->strides.end()),
            (std::vector<int64_t>{24, 2, 48, 1}));
}

TEST(StridedView, MergedDimensionLeftMergedIsNotAView) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  auto view = viewOfReturn(context, module, R"(
    func.func @f(%x: tensor<3x2x8xf16>) -> tensor<21xf16> {
      %t = kiln.permute %x [1, 2, 0] : tensor<3x2x8xf16> -> tensor<2x8x3xf16>
      %m = kiln.reshape %t : tensor<2x8x3xf16> -> tensor<16x3xf16>
      %s = kiln.slice %m offsets = [2, 0] strides = [2, 1] : tensor<16x3xf16> -> tensor<7x3xf16>
      %r = kiln.reshape %s : tensor<7x3xf16> -> tensor<21xf16>
      return %r : tensor<21xf16>
    })");
  EXPECT_FALSE(view);
}

// The Hopper attention's tensor maps: a view's rows as rows of its root seen
// as a [rows, row stride] matrix, every (batch, head) inside one row.
TEST(StridedView, MatrixRowsOfQkvHeadsAndPackedTensors) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  // The value third of a [2, 5, 24] QKV projection, two heads of 8.
  auto view = viewOfReturn(context, module, R"(
    func.func @f(%x: tensor<2x5x48xf16>) -> tensor<2x2x5x8xf16> {
      %s = kiln.slice %x offsets = [0, 0, 32] strides = [1, 1, 1] : tensor<2x5x48xf16> -> tensor<2x5x16xf16>
      %r = kiln.reshape %s : tensor<2x5x16xf16> -> tensor<2x5x2x8xf16>
      %p = kiln.permute %r [0, 2, 1, 3] : tensor<2x5x2x8xf16> -> tensor<2x2x5x8xf16>
      return %p : tensor<2x2x5x8xf16>
    })");
  ASSERT_TRUE(view);
  std::optional<MatrixRows> rows = matrixRowsOf(*view);
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->rowStride, 48);
  EXPECT_EQ(rows->rows, 10);

  // The last head's columns would run past the row (no tensor map box
  // reaches them there): refused.
  StridedView carried = *view;
  carried.offset = 40;
  EXPECT_FALSE(matrixRowsOf(carried));
  // A head dimension that is not contiguous, a row stride of 12 elements
  // (24 bytes: TMA takes whole 16 bytes): refused.
  StridedView strided = *view;
  strided.strides.back() = 2;
  EXPECT_FALSE(matrixRowsOf(strided));
  StridedView narrowRows = *view;
  narrowRows.strides[2] = 12;
  EXPECT_FALSE(matrixRowsOf(narrowRows));

  // A packed [B, H, S, D] tensor: rows of D.
  OwningOpRef<ModuleOp> packedModule;
  auto packed = viewOfReturn(context, packedModule, R"(
    func.func @f(%x: tensor<2x3x5x8xf16>) -> tensor<2x3x5x8xf16> {
      %p = kiln.reshape %x : tensor<2x3x5x8xf16> -> tensor<2x3x5x8xf16>
      return %p : tensor<2x3x5x8xf16>
    })");
  ASSERT_TRUE(packed);
  rows = matrixRowsOf(*packed);
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->rowStride, 8);
  EXPECT_EQ(rows->rows, 30);
}
