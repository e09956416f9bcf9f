//===- ArtifactTest.cpp - the artifact reader on hostile input ------------===//
//
// Takes an artifact written by kiln-compile (from the ctest fixture) and
// feeds the reader every truncation, many corruptions and one forged file per
// validation: each must be one ArtifactError naming the cause and the byte,
// never a crash or an out-of-bounds read (the fuzzer in test/fuzz runs the
// same reader under ASan and UBSan).
//
// Forged files come from a serializer here that mirrors the writer; a test
// checks that it reproduces kiln-compile's file byte for byte, so a forged
// file differs from a real one only where a case changes it.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Artifact.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include <unistd.h>

using namespace kiln::rt;
namespace fmt = kiln::artifact;

namespace {

std::string fixturePath() {
  const char *path = std::getenv("KILN_TEST_ARTIFACT");
  return path ? path : "mlp.kiln";
}

std::string readArtifact() {
  std::ifstream file(fixturePath(), std::ios::binary);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

//===----------------------------------------------------------------------===//
// A serializer for forging files
//===----------------------------------------------------------------------===//

class Bytes {
public:
  std::string bytes;
  template <typename T> Bytes &put(T value) {
    bytes.append(reinterpret_cast<const char *>(&value), sizeof(T));
    return *this;
  }
  Bytes &str(const std::string &s) {
    put<uint32_t>(s.size());
    bytes += s;
    return *this;
  }
};

void putTensor(Bytes &w, const TensorSpec &t) {
  w.str(t.name).put<uint32_t>(static_cast<uint32_t>(t.dtype)).put<uint32_t>(t.shape.size());
  for (int64_t d : t.shape)
    w.put<int64_t>(d);
}

/// The bytes kiln-compile would write for `a`, with `version`.
std::string serialize(const Artifact &a, uint32_t version = fmt::kVersion) {
  Bytes signature, kernels, plan;
  signature.put<uint32_t>(a.inputs.size()).put<uint32_t>(a.outputs.size());
  for (const TensorSpec &t : a.inputs)
    putTensor(signature, t);
  for (const TensorSpec &t : a.outputs)
    putTensor(signature, t);
  signature.put<uint64_t>(a.arenaBytes);

  kernels.put<uint32_t>(a.kernels.size());
  for (const KernelEntry &k : a.kernels) {
    kernels.str(k.name).str(k.kind).put<uint32_t>(k.images.size());
    for (const KernelImage &image : k.images) {
      kernels.str(image.arch).put<uint64_t>(image.data.size());
      kernels.bytes += image.data;
    }
  }

  plan.put<uint32_t>(a.buffers.size());
  for (const BufferEntry &b : a.buffers)
    plan.put<uint32_t>(static_cast<uint32_t>(b.kind))
        .put<uint32_t>(b.index)
        .put<uint64_t>(b.offset)
        .put<uint64_t>(b.bytes);
  plan.put<uint32_t>(a.plans.size());
  for (const LaunchPlan &launchPlan : a.plans) {
  plan.str(launchPlan.arch).put<uint32_t>(launchPlan.launches.size());
  for (const LaunchEntry &l : launchPlan.launches) {
    plan.put<uint32_t>(l.kernel);
    for (uint32_t g : l.grid)
      plan.put<uint32_t>(g);
    plan.put<uint32_t>(l.block).put<uint32_t>(l.sharedBytes).put<uint32_t>(l.buffers.size());
    for (uint32_t b : l.buffers)
      plan.put<uint32_t>(b);
    plan.put<uint32_t>(l.tensorMaps.size());
    for (const TensorMapEntry &m : l.tensorMaps) {
      plan.put<uint32_t>(m.buffer)
          .put<uint32_t>(static_cast<uint32_t>(m.dtype))
          .put<uint32_t>(m.dims.size());
      for (uint64_t size : m.dims)
        plan.put<uint64_t>(size);
      for (uint32_t box : m.box)
        plan.put<uint32_t>(box);
      for (uint32_t stride : m.elementStrides)
        plan.put<uint32_t>(stride);
    }
    plan.put<uint32_t>(l.scalars.size());
    for (int64_t value : l.scalars)
      plan.put<int64_t>(value);
  }
  }

  Bytes metadata;
  metadata.put<uint32_t>(a.metadata.size());
  for (const auto &[key, value] : a.metadata)
    metadata.str(key).str(value);

  std::string weights(a.weights.view());
  std::pair<fmt::SectionKind, const std::string *> sections[] = {
      {fmt::SectionKind::Signature, &signature.bytes},
      {fmt::SectionKind::Kernels, &kernels.bytes},
      {fmt::SectionKind::Plan, &plan.bytes},
      {fmt::SectionKind::Metadata, &metadata.bytes},
      {fmt::SectionKind::Weights, &weights}};
  Bytes file;
  file.bytes.append(fmt::kMagic, sizeof(fmt::kMagic));
  file.put<uint32_t>(version).put<uint32_t>(fmt::kSectionCount).put<uint64_t>(0);
  Bytes table;
  std::string body;
  size_t at = fmt::kHeaderBytes + fmt::kSectionCount * fmt::kSectionEntryBytes;
  for (auto [kind, data] : sections) {
    size_t alignment = kind == fmt::SectionKind::Weights ? fmt::kWeightsAlignment : 8;
    size_t offset = (at + alignment - 1) / alignment * alignment;
    body.append(offset - at, '\0');
    body += *data;
    at = offset + data->size();
    table.put<uint32_t>(static_cast<uint32_t>(kind))
        .put<uint32_t>(0)
        .put<uint64_t>(offset)
        .put<uint64_t>(data->size())
        .put<uint64_t>(fmt::checksum64(reinterpret_cast<const unsigned char *>(data->data()),
                                       data->size()));
  }
  std::string out = file.bytes + table.bytes + body;
  uint64_t size = out.size();
  std::memcpy(out.data() + 16, &size, 8);
  return out;
}

template <typename T> void poke(std::string &bytes, size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}
template <typename T> T peek(const std::string &bytes, size_t at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  return value;
}

/// Section table entry `i` starts here; fields at +0 kind, +4 flags,
/// +8 offset, +16 size, +24 checksum.
size_t entry(uint32_t i) { return fmt::kHeaderBytes + i * fmt::kSectionEntryBytes; }

/// Recomputes every checksum in the table (for forged layouts).
void reseal(std::string &bytes) {
  for (uint32_t i = 0; i < fmt::kSectionCount; ++i) {
    uint64_t offset = peek<uint64_t>(bytes, entry(i) + 8);
    uint64_t size = peek<uint64_t>(bytes, entry(i) + 16);
    poke<uint64_t>(bytes, entry(i) + 24,
                   fmt::checksum64(reinterpret_cast<const unsigned char *>(bytes.data()) + offset,
                                   size));
  }
}

/// The message of the ArtifactError `bytes` raise, or a failure.
std::string errorOf(const std::string &bytes) {
  try {
    Artifact::parse(bytes, "forged");
  } catch (const ArtifactError &e) {
    return e.what();
  }
  return "(parsed without an error)";
}

class ArtifactForgery : public ::testing::Test {
protected:
  void SetUp() override {
    bytes = readArtifact();
    ASSERT_FALSE(bytes.empty()) << "fixture artifact missing";
    good = Artifact::parse(bytes, "fixture");
  }
  std::string bytes;
  Artifact good;
};

/// Expects `forged` to fail with a message containing `message` and naming
/// its byte.
#define EXPECT_ARTIFACT_ERROR(forged, message)                                        \
  do {                                                                                \
    std::string error = errorOf(forged);                                              \
    EXPECT_NE(error.find(message), std::string::npos) << "got: " << error;            \
    EXPECT_NE(error.find("(at byte "), std::string::npos) << "got: " << error;        \
  } while (0)

} // namespace

//===----------------------------------------------------------------------===//
// Good files
//===----------------------------------------------------------------------===//

// The section checksum, pinned to the values of test/fuzz/kiln_artifact.py
// (which forges the fuzz corpus): the two must agree at every length class
// (empty, tail bytes only, whole words, one lane block, blocks plus tail).
TEST(Artifact, ChecksumMatchesTheSpecification) {
  std::vector<unsigned char> bytes(100);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<unsigned char>(i);
  const std::pair<size_t, uint64_t> expected[] = {
      {0, 0x95e30f8a958b91f1ull},  {1, 0x912a691222bd4a55ull},  {7, 0xc88e57669b2f87a9ull},
      {8, 0x4241d66fa027404dull},  {31, 0x6cd178550becfbc6ull}, {32, 0x2440b8d5fb7fb245ull},
      {33, 0xf9ca3785f5ed90f9ull}, {100, 0xa33e81df61d64ad4ull}};
  for (auto [size, value] : expected)
    EXPECT_EQ(fmt::checksum64(bytes.data(), size), value) << size << " bytes";
}

TEST(Artifact, ChecksumInPiecesIsTheChecksumOfTheWhole) {
  // The writer checksums the weights as they are written, piece by piece.
  std::vector<unsigned char> bytes(1000);
  uint32_t state = 12345;
  for (unsigned char &b : bytes)
    b = static_cast<unsigned char>((state = state * 1103515245u + 12345u) >> 24);
  for (size_t total : {0, 5, 31, 32, 33, 64, 100, 999, 1000})
    for (size_t piece : {1, 3, 7, 8, 31, 32, 33, 257}) {
      fmt::Checksum64 checksum;
      for (size_t at = 0; at < total; at += piece)
        checksum.update(bytes.data() + at, std::min(piece, total - at));
      EXPECT_EQ(checksum.finish(), fmt::checksum64(bytes.data(), total))
          << total << " bytes in pieces of " << piece;
    }
}

TEST(Artifact, ChecksumSeesEveryBitFlip) {
  std::vector<unsigned char> bytes(77);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<unsigned char>(i * 37 + 11);
  const uint64_t original = fmt::checksum64(bytes.data(), bytes.size());
  for (size_t at = 0; at < bytes.size(); ++at)
    for (int bit = 0; bit < 8; ++bit) {
      bytes[at] ^= static_cast<unsigned char>(1u << bit);
      EXPECT_NE(fmt::checksum64(bytes.data(), bytes.size()), original) << at << ":" << bit;
      bytes[at] ^= static_cast<unsigned char>(1u << bit);
    }
}

TEST(Artifact, ParsesWhatKilnCompileWrote) {
  std::string bytes = readArtifact();
  ASSERT_FALSE(bytes.empty()) << "fixture artifact missing";
  Artifact a = Artifact::parse(bytes, "fixture");
  ASSERT_EQ(a.inputs.size(), 1u);
  EXPECT_EQ(a.inputs[0].name, "x");
  EXPECT_EQ(a.inputs[0].shape, (std::vector<int64_t>{8192, 16}));
  EXPECT_EQ(a.outputs.size(), 1u);
  EXPECT_EQ(a.plans.size(), 3u); // sm_90a, sm_80, compute_80
  EXPECT_EQ(a.plans[0].launches.size(), 2u);
  for (const KernelEntry &k : a.kernels) {
    EXPECT_EQ(k.kind, "gemm_epilogue") << k.name; // Linear (+ ReLU) twice
    ASSERT_EQ(k.images.size(), 3u); // sm_90a, sm_80, PTX
    EXPECT_EQ(k.images[0].arch, "sm_90a");
    EXPECT_EQ(k.images[0].data.substr(0, 4), "\x7f" "ELF");
    EXPECT_EQ(k.images[2].arch, "compute_80");
  }
  for (const BufferEntry &b : a.buffers) {
    if (b.kind == fmt::BufferKind::Weight) {
      EXPECT_EQ(b.offset % 256, 0u) << "weight at " << b.offset;
    }
  }
}

TEST(Artifact, TheTestSerializerMatchesTheWriter) {
  std::string bytes = readArtifact();
  ASSERT_FALSE(bytes.empty());
  EXPECT_TRUE(serialize(Artifact::parse(bytes, "fixture")) == bytes)
      << "the forging serializer no longer writes what kiln-compile writes";
}

TEST(Artifact, ReadFileMapsTheWeightsInPlace) {
  std::string bytes = readArtifact();
  ASSERT_FALSE(bytes.empty());
  Artifact parsed = Artifact::parse(bytes, "fixture");
  Artifact mapped = Artifact::readFile(fixturePath());
  ASSERT_EQ(mapped.weights.view(), parsed.weights.view());
  ASSERT_FALSE(mapped.weights.empty());
  // The weights section is 4096-aligned in the file, so in the mapping too.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(mapped.weights.data()) % 4096, 0u);

  // Copies share the mapping and outlive the original; a move empties it.
  std::string expected(parsed.weights.view());
  const char *inPlace = mapped.weights.data();
  Artifact copy = mapped;
  Artifact moved = std::move(mapped);
  EXPECT_TRUE(mapped.weights.empty());
  EXPECT_EQ(moved.weights.data(), inPlace);
  moved = Artifact();
  EXPECT_EQ(copy.weights.data(), inPlace);
  EXPECT_TRUE(copy.weights.view() == expected); // ASan: no use after unmap
}

TEST(Artifact, ParseOwnsItsCopyOfTheWeights) {
  auto bytes = std::make_unique<std::string>(readArtifact());
  ASSERT_FALSE(bytes->empty());
  Artifact a = Artifact::parse(*bytes, "fixture");
  std::string expected(a.weights.view());
  const char *begin = bytes->data(), *end = begin + bytes->size();
  bytes.reset();
  EXPECT_TRUE(a.weights.data() < begin || a.weights.data() >= end);
  EXPECT_TRUE(a.weights.view() == expected); // ASan: no use after free
}

TEST(Artifact, ReadFileNamesWhatIsNotAnArtifact) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("kiln-artifact-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto errorOfFile = [](const fs::path &path) -> std::string {
    try {
      Artifact::readFile(path.string());
    } catch (const ArtifactError &e) {
      return e.what();
    }
    return "(no error)";
  };
  std::ofstream(dir / "empty.kiln").close();
  EXPECT_NE(errorOfFile(dir / "empty.kiln").find("the file is empty, not a kiln artifact (at byte 0)"),
            std::string::npos)
      << errorOfFile(dir / "empty.kiln");
  EXPECT_NE(errorOfFile(dir).find("is a directory, not a kiln artifact"), std::string::npos)
      << errorOfFile(dir);
  EXPECT_NE(errorOfFile(dir / "missing.kiln").find("cannot open"), std::string::npos);
  std::ofstream(dir / "short.kiln") << "KILN";
  EXPECT_NE(errorOfFile(dir / "short.kiln").find("too short to be a kiln artifact (4 bytes)"),
            std::string::npos);
  fs::remove_all(dir);
}

//===----------------------------------------------------------------------===//
// Truncation and corruption
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Header and section table, one forged file per check
//===----------------------------------------------------------------------===//

TEST_F(ArtifactForgery, Versions) {
  EXPECT_ARTIFACT_ERROR(serialize(good, 8), "artifact format version 8; this runtime reads "
                                            "version 9: recompile the model (at byte 8)");
  EXPECT_ARTIFACT_ERROR(serialize(good, 10),
                        "artifact format version 10 is newer than this runtime, which reads "
                        "version 9");
}

TEST_F(ArtifactForgery, Header) {
  std::string forged = bytes;
  forged[0] = 'X';
  EXPECT_ARTIFACT_ERROR(forged, "not a kiln artifact (bad magic) (at byte 0)");
  forged = bytes;
  poke<uint32_t>(forged, 12, 6);
  EXPECT_ARTIFACT_ERROR(forged, "expected 5 sections, found 6 (at byte 12)");
  forged = bytes + std::string(8, '\0');
  EXPECT_ARTIFACT_ERROR(forged, "truncated or padded: the header says");
  EXPECT_ARTIFACT_ERROR(std::string(), "the file is empty");
}

TEST_F(ArtifactForgery, SectionTable) {
  std::string forged = bytes;
  poke<uint32_t>(forged, entry(1), 9);
  EXPECT_ARTIFACT_ERROR(forged, "unknown section kind 9 (at byte 56)");
  forged = bytes;
  poke<uint32_t>(forged, entry(1), 1);
  EXPECT_ARTIFACT_ERROR(forged, "the signature section appears twice (at byte 56)");
  forged = bytes;
  poke<uint32_t>(forged, entry(2) + 4, 1);
  EXPECT_ARTIFACT_ERROR(forged, "unknown flags on the plan section");
  forged = bytes;
  poke<uint64_t>(forged, entry(2) + 8, bytes.size() + 8);
  EXPECT_ARTIFACT_ERROR(forged, "outside the file");
  forged = bytes;
  poke<uint64_t>(forged, entry(0) + 8, 8);
  EXPECT_ARTIFACT_ERROR(forged, "outside the file"); // inside the header
  forged = bytes;
  poke<uint64_t>(forged, entry(4) + 8, peek<uint64_t>(bytes, entry(4) + 8) - 8);
  EXPECT_ARTIFACT_ERROR(forged, "is not 4096-byte aligned");
  forged = bytes;
  poke<uint64_t>(forged, entry(1) + 8, peek<uint64_t>(bytes, entry(1) + 8) + 4);
  EXPECT_ARTIFACT_ERROR(forged, "the kernels section at " +
                                    std::to_string(peek<uint64_t>(bytes, entry(1) + 8) + 4) +
                                    " is not 8-byte aligned");
  forged = bytes;
  poke<uint64_t>(forged, entry(4) + 16, ~0ull - 8);
  EXPECT_ARTIFACT_ERROR(forged, "runs past the end of the file (at byte " +
                                    std::to_string(entry(4) + 16) + ")");
}

TEST_F(ArtifactForgery, SectionLayout) {
  std::string forged = bytes;
  forged[peek<uint64_t>(bytes, entry(1) + 8) + 100] ^= 1;
  EXPECT_ARTIFACT_ERROR(forged, "the kernels section is corrupted (checksum mismatch)");

  // The plan section moved onto the kernels section.
  forged = bytes;
  poke<uint64_t>(forged, entry(2) + 8, peek<uint64_t>(bytes, entry(1) + 8));
  reseal(forged);
  EXPECT_ARTIFACT_ERROR(forged, "sections overlap");

  // A byte of padding before the weights section.
  forged = bytes;
  size_t weightsAt = peek<uint64_t>(bytes, entry(4) + 8);
  forged[weightsAt - 1] = 1;
  EXPECT_ARTIFACT_ERROR(forged, "stray data between sections (at byte " +
                                    std::to_string(weightsAt - 1) + ")");

  // An empty weights section leaves the weights as data after the last one.
  forged = bytes;
  poke<uint64_t>(forged, entry(4) + 16, 0);
  reseal(forged);
  EXPECT_ARTIFACT_ERROR(forged, "stray data after the last section");
}

//===----------------------------------------------------------------------===//
// Sections, one forged file per check
//===----------------------------------------------------------------------===//

struct ForgedCase {
  const char *name;
  std::function<void(Artifact &)> forge;
  const char *error;
};

/// Each case's forgery of `good`, serialized with valid checksums, is one
/// ArtifactError naming its cause.
template <size_t N> void expectEachRefused(const Artifact &good, const ForgedCase (&cases)[N]) {
  for (const ForgedCase &c : cases) {
    SCOPED_TRACE(c.name);
    Artifact a = good;
    c.forge(a);
    EXPECT_ARTIFACT_ERROR(serialize(a), c.error);
  }
}

TEST_F(ArtifactForgery, Signature) {
  ForgedCase cases[] = {
      {"dtype", [](Artifact &a) { a.inputs[0].dtype = static_cast<fmt::DType>(7); },
       "unknown dtype 7"},
      {"negative dim", [](Artifact &a) { a.inputs[0].shape[1] = -16; },
       "input 'x' has a negative dimension -16"},
      {"element overflow", [](Artifact &a) { a.outputs[0].shape = {1ll << 40, 1ll << 40}; },
       "output 'output0' has too many elements"},
      {"rank", [](Artifact &a) { a.inputs[0].shape = std::vector<int64_t>(17, 1); },
       "rank 17 exceeds 16"},
      {"no name", [](Artifact &a) { a.inputs[0].name = ""; }, "an input without a name"},
      {"long name", [](Artifact &a) { a.inputs[0].name = std::string(300, 'x'); },
       "a name of 300 bytes is implausible"},
      {"same names", [](Artifact &a) { a.inputs.push_back(a.inputs[0]); },
       "two inputs named 'x'"},
      // Names become file names under kiln-run --save-inputs/--save-outputs.
      {"path", [](Artifact &a) { a.inputs[0].name = "../../x"; },
       "an input named '../../x' (names are letters, digits, '_', '.' and '-', not "
       "starting with '.')"},
      {"separator", [](Artifact &a) { a.outputs[0].name = "a/b"; }, "an output named 'a/b'"},
      {"hidden", [](Artifact &a) { a.outputs[0].name = ".profile"; },
       "an output named '.profile'"},
      // A terminal escape is echoed escaped, never raw.
      {"escape", [](Artifact &a) { a.inputs[0].name = "x\x1b[2J"; },
       "an input named 'x\\x1b[2J'"},
      {"huge tensor", [](Artifact &a) { a.inputs[0].shape = {1ll << 30, 1ll << 10}; },
       "input 'x' of 1099511627776 f16 elements would take 2199023255552 bytes (at most "
       "1099511627776)"},
      {"huge arena", [](Artifact &a) { a.arenaBytes = ~0ull; },
       "an arena of 18446744073709551615 bytes (at most 1099511627776)"},
  };
  expectEachRefused(good, cases);
}

TEST_F(ArtifactForgery, Metadata) {
  ForgedCase cases[] = {
      {"key", [](Artifact &a) { a.metadata = {{"Source Name", "m.pt"}}; },
       "metadata key 0 is not 1 to 64 characters of [a-z0-9._-]"},
      {"empty key", [](Artifact &a) { a.metadata = {{"", "m.pt"}}; },
       "metadata key 0 is not 1 to 64 characters"},
      {"twice", [](Artifact &a) { a.metadata = {{"precision", "fp16"}, {"precision", "fp32"}}; },
       "metadata key 'precision' appears twice"},
      // A value is printed by kiln-info: no terminal escapes, no newlines.
      {"escape", [](Artifact &a) { a.metadata = {{"source.name", "m\x1b[2J.pt"}}; },
       "the value of metadata key 'source.name' holds a byte that is not printable ASCII"},
      {"newline", [](Artifact &a) { a.metadata = {{"options", "a\nb"}}; },
       "not printable ASCII"},
      {"long value", [](Artifact &a) { a.metadata = {{"inputs", std::string(5000, 'x')}}; },
       "a name of 5000 bytes is implausible (at most 4096)"},
      {"many", [](Artifact &a) {
         a.metadata.clear();
         for (int i = 0; i < 65; ++i)
           a.metadata.emplace_back("k" + std::to_string(i), "v");
       },
       "65 metadata entries, more than 64"},
  };
  expectEachRefused(good, cases);
}

TEST(Artifact, MetadataRoundTrips) {
  std::string bytes = readArtifact();
  ASSERT_FALSE(bytes.empty()) << "fixture artifact missing";
  Artifact a = Artifact::parse(bytes, "fixture");
  // kiln-compile records how it made the fixture.
  std::map<std::string, std::string> seen(a.metadata.begin(), a.metadata.end());
  EXPECT_EQ(seen.count("kiln.version"), 1u);
  EXPECT_EQ(seen["inputs"].rfind("x:8192x16:", 0), 0u) << seen["inputs"];
  EXPECT_EQ(seen["source.checksum64"].size(), 16u);
  a.metadata = {{"a.b-c_d", "any printable text ~!"}, {"z", ""}};
  Artifact back = Artifact::parse(serialize(a), "round trip");
  EXPECT_EQ(back.metadata, a.metadata);
}

TEST(Artifact, LaunchIntegersRoundTrip) {
  std::string bytes = readArtifact();
  ASSERT_FALSE(bytes.empty()) << "fixture artifact missing";
  Artifact a = Artifact::parse(bytes, "fixture");
  ASSERT_FALSE(a.plans.empty());
  ASSERT_FALSE(a.plans[0].launches.empty());
  // Every launch of a kernel passes as many: give them all the same three.
  const uint32_t kernel = a.plans[0].launches[0].kernel;
  for (LaunchPlan &plan : a.plans)
    for (LaunchEntry &launch : plan.launches)
      if (launch.kernel == kernel)
        launch.scalars = {4096, -1, int64_t(1) << 40};
  Artifact back = Artifact::parse(serialize(a), "round trip");
  EXPECT_EQ(back.plans[0].launches[0].scalars,
            (std::vector<int64_t>{4096, -1, int64_t(1) << 40}));
}

TEST_F(ArtifactForgery, Kernels) {
  ForgedCase cases[] = {
      {"kind", [](Artifact &a) { a.kernels[0].kind = "fancy"; },
       "has an unknown fusion kind 'fancy'"},
      {"empty kind", [](Artifact &a) { a.kernels[0].kind = ""; }, "unknown fusion kind ''"},
      {"name", [](Artifact &a) { a.kernels[0].name = "kiln k"; },
       "kernel 0 has an invalid name 'kiln k'"},
      {"escaped name", [](Artifact &a) { a.kernels[0].name = "k\x1b]0;x\x07"; },
       "kernel 0 has an invalid name 'k\\x1b]0;x\\x07'"},
      {"empty name", [](Artifact &a) { a.kernels[0].name = ""; },
       "kernel 0 has an invalid name ''"},
      {"same names", [](Artifact &a) { a.kernels[1].name = a.kernels[0].name; },
       "two kernels named"},
      {"no image", [](Artifact &a) { a.kernels[0].images.clear(); }, "has no image"},
      {"arch", [](Artifact &a) { a.kernels[0].images[0].arch = "sm_"; },
       "has an image for an unknown target 'sm_'"},
      {"arch digits", [](Artifact &a) { a.kernels[0].images[0].arch = "compute_9x"; },
       "unknown target 'compute_9x'"},
      {"same arch", [](Artifact &a) { a.kernels[0].images[1].arch = "sm_90a"; },
       "has two sm_90a images"},
      {"empty image", [](Artifact &a) { a.kernels[0].images[1].data.clear(); },
       "has an empty sm_80 image"},
      {"not a cubin", [](Artifact &a) { a.kernels[0].images[1].data = "// PTX"; },
       "the sm_80 image is not a cubin"},
      {"not PTX", [](Artifact &a) { a.kernels[0].images[2].data[10] = '\0'; },
       "the compute_80 image is not PTX text"},
  };
  expectEachRefused(good, cases);
}

TEST_F(ArtifactForgery, Buffers) {
  auto first = [](Artifact &a, fmt::BufferKind kind) -> BufferEntry & {
    for (BufferEntry &b : a.buffers)
      if (b.kind == kind)
        return b;
    throw std::runtime_error("the fixture has no such buffer");
  };
  using K = fmt::BufferKind;
  ForgedCase cases[] = {
      {"kind", [](Artifact &a) { a.buffers[0].kind = static_cast<K>(5); },
       "buffer 0 has an unknown kind 5"},
      {"input index", [&](Artifact &a) { first(a, K::Input).index = 1; },
       "names input 1 of 1"},
      {"output index", [&](Artifact &a) { first(a, K::Output).index = 3; },
       "names output 3 of 1"},
      {"weight index", [&](Artifact &a) { first(a, K::Weight).index = 2; },
       "has index 2 (weights and arena use 0)"},
      {"input offset", [&](Artifact &a) { first(a, K::Input).offset = 64; },
       "has offset 64 into an input or output"},
      {"input bytes", [&](Artifact &a) { first(a, K::Input).bytes = 4096; },
       "has 4096 bytes; its tensor 'x' has 262144"},
      {"weight alignment", [&](Artifact &a) { first(a, K::Weight).offset = 128; },
       "a weight at 128 is not 256-byte aligned"},
      {"weight outside", [&](Artifact &a) { first(a, K::Weight).bytes = 1u << 20; },
       "lies outside the weights"},
      {"weight overflow",
       [&](Artifact &a) {
         first(a, K::Weight).offset = ~0ull - 255;
         first(a, K::Weight).bytes = 512;
       },
       "lies outside the weights"},
      {"arena outside", [&](Artifact &a) { first(a, K::Arena).offset = a.arenaBytes; },
       "lies outside the arena"},
  };
  expectEachRefused(good, cases);
}

TEST_F(ArtifactForgery, Launches) {
  ForgedCase cases[] = {
      {"kernel", [](Artifact &a) { a.plans[0].launches[0].kernel = 2; }, "launch 0 of the sm_90a plan names kernel 2 of 2"},
      {"empty grid", [](Artifact &a) { a.plans[0].launches[1].grid[1] = 0; },
       "launch 1 of the sm_90a plan has a grid of 0 in y (1 to 65535)"},
      {"grid y", [](Artifact &a) { a.plans[0].launches[0].grid[1] = 65536; },
       "launch 0 of the sm_90a plan has a grid of 65536 in y"},
      {"grid z", [](Artifact &a) { a.plans[0].launches[0].grid[2] = 70000; },
       "launch 0 of the sm_90a plan has a grid of 70000 in z"},
      {"grid x", [](Artifact &a) { a.plans[0].launches[0].grid[0] = 0x80000000u; },
       "launch 0 of the sm_90a plan has a grid of 2147483648 in x (1 to 2147483647)"},
      {"block 0", [](Artifact &a) { a.plans[0].launches[0].block = 0; },
       "launch 0 of the sm_90a plan has a block of 0 threads (1 to 1024)"},
      {"block 1025", [](Artifact &a) { a.plans[0].launches[0].block = 1025; },
       "has a block of 1025 threads"},
      {"shared", [](Artifact &a) { a.plans[0].launches[0].sharedBytes = 228 * 1024; },
       "asks for 233472 bytes of shared memory"},
      {"buffer", [](Artifact &a) { a.plans[0].launches[0].buffers[1] = 1000; },
       "launch 0 of the sm_90a plan names buffer 1000 of"},
      {"parameters",
       [](Artifact &a) { a.plans[0].launches[0].buffers.resize(513, a.plans[0].launches[0].buffers[0]); },
       "passes 513 pointers, 2 tensor maps and 0 integers, over the 4096-byte parameter space"},
      {"integers in the parameter space",
       [](Artifact &a) {
         a.plans[0].launches[0].buffers.resize(480, a.plans[0].launches[0].buffers[0]);
         a.plans[0].launches[0].scalars = {1, 2, 3};
       },
       "passes 480 pointers, 2 tensor maps and 3 integers, over the 4096-byte parameter space"},
      {"integers", [](Artifact &a) { a.plans[0].launches[0].scalars.assign(17, 1); },
       "launch 0 of the sm_90a plan passes 17 integers (at most 16)"},
      {"integers differ",
       [](Artifact &a) {
         a.plans[0].launches.push_back(a.plans[0].launches[0]);
         a.plans[0].launches[2].scalars = {4096};
       },
       "launch 2 of the sm_90a plan passes kernel"},
      {"argc", [](Artifact &a) { a.plans[0].launches.push_back(a.plans[0].launches[0]); a.plans[0].launches[2].buffers.pop_back(); },
       "launch 2 of the sm_90a plan passes kernel"},
  };
  expectEachRefused(good, cases);
}

TEST_F(ArtifactForgery, Plans) {
  // The fixture has plans for sm_90a, sm_80 and compute_80, the PTX.
  ASSERT_EQ(good.plans.size(), 3u);
  ForgedCase cases[] = {
      {"none", [](Artifact &a) { a.plans.clear(); }, "0 launch plans (1 to 16)"},
      {"too many",
       [](Artifact &a) {
         for (int i = 0; i < 14; ++i)
           a.plans.push_back(a.plans[1]);
       },
       "17 launch plans (1 to 16)"},
      {"twice", [](Artifact &a) { a.plans[1].arch = "sm_90a"; }, "two launch plans for sm_90a"},
      {"not an arch", [](Artifact &a) { a.plans[1].arch = "sm_8x"; },
       "launch plan 1 is for 'sm_8x', not an architecture"},
      {"no image",
       [](Artifact &a) {
         for (KernelEntry &k : a.kernels)
           k.images.erase(k.images.begin() + 1); // the sm_80 cubins
       },
       "launch 0 of the sm_80 plan runs kernel"},
      {"another image", [](Artifact &a) { a.plans[1].arch = "sm_86"; },
       "which has no sm_86 image"},
  };
  expectEachRefused(good, cases);
}

TEST_F(ArtifactForgery, TensorMaps) {
  // The fixture's first launch is a Hopper GEMM reading x (f16 [8192, 16])
  // through its first tensor map.
  ASSERT_FALSE(good.plans[0].launches[0].tensorMaps.empty());
  ASSERT_EQ(good.buffers[good.plans[0].launches[0].tensorMaps[0].buffer].kind, fmt::BufferKind::Input);
  ForgedCase cases[] = {
      {"buffer", [](Artifact &a) { a.plans[0].launches[0].tensorMaps[0].buffer = 1000; },
       "tensor map 0 of launch 0 of the sm_90a plan names buffer 1000"},
      {"not an argument",
       [](Artifact &a) { a.plans[0].launches[0].tensorMaps[0].buffer = a.plans[0].launches[1].buffers.back(); },
       "which is not an argument of the launch"},
      {"dtype", [](Artifact &a) { a.plans[0].launches[0].tensorMaps[0].dtype = fmt::DType::F32; },
       "has dtype f32 (tensor maps are f16 or bf16)"},
      {"dtype of input", [](Artifact &a) { a.plans[0].launches[0].tensorMaps[0].dtype = fmt::DType::BF16; },
       "is bf16 but tensor 'x' is f16"},
      {"rank 1",
       [](Artifact &a) {
         TensorMapEntry &m = a.plans[0].launches[0].tensorMaps[0];
         m.dims.resize(1);
         m.box.resize(1);
         m.elementStrides.resize(1);
       },
       "has rank 1 (2 to 5)"},
      {"rank 6",
       [](Artifact &a) {
         TensorMapEntry &m = a.plans[0].launches[0].tensorMaps[0];
         m.dims.resize(6, 1);
         m.box.resize(6, 1);
         m.elementStrides.resize(6, 1);
       },
       "has rank 6 (2 to 5)"},
      {"size 0", [](Artifact &a) { a.plans[0].launches[0].tensorMaps[0].dims[1] = 0; },
       "has size 0 in dimension 1"},
      {"innermost", [](Artifact &a) { a.plans[0].launches[0].tensorMaps[0].dims[0] = 12; },
       "has an innermost size of 12"},
      {"huge", [](Artifact &a) { a.plans[0].launches[0].tensorMaps[0].dims[0] = 1ull << 33; },
       "has size 8589934592 in dimension 0"},
      {"too big",
       [](Artifact &a) {
         a.plans[0].launches[0].tensorMaps[0].dims[0] = 1ull << 32;
         a.plans[0].launches[0].tensorMaps[0].dims[1] = 1ull << 32;
       },
       "does not fit buffer"},
      {"box rows", [](Artifact &a) { a.plans[0].launches[0].tensorMaps[0].box[1] = 257; },
       "has a box of 257 in dimension 1 (1 to 256)"},
      {"box row bytes", [](Artifact &a) { a.plans[0].launches[0].tensorMaps[0].box[0] = 72; },
       "has a box of 72 in dimension 0 (1 to 64: 128-byte swizzle)"},
      {"box 0", [](Artifact &a) { a.plans[0].launches[0].tensorMaps[0].box[0] = 0; },
       "has a box of 0 in dimension 0"},
      {"inner stride", [](Artifact &a) { a.plans[0].launches[0].tensorMaps[0].elementStrides[0] = 2; },
       "has an element stride of 2 in dimension 0 (1 to 1)"},
      {"stride 9", [](Artifact &a) { a.plans[0].launches[0].tensorMaps[0].elementStrides[1] = 9; },
       "has an element stride of 9 in dimension 1 (1 to 8)"},
      {"misaligned",
       [](Artifact &a) {
         for (BufferEntry &b : a.buffers)
           if (b.kind == fmt::BufferKind::Arena) {
             b.offset = 8;
             a.arenaBytes += 8;
             a.plans[0].launches[0].tensorMaps[0].buffer = static_cast<uint32_t>(&b - &a.buffers[0]);
             a.plans[0].launches[0].tensorMaps[0].dims[1] = 1;
           }
       },
       "at offset 8 is not 16-byte aligned"},
  };
  expectEachRefused(good, cases);
}

TEST_F(ArtifactForgery, TrailingBytes) {
  // Two zero bytes at the end of the metadata section (the padding before
  // the weights), checksum made to match.
  std::string forged = bytes;
  size_t end = peek<uint64_t>(bytes, entry(3) + 8) + peek<uint64_t>(bytes, entry(3) + 16);
  poke<uint64_t>(forged, entry(3) + 16, peek<uint64_t>(bytes, entry(3) + 16) + 2);
  reseal(forged);
  EXPECT_ARTIFACT_ERROR(forged, "metadata section: 2 trailing bytes (at byte " +
                                    std::to_string(end) + ")");
}
