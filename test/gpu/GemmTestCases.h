//===- GemmTestCases.h - GEMM groups and the Hopper GEMM's configurations -*- C++ -*-===//
//
// The IR builders and configuration lists of GemmWgmmaGpuTest.cpp that the
// other kernel tests share (the compile test takes every configuration, the
// runtime-size tests a few of them).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_GPU_GEMMTESTCASES_H
#define KILN_TEST_GPU_GEMMTESTCASES_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::testing {

/// A linear + bias + GELU group, plus a residual unless `residual` is false
/// (an epilogue that reads only columns' inputs); `kernel`, when given, is
/// the group's forced `#kiln.kernel<...>` configuration.
std::string linear(int64_t m, int64_t n, int64_t k, const std::string &type,
                   const std::string &kernel = "", bool residual = true);
/// A bias-free linear (LLaMA's projections; a bias added as a separate
/// op): the epilogue rounds the accumulator itself first, then adds a [N]
/// input, applies GELU and adds a residual.
std::string biasFreeLinear(int64_t m, int64_t n, int64_t k, const std::string &type,
                           const std::string &kernel);

/// The Hopper GEMM's forced configurations: each tile width, a short ring,
/// persistent grids smaller than the tile count, every schedule, clusters,
/// two blocks a multiprocessor, K split over pairs, and the 192-row tiles.
const std::vector<std::string> &wgmmaConfigs();
/// 192-row tiles (three consumer warpgroups).
const std::vector<std::string> &tallWgmmaConfigs();
/// Rings one stage deeper than the full staging leaves room for, with the
/// residual through the ring (residual_ring).
const std::vector<std::string> &residualRingConfigs();
/// The configurations of wgmmaConfigs() that residual_ring takes, with it.
const std::vector<std::string> &ringTakingConfigs();
/// The swapped few-row GEMM (gemm_wgmma_swap): both token tiles, clusters
/// of 1, 2, 4 and 8, rings shorter and deeper than K's k-steps.
const std::vector<std::string> &swapConfigs();
/// Pairs of column tiles sharing A (multicast_a) on ResNet-50's, BERT's
/// and ViT's batch-32 shapes.
std::vector<std::string> multicastACases();
/// The narrow 128 x 56 tile's cases (GemmWgmmaGpuTest.cpp).
std::vector<std::string> narrowTileCases();
/// Stream-K's cases: GEMMs and convolutions whose tiles fill the last wave
/// partly.
std::vector<std::string> streamKCases();

} // namespace kiln::testing

#endif // KILN_TEST_GPU_GEMMTESTCASES_H
