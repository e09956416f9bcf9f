//===- KernelsGpuTest.cpp - kiln's kernels against the reference (gpu) ----===//
//
// Each kernel family on random inputs, sizes that are not tile multiples
// included, against the ATen reference evaluator running the same IR (the
// transformer ops are in TransformerKernelsGpuTest.cpp, convolutions,
// pooling, reductions and data movement in ConvKernelsGpuTest.cpp, the test
// models end to end in ModelsGpuTest.cpp). Every test skips, with the reason, where no
// GPU is present.
//
//===----------------------------------------------------------------------===//

#include "ConvTestCases.h"
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
using kiln::testing::ConvCase;
using kiln::testing::conv;
using kiln::testing::convCases;
using kiln::testing::expectCompilesForBothImages;
using kiln::testing::Evaluated;
using kiln::testing::evaluated;
using kiln::testing::expectMatchesReference;
using kiln::testing::hopperConvCases;
using kiln::testing::movement;
using kiln::testing::poolCases;
using kiln::testing::randomInputs;
using kiln::testing::reduceCases;
using kiln::testing::ScopedSetting;
using kiln::testing::tensorType;
using kiln::testing::toleranceOf;

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

/// A linear + bias + GELU group, plus a residual unless `residual` is false
/// (an epilogue that reads only columns' inputs); `kernel`, when given, is
/// the group's forced `#kiln.kernel<...>` configuration.
std::string linear(int64_t m, int64_t n, int64_t k, const std::string &type,
                   const std::string &kernel = "", bool residual = true) {
  if (!residual)
    return kiln::testing::linearGelu(m, n, k, type, kernel);
  auto t = [&](std::string s) { return "tensor<" + s + "x" + type + ">"; };
  std::string x = t(std::to_string(m) + "x" + std::to_string(k));
  std::string w = t(std::to_string(n) + "x" + std::to_string(k));
  std::string b = t(std::to_string(n));
  std::string y = t(std::to_string(m) + "x" + std::to_string(n));
  return "func.func @f(%x: " + x + ", %w: " + w + ", %b: " + b + ", %r: " + y + ") -> " + y + " {\n"
         "  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b, %r : " + x + ", " + w + ", " + b + ", " + y + ")" +
         (kernel.empty() ? "" : " {kiln.kernel = " + kernel + "}") + " -> " + y + " {\n"
         "  ^bb0(%a: " + x + ", %bw: " + w + ", %bb: " + b + ", %br: " + y + "):\n"
         "    %l = kiln.linear %a, %bw, %bb : (" + x + ", " + w + ", " + b + ") -> " + y + "\n"
         "    %g = kiln.gelu %l : " + y + "\n"
         "    %s = kiln.add %g, %br : " + y + "\n"
         "    kiln.yield %s : " + y + "\n  }\n  return %0 : " + y + "\n}\n";
}

/// A bias-free linear (LLaMA's projections; a bias added as a separate
/// op): the epilogue rounds the accumulator itself first, then adds a [N]
/// input, applies GELU and adds a residual.
std::string biasFreeLinear(int64_t m, int64_t n, int64_t k, const std::string &type,
                           const std::string &kernel) {
  auto t = [&](std::string s) { return "tensor<" + s + "x" + type + ">"; };
  std::string x = t(std::to_string(m) + "x" + std::to_string(k));
  std::string w = t(std::to_string(n) + "x" + std::to_string(k));
  std::string b = t(std::to_string(n));
  std::string y = t(std::to_string(m) + "x" + std::to_string(n));
  return "func.func @f(%x: " + x + ", %w: " + w + ", %b: " + b + ", %r: " + y + ") -> " + y +
         " {\n  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b, %r : " + x + ", " + w + ", " + b +
         ", " + y + ") {kiln.kernel = " + kernel + "} -> " + y + " {\n  ^bb0(%a: " + x +
         ", %bw: " + w + ", %bb: " + b + ", %br: " + y + "):\n    %l = kiln.linear %a, %bw : (" +
         x + ", " + w + ") -> " + y + "\n    %c = kiln.broadcast %bb : " + b + " -> " + y +
         "\n    %s = kiln.add %l, %c : " + y + "\n    %g = kiln.gelu %s : " + y +
         "\n    %o = kiln.add %g, %br : " + y + "\n    kiln.yield %o : " + y +
         "\n  }\n  return %0 : " + y + "\n}\n";
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

/// 192-row tiles (three consumer warpgroups): blocks walking two tiles
/// each, one block walking all of them through a 2-stage ring, and a grid
/// larger than the tile count.
static const std::vector<std::string> &tallWgmmaConfigs() {
  static const std::vector<std::string> configs = {
      "#kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 3>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], stages = 2, grid_limit = 1>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [192, 64, 64], stages = 4, grid_limit = 132>"};
  return configs;
}

/// 192-row tiles whose epilogue's last ops run in the producer warpgroup's
/// idle warps (the packed handoff): 192 and 128 wide, one block walking
/// every tile through a 2-stage ring (the handoff reused tile after tile),
/// and more blocks than tiles.
static const std::vector<std::string> &tallHandoffConfigs() {
  static const std::vector<std::string> configs = {
      "#kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 3, "
      "schedule = epilogue_warpgroups>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], stages = 2, grid_limit = 1, "
      "schedule = epilogue_warpgroups>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 132, "
      "schedule = epilogue_warpgroups>"};
  return configs;
}

/// The Hopper GEMM's forced configurations: each tile width, a short ring,
/// and persistent grids smaller than the tile count.
static const std::vector<std::string> &wgmmaConfigs() {
  static const std::vector<std::string> configs = {
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 5>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 4>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 2>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 2, grid_limit = 3>",
      // Ping-pong: the warpgroups alternate over each block's tiles (odd and
      // even counts of them), through a ring as short as 2 stages.
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 5, "
      "schedule = pingpong>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 3, "
      "schedule = pingpong>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 2, grid_limit = 1, "
      "schedule = pingpong>",
      // Five stages leave 64-wide ping-pong tiles room to copy the next
      // tile's residual slices a tile ahead (--wgmma-residual-prefetch).
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 5, grid_limit = 3, "
      "schedule = pingpong>",
      // Clusters of two sharing B by multicast: an odd count of row tiles
      // (a block computes a tile past M), uneven tiles per cluster, both
      // schedules, a 2-stage ring. (256 wide, whose 128 accumulators leave
      // no room for a residual, is compiled in test/Codegen.)
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 4, "
      "multicast = 2>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 2, grid_limit = 2, "
      "multicast = 2>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 6, "
      "schedule = pingpong, multicast = 2>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, "
      "schedule = pingpong, multicast = 2>",
      // Two blocks a multiprocessor (cooperative 64-wide tiles), one with
      // pairs.
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 2, grid_limit = 5, "
      "blocks_per_sm = 2>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 2, grid_limit = 264, "
      "multicast = 2, blocks_per_sm = 2>",
      // Epilogue warpgroups: the handoff reused across a block's tiles (5
      // blocks; one block walking every tile through a 2-stage ring), and
      // 64 wide.
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 3, grid_limit = 5, "
      "schedule = epilogue_warpgroups>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 2, grid_limit = 1, "
      "schedule = epilogue_warpgroups>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 3, "
      "schedule = epilogue_warpgroups>",
      // K split over pairs of blocks: three pairs walking four tiles each
      // (the peer's partial reused tile after tile), more pairs allowed than
      // tiles, and one pair walking every 64-wide tile through a 2-stage
      // ring.
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 4, split_k = 2, "
      "grid_limit = 6>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 3, split_k = 2, "
      "grid_limit = 132>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 2, split_k = 2, "
      "grid_limit = 2>"};
  static const std::vector<std::string> all = [] {
    std::vector<std::string> both = configs;
    both.insert(both.end(), tallWgmmaConfigs().begin(), tallWgmmaConfigs().end());
    return both;
  }();
  return all;
}

// The Hopper GEMM on 192-row tiles: every epilogue path (element by
// element with odd N, fragments with and without a residual, bias-free),
// M, N and K off every tile multiple, more row tiles than a 192-row tile
// count rounds to.
TEST(KernelsGpu, LinearWgmmaTallTiles) {
  KILN_REQUIRE_GPU();
  for (const std::string &kernel : tallWgmmaConfigs()) {
    SCOPED_TRACE(kernel);
    expectMatchesReference(linear(300, 500, 712, "f16", kernel));
    expectMatchesReference(linear(300, 504, 712, "f16", kernel, /*residual=*/false));
    expectMatchesReference(linear(700, 504, 200, "bf16", kernel));
    expectMatchesReference(biasFreeLinear(300, 504, 712, "f16", kernel));
    expectMatchesReference(linear(129, 200, 72, "bf16", kernel));
  }
}

// The Hopper GEMM at each tile width the selection stage may choose, on a
// persistent grid smaller than the tile count (each block walks several
// tiles, across stage-ring wrap-arounds), with M, N and K off every tile
// multiple; the epilogue computes eight rows before storing them.
TEST(KernelsGpu, LinearWgmmaEveryTileWidth) {
  KILN_REQUIRE_GPU();
  for (const std::string &kernel : wgmmaConfigs()) {
    SCOPED_TRACE(kernel);
    expectMatchesReference(linear(300, 500, 712, "f16", kernel));
    expectMatchesReference(linear(129, 200, 72, "bf16", kernel));
  }
}

// A bias-free linear on every Hopper config: the epilogue rounds the
// accumulator itself before the bias input, GELU and a residual.
TEST(KernelsGpu, LinearWgmmaBiasFree) {
  KILN_REQUIRE_GPU();
  for (const std::string &kernel : wgmmaConfigs()) {
    SCOPED_TRACE(kernel);
    expectMatchesReference(biasFreeLinear(300, 504, 712, "f16", kernel));
    expectMatchesReference(biasFreeLinear(129, 200, 72, "bf16", kernel));
  }
}

// The epilogue computed on the accumulators' registers and stored in
// 16-byte row chunks (one 16-bit result, N % 8 == 0): bias + GELU, then
// bias + GELU + a residual copied in by rows, at each tile width and
// schedule, M, N and K off every tile multiple, ragged column tiles.
TEST(KernelsGpu, LinearWgmmaFragmentEpilogue) {
  KILN_REQUIRE_GPU();
  for (const std::string &kernel : wgmmaConfigs()) {
    SCOPED_TRACE(kernel);
    expectMatchesReference(linear(300, 504, 712, "f16", kernel, /*residual=*/false));
    expectMatchesReference(linear(129, 200, 72, "bf16", kernel));
  }
}

/// Rings one stage deeper than the full staging leaves room for, as the
/// selection stage sizes them with the residual through the ring
/// (residual_ring): the staging keeps its results' half alone. Several
/// tiles a block (the ring wraps around tiles' k-steps and slices), 128
/// and 192 rows; 128 x 256, past the residual's accumulator limit, taken
/// with the ring alone (a 1x1 convolution's in one wave, or a tuner's).
static const std::vector<std::string> &residualRingConfigs() {
  static const std::vector<std::string> configs = {
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 3, "
      "residual_ring = true>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 4, grid_limit = 2, "
      "residual_ring = true>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 6, grid_limit = 4, "
      "residual_ring = true>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 4, grid_limit = 2, "
      "residual_ring = true>"};
  return configs;
}

/// The Hopper configurations above that residual_ring takes (cooperative
/// tiles, no cluster, one block a multiprocessor), with it.
static const std::vector<std::string> &ringTakingConfigs() {
  static const std::vector<std::string> configs = [] {
    std::vector<std::string> taking;
    for (const std::string &kernel : wgmmaConfigs()) {
      if (kernel.find("multicast") != std::string::npos ||
          kernel.find("split_k") != std::string::npos ||
          kernel.find("blocks_per_sm") != std::string::npos ||
          kernel.find("epilogue_warpgroups") != std::string::npos ||
          kernel.find("pingpong") != std::string::npos)
        continue;
      taking.push_back(kernel.substr(0, kernel.size() - 1) + ", residual_ring = true>");
    }
    return taking;
  }();
  return configs;
}

// The packed handoff: a bias and a GELU (its last op, on fp16 pairs) with
// M, N and K off every tile multiple, and N past one tile by a ragged
// 16-byte chunk's worth.
TEST(KernelsGpu, LinearWgmmaTallHandoff) {
  KILN_REQUIRE_GPU();
  for (const std::string &kernel : tallHandoffConfigs()) {
    SCOPED_TRACE(kernel);
    expectMatchesReference(linear(300, 504, 712, "f16", kernel, /*residual=*/false));
    expectMatchesReference(linear(700, 200, 200, "f16", kernel, /*residual=*/false));
    expectMatchesReference(linear(129, 72, 72, "f16", kernel, /*residual=*/false));
    expectMatchesReference(kiln::testing::linearGelu(300, 504, 712, "f16", kernel, "tanh"));
  }
}

// The residual through the main loop's ring (kRingInput): the deeper rings
// above, then every Hopper configuration residual_ring takes, M, N and K
// off every tile multiple; bias-free, its GELU before the residual.
TEST(KernelsGpu, LinearWgmmaResidualRing) {
  KILN_REQUIRE_GPU();
  for (const std::string &kernel : residualRingConfigs()) {
    SCOPED_TRACE(kernel);
    expectMatchesReference(linear(300, 504, 712, "f16", kernel));
    expectMatchesReference(linear(129, 200, 72, "bf16", kernel));
  }
  ASSERT_GE(ringTakingConfigs().size(), 7u);
  for (const std::string &kernel : ringTakingConfigs()) {
    SCOPED_TRACE(kernel);
    expectMatchesReference(linear(300, 504, 712, "f16", kernel));
    expectMatchesReference(linear(129, 200, 72, "bf16", kernel));
    expectMatchesReference(biasFreeLinear(129, 200, 72, "bf16", kernel));
  }
}

// The residual through the ring, launched again and again on every
// multiprocessor (ResNet-50's 512 -> 2048 expand shape at batch 32: 1568 x
// 2048 x 512, 8 k-steps), through rings shorter and deeper than a tile's
// k-steps and slices. Through 64-wide ping-pong tiles the result moved
// from launch to launch within the tolerance (the dialect now refuses
// them): each launch must match the first bit for bit, and a launch that
// does not names the tiles it differs in.
TEST(KernelsGpu, WgmmaResidualRingRepeats) {
  KILN_REQUIRE_GPU();
  for (const char *kernel :
       {"#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 6, grid_limit = 132, "
        "residual_ring = true>",
        "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 3, grid_limit = 132, "
        "residual_ring = true>",
        "#kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 132, "
        "residual_ring = true>",
        "#kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 4, grid_limit = 104, "
        "residual_ring = true>"}) {
    SCOPED_TRACE(kernel);
    std::unique_ptr<Evaluated> e = evaluated(linear(1568, 2048, 512, "f16", kernel), 7);
    ASSERT_TRUE(e);
    std::vector<at::Tensor> first = kiln::testing::runOnGpu(e->fn, e->inputs);
    ASSERT_EQ(first.size(), 1u);
    const double err = kiln::testing::relativeL2(first[0], e->expected[0]);
    EXPECT_LE(err, toleranceOf(e->expected[0]));
    std::printf("    rel L2 %.3e vs the reference\n", err);
    int differing = 0;
    for (int launch = 1; launch < 48; ++launch) {
      const at::Tensor again = kiln::testing::runOnGpu(e->fn, e->inputs)[0];
      if (at::equal(again, first[0]))
        continue;
      ++differing;
      // The 128-row, 64-column blocks that differ: a stage read in the
      // wrong phase shows as whole slices.
      const at::Tensor rows = (again != first[0]).any(1).nonzero().flatten().cpu();
      const at::Tensor cols = (again != first[0]).any(0).nonzero().flatten().cpu();
      std::printf("    launch %d differs in %lld elements: rows %lld..%lld, columns %lld..%lld, "
                  "rel L2 %.3e vs the reference\n",
                  launch, static_cast<long long>((again != first[0]).sum().item<int64_t>()),
                  static_cast<long long>(rows.min().item<int64_t>()),
                  static_cast<long long>(rows.max().item<int64_t>()),
                  static_cast<long long>(cols.min().item<int64_t>()),
                  static_cast<long long>(cols.max().item<int64_t>()),
                  kiln::testing::relativeL2(again, e->expected[0]));
    }
    EXPECT_EQ(differing, 0) << "of 47 launches after the first";
  }
}

// K split over pairs of blocks beyond the shapes above: one k-step (the
// second block of a pair walks none and sends zeros) and an even count of
// 16 split 8 + 8 with every edge ragged.
TEST(KernelsGpu, LinearWgmmaSplitK) {
  KILN_REQUIRE_GPU();
  for (const std::string &kernel : wgmmaConfigs()) {
    if (kernel.find("split_k = 2") == std::string::npos)
      continue;
    SCOPED_TRACE(kernel);
    expectMatchesReference(linear(300, 504, 64, "f16", kernel));
    expectMatchesReference(linear(257, 384, 1000, "bf16", kernel, /*residual=*/false));
  }
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

// KILN_EPILOGUE_FRAGMENTS=late-residual: the residual's first slice of a
// tile copied when its epilogue starts, not before its main loop as by
// default (every tile width, schedule, multicast and two-blocks config;
// more tiles than blocks, so a warp's staging is reused across tiles), and
// the Hopper convolutions, some with a residual (which copy in their
// epilogue either way: the setting leaves them as they were).
TEST(KernelsGpu, WgmmaLateResidual) {
  KILN_REQUIRE_GPU();
  ScopedSetting late("KILN_EPILOGUE_FRAGMENTS", "late-residual");
  for (const std::string &kernel : wgmmaConfigs()) {
    SCOPED_TRACE(kernel);
    expectMatchesReference(linear(300, 504, 712, "f16", kernel));
    expectMatchesReference(linear(129, 200, 72, "bf16", kernel));
  }
  for (const ConvCase &c : hopperConvCases())
    expectMatchesReference(conv(c));
}

// Stream-K: tiles that fill the last wave partly, shared by k-iterations.
// GEMMs stream the last wave and the rest (12 tiles on 5 blocks: 5
// data-parallel, 7 streamed; 9 on 7 and 4 on 3: all streamed) or, under
// one wave, every tile (12 on 20), with blocks' ranges crossing tiles at K
// of 12 k-tiles and of 2; both epilogue paths (N = 504: registers; 500:
// staged). Convolutions: 16 pixel tiles on 5 blocks (9 k-steps, a
// residual), 4 on 7 (27 k-steps, under one wave), and 2 tiles of one
// k-step on 5 blocks, too few iterations to share (the tiles go as usual).
// The executor checks that the kernels leave their workspace's flags
// lowered.
static std::vector<std::string> streamKCases() {
  std::vector<std::string> irs;
  for (const char *kernel :
       {"#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 5, "
        "stream_k = true>",
        "#kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 7, "
        "stream_k = true>",
        "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 2, grid_limit = 3, "
        "stream_k = true>"}) {
    irs.push_back(linear(300, 504, 712, "f16", kernel));
    irs.push_back(linear(300, 500, 712, "bf16", kernel, /*residual=*/false));
    irs.push_back(linear(129, 200, 72, "f16", kernel));
  }
  irs.push_back(linear(300, 504, 712, "bf16",
                       "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 4, "
                       "grid_limit = 20, stream_k = true>"));
  auto convConfig = [](int64_t width, int64_t stages, const char *pixels, int64_t gridLimit) {
    return "#kiln.kernel<variant = conv_wgmma, tile = [128, " + std::to_string(width) +
           ", 64], stages = " + std::to_string(stages) +
           ", grid_limit = " + std::to_string(gridLimit) + ", pixel_tile = " + pixels +
           ", stream_k = true>";
  };
  irs.push_back(conv({2, 13, 15, 40, 72, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, "f16", true,
                        true, false, convConfig(128, 4, "[1, 4, 8]", 5)}));
  irs.push_back(conv({2, 10, 9, 136, 256, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, "bf16", true,
                        false, false, convConfig(256, 3, "[2, 8, 8]", 7)}));
  irs.push_back(conv({2, 14, 14, 64, 200, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, "f16", true,
                        true, false, convConfig(128, 3, "[2, 7, 7]", 5)}));
  return irs;
}
TEST(KernelsGpu, WgmmaStreamK) {
  KILN_REQUIRE_GPU();
  for (const std::string &ir : streamKCases()) {
    SCOPED_TRACE(ir);
    expectMatchesReference(ir);
  }
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
  for (const std::string &kernel : tallHandoffConfigs())
    irs.push_back(linear(300, 504, 712, "f16", kernel, /*residual=*/false));
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
