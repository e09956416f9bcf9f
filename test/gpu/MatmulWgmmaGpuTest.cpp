//===- MatmulWgmmaGpuTest.cpp - matmul and bmm on the Hopper GEMM ----------===//
//
// The persistent TMA + wgmma GEMM with a [K, N] B (matmul's right operand,
// read by wgmma as an MN-major tile) and with a batch walked by one
// persistent grid, against the reference evaluator: each schedule and tile width
// that takes them, M, N and K off every tile multiple, column groups wholly
// past N, rows of one batch ragged against the next, an operand shared by
// every batch, and a GELU + residual epilogue indexed across batches.
//
//===----------------------------------------------------------------------===//

#include "GpuTestSupport.h"

#include <gtest/gtest.h>

using kiln::testing::expectCompilesForBothImages;
using kiln::testing::expectMatchesReference;
using kiln::testing::ScopedSetting;
using kiln::testing::tensorType;

namespace {

struct MatmulCase {
  std::vector<int64_t> lhs, rhs, out;
  const char *type;
  /// A batch on the grid (stream-K takes none).
  bool batched;
};

/// matmul (2-D) or batch_matmul, then GELU and a residual of the result's
/// shape.
std::string matmul(const MatmulCase &c, const std::string &kernel) {
  const std::string a = tensorType(c.lhs, c.type), b = tensorType(c.rhs, c.type),
                    y = tensorType(c.out, c.type);
  const std::string op = c.lhs.size() == 2 && c.rhs.size() == 2 ? "matmul" : "batch_matmul";
  return "func.func @f(%x: " + a + ", %w: " + b + ", %r: " + y + ") -> " + y +
         " {\n  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : " + a + ", " + b + ", " + y +
         ")" + (kernel.empty() ? "" : " {kiln.kernel = " + kernel + "}") + " -> " + y +
         " {\n  ^bb0(%a: " + a + ", %bw: " + b + ", %br: " + y + "):\n    %m = kiln." + op +
         " %a, %bw : (" + a + ", " + b + ") -> " + y + "\n    %g = kiln.gelu %m : " + y +
         "\n    %s = kiln.add %g, %br : " + y + "\n    kiln.yield %s : " + y +
         "\n  }\n  return %0 : " + y + "\n}\n";
}

const std::vector<MatmulCase> &matmulCases() {
  static const std::vector<MatmulCase> cases = {
      // Every size off the tiles; N = 504 leaves a partial last column group.
      {{300, 712}, {712, 504}, {300, 504}, "f16", false},
      {{129, 72}, {72, 200}, {129, 200}, "bf16", false},
      // One B for every batch: a single GEMM over all 264 rows of A.
      {{4, 66, 72}, {72, 40}, {4, 66, 40}, "bf16", false},
      // Both batched, 77 rows a batch (a row tile ragged in each), N = 136:
      // a 256-wide tile's last column group lies wholly past N.
      {{3, 77, 136}, {3, 136, 136}, {3, 77, 136}, "bf16", true},
      // One A for a batch of Bs (A's map at z = 0).
      {{130, 64}, {4, 64, 200}, {4, 130, 200}, "f16", true},
      // Two batch dimensions.
      {{2, 3, 200, 136}, {2, 3, 136, 72}, {2, 3, 200, 72}, "f16", true}};
  return cases;
}

struct MatmulConfig {
  const char *kernel;
  bool streamK;
};

/// The schedules and tile widths that take a [K, N] B and a batch (no
/// cluster: multicast shares a [N, K] B of one matrix; one block a
/// multiprocessor, GemmEmitter.cpp says why), on persistent grids
/// smaller than the tile count and rings as short as 2 stages.
const std::vector<MatmulConfig> &matmulConfigs() {
  static const std::vector<MatmulConfig> configs = {
      {"#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 5>",
       false},
      {"#kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 2>",
       false},
      {"#kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 2, grid_limit = 3>",
       false},
      {"#kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 3, "
       "schedule = pingpong>",
       false},
      {"#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 2, grid_limit = 1, "
       "schedule = pingpong>",
       false},
      {"#kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 3>",
       false},
      {"#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 3, grid_limit = 5, "
       "schedule = epilogue_warpgroups>",
       false},
      {"#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 5, "
       "stream_k = true>",
       true}};
  return configs;
}

/// Every case under every configuration that takes it.
std::vector<std::string> forcedCases() {
  std::vector<std::string> irs;
  for (const MatmulConfig &config : matmulConfigs())
    for (const MatmulCase &c : matmulCases())
      if (!(config.streamK && c.batched))
        irs.push_back(matmul(c, config.kernel));
  return irs;
}

} // namespace

TEST(KernelsGpu, MatmulWgmmaForced) {
  KILN_REQUIRE_GPU();
  for (const std::string &ir : forcedCases()) {
    SCOPED_TRACE(ir);
    expectMatchesReference(ir);
  }
}

// The selection stage's own choices, checked the same way: by default
// (wgmma for the larger cases), and with wgmma-matmul=false (split K or
// mma.sync, on the rows of A folded into one GEMM where B has no batch).
TEST(KernelsGpu, MatmulSelected) {
  KILN_REQUIRE_GPU();
  const MatmulCase attentionLike{{32, 128, 64}, {32, 64, 128}, {32, 128, 128}, "f16", true};
  for (const char *options : {"", "wgmma-matmul=false"}) {
    SCOPED_TRACE(options);
    ScopedSetting select("KILN_GPU_TEST_SELECT", options);
    for (const MatmulCase &c : matmulCases())
      expectMatchesReference(matmul(c, ""));
    expectMatchesReference(matmul(attentionLike, ""));
  }
}

// Needs NVRTC, not a GPU: every forced case compiles for both images (the
// mma.sync fallback of the other) without a spill or a stack frame.
TEST(KernelsGpu, MatmulWgmmaCompiles) { expectCompilesForBothImages(forcedCases()); }
