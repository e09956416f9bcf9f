//===- GemmWgmmaGpuTest.cpp - the Hopper GEMM's configurations (gpu) ------===//
//
// The Hopper GEMM (gemm_wgmma) under every configuration the selection
// stage or a tuning file may force: tile widths and heights, schedules,
// clusters, two blocks a multiprocessor, K split over pairs, the residual
// through the ring, stream-K; M, N and K off every tile
// multiple, against the ATen reference evaluator. The configuration lists
// are shared (GemmTestCases.h): the compile test in KernelsGpuTest.cpp
// compiles each for both images without a GPU.
//
//===----------------------------------------------------------------------===//

#include "ConvTestCases.h"
#include "GemmTestCases.h"
#include "GpuTestSupport.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

namespace kiln::testing {

/// A linear + bias + GELU group, plus a residual unless `residual` is false
/// (an epilogue that reads only columns' inputs); `kernel`, when given, is
/// the group's forced `#kiln.kernel<...>` configuration.
std::string linear(int64_t m, int64_t n, int64_t k, const std::string &type,
                   const std::string &kernel, bool residual) {
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

/// The swapped few-row GEMM: 16 and 32 tokens a block, clusters of 1 to 8
/// blocks sharing the weight tile, a 3-stage ring (every stage reused many
/// times) and rings deeper than a short K's k-steps; then each wide token
/// tile (one accumulator set a consumer), alone and in pairs.
const std::vector<std::string> &swapConfigs() {
  static const std::vector<std::string> configs = {
      "#kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 16, 64], stages = 12, multicast = 4>",
      "#kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 32, 64], stages = 12, multicast = 4>",
      "#kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 16, 64], stages = 3, multicast = 1>",
      "#kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 32, 64], stages = 3, multicast = 2>",
      "#kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 16, 64], stages = 6, multicast = 8>",
      "#kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 64, 64], stages = 3, multicast = 1>",
      "#kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 96, 64], stages = 4, multicast = 2>",
      "#kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 112, 64], stages = 8, multicast = 2>",
      "#kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 128, 64], stages = 6, multicast = 1>"};
  return configs;
}

/// 192-row tiles (three consumer warpgroups): blocks walking two tiles
/// each, one block walking all of them through a 2-stage ring, and a grid
/// larger than the tile count.
const std::vector<std::string> &tallWgmmaConfigs() {
  static const std::vector<std::string> configs = {
      "#kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 3>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], stages = 2, grid_limit = 1>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [192, 64, 64], stages = 4, grid_limit = 132>",
      // Pairs of column tiles sharing A: a 96-row half of it each. (192 x
      // 192 pairs with a residual copied by rows spill: they are in
      // residualRingConfigs, with the residual through the ring.)
      "#kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], stages = 3, grid_limit = 4, "
      "multicast = 2, multicast_a = true>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [192, 64, 64], stages = 2, grid_limit = 132, "
      "multicast = 2, multicast_a = true>"};
  return configs;
}

/// The Hopper GEMM's forced configurations: each tile width, a short ring,
/// and persistent grids smaller than the tile count.
const std::vector<std::string> &wgmmaConfigs() {
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
      "grid_limit = 2>",
      // Pairs of column tiles sharing A by multicast (multicast_a): clusters
      // walking several pairs, an odd count of column tiles (the last
      // pair's second tile past N), ping-pong, two blocks a multiprocessor.
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 4, "
      "multicast = 2, multicast_a = true>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 2, grid_limit = 132, "
      "multicast = 2, multicast_a = true>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 6, "
      "schedule = pingpong, multicast = 2, multicast_a = true>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 2, grid_limit = 264, "
      "multicast = 2, blocks_per_sm = 2, multicast_a = true>"};
  static const std::vector<std::string> all = [] {
    std::vector<std::string> both = configs;
    both.insert(both.end(), tallWgmmaConfigs().begin(), tallWgmmaConfigs().end());
    return both;
  }();
  return all;
}

/// Rings one stage deeper than the full staging leaves room for, as the
/// selection stage sizes them with the residual through the ring
/// (residual_ring): the staging keeps its results' half alone. Several
/// tiles a block (the ring wraps around tiles' k-steps and slices), 128
/// and 192 rows; 128 x 256, past the residual's accumulator limit, taken
/// with the ring alone (a 1x1 convolution's in one wave, or a tuner's);
/// multicast pairs, each block loading its own rows' slices and releasing
/// them in both, with an odd row tile count (the last pair's second tile
/// past M) and one pair walking every tile; 192 x 192 pairs sharing A.
const std::vector<std::string> &residualRingConfigs() {
  static const std::vector<std::string> configs = {
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 3, "
      "residual_ring = true>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 4, grid_limit = 2, "
      "residual_ring = true>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 6, grid_limit = 4, "
      "residual_ring = true>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 4, grid_limit = 2, "
      "residual_ring = true>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 4, "
      "multicast = 2, residual_ring = true>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 6, grid_limit = 2, "
      "multicast = 2, residual_ring = true>",
      "#kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 4, grid_limit = 4, "
      "multicast = 2, residual_ring = true, multicast_a = true>"};
  return configs;
}

/// The Hopper configurations above that residual_ring takes (cooperative
/// tiles, multicast pairs or none, one block a multiprocessor), with it.
const std::vector<std::string> &ringTakingConfigs() {
  static const std::vector<std::string> configs = [] {
    std::vector<std::string> taking;
    for (const std::string &kernel : wgmmaConfigs()) {
      if (kernel.find("split_k") != std::string::npos ||
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
std::vector<std::string> streamKCases() {
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

// Pairs of column tiles sharing A (multicast_a) on the shapes they are
// meant for: ResNet-50's 1x1 2048 -> 512 at 7 x 7, batch 32, as a GEMM and
// as the convolution with a residual (128 x 64 tiles, 8 column tiles);
// BERT's FFN down-projection shape with its residual through the ring
// (128 x 192); ViT's 192-row tiles at a ragged M (197 tokens x 4), no
// residual (as its up-projection).
std::vector<std::string> multicastACases() {
  const std::string narrow = "#kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], "
                             "stages = 6, grid_limit = 132, multicast = 2, multicast_a = true>";
  return {linear(1568, 512, 2048, "f16", narrow),
          conv({32, 7, 7, 2048, 512, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, "f16", true, true,
                false, narrow}),
          linear(1024, 768, 3072, "f16",
                 "#kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, "
                 "grid_limit = 132, multicast = 2, residual_ring = true, multicast_a = true>"),
          linear(788, 768, 768, "bf16",
                 "#kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, "
                 "grid_limit = 132, multicast = 2, multicast_a = true>",
                 /*residual=*/false)};
}

/// The narrow 128 x 56 tile (wgmma-narrow): ResNet-50's 2048 -> 512 at
/// 7 x 7 as the GEMM and as the convolution (bias, ReLU) it runs as, N off
/// 56 (the last tile's columns past N) with a GELU and a residual copied by
/// rows (fragments), an odd N (staged, one column a lane) in bf16, and a
/// grid of 3 blocks that each walk several tiles.
std::vector<std::string> narrowTileCases() {
  const std::string narrow = "#kiln.kernel<variant = gemm_wgmma, tile = [128, 56, 64], "
                             "stages = 6, grid_limit = 132>";
  return {linear(1568, 512, 2048, "f16", narrow, /*residual=*/false),
          conv({32, 7, 7, 2048, 512, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, "f16", true, false,
                false, narrow}),
          linear(300, 500, 712, "f16", narrow),
          linear(129, 201, 72, "bf16", narrow, /*residual=*/false),
          linear(700, 504, 200, "bf16",
                 "#kiln.kernel<variant = gemm_wgmma, tile = [128, 56, 64], stages = 4, "
                 "grid_limit = 3>")};
}

} // namespace kiln::testing

namespace {

using kiln::testing::biasFreeLinear;
using kiln::testing::conv;
using kiln::testing::ConvCase;
using kiln::testing::evaluated;
using kiln::testing::Evaluated;
using kiln::testing::expectMatchesReference;
using kiln::testing::hopperConvCases;
using kiln::testing::linear;
using kiln::testing::multicastACases;
using kiln::testing::narrowTileCases;
using kiln::testing::residualRingConfigs;
using kiln::testing::ringTakingConfigs;
using kiln::testing::ScopedSetting;
using kiln::testing::streamKCases;
using kiln::testing::swapConfigs;
using kiln::testing::tallWgmmaConfigs;
using kiln::testing::toleranceOf;
using kiln::testing::wgmmaConfigs;

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

// A transformer layer's GEMMs at batch 1 as selected (wgmma-few-rows: one
// to three row tiles on the Hopper GEMM, a block a tile walking all of K):
// 128 tokens, 197 with a ragged K, and 69 (part of one row tile).
TEST(KernelsGpu, LinearWgmmaFewRows) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(linear(128, 2304, 768, "f16", ""));
  expectMatchesReference(linear(197, 3072, 776, "bf16", "", /*residual=*/false));
  expectMatchesReference(linear(69, 2200, 520, "f16", ""));
}

// The few-row GEMMs of batch 1 with the weight's rows as wgmma's M side
// (gemm_wgmma_swap), each configuration: GPT-2's down-projection (128
// tokens, 48 k-steps), 197 tokens with a ragged K and no residual, 69
// tokens (token tiles past M in the last cluster), bias-free bf16 with 33
// tokens; and the selection's own choice with --wgmma-swap's shapes.
TEST(KernelsGpu, LinearWgmmaSwap) {
  KILN_REQUIRE_GPU();
  for (const std::string &kernel : swapConfigs()) {
    SCOPED_TRACE(kernel);
    expectMatchesReference(linear(128, 768, 3072, "f16", kernel));
    expectMatchesReference(linear(197, 768, 776, "bf16", kernel, /*residual=*/false));
    expectMatchesReference(linear(69, 1024, 520, "f16", kernel));
    expectMatchesReference(biasFreeLinear(33, 256, 72, "bf16", kernel));
  }
}

// The wide swapped tiles: 112 tokens on ResNet-50's 1x1 2048 -> 512 at 7 x
// 7, batch 32 (14 token tiles; timed there, though the selection keeps the
// Hopper GEMM's tiles), as a GEMM and as the convolution (bias and ReLU,
// then bias, residual and ReLU), with a ragged M whose last pair has a
// tile past M (9 tiles of 112); and 64 tokens on EfficientNet-B0's 1152 ->
// 192 with its residual, as selected (25 token tiles, the last pair's
// second past M).
TEST(KernelsGpu, LinearWgmmaSwapWide) {
  KILN_REQUIRE_GPU();
  const std::string wide =
      "#kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 112, 64], stages = 8, multicast = 2>";
  expectMatchesReference(linear(1568, 512, 2048, "f16", wide));
  expectMatchesReference(linear(1000, 320, 1096, "bf16", wide, /*residual=*/false));
  for (bool residual : {false, true}) {
    SCOPED_TRACE(residual ? "with a residual" : "bias and ReLU");
    expectMatchesReference(conv({32, 7, 7, 2048, 512, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1,
                                 "f16", true, residual, false, wide}));
  }
  expectMatchesReference(
      conv({32, 7, 7, 1152, 192, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, "f16", true, true, false,
            "#kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 64, 64], stages = 8, "
            "multicast = 2>"}));
}

// The pairs sharing A (multicastACases) against the reference.
TEST(KernelsGpu, LinearWgmmaMulticastA) {
  KILN_REQUIRE_GPU();
  for (const std::string &ir : multicastACases())
    expectMatchesReference(ir);
}

// The narrow 128 x 56 tile (narrowTileCases) against the reference.
TEST(KernelsGpu, LinearWgmmaNarrowTile) {
  KILN_REQUIRE_GPU();
  for (const std::string &ir : narrowTileCases())
    expectMatchesReference(ir);
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
// second block of a pair walks none and sends zeros), an even count of
// 16 split 8 + 8 with every edge ragged, and the few row tiles of a
// transformer layer at batch 1 (128 tokens exactly; 69, part of one tile).
TEST(KernelsGpu, LinearWgmmaSplitK) {
  KILN_REQUIRE_GPU();
  for (const std::string &kernel : wgmmaConfigs()) {
    if (kernel.find("split_k = 2") == std::string::npos)
      continue;
    SCOPED_TRACE(kernel);
    expectMatchesReference(linear(300, 504, 64, "f16", kernel));
    expectMatchesReference(linear(257, 384, 1000, "bf16", kernel, /*residual=*/false));
    expectMatchesReference(linear(128, 576, 768, "f16", kernel));
    expectMatchesReference(linear(69, 200, 776, "bf16", kernel, /*residual=*/false));
  }
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

TEST(KernelsGpu, WgmmaStreamK) {
  KILN_REQUIRE_GPU();
  for (const std::string &ir : streamKCases()) {
    SCOPED_TRACE(ir);
    expectMatchesReference(ir);
  }
}

} // namespace
