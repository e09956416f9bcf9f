//===- KernelsGpuTest.cpp - kiln's kernels against the reference (gpu) ----===//
//
// Each kernel family on random inputs, sizes that are not tile multiples
// included, against the ATen reference evaluator running the same IR (the
// transformer ops are in TransformerKernelsGpuTest.cpp, the Hopper GEMM's
// configurations in GemmWgmmaGpuTest.cpp, convolutions, pooling,
// reductions and data movement in ConvKernelsGpuTest.cpp, the test
// models end to end in ModelsGpuTest.cpp). Every test skips, with the reason, where no
// GPU is present.
//
//===----------------------------------------------------------------------===//

#include "ConvTestCases.h"
#include "GemmTestCases.h"
#include "GpuExecutor.h"
#include "GpuTestSupport.h"
#include "KilnVerify.h"
#include "ReferenceEvaluator.h"
#include "TorchScriptImporter.h"
#include "TorchScriptModule.h"
#include "TorchScriptState.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/codegen/CompileJobs.h"
#include "kiln/codegen/CudaEmitter.h"
#include "kiln/Passes/Pipelines.h"
#include "kiln/runtime/Device.h"
#include "kiln/runtime/Error.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>

using namespace mlir;
using namespace kiln;
using kiln::testing::biasFreeLinear;
using kiln::testing::ConvCase;
using kiln::testing::conv;
using kiln::testing::convCases;
using kiln::testing::expectCompilesForBothImages;
using kiln::testing::Evaluated;
using kiln::testing::evaluated;
using kiln::testing::expectMatchesReference;
using kiln::testing::hopperConvCases;
using kiln::testing::linear;
using kiln::testing::movement;
using kiln::testing::poolCases;
using kiln::testing::reduceCases;
using kiln::testing::residualRingConfigs;
using kiln::testing::ringTakingConfigs;
using kiln::testing::ScopedSetting;
using kiln::testing::swapConfigs;
using kiln::testing::multicastACases;
using kiln::testing::narrowTileCases;
using kiln::testing::streamKCases;
using kiln::testing::wgmmaConfigs;

namespace {


/// A broadcast add, GELU, sigmoid, scale, clamp and divide; `kernel`, when
/// given, is the group's forced `#kiln.kernel<...>` configuration.
std::string elementwise(const std::string &shape, const std::string &type,
                        const std::string &kernel = "") {
  std::string t = "tensor<" + shape + "x" + type + ">";
  std::string row = "tensor<" + shape.substr(shape.rfind('x') + 1) + "x" + type + ">";
  return "func.func @f(%a: " + t + ", %b: " + row + ") -> " + t + " {\n"
         "  %0 = kiln.fusion elementwise ins(%a, %b : " + t + ", " + row + ")" +
         (kernel.empty() ? "" : " {kiln.kernel = " + kernel + "}") + " -> " + t + " {\n"
         "  ^bb0(%x: " + t + ", %y: " + row + "):\n"
         "    %h = kiln.constant dense<0.5> : tensor<" + type + ">\n"
         "    %s = kiln.add %x, %y : " + t + ", " + row + " -> " + t + "\n"
         "    %g = kiln.gelu %s approximate = tanh : " + t + "\n"
         "    %e = kiln.sigmoid %g : " + t + "\n"
         "    %m = kiln.mul %e, %h : " + t + ", tensor<" + type + "> -> " + t + "\n"
         "    %c = kiln.clamp %m min = 0.1 max = 0.4 : " + t + "\n"
         "    %d = kiln.div %c, %e : " + t + "\n"
         "    kiln.yield %d : " + t + "\n  }\n  return %0 : " + t + "\n}\n";
}

std::string batchMatmul(const std::string &lhs, const std::string &rhs,
                        const std::string &out, const std::string &op) {
  return "func.func @f(%a: " + lhs + ", %b: " + rhs + ") -> " + out + " {\n"
         "  %0 = kiln.fusion gemm_epilogue ins(%a, %b : " + lhs + ", " + rhs + ") -> " + out + " {\n"
         "  ^bb0(%x: " + lhs + ", %y: " + rhs + "):\n"
         "    %m = kiln." + op + " %x, %y : (" + lhs + ", " + rhs + ") -> " + out + "\n"
         "    kiln.yield %m : " + out + "\n  }\n  return %0 : " + out + "\n}\n";
}

std::string layerNorm(int64_t rows, int64_t length, const std::string &type) {
  std::string t = "tensor<" + std::to_string(rows) + "x" + std::to_string(length) + "x" + type + ">";
  std::string v = "tensor<" + std::to_string(length) + "x" + type + ">";
  return "func.func @f(%x: " + t + ", %y: " + t + ", %g: " + v + ", %b: " + v + ") -> (" + t + ", " + t + ") {\n"
         "  %0:2 = kiln.fusion normalization ins(%x, %y, %g, %b : " + t + ", " + t + ", " + v + ", " + v + ") -> " + t + ", " + t + " {\n"
         "  ^bb0(%a: " + t + ", %c: " + t + ", %w: " + v + ", %d: " + v + "):\n"
         "    %h = kiln.add %a, %c : " + t + "\n"
         "    %n = kiln.layer_norm %h weight %w bias %d axis = 1 eps = 1.0e-05 : (" + t + ", " + v + ", " + v + ") -> " + t + "\n"
         "    %e = kiln.mul %n, %h : " + t + "\n"
         "    kiln.yield %h, %e : " + t + ", " + t + "\n  }\n  return %0#0, %0#1 : " + t + ", " + t + "\n}\n";
}

/// RMSNorm after a residual add, with its weight: the mean of squares, no
/// mean subtracted.
std::string rmsNorm(int64_t rows, int64_t length, const std::string &type) {
  std::string t = "tensor<" + std::to_string(rows) + "x" + std::to_string(length) + "x" + type + ">";
  std::string v = "tensor<" + std::to_string(length) + "x" + type + ">";
  return "func.func @f(%x: " + t + ", %y: " + t + ", %g: " + v + ") -> " + t + " {\n"
         "  %0 = kiln.fusion normalization ins(%x, %y, %g : " + t + ", " + t + ", " + v + ") -> " + t + " {\n"
         "  ^bb0(%a: " + t + ", %c: " + t + ", %w: " + v + "):\n"
         "    %h = kiln.add %a, %c : " + t + "\n"
         "    %n = kiln.layer_norm %h axis = 1 eps = 1.0e-06 rms : (" + t + ") -> " + t + "\n"
         "    %e = kiln.mul %n, %w : " + t + ", " + v + " -> " + t + "\n"
         "    kiln.yield %e : " + t + "\n  }\n  return %0 : " + t + "\n}\n";
}

std::string softmax(int64_t rows, int64_t length, const std::string &type) {
  std::string t = "tensor<" + std::to_string(rows) + "x" + std::to_string(length) + "x" + type + ">";
  return "func.func @f(%x: " + t + ") -> " + t + " {\n"
         "  %0 = kiln.fusion normalization ins(%x : " + t + ") -> " + t + " {\n"
         "  ^bb0(%a: " + t + "):\n"
         "    %c = kiln.constant dense<3.0> : tensor<" + type + ">\n"
         "    %s = kiln.mul %a, %c : " + t + ", tensor<" + type + "> -> " + t + "\n"
         "    %p = kiln.softmax %s dim = 1 : " + t + "\n"
         "    kiln.yield %p : " + t + "\n  }\n  return %0 : " + t + "\n}\n";
}


} // namespace

TEST(KernelsGpu, ElementwiseBroadcastOddSizes) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(elementwise("5x8", "f16"));
  expectMatchesReference(elementwise("1001x1003", "f32"));
  expectMatchesReference(elementwise("37x129", "bf16"));
}

/// Unrolled elementwise kernels (forced: the policy takes one element a
/// thread a step by default): totals that are not multiples of the
/// threads times the unroll, grids small enough that each thread loops.
std::vector<std::string> unrolledElementwise() {
  auto unrolled = [](int u, int gridLimit) {
    return "#kiln.kernel<variant = elementwise, tile = [1, " + std::to_string(u) +
           ", 1], grid_limit = " + std::to_string(gridLimit) + ">";
  };
  return {elementwise("5x8", "f16", unrolled(2, 1)),
          elementwise("1001x1003", "f32", unrolled(4, 7)),
          elementwise("37x129", "bf16", unrolled(8, 2)),
          elementwise("32x14x14x1152", "f16", unrolled(8, 2112))};
}

TEST(KernelsGpu, ElementwiseUnrolled) {
  KILN_REQUIRE_GPU();
  for (const std::string &ir : unrolledElementwise())
    expectMatchesReference(ir);
}

/// RoBERTa's position ids as an elementwise group, offset past 2^24 (fp32
/// holds integers exactly only below it): ids != pad as an i32 mask, times
/// a running count (i32, wrapping at 2^31 as PyTorch's does), plus an i64
/// offset, and the same as f32.
std::string integerPositions() {
  return "func.func @f(%ids: tensor<37x129xi64>, %cum: tensor<37x129xi32>) -> "
         "(tensor<37x129xi64>, tensor<37x129xf32>) {\n"
         "  %0:2 = kiln.fusion elementwise ins(%ids, %cum : tensor<37x129xi64>, "
         "tensor<37x129xi32>) -> tensor<37x129xi64>, tensor<37x129xf32> {\n"
         "  ^bb0(%i: tensor<37x129xi64>, %c: tensor<37x129xi32>):\n"
         "    %pad = kiln.constant dense<1> : tensor<i64>\n"
         "    %big = kiln.constant dense<100000001> : tensor<i32>\n"
         "    %offset = kiln.constant dense<4294967297> : tensor<i64>\n"
         "    %ne = kiln.ne %i, %pad : tensor<37x129xi64>, tensor<i64> -> tensor<37x129xi1>\n"
         "    %m = kiln.cast %ne : tensor<37x129xi1> to tensor<37x129xi32>\n"
         "    %cb = kiln.add %c, %big : tensor<37x129xi32>, tensor<i32> -> tensor<37x129xi32>\n"
         "    %p = kiln.mul %cb, %m : tensor<37x129xi32>\n"
         "    %l = kiln.cast %p : tensor<37x129xi32> to tensor<37x129xi64>\n"
         "    %q = kiln.add %l, %offset : tensor<37x129xi64>, tensor<i64> -> tensor<37x129xi64>\n"
         "    %f = kiln.cast %q : tensor<37x129xi64> to tensor<37x129xf32>\n"
         "    kiln.yield %q, %f : tensor<37x129xi64>, tensor<37x129xf32>\n"
         "  }\n"
         "  return %0#0, %0#1 : tensor<37x129xi64>, tensor<37x129xf32>\n"
         "}\n";
}

// The evaluator half needs no GPU: it must match ATen's integer ops
// exactly before the kernel is compared with it.
TEST(KernelsGpu, IntegerArithmeticIsExact) {
  std::unique_ptr<Evaluated> e = evaluated(integerPositions(), 5);
  ASSERT_TRUE(e);
  const std::vector<at::Tensor> &in = e->inputs;
  at::Tensor want = ((in[1] + 100000001) * in[0].ne(1).to(at::kInt)).to(at::kLong) + 4294967297LL;
  ASSERT_TRUE(at::equal(e->expected[0], want)) << "the evaluator's integers are not exact";
  KILN_REQUIRE_GPU();
  std::vector<at::Tensor> actual = kiln::testing::runOnGpu(e->fn, in);
  ASSERT_EQ(actual.size(), 2u);
  EXPECT_TRUE(at::equal(actual[0], e->expected[0])) << "the i64 positions differ";
  EXPECT_LE(kiln::testing::relativeL2(actual[1], e->expected[1]), 1e-7);
}

/// Running sums in elementwise kernels: an i32 mask into exact i64 sums
/// along the last dimension, and fp16 along the first (fp32 accumulation).
std::string runningSums() {
  return "func.func @f(%m: tensor<3x37xi32>, %x: tensor<29x5xf16>) -> "
         "(tensor<3x37xi64>, tensor<29x5xf16>) {\n"
         "  %0 = kiln.fusion elementwise ins(%m : tensor<3x37xi32>) -> tensor<3x37xi64> {\n"
         "  ^bb0(%a: tensor<3x37xi32>):\n"
         "    %s = kiln.cumsum %a dim = 1 : tensor<3x37xi32> -> tensor<3x37xi64>\n"
         "    kiln.yield %s : tensor<3x37xi64>\n"
         "  }\n"
         "  %1 = kiln.fusion elementwise ins(%x : tensor<29x5xf16>) -> tensor<29x5xf16> {\n"
         "  ^bb0(%b: tensor<29x5xf16>):\n"
         "    %s = kiln.cumsum %b dim = 0 : tensor<29x5xf16> -> tensor<29x5xf16>\n"
         "    kiln.yield %s : tensor<29x5xf16>\n"
         "  }\n"
         "  return %0, %1 : tensor<3x37xi64>, tensor<29x5xf16>\n"
         "}\n";
}

TEST(KernelsGpu, RunningSums) {
  std::unique_ptr<Evaluated> e = evaluated(runningSums(), 9);
  ASSERT_TRUE(e);
  ASSERT_TRUE(at::equal(e->expected[0], at::cumsum(e->inputs[0], 1, at::kLong)));
  KILN_REQUIRE_GPU();
  std::vector<at::Tensor> actual = kiln::testing::runOnGpu(e->fn, e->inputs);
  ASSERT_EQ(actual.size(), 2u);
  EXPECT_TRUE(at::equal(actual[0], e->expected[0])) << "the i64 running sums differ";
  EXPECT_LE(kiln::testing::relativeL2(actual[1], e->expected[1]), 1e-2);
}

// GPT-2's GELU as traced: pow(x, 3) and the other constant exponents the
// code generator writes as products and roots, against ATen's pow.
TEST(KernelsGpu, PowConstantExponents) {
  KILN_REQUIRE_GPU();
  std::string ir = "func.func @f(%x: tensor<37x129xf32>) -> tensor<37x129xf32> {\n"
                   "  %0 = kiln.fusion elementwise ins(%x : tensor<37x129xf32>) -> tensor<37x129xf32> {\n"
                   "  ^bb0(%a: tensor<37x129xf32>):\n"
                   "    %e = kiln.exp %a : tensor<37x129xf32>\n";
  std::string sum = "%e";
  int index = 0;
  for (const char *exponent : {"3.0", "2.0", "0.5", "-0.5", "-1.0", "-2.0", "2.5"}) {
    std::string c = "%c" + std::to_string(index), p = "%p" + std::to_string(index);
    std::string t = "%t" + std::to_string(index++);
    ir += "    " + c + " = kiln.constant dense<" + exponent + "> : tensor<f32>\n    " + p +
          " = kiln.pow %e, " + c + " : tensor<37x129xf32>, tensor<f32> -> tensor<37x129xf32>\n    " +
          t + " = kiln.add " + sum + ", " + p + " : tensor<37x129xf32>\n";
    sum = t;
  }
  ir += "    kiln.yield " + sum + " : tensor<37x129xf32>\n  }\n  return %0 : tensor<37x129xf32>\n}\n";
  expectMatchesReference(ir);
}

TEST(KernelsGpu, LinearEpilogueFp16OddSizes) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(linear(70, 300, 72, "f16"));  // vector loads
  expectMatchesReference(linear(129, 257, 75, "f16")); // K % 8 != 0: scalar edge loads
  expectMatchesReference(linear(512, 384, 1024, "f16"));
}

/// `config` with its sizes given at launch (runtime_sizes).
static std::string withRuntimeSizes(std::string config) {
  config.insert(config.size() - 1, ", runtime_sizes = true");
  return config;
}

/// One module, two GEMMs of one configuration and epilogue at different
/// sizes: one kernel, launched with each one's integers.
static std::string twoSizes(int64_t m1, int64_t m2, int64_t n, int64_t k, const std::string &type,
                            const std::string &kernel) {
  auto t = [&](std::string s) { return "tensor<" + s + "x" + type + ">"; };
  std::string w = t(std::to_string(n) + "x" + std::to_string(k)), b = t(std::to_string(n));
  std::string body;
  std::vector<std::string> xs, ys;
  for (int64_t m : {m1, m2}) {
    xs.push_back(t(std::to_string(m) + "x" + std::to_string(k)));
    ys.push_back(t(std::to_string(m) + "x" + std::to_string(n)));
  }
  for (int i = 0; i < 2; ++i)
    body += "  %" + std::to_string(i) + " = kiln.fusion gemm_epilogue ins(%x" +
            std::to_string(i) + ", %w, %b : " + xs[i] + ", " + w + ", " + b +
            ") {kiln.kernel = " + kernel + "} -> " + ys[i] + " {\n  ^bb0(%a: " + xs[i] +
            ", %bw: " + w + ", %bb: " + b + "):\n    %l = kiln.linear %a, %bw, %bb : (" + xs[i] +
            ", " + w + ", " + b + ") -> " + ys[i] + "\n    %g = kiln.gelu %l : " + ys[i] +
            "\n    kiln.yield %g : " + ys[i] + "\n  }\n";
  return "func.func @f(%x0: " + xs[0] + ", %x1: " + xs[1] + ", %w: " + w + ", %b: " + b +
         ") -> (" + ys[0] + ", " + ys[1] + ") {\n" + body + "  return %0, %1 : " + ys[0] + ", " +
         ys[1] + "\n}\n";
}

/// The configurations whose sizes are given at launch in the tests: the
/// Hopper GEMM's schedules, 64 to 256 wide, multicast and two blocks a
/// multiprocessor, and split K. (A 192-row tile spills a GELU and residual epilogue with
/// runtime sizes; kiln-compile retries it with sizes in the source.)
static std::vector<std::string> runtimeSizeConfigs() {
  std::vector<std::string> configs;
  for (size_t i : {2, 4, 5, 9, 12, 14})
    configs.push_back(withRuntimeSizes(wgmmaConfigs()[i]));
  // K split 4 and 2 ways across a cluster (batch-1 layers), 3 and 2 stages.
  configs.push_back("#kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64], stages = 3, "
                    "split_k = 4, runtime_sizes = true>");
  configs.push_back("#kiln.kernel<variant = gemm_split_k, tile = [64, 64, 32], stages = 2, "
                    "split_k = 2, runtime_sizes = true>");
  return configs;
}

/// `ir` with its first fusion group's kernel configuration forced.
static std::string withKernel(std::string ir, const std::string &kernel) {
  size_t group = ir.find("kiln.fusion ");
  size_t arrow = ir.find(") -> ", group);
  ir.insert(arrow + 1, " {kiln.kernel = " + kernel + "}");
  return ir;
}

/// Normalizations with their row count given at launch: rows in registers
/// (16-byte vectors, and one element at a time where the row length is not
/// a whole number of them), and a row per block; layer norms, an RMSNorm
/// and a softmax; a residual add before, results before and after.
static std::vector<std::string> runtimeRowCases() {
  const std::string warp = "#kiln.kernel<variant = normalization_warp, runtime_sizes = true>";
  const std::string block = "#kiln.kernel<variant = normalization, runtime_sizes = true>";
  return {withKernel(layerNorm(4101, 768, "f16"), warp),
          withKernel(layerNorm(9, 1024, "f32"), warp),
          withKernel(layerNorm(7, 2056, "bf16"), block),
          withKernel(rmsNorm(7, 1000, "f16"), warp),
          withKernel(softmax(37, 128, "f16"), warp)};
}

// Rows given at launch: every layout of the normalization kernels.
TEST(KernelsGpu, NormalizationRuntimeRows) {
  KILN_REQUIRE_GPU();
  for (const std::string &ir : runtimeRowCases())
    expectMatchesReference(ir);
}

// Sizes given at launch: M, N and K off every tile multiple with a
// residual, bias + GELU alone, bf16, and one kernel launched at two sizes.
TEST(KernelsGpu, LinearWgmmaRuntimeSizes) {
  KILN_REQUIRE_GPU();
  for (const std::string &kernel : runtimeSizeConfigs()) {
    SCOPED_TRACE(kernel);
    expectMatchesReference(linear(300, 504, 712, "f16", kernel));
    expectMatchesReference(linear(300, 504, 712, "f16", kernel, /*residual=*/false));
    expectMatchesReference(linear(129, 200, 72, "bf16", kernel));
    expectMatchesReference(twoSizes(77, 520, 136, 264, "f16", kernel));
  }
}

// Needs NVRTC, not a GPU: the kernels with sizes given at launch (the
// GEMMs' and the normalizations' rows) compile for both images without a
// spill.
TEST(KernelsGpu, RuntimeSizesCompile) {
  std::vector<std::string> irs;
  for (const std::string &kernel : runtimeSizeConfigs())
    irs.push_back(linear(300, 504, 712, "f16", kernel));
  for (const std::string &ir : runtimeRowCases())
    irs.push_back(ir);
  expectCompilesForBothImages(irs);
}

/// gemm_narrow's cases (forced: the policy takes it up to 256 FMAs a row by default):
/// (rows, columns, K, element type), rows not a multiple of the block's 128
/// and grids smaller than the rows, column counts a multiple of 4 up to
/// 144 and K from one 16-byte vector to 128.
struct NarrowCase {
  int64_t m, n, k;
  const char *type;
  int64_t gridLimit;
};
static const std::vector<NarrowCase> &narrowCases() {
  static const std::vector<NarrowCase> cases = {
      {1000, 16, 16, "f16", 3}, {777, 24, 72, "bf16", 2}, {515, 48, 128, "f16", 5},
      {300, 4, 8, "bf16", 1},   {4099, 40, 96, "f16", 64}, {1001, 72, 24, "f16", 9},
      // Passes of 32 columns and a rest: 96 (three, none), 144 (four and 16).
      {333, 96, 16, "bf16", 2}, {2050, 144, 24, "f16", 11}};
  return cases;
}
std::string narrowConfig(int64_t gridLimit) {
  return "#kiln.kernel<variant = gemm_narrow, grid_limit = " + std::to_string(gridLimit) + ">";
}

// A thread per row on CUDA cores, bias + GELU + residual epilogue in column
// pairs; and a 1x1 convolution with a residual and ReLU the same way.
TEST(KernelsGpu, NarrowGemmThreadPerRow) {
  KILN_REQUIRE_GPU();
  for (const NarrowCase &c : narrowCases()) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k));
    expectMatchesReference(linear(c.m, c.n, c.k, c.type, narrowConfig(c.gridLimit)));
  }
  expectMatchesReference(conv({3, 13, 11, 24, 16, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, "f16",
                               true, true, false, narrowConfig(7)}));
}

/// gemm_gemv's cases (forced: the policy takes it up to 8 rows by default):
/// EfficientNet's squeeze (32 x 10 x 240) and excitation (K = 10, rows not
/// on 16-byte boundaries) at batch 32, a squeeze of K = 1152 (lanes loop
/// over K), a batch-1 classifier, and ragged row counts (a warp's last
/// rows past M: 1, 7, 17, 31).
struct GemvCase {
  int64_t m, n, k;
  const char *type;
};
static const std::vector<GemvCase> &gemvCases() {
  static const std::vector<GemvCase> cases = {
      {32, 10, 240, "f16"}, {32, 240, 10, "f16"}, {32, 48, 1152, "bf16"}, {1, 1000, 1280, "f16"},
      {7, 33, 64, "bf16"},  {17, 20, 4, "f16"},    {31, 5, 2056, "f16"}};
  return cases;
}
const char *const kGemv = "#kiln.kernel<variant = gemm_gemv>";

// A block per column, K across a warp's lanes, bias + GELU + residual; and
// a squeeze-and-excitation 1x1 convolution on a pooled map the same way.
TEST(KernelsGpu, GemvFewRows) {
  KILN_REQUIRE_GPU();
  for (const GemvCase &c : gemvCases()) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k));
    expectMatchesReference(linear(c.m, c.n, c.k, c.type, kGemv));
  }
  expectMatchesReference(conv({20, 1, 1, 96, 4, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, "f16",
                               true, true, false, kGemv}));
}

// Too few 128 x 256 tiles for the GPU: 64 x 64 tiles with K split across a
// cluster of 2, 4 or 8 blocks (sm_90a), reduced through distributed shared
// memory: a transformer's down-projection at batch 1 (split 8), ViT's 197
// tokens (split 4), one row, and a K too short to split.
TEST(KernelsGpu, LinearSplitKClusters) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(linear(128, 768, 3072, "f16"));
  expectMatchesReference(linear(197, 768, 768, "bf16"));
  expectMatchesReference(linear(1, 96, 4096, "f16"));
  expectMatchesReference(linear(100, 72, 40, "f16"));
}

TEST(KernelsGpu, LinearEpilogueBf16AndFp32) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(linear(130, 200, 96, "bf16"));
  expectMatchesReference(linear(33, 65, 17, "f32"));
}

/// An fp32 GEMM (`op`: linear with a bias, or matmul) marked kiln.tf32, as
/// --precision tf32 leaves it, run as `kernel` (empty: as selected).
std::string tf32Gemm(int64_t m, int64_t n, int64_t k, const std::string &op,
                     const std::string &kernel = "") {
  auto t = [](int64_t a, int64_t b) {
    return "tensor<" + std::to_string(a) + "x" + std::to_string(b) + "xf32>";
  };
  bool linear = op == "linear";
  std::string x = t(m, k), w = linear ? t(n, k) : t(k, n), y = t(m, n);
  std::string b = "tensor<" + std::to_string(n) + "xf32>";
  std::string ins = linear ? "%x, %w, %b : " + x + ", " + w + ", " + b : "%x, %w : " + x + ", " + w;
  std::string args = linear ? "%a: " + x + ", %bw: " + w + ", %bb: " + b : "%a: " + x + ", %bw: " + w;
  std::string call = linear ? "kiln.linear %a, %bw, %bb {kiln.tf32} : (" + x + ", " + w + ", " + b + ")"
                            : "kiln.matmul %a, %bw {kiln.tf32} : (" + x + ", " + w + ")";
  return "func.func @f(%x: " + x + ", %w: " + w + (linear ? ", %b: " + b : "") + ") -> " + y +
         " {\n  %0 = kiln.fusion gemm_epilogue ins(" + ins + ")" +
         (kernel.empty() ? "" : " {kiln.kernel = " + kernel + "}") + " -> " + y + " {\n" +
         "  ^bb0(" + args + "):\n    %l = " + call + " -> " + y + "\n" +
         "    %g = kiln.gelu %l : " + y + "\n    kiln.yield %g : " + y + "\n  }\n" +
         "  return %0 : " + y + "\n}\n";
}

TEST(KernelsGpu, LinearTf32OddSizes) {
  KILN_REQUIRE_GPU();
  // Against the evaluator, which rounds the operands to tf32 too: what is
  // left is the order of the sums (and ties, rounded away from zero here).
  // Sizes off the 64 x 64 x 16 tile, a [N, K] and a [K, N] B.
  expectMatchesReference(tf32Gemm(130, 200, 96, "linear"), 1, 1e-4);
  expectMatchesReference(tf32Gemm(33, 65, 17, "linear"), 2, 1e-4);
  expectMatchesReference(tf32Gemm(257, 129, 300, "matmul"), 3, 1e-4);
  // Forced on the SIMT kernel, the same GEMM in fp32 math: tf32's 10-bit
  // mantissa is visible (and within the 1e-3 that tf32 promises).
  std::unique_ptr<Evaluated> e = evaluated(tf32Gemm(130, 200, 96, "linear"), 4);
  ASSERT_TRUE(e);
  std::vector<at::Tensor> tensorCores = kiln::testing::runOnGpu(e->fn, e->inputs);
  std::unique_ptr<Evaluated> f = evaluated(
      tf32Gemm(130, 200, 96, "linear", "#kiln.kernel<variant = gemm_simt, tile = [64, 64, 16]>"),
      4);
  ASSERT_TRUE(f);
  std::vector<at::Tensor> simt = kiln::testing::runOnGpu(f->fn, f->inputs);
  double err = kiln::testing::relativeL2(tensorCores[0], simt[0]);
  EXPECT_LE(err, 1e-3);
  EXPECT_GT(err, 1e-6) << "the tf32 kernel computed in fp32";
  std::printf("    tf32 against fp32 math: rel L2 %.3e\n", err);
}

TEST(KernelsGpu, MatmulNMajorOperand) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(batchMatmul("tensor<130x200xf16>", "tensor<200x129xf16>",
                                     "tensor<130x129xf16>", "matmul"));
  expectMatchesReference(batchMatmul("tensor<3x5x8xf32>", "tensor<2x3x8x7xf32>",
                                     "tensor<2x3x5x7xf32>", "batch_matmul"));
  expectMatchesReference(batchMatmul("tensor<4x66x72xbf16>", "tensor<72x40xbf16>",
                                     "tensor<4x66x40xbf16>", "batch_matmul"));
}

TEST(KernelsGpu, LayerNormWithPrologueAndEpilogue) {
  KILN_REQUIRE_GPU();
  // A row to a warp (rows of at most 1024: 20, 768 across more warps than
  // the grid holds at once, 1000, exactly 1024), then a row to a block.
  expectMatchesReference(layerNorm(6, 20, "f32"));
  expectMatchesReference(layerNorm(4101, 768, "f16"));
  expectMatchesReference(layerNorm(4, 1000, "f16"));
  expectMatchesReference(layerNorm(9, 1024, "f32"));
  expectMatchesReference(layerNorm(3, 4096, "bf16"));
}

TEST(KernelsGpu, RmsNormWithResidualAndWeight) {
  KILN_REQUIRE_GPU();
  // A row to a warp (37, Llama-7B's 4096 is a row to a block), odd row counts.
  expectMatchesReference(rmsNorm(5, 37, "f32"));
  expectMatchesReference(rmsNorm(4101, 768, "f16"));
  expectMatchesReference(rmsNorm(3, 4096, "bf16"));
  expectMatchesReference(rmsNorm(7, 1000, "f16"));
}

TEST(KernelsGpu, ScaledSoftmax) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(softmax(4, 9, "f32"));
  expectMatchesReference(softmax(37, 197, "bf16"));
  expectMatchesReference(softmax(2, 3000, "f16"));
  // Rows of whole 16-byte vectors, a lane's elements in runs of 8.
  expectMatchesReference(softmax(37, 128, "f16"));
  expectMatchesReference(softmax(3, 200, "bf16"));
}

// Rows of whole vectors whose tensors start one element past 16 bytes (as
// a view into a larger buffer may): the kernels find their pointers
// unaligned and move the same lanes' elements one by one.
TEST(KernelsGpu, VectorRowsFromUnalignedPointers) {
  KILN_REQUIRE_GPU();
  {
    ScopedSetting halves("KILN_GPU_TEST_OFFSET", "2");
    expectMatchesReference(layerNorm(4101, 768, "f16"));
    expectMatchesReference(rmsNorm(7, 1000, "f16"));
    expectMatchesReference(softmax(37, 128, "bf16"));
  }
  ScopedSetting floats("KILN_GPU_TEST_OFFSET", "4");
  expectMatchesReference(layerNorm(9, 1024, "f32"));
}



// Needs NVRTC, not a GPU: every kernel above compiles for both targets the
// artifact carries without a spill, a stack frame or a ptxas warning.
TEST(KernelsGpu, NewKernelsCompileForSm90aAndSm80) {
  std::vector<std::string> irs = poolCases();
  for (const ConvCase &c : convCases())
    irs.push_back(conv(c));
  for (const ConvCase &c : hopperConvCases())
    irs.push_back(conv(c));
  for (const std::string &ir : reduceCases())
    irs.push_back(ir);
  irs.push_back(movement("f16"));
  irs.push_back(integerPositions());
  irs.push_back(runningSums());
  for (auto [m, n, k] : {std::tuple{128, 768, 3072}, {197, 768, 768}, {100, 72, 40}})
    irs.push_back(linear(m, n, k, "f16")); // split-K clusters of 8, 4 and 1
  for (const std::string &kernel : wgmmaConfigs()) {
    irs.push_back(linear(300, 500, 712, "bf16", kernel));
    irs.push_back(linear(300, 504, 712, "f16", kernel, /*residual=*/false)); // fragments
    // Without a bias: ptxas serialized a ping-pong kernel's wgmmas where the
    // epilogue's first instruction converted the accumulator (C7514).
    irs.push_back(biasFreeLinear(300, 504, 712, "f16", kernel));
  }
  for (const NarrowCase &c : narrowCases())
    irs.push_back(linear(c.m, c.n, c.k, c.type, narrowConfig(c.gridLimit)));
  irs.push_back(conv({3, 13, 11, 24, 16, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, "f16", true,
                      true, false, narrowConfig(7)}));
  irs.push_back(batchMatmul("tensor<4x66x72xbf16>", "tensor<72x40xbf16>",
                            "tensor<4x66x40xbf16>", "batch_matmul")); // N-major, split
  // Rows a warp moves in 16-byte vectors.
  irs.push_back(layerNorm(4101, 768, "f16"));
  irs.push_back(layerNorm(9, 1024, "f32"));
  irs.push_back(rmsNorm(7, 1000, "f16"));
  irs.push_back(softmax(37, 128, "f16"));
  expectCompilesForBothImages(irs);
}

// The swapped GEMM's configurations compile for both images (the sm_80
// image's CUDA-core body too) without spills (CPU CI), and the wide tiles on
// the 1x1 convolutions with a residual that wgmma-swap-wide gives them.
TEST(KernelsGpu, SwapGemmCompiles) {
  std::vector<std::string> irs;
  for (const std::string &kernel : swapConfigs()) {
    irs.push_back(linear(128, 768, 3072, "f16", kernel));
    irs.push_back(linear(197, 768, 776, "bf16", kernel, /*residual=*/false));
    irs.push_back(biasFreeLinear(33, 256, 72, "bf16", kernel));
  }
  irs.push_back(conv({32, 7, 7, 2048, 512, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, "f16", true,
                      true, false,
                      "#kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 112, 64], stages = "
                      "8, multicast = 2>"}));
  irs.push_back(conv({32, 7, 7, 1152, 192, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, "f16", true,
                      true, false,
                      "#kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 64, 64], stages = "
                      "8, multicast = 2>"}));
  expectCompilesForBothImages(irs);
}

// The pairs sharing A compile for both images without spills (CPU CI).
TEST(KernelsGpu, MulticastACompiles) { expectCompilesForBothImages(multicastACases()); }

// The narrow tile's cases compile for both images without spills (CPU CI).
TEST(KernelsGpu, NarrowTileCompiles) { expectCompilesForBothImages(narrowTileCases()); }

// Stream-K's cases compile for both images without spills (CPU CI).
TEST(KernelsGpu, StreamKCompiles) { expectCompilesForBothImages(streamKCases()); }

// Needs NVRTC, not a GPU: with a residual copied in by rows (its first
// slice before the main loop, then with KILN_EPILOGUE_FRAGMENTS=late-residual
// when the epilogue starts), through the main loop's ring (residual_ring,
// and the deeper rings it makes room for), and with fragments kept to
// column inputs (=columns), every Hopper tile and schedule compiles without
// a spill; so do the Hopper convolutions.

TEST(KernelsGpu, FragmentEpilogueWithResidualCompiles) {
  std::vector<std::string> irs;
  for (const std::string &kernel : wgmmaConfigs())
    irs.push_back(linear(300, 504, 712, "f16", kernel));
  expectCompilesForBothImages(irs);
  {
    ScopedSetting columns("KILN_EPILOGUE_FRAGMENTS", "columns");
    expectCompilesForBothImages(irs);
  }
  {
    ScopedSetting late("KILN_EPILOGUE_FRAGMENTS", "late-residual");
    expectCompilesForBothImages(irs);
  }
  for (const std::string &kernel : ringTakingConfigs()) {
    irs.push_back(linear(300, 504, 712, "f16", kernel));
    irs.push_back(biasFreeLinear(129, 200, 72, "bf16", kernel));
  }
  for (const std::string &kernel : residualRingConfigs())
    irs.push_back(linear(300, 504, 712, "f16", kernel));
  for (const ConvCase &c : hopperConvCases())
    irs.push_back(conv(c));
  expectCompilesForBothImages(irs);
}

// Needs NVRTC, not a GPU: every pass width gemm-narrow-fmas may compile (N a
// multiple of 4 up to 64, then passes of 32 and a rest; K of one vector,
// 32, and the longest its rule takes), with the heaviest epilogue of the
// tests (bias, erf GELU, residual), compiles for sm_90a and sm_80 without a
// spill: kiln-compile would reject the model otherwise.
TEST(KernelsGpu, NarrowGemmEveryColumnCountCompiles) {
  std::vector<std::string> irs;
  std::vector<int64_t> columns;
  for (int64_t n = 4; n <= 64; n += 4)
    columns.push_back(n);
  for (int64_t n : {72, 100, 144, 256})
    columns.push_back(n);
  for (int64_t n : columns) {
    int64_t longest = 8;
    for (int64_t k = 8; k <= 128; k += 8)
      if (k * n <= 16 * (k + 2 * n) && k * n * 4 <= 24576)
        longest = k;
    for (int64_t k : {int64_t(8), std::min<int64_t>(32, longest), longest})
      irs.push_back(linear(1000, n, k, "f16", narrowConfig(8)));
  }
  expectCompilesForBothImages(irs);
}

// Needs NVRTC, not a GPU: every gemv case compiles for sm_90a and sm_80
// without a spill.
TEST(KernelsGpu, GemvCompiles) {
  std::vector<std::string> irs;
  for (const GemvCase &c : gemvCases())
    irs.push_back(linear(c.m, c.n, c.k, c.type, kGemv));
  expectCompilesForBothImages(irs);
}

// Needs NVRTC, not a GPU: the unrolled elementwise kernels compile for both
// images without a spill (the loads of every step are live at once).
TEST(KernelsGpu, ElementwiseUnrolledCompiles) {
  expectCompilesForBothImages(unrolledElementwise());
}
