//===- LayerNormFoldGpuTest.cpp - a layer norm folded into its linear -----===//
//
// kiln-fold-layer-norm turns LN(x) W^T + b into a row_moments kernel and a
// linear whose fp32 accumulators an epilogue corrects: rstd (acc - mean c)
// + d. The kernels of both halves on the GPU against the reference
// evaluator, at sizes that are not tile multiples; their NVRTC builds for
// both images; and, without a GPU, the fold itself against the norm it
// replaces, through the evaluator.
//
//===----------------------------------------------------------------------===//

#include "GpuExecutor.h"
#include "GpuTestSupport.h"
#include "ReferenceEvaluator.h"

#include "kiln/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <sstream>

using namespace mlir;
using namespace kiln;
using kiln::testing::expectCompilesForBothImages;
using kiln::testing::expectMatchesReference;
using kiln::testing::tensorType;

namespace {

std::vector<int64_t> withLast(std::vector<int64_t> shape, int64_t last) {
  shape.push_back(last);
  return shape;
}

/// The GEMM half: linear(x, W') in fp32, `rstd (acc - mean c) + d` rounded
/// to `type`, then a GELU when `gelu`, as one gemm_epilogue group whose
/// statistics and column vectors are arguments (random, as the evaluator's
/// inputs are).
std::string foldedLinearIr(std::vector<int64_t> rows, int64_t k, int64_t n,
                           const std::string &type, bool gelu) {
  const std::string x = tensorType(withLast(rows, k), type), w = tensorType({n, k}, type),
                    stat = tensorType(withLast(rows, 1), "f32"),
                    column = tensorType({n}, "f32"),
                    acc = tensorType(withLast(rows, n), "f32"),
                    y = tensorType(withLast(rows, n), type);
  const std::string ins = x + ", " + w + ", " + stat + ", " + column + ", " + stat + ", " + column;
  return "func.func @folded(%x: " + x + ", %w: " + w + ", %mean: " + stat + ", %c: " + column +
         ", %rstd: " + stat + ", %d: " + column + ") -> " + y + " {\n"
         "  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %mean, %c, %rstd, %d : " + ins + ") -> " +
         y + " {\n"
         "  ^bb0(%a: " + x + ", %bw: " + w + ", %bm: " + stat + ", %bc: " + column +
         ", %br: " + stat + ", %bd: " + column + "):\n"
         "    %l = kiln.linear %a, %bw : (" + x + ", " + w + ") -> " + acc + "\n"
         "    %p = kiln.mul %bm, %bc : " + stat + ", " + column + " -> " + acc + "\n"
         "    %q = kiln.sub %l, %p : " + acc + "\n"
         "    %r = kiln.mul %q, %br : " + acc + ", " + stat + " -> " + acc + "\n"
         "    %s = kiln.add %r, %bd : " + acc + ", " + column + " -> " + acc + "\n"
         "    %t = kiln.cast %s : " + acc + " to " + y + "\n" +
         (gelu ? "    %g = kiln.gelu %t : " + y + "\n    kiln.yield %g : " + y + "\n"
               : "    kiln.yield %t : " + y + "\n") +
         "  }\n  return %0 : " + y + "\n}\n";
}

/// The statistics half: row_moments of `x + y` (the residual add a pre-norm
/// block's norm takes as its prologue, also stored) or of x alone; RMSNorm's
/// with `rms`.
std::string rowMomentsIr(int64_t rows, int64_t length, const std::string &type,
                         bool prologue, bool rms = false) {
  const std::string x = tensorType({rows, length}, type), stat = tensorType({rows, 1}, "f32");
  const std::string eps = rms ? "1.0e-06 rms" : "1.0e-05";
  if (!prologue)
    return "func.func @moments(%x: " + x + ") -> (" + stat + ", " + stat + ") {\n"
           "  %0:2 = kiln.fusion normalization ins(%x : " + x + ") -> " + stat + ", " + stat +
           " {\n  ^bb0(%a: " + x + "):\n"
           "    %mean, %rstd = kiln.row_moments %a eps = " + eps + " : " + x + " -> " + stat + "\n"
           "    kiln.yield %mean, %rstd : " + stat + ", " + stat + "\n  }\n"
           "  return %0#0, %0#1 : " + stat + ", " + stat + "\n}\n";
  return "func.func @moments(%x: " + x + ", %y: " + x + ") -> (" + x + ", " + stat + ", " +
         stat + ") {\n"
         "  %0:3 = kiln.fusion normalization ins(%x, %y : " + x + ", " + x + ") -> " + x + ", " +
         stat + ", " + stat + " {\n  ^bb0(%a: " + x + ", %b: " + x + "):\n"
         "    %s = kiln.add %a, %b : " + x + "\n"
         "    %mean, %rstd = kiln.row_moments %s eps = " + eps + " : " + x + " -> " + stat + "\n"
         "    kiln.yield %s, %mean, %rstd : " + x + ", " + stat + ", " + stat + "\n  }\n"
         "  return %0#0, %0#1, %0#2 : " + x + ", " + stat + ", " + stat + "\n}\n";
}

/// An RMSNorm's GEMM half without a bias: linear(x, W') in fp32 times rstd,
/// rounded to `type`.
std::string foldedRmsLinearIr(std::vector<int64_t> rows, int64_t k, int64_t n,
                              const std::string &type) {
  const std::string x = tensorType(withLast(rows, k), type), w = tensorType({n, k}, type),
                    stat = tensorType(withLast(rows, 1), "f32"),
                    acc = tensorType(withLast(rows, n), "f32"),
                    y = tensorType(withLast(rows, n), type);
  return "func.func @folded_rms(%x: " + x + ", %w: " + w + ", %rstd: " + stat + ") -> " + y +
         " {\n"
         "  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %rstd : " + x + ", " + w + ", " + stat +
         ") -> " + y + " {\n"
         "  ^bb0(%a: " + x + ", %bw: " + w + ", %br: " + stat + "):\n"
         "    %l = kiln.linear %a, %bw : (" + x + ", " + w + ") -> " + acc + "\n"
         "    %r = kiln.mul %l, %br : " + acc + ", " + stat + " -> " + acc + "\n"
         "    %t = kiln.cast %r : " + acc + " to " + y + "\n"
         "    kiln.yield %t : " + y + "\n  }\n  return %0 : " + y + "\n}\n";
}

std::vector<std::string> foldCases() {
  return {
      // ViT's rows at batch 3 (591: no tile multiple), the packed projection
      // and the GELU up-projection, fp16 and bf16 (Hopper GEMM tiles).
      foldedLinearIr({3, 197}, 768, 2304, "f16", false),
      foldedLinearIr({3, 197}, 768, 3072, "f16", true),
      foldedLinearIr({5, 77}, 256, 200, "bf16", true),
      // The other GEMM kernels the selection picks (at its defaults): gemv
      // for 7 rows, split K, gemm_stream for a narrow K and N, 64-wide
      // ping-pong tiles.
      foldedLinearIr({1, 7}, 768, 1000, "f16", true),
      foldedLinearIr({1, 300}, 64, 24, "f16", false),
      foldedLinearIr({1, 64}, 1024, 1000, "f16", true),
      foldedLinearIr({2, 8500}, 16, 16, "f16", false),
      foldedLinearIr({1, 20000}, 64, 64, "f16", true),
      // An RMSNorm's: rstd alone, no bias (a Llama MLP's gate at batch 8).
      foldedRmsLinearIr({8, 128}, 512, 1376, "bf16"),
      // Rows in 16-byte vectors, in single elements (100 halves are not
      // whole vectors), and a row a block (past 1024 elements).
      rowMomentsIr(4096, 768, "f16", true),
      rowMomentsIr(37, 100, "f16", true),
      rowMomentsIr(5, 1536, "bf16", true),
      rowMomentsIr(33, 768, "f16", false),
      rowMomentsIr(512, 4096, "bf16", true, /*rms=*/true),
      rowMomentsIr(37, 100, "f16", false, /*rms=*/true),
  };
}

/// A constant of `shape` ([n] or [rows, n]) drawn from N(mean, spread),
/// written out as a dense literal (the fold reads non-splat constants).
std::string denseConstant(std::mt19937 &rng, std::vector<int64_t> shape, const std::string &type,
                          float mean, float spread) {
  std::normal_distribution<float> normal(mean, spread);
  const int64_t rows = shape.size() == 2 ? shape[0] : 1, columns = shape.back();
  std::ostringstream text;
  text << "kiln.constant dense<";
  for (int64_t r = 0; r < rows; ++r) {
    text << (r ? ", [" : shape.size() == 2 ? "[[" : "[");
    for (int64_t c = 0; c < columns; ++c)
      text << (c ? ", " : "") << normal(rng);
    text << "]";
  }
  text << (shape.size() == 2 ? "]" : "") << "> : " << tensorType(shape, type);
  return text.str();
}

} // namespace

TEST(KernelsGpu, LayerNormFoldKernels) {
  KILN_REQUIRE_GPU();
  for (const std::string &ir : foldCases())
    expectMatchesReference(ir);
}

TEST(KernelsGpu, LayerNormFoldKernelsCompile) { expectCompilesForBothImages(foldCases()); }

// Needs no GPU: the fold computes what the norm and the linear did, within
// 16-bit rounding, on rows whose mean is far from zero against their spread
// (the correction's cancellation) and with gamma and beta away from 1 and 0,
// for a layer norm and an RMSNorm; and every error it makes is close to the
// unfolded graph's own against a float64 reference.
TEST(KernelsGpu, LayerNormFoldKeepsTheNorm) {
  for (const bool rms : {false, true})
    for (const std::string type : {"f16", "bf16"}) {
      SCOPED_TRACE(type + (rms ? " rms" : ""));
      constexpr int64_t K = 96, N = 40;
      std::mt19937 rng(7);
      const std::string x = tensorType({2, 37, K}, type), y = tensorType({2, 37, N}, type);
      const std::string vector = tensorType({K}, type);
      const std::string norm =
          rms ? "  %n = kiln.layer_norm %x weight %g axis = 2 eps = 1.0e-06 rms : (" + x + ", " +
                    vector + ") -> " + x + "\n"
              : "  %b = " + denseConstant(rng, {K}, type, 0.0f, 0.3f) + "\n"
                "  %n = kiln.layer_norm %x weight %g bias %b axis = 2 eps = 1.0e-05 : (" + x +
                    ", " + vector + ", " + vector + ") -> " + x + "\n";
      const std::string gamma = "  %g = " + denseConstant(rng, {K}, type, 1.0f, 0.3f) + "\n";
      const std::string ir =
          "func.func @block(%x: " + x + ") -> " + y + " {\n" + gamma + norm +
          "  %w = " + denseConstant(rng, {N, K}, type, 0.0f, 0.1f) + "\n"
          "  %bias = " + denseConstant(rng, {N}, type, 0.0f, 0.1f) + "\n"
          "  %l = kiln.linear %n, %w, %bias : (" + x + ", " + tensorType({N, K}, type) + ", " +
          tensorType({N}, type) + ") -> " + y + "\n"
          "  %r = kiln.gelu %l : " + y + "\n"
          "  return %r : " + y + "\n}\n";
      MLIRContext context;
      context.loadDialect<KilnDialect, func::FuncDialect>();
      OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &context);
      ASSERT_TRUE(module) << ir;
      auto fn = *module->getOps<func::FuncOp>().begin();
      // Rows offset by up to +-20 with a spread of 1.
      at::manual_seed(3);
      at::Tensor input = (at::randn({2, 37, K}) + 40.0 * (at::rand({2, 37, 1}) - 0.5))
                             .to(type == std::string("f16") ? c10::kHalf : c10::kBFloat16);
      // The constants in float64, in the order they are written.
      std::vector<at::Tensor> constants;
      fn.walk([&](ConstantOp constant) {
        auto values = constantElements(constant);
        ASSERT_TRUE(values);
        constants.push_back(at::tensor(*values, at::TensorOptions().dtype(c10::kDouble))
                                .reshape(cast<RankedTensorType>(constant.getType()).getShape()));
      });
      ASSERT_EQ(constants.size(), rms ? 3u : 4u);
      std::string error;
      auto unfolded = frontend::evaluateReference(fn, {input}, error);
      ASSERT_TRUE(unfolded) << error;

      PassManager pm(&context);
      KilnFoldLayerNormOptions options;
      options.minBytes = 0;
      pm.addNestedPass<func::FuncOp>(createKilnFoldLayerNorm(options));
      ASSERT_TRUE(succeeded(pm.run(*module)));
      int norms = 0, moments = 0;
      fn.walk([&](LayerNormOp) { ++norms; });
      fn.walk([&](RowMomentsOp) { ++moments; });
      EXPECT_EQ(norms, 0);
      EXPECT_EQ(moments, 1);
      auto folded = frontend::evaluateReference(fn, {input}, error);
      ASSERT_TRUE(folded) << error;

      at::Tensor wide = input.to(c10::kDouble);
      at::Tensor normalized =
          rms ? wide * at::rsqrt(wide.pow(2).mean({-1}, /*keepdim=*/true) + 1e-6) * constants[0]
              : at::layer_norm(wide, {K}, constants[0], constants[1], 1e-5);
      at::Tensor want =
          at::gelu(at::linear(normalized, constants[rms ? 1 : 2], constants[rms ? 2 : 3]));
      const double unfoldedError = kiln::testing::relativeL2((*unfolded)[0], want);
      const double foldedError = kiln::testing::relativeL2((*folded)[0], want);
      std::printf("    %s%s: folded rel L2 %.3e, unfolded %.3e against float64\n", type.c_str(),
                  rms ? " rms" : "", foldedError, unfoldedError);
      EXPECT_LE(foldedError, 1e-2);
      EXPECT_LE(foldedError, 1.5 * unfoldedError);
    }
}
