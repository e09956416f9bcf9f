//===- ArtifactTest.cpp - the artifact reader on hostile input ------------===//
//
// Takes an artifact written by kiln-compile (from the ctest fixture) and
// feeds the reader every truncation and many corruptions: each must be an
// ArtifactError, never a crash or an out-of-bounds read (run it under ASan
// to see the latter).

#include "kiln/runtime/Artifact.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

using namespace kiln::rt;

namespace {
std::string readArtifact() {
  const char *path = std::getenv("KILN_TEST_ARTIFACT");
  std::ifstream file(path ? path : "mlp.kiln", std::ios::binary);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}
} // namespace

TEST(Artifact, ParsesWhatKilnCompileWrote) {
  std::string bytes = readArtifact();
  ASSERT_FALSE(bytes.empty()) << "fixture artifact missing";
  Artifact a = Artifact::parse(bytes, "fixture");
  ASSERT_EQ(a.inputs.size(), 1u);
  EXPECT_EQ(a.inputs[0].name, "x");
  EXPECT_EQ(a.inputs[0].shape, (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(a.outputs.size(), 1u);
  EXPECT_EQ(a.launches.size(), 2u);
  for (const KernelEntry &k : a.kernels) {
    ASSERT_EQ(k.images.size(), 3u); // sm_90a, sm_80, PTX
    EXPECT_EQ(k.images[0].arch, "sm_90a");
    EXPECT_EQ(k.images[0].data.substr(0, 4), "\x7f" "ELF");
    EXPECT_EQ(k.images[2].arch, "compute_80");
  }
  for (const BufferEntry &b : a.buffers) {
    if (b.kind == kiln::artifact::BufferKind::Weight) {
      EXPECT_EQ(b.offset % 256, 0u) << "weight at " << b.offset;
    }
  }
}

TEST(Artifact, EveryTruncationIsAnError) {
  std::string bytes = readArtifact();
  ASSERT_FALSE(bytes.empty());
  size_t step = std::max<size_t>(1, bytes.size() / 2000);
  for (size_t size = 0; size < bytes.size(); size += step)
    EXPECT_THROW(Artifact::parse(bytes.substr(0, size), "truncated"), ArtifactError)
        << "prefix of " << size << " bytes";
}

TEST(Artifact, CorruptionIsAnError) {
  std::string bytes = readArtifact();
  ASSERT_FALSE(bytes.empty());
  std::mt19937 rng(5);
  for (int trial = 0; trial < 500; ++trial) {
    std::string corrupted = bytes;
    size_t at = rng() % corrupted.size();
    corrupted[at] ^= static_cast<char>(1 + rng() % 255);
    EXPECT_THROW(Artifact::parse(corrupted, "corrupted"), ArtifactError)
        << "byte " << at << " flipped";
  }
}
