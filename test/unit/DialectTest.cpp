//===- DialectTest.cpp - building kiln IR from C++ ------------------------===//
//
// The frontend builds kiln ops through these builders; these tests pin down
// that the verifiers see what it builds and that diagnostics carry the text
// the invalid.mlir suite checks.

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {
class KilnDialectTest : public ::testing::Test {
protected:
  KilnDialectTest() {
    context.loadDialect<kiln::KilnDialect, func::FuncDialect>();
    handler = std::make_unique<ScopedDiagnosticHandler>(
        &context, [this](Diagnostic &diag) {
          diagnostics += diag.str() + "\n";
          return success();
        });
  }

  RankedTensorType tensor(ArrayRef<int64_t> shape, Type element = {}) {
    return RankedTensorType::get(
        shape, element ? element : Builder(&context).getF32Type());
  }

  /// A function whose arguments have `types`, with the builder at its body.
  func::FuncOp makeFunc(OpBuilder &builder, ModuleOp module, TypeRange types) {
    builder.setInsertionPointToEnd(module.getBody());
    auto fn = func::FuncOp::create(builder, builder.getUnknownLoc(), "f",
                                   builder.getFunctionType(types, {}));
    builder.setInsertionPointToEnd(fn.addEntryBlock());
    return fn;
  }

  MLIRContext context;
  std::string diagnostics;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
};
} // namespace

TEST_F(KilnDialectTest, BroadcastAddVerifies) {
  OpBuilder builder(&context);
  ModuleOp module = ModuleOp::create(builder.getUnknownLoc());
  auto fn = makeFunc(builder, module, {tensor({4, 8}), tensor({8})});
  auto add =
      kiln::AddOp::create(builder, builder.getUnknownLoc(), tensor({4, 8}),
                          fn.getArgument(0), fn.getArgument(1));
  EXPECT_TRUE(succeeded(verify(add))) << diagnostics;
  module->destroy();
}

TEST_F(KilnDialectTest, WrongBroadcastResultIsDiagnosed) {
  OpBuilder builder(&context);
  ModuleOp module = ModuleOp::create(builder.getUnknownLoc());
  auto fn = makeFunc(builder, module, {tensor({4, 8}), tensor({8})});
  auto add =
      kiln::AddOp::create(builder, builder.getUnknownLoc(), tensor({4, 9}),
                          fn.getArgument(0), fn.getArgument(1));
  EXPECT_TRUE(failed(verify(add)));
  EXPECT_NE(diagnostics.find("result shape [4, 9] does not match the expected "
                             "shape [4, 8]"),
            std::string::npos)
      << diagnostics;
  module->destroy();
}

TEST_F(KilnDialectTest, MixedElementTypesAreRejected) {
  OpBuilder builder(&context);
  ModuleOp module = ModuleOp::create(builder.getUnknownLoc());
  auto fn = makeFunc(builder, module,
                     {tensor({4}), tensor({4}, builder.getF16Type())});
  auto mul = kiln::MulOp::create(builder, builder.getUnknownLoc(), tensor({4}),
                                 fn.getArgument(0), fn.getArgument(1));
  EXPECT_TRUE(failed(verify(mul)));
  EXPECT_NE(diagnostics.find("must share one element type"), std::string::npos)
      << diagnostics;
  module->destroy();
}

TEST_F(KilnDialectTest, FusionKindsRoundTripThroughText) {
  for (auto kind :
       {kiln::FusionKind::elementwise, kiln::FusionKind::reduction,
        kiln::FusionKind::normalization, kiln::FusionKind::gemm_epilogue,
        kiln::FusionKind::conv_epilogue, kiln::FusionKind::attention,
        kiln::FusionKind::pooling}) {
    auto parsed = kiln::symbolizeFusionKind(kiln::stringifyFusionKind(kind));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, kind);
  }
  EXPECT_FALSE(kiln::symbolizeFusionKind("elementwize").has_value());
}

TEST_F(KilnDialectTest, FoldersSimplifyParsedIR) {
  const char *source = R"mlir(
    func.func @f(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
      %0 = kiln.permute %x [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
      %1 = kiln.permute %0 [1, 0, 2] : tensor<3x2x4xf32> -> tensor<2x3x4xf32>
      return %1 : tensor<2x3x4xf32>
    })mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(module) << diagnostics;
  auto fn = cast<func::FuncOp>(module->getBody()->front());
  auto outer = cast<kiln::PermuteOp>(*std::next(fn.getBody().front().begin()));
  SmallVector<OpFoldResult> folded;
  // permute(permute(x)) with inverse permutations composes to the identity,
  // which the folder turns into x itself on the next fold.
  ASSERT_TRUE(succeeded(outer->fold(folded)));
  EXPECT_EQ(outer.getInput(), fn.getArgument(0));
  EXPECT_EQ(outer.getPermutation(), ArrayRef<int64_t>({0, 1, 2}));
  folded.clear();
  ASSERT_TRUE(succeeded(outer->fold(folded)));
  ASSERT_EQ(folded.size(), 1u);
  EXPECT_EQ(dyn_cast<Value>(folded[0]), fn.getArgument(0));
}
