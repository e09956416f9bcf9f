//===- StreamKPlanTest.cpp - stream-K's work plan on the host -------------===//
//
// The Hopper main loop's stream-K plan (codegen/cuda/kiln_stream_k.cuh)
// decides which block does which k-iterations of which tile and which
// blocks a finisher waits on; a mistake there is a wrong sum or a hang on
// the GPU. Here every shape of a sweep is walked for every block, as the
// kernel walks it, and the invariants the kernel relies on are checked.
//
//===----------------------------------------------------------------------===//

#include "kiln_stream_k.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

using kiln::sm90::StreamKPlan;

namespace {

struct Unit {
  int block, tile, kBegin, kEnd, tileStart;
};

/// Walks `plan` for every block; checks each block's own invariants and
/// returns the units in walk order.
std::vector<Unit> walkAll(const StreamKPlan &plan, int blocks) {
  std::vector<Unit> units;
  for (int b = 0; b < blocks; ++b) {
    int visited = 0, unfinished = 0, firstUnfinished = -1;
    plan.walk(b, [&](int tile, int kBegin, int kEnd, int tileStart) {
      EXPECT_LT(kBegin, kEnd) << "block " << b << ": an empty unit";
      EXPECT_LE(kEnd, plan.kTiles);
      if (kEnd < plan.kTiles) {
        ++unfinished;
        if (firstUnfinished < 0)
          firstUnfinished = visited;
      }
      units.push_back({b, tile, kBegin, kEnd, tileStart});
      ++visited;
    });
    // One partial slot a block, and its flag raised before the block waits.
    EXPECT_LE(unfinished, 1) << "block " << b;
    if (unfinished) {
      EXPECT_EQ(firstUnfinished, 0) << "block " << b << ": its unfinished share is not first";
    }
    if (plan.iterations > 0) {
      EXPECT_LT(plan.start(b), plan.start(b + 1)) << "block " << b << ": an empty range";
    }
  }
  return units;
}

void checkShape(int tiles, int kTiles, int blocks) {
  SCOPED_TRACE(std::to_string(tiles) + " tiles of " + std::to_string(kTiles) + " k-steps on " +
               std::to_string(blocks) + " blocks");
  const StreamKPlan plan(tiles, kTiles, blocks);
  std::vector<Unit> units = walkAll(plan, blocks);
  // Every k-iteration of every tile exactly once.
  std::map<int, std::vector<int>> done; // tile -> count per k
  for (const Unit &u : units) {
    std::vector<int> &counts = done[u.tile];
    counts.resize(kTiles, 0);
    for (int k = u.kBegin; k < u.kEnd; ++k)
      ++counts[k];
  }
  ASSERT_EQ(static_cast<int>(done.size()), tiles);
  for (auto &[tile, counts] : done) {
    ASSERT_GE(tile, 0);
    ASSERT_LT(tile, tiles);
    for (int k = 0; k < kTiles; ++k)
      ASSERT_EQ(counts[k], 1) << "tile " << tile << " k-step " << k;
  }
  // A finisher that started past the tile's first k-step waits on exactly
  // the blocks that did the rest of the tile, each of which left it unfinished.
  for (const Unit &u : units) {
    if (u.kEnd != kTiles || u.kBegin == 0)
      continue;
    ASSERT_GE(u.tileStart, 0) << "a data-parallel tile started past k = 0";
    std::vector<int> expected;
    for (const Unit &other : units)
      if (other.tile == u.tile && other.block != u.block) {
        EXPECT_LT(other.kEnd, kTiles);
        expected.push_back(other.block);
      }
    std::sort(expected.begin(), expected.end());
    std::vector<int> waitedOn;
    for (int peer = plan.owner(u.tileStart); peer < u.block; ++peer)
      waitedOn.push_back(peer);
    EXPECT_EQ(waitedOn, expected) << "tile " << u.tile << " finished by block " << u.block;
  }
  // A tile begun at k = 0 by its finisher has no other share.
  for (const Unit &u : units) {
    if (u.kBegin != 0 || u.kEnd != kTiles)
      continue;
    for (const Unit &other : units)
      EXPECT_FALSE(other.tile == u.tile && other.block != u.block) << "tile " << u.tile;
  }
}

} // namespace

TEST(StreamKPlan, EveryIterationOnceAndTheRightPeers) {
  // ViT's down-projection (200 tiles of 48 k-steps on 132), ResNet-50's
  // 14 x 14 convolution (98 of 36), the GPU tests' shapes, and a sweep.
  checkShape(200, 48, 132);
  checkShape(98, 36, 132);
  checkShape(12, 12, 5);
  checkShape(9, 12, 7);
  checkShape(4, 2, 3);
  checkShape(12, 12, 20);
  for (int blocks : {1, 2, 3, 7, 16, 132})
    for (int tiles = 1; tiles <= 3 * blocks + 5; tiles += tiles < 40 ? 1 : 7)
      for (int kTiles : {1, 2, 3, 5, 12, 48})
        checkShape(tiles, kTiles, blocks);
}

TEST(StreamKPlan, WhatIsStreamed) {
  // Whole waves stay data-parallel; the last full wave and the rest are
  // streamed; under one wave everything is; too few iterations, nothing.
  EXPECT_EQ(StreamKPlan(264, 12, 132).dataParallelTiles, 264);
  EXPECT_EQ(StreamKPlan(200, 48, 132).dataParallelTiles, 0);
  EXPECT_EQ(StreamKPlan(300, 12, 132).dataParallelTiles, 132);
  EXPECT_EQ(StreamKPlan(300, 12, 132).iterations, 168 * 12);
  EXPECT_EQ(StreamKPlan(98, 36, 132).dataParallelTiles, 0);
  EXPECT_EQ(StreamKPlan(98, 36, 132).iterations, 98 * 36);
  EXPECT_EQ(StreamKPlan(2, 1, 5).iterations, 0);
  EXPECT_EQ(StreamKPlan(2, 1, 5).dataParallelTiles, 2);
}
