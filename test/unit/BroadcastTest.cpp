//===- BroadcastTest.cpp - NumPy/PyTorch broadcasting rules ---------------===//

#include "kiln/Dialect/Kiln/Broadcast.h"

#include <gtest/gtest.h>

#include <vector>

using namespace kiln;

namespace {
std::vector<int64_t> bcast(std::vector<int64_t> a, std::vector<int64_t> b) {
  auto result = broadcastShapes(a, b);
  EXPECT_TRUE(result.has_value());
  return result ? std::vector<int64_t>(result->begin(), result->end())
                : std::vector<int64_t>{};
}
} // namespace

TEST(Broadcast, EqualShapes) {
  EXPECT_EQ(bcast({4, 8}, {4, 8}), (std::vector<int64_t>{4, 8}));
}

TEST(Broadcast, AlignsAtTheLastDimension) {
  EXPECT_EQ(bcast({2, 3, 4}, {4}), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(bcast({4}, {2, 3, 4}), (std::vector<int64_t>{2, 3, 4}));
}

TEST(Broadcast, SizeOneStretches) {
  EXPECT_EQ(bcast({4, 1}, {1, 8}), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(bcast({2, 1, 5}, {3, 1}), (std::vector<int64_t>{2, 3, 5}));
}

TEST(Broadcast, ScalarAndZeroSize) {
  EXPECT_EQ(bcast({}, {3, 2}), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(bcast({0, 4}, {1, 4}), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(bcast({0}, {1}), (std::vector<int64_t>{0}));
}

TEST(Broadcast, ConflictNamesDimensionsAsWritten) {
  BroadcastConflict conflict{-1, -1};
  // [2, 3, 4] vs [5, 4]: lhs dimension 1 (3) conflicts with rhs dimension 0
  // (5).
  EXPECT_FALSE(broadcastShapes({2, 3, 4}, {5, 4}, &conflict).has_value());
  EXPECT_EQ(conflict.lhsDim, 1);
  EXPECT_EQ(conflict.rhsDim, 0);
  // Zero does not stretch to a non-one size.
  EXPECT_FALSE(broadcastShapes({0}, {3}).has_value());
}
