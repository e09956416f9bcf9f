//===- StreamGemmGpuTest.cpp - gemm_stream against the reference evaluator ===//
//
// The bandwidth-bound GEMM (kiln_gemm_stream.cuh), forced on shapes off its
// tiles: rows not a multiple of 128, grids smaller than the tiles, K padded
// to 16 (24, 72, 240), N in one chunk, in chunks of 64 and a rest (144), or
// under a block of 16 (24); with and without a staged residual, through
// each epilogue path (16-byte stores from fragments, pairs, elements).
//
//===----------------------------------------------------------------------===//

#include "ConvTestCases.h"
#include "GpuTestSupport.h"

#include "kiln/Dialect/Kiln/KernelShapes.h"

#include <gtest/gtest.h>

using kiln::testing::ConvCase;
using kiln::testing::conv;
using kiln::testing::expectCompilesForBothImages;
using kiln::testing::expectMatchesReference;
using kiln::testing::ScopedSetting;
using kiln::testing::tensorType;

namespace {

struct StreamCase {
  int64_t m, n, k;
  const char *type;
  int64_t stages, gridLimit, blocksPerSM;
  bool residual;
};

const std::vector<StreamCase> &streamCases() {
  static const std::vector<StreamCase> cases = {
      {1000, 16, 16, "f16", 4, 3, 2, true},     {777, 24, 72, "bf16", 2, 5, 2, true},
      {4099, 144, 24, "f16", 2, 264, 1, true},  {2050, 96, 16, "bf16", 3, 11, 2, false},
      {300, 40, 240, "f16", 2, 2, 1, true},     {513, 128, 128, "f16", 2, 7, 1, false},
      {12544, 72, 24, "f16", 2, 40, 2, true}};
  return cases;
}

std::string streamConfig(const StreamCase &c) {
  return "#kiln.kernel<variant = gemm_stream, tile = [128, 64, " +
         std::to_string((c.k + 15) / 16 * 16) + "], stages = " + std::to_string(c.stages) +
         ", grid_limit = " + std::to_string(c.gridLimit) +
         ", blocks_per_sm = " + std::to_string(c.blocksPerSM) + ">";
}

/// linear + bias, SiLU, then a residual add (where asked for) and ReLU: the
/// epilogues of MobileNet's and EfficientNet's 1x1 convolutions.
std::string streamLinear(const StreamCase &c) {
  const std::string x = tensorType({c.m, c.k}, c.type), w = tensorType({c.n, c.k}, c.type),
                    b = tensorType({c.n}, c.type), y = tensorType({c.m, c.n}, c.type);
  const std::string residualIn = c.residual ? ", %r: " + y : "";
  const std::string residualArg = c.residual ? ", %br: " + y : "";
  return "func.func @f(%x: " + x + ", %w: " + w + ", %b: " + b + residualIn + ") -> " + y +
         " {\n  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b" + (c.residual ? ", %r" : "") +
         " : " + x + ", " + w + ", " + b + (c.residual ? ", " + y : "") +
         ") {kiln.kernel = " + streamConfig(c) + "} -> " + y + " {\n  ^bb0(%a: " + x +
         ", %bw: " + w + ", %bb: " + b + residualArg + "):\n    %l = kiln.linear %a, %bw, %bb : (" +
         x + ", " + w + ", " + b + ") -> " + y + "\n    %s = kiln.silu %l : " + y + "\n" +
         (c.residual ? "    %p = kiln.add %s, %br : " + y + "\n    %o = kiln.relu %p : " + y + "\n"
                     : "    %o = kiln.relu %s : " + y + "\n") +
         "    kiln.yield %o : " + y + "\n  }\n  return %0 : " + y + "\n}\n";
}

/// A 1x1 convolution with a residual and ReLU, as MobileNet's are.
ConvCase streamConv() {
  StreamCase c{3 * 13 * 11, 24, 16, "f16", 3, 2, 2, true};
  return {3, 13, 11, 16, 24, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, "f16", true, true, false,
          streamConfig(c)};
}

std::vector<std::string> streamIrs() {
  std::vector<std::string> irs;
  for (const StreamCase &c : streamCases())
    irs.push_back(streamLinear(c));
  irs.push_back(conv(streamConv()));
  return irs;
}

} // namespace

TEST(KernelsGpu, StreamGemmMatchesEvaluator) {
  KILN_REQUIRE_GPU();
  auto check = [] {
    for (const std::string &ir : streamIrs()) {
      SCOPED_TRACE(ir);
      expectMatchesReference(ir);
    }
  };
  check();
  {
    // Values straight from the fragments, two columns at a time.
    ScopedSetting pairsOnly("KILN_EPILOGUE_FRAGMENTS", "0");
    check();
  }
  {
    // The residual read from global memory at its pair, not staged.
    ScopedSetting columns("KILN_EPILOGUE_FRAGMENTS", "columns");
    check();
  }
  ScopedSetting elements("KILN_EPILOGUE_PAIRS", "0");
  check();
}

// Needs NVRTC, not a GPU: the cases above through every epilogue path, and
// every shape class the selection stage may take (K and N of one vector to
// 256 where two blocks' stages fit; kiln-select-kernels' rule) with its
// deepest ring, compile for sm_90a and sm_80 without a spill.
TEST(KernelsGpu, StreamGemmCompiles) {
  std::vector<std::string> irs = streamIrs();
  for (int64_t k : {8, 24, 72, 144, 256})
    for (int64_t n : {8, 24, 64, 144, 256}) {
      StreamCase c{1000, n, k, "f16", 4, 264, 2, true};
      while (c.stages >= 2 && 2 * (kiln::streamSharedBytes(n, k, c.stages, true) + 1024) >
                                  kiln::kMaxDynamicSharedBytes)
        --c.stages;
      if (c.stages >= 2)
        irs.push_back(streamLinear(c));
    }
  expectCompilesForBothImages(irs);
  {
    ScopedSetting pairsOnly("KILN_EPILOGUE_FRAGMENTS", "0");
    expectCompilesForBothImages(streamIrs());
  }
  ScopedSetting elements("KILN_EPILOGUE_PAIRS", "0");
  expectCompilesForBothImages(streamIrs());
}
