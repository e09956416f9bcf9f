//===- Artifact.cpp - read and validate a .kiln artifact ------------------===//

#include "kiln/runtime/Artifact.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

using namespace kiln;
using namespace kiln::rt;

int64_t TensorSpec::elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {
/// Reads little-endian values from a byte range; every read is checked.
class Cursor {
public:
  Cursor(const std::string &bytes, size_t begin, size_t end, std::string where)
      : bytes(bytes), pos(begin), end(end), where(std::move(where)) {}

  [[noreturn]] void fail(const std::string &why) const {
    throw ArtifactError(where + ": " + why + " (at byte " + std::to_string(pos) + ")");
  }
  template <typename T> T read() {
    if (end - pos < sizeof(T))
      fail("truncated");
    T value;
    std::memcpy(&value, bytes.data() + pos, sizeof(T));
    pos += sizeof(T);
    return value;
  }
  std::string bytesOf(uint64_t size) {
    if (size > end - pos)
      fail("a " + std::to_string(size) + "-byte field runs past its section");
    std::string out = bytes.substr(pos, size);
    pos += size;
    return out;
  }
  std::string string(size_t limit = 4096) {
    uint32_t size = read<uint32_t>();
    if (size > limit)
      fail("a name of " + std::to_string(size) + " bytes is implausible");
    return bytesOf(size);
  }
  /// A count, bounded by how many `minBytes`-sized records could still fit.
  uint32_t count(size_t minBytes, const char *what) {
    uint32_t n = read<uint32_t>();
    if (minBytes && n > (end - pos) / minBytes)
      fail(std::string("a count of ") + std::to_string(n) + " " + what +
           " cannot fit in the section");
    return n;
  }
  bool atEnd() const { return pos == end; }

private:
  const std::string &bytes;
  size_t pos, end;
  std::string where;
};

artifact::DType readDType(Cursor &c) {
  uint32_t raw = c.read<uint32_t>();
  if (raw < 1 || raw > 6)
    c.fail("unknown dtype " + std::to_string(raw));
  return static_cast<artifact::DType>(raw);
}

TensorSpec readTensor(Cursor &c) {
  TensorSpec spec;
  spec.name = c.string(256);
  spec.dtype = readDType(c);
  uint32_t rank = c.count(8, "dimensions");
  if (rank > 16)
    c.fail("rank " + std::to_string(rank) + " exceeds 16");
  int64_t elements = 1;
  for (uint32_t i = 0; i < rank; ++i) {
    int64_t d = c.read<int64_t>();
    if (d < 0 || (d > 0 && elements > std::numeric_limits<int64_t>::max() / 16 / d))
      c.fail("tensor '" + spec.name + "' has an invalid dimension " + std::to_string(d));
    elements *= d;
    spec.shape.push_back(d);
  }
  return spec;
}
} // namespace

Artifact Artifact::parse(const std::string &bytes, const std::string &what) {
  using namespace artifact;
  if (bytes.size() < kHeaderBytes)
    throw ArtifactError(what + ": too short to be a kiln artifact (" +
                        std::to_string(bytes.size()) + " bytes)");
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    throw ArtifactError(what + ": not a kiln artifact (bad magic)");
  Cursor header(bytes, sizeof(kMagic), kHeaderBytes, what);
  uint32_t version = header.read<uint32_t>();
  if (version != kVersion)
    throw ArtifactError(what + ": artifact format version " + std::to_string(version) +
                        " is not supported by this runtime (it reads version " +
                        std::to_string(kVersion) + "); recompile the model");
  uint32_t sections = header.read<uint32_t>();
  uint64_t fileSize = 0;
  std::memcpy(&fileSize, bytes.data() + 16, 8);
  if (fileSize != bytes.size())
    throw ArtifactError(what + ": truncated or padded: the header says " +
                        std::to_string(fileSize) + " bytes, the file has " +
                        std::to_string(bytes.size()));
  if (sections != 4)
    throw ArtifactError(what + ": expected 4 sections, found " + std::to_string(sections));
  if (bytes.size() - kHeaderBytes < sections * kSectionEntryBytes)
    throw ArtifactError(what + ": truncated section table");

  static const char *const kSectionNames[] = {"", "signature", "kernels", "plan",
                                              "weights"};
  struct Range { size_t begin = 0, end = 0; bool seen = false; };
  Range ranges[5];
  Cursor table(bytes, kHeaderBytes, kHeaderBytes + sections * kSectionEntryBytes,
               what + " section table");
  for (uint32_t i = 0; i < sections; ++i) {
    uint32_t kind = table.read<uint32_t>();
    if (table.read<uint32_t>() != 0)
      throw ArtifactError(what + ": unknown section flags (a newer format?)");
    uint64_t offset = table.read<uint64_t>(), size = table.read<uint64_t>();
    uint64_t checksum = table.read<uint64_t>();
    if (kind < 1 || kind > 4)
      throw ArtifactError(what + ": unknown section kind " + std::to_string(kind));
    if (ranges[kind].seen)
      throw ArtifactError(what + ": the " + kSectionNames[kind] + " section appears twice");
    if (offset > bytes.size() || size > bytes.size() - offset ||
        offset < kHeaderBytes + sections * kSectionEntryBytes)
      throw ArtifactError(what + ": the " + kSectionNames[kind] +
                          " section lies outside the file");
    if (fnv1a64(reinterpret_cast<const unsigned char *>(bytes.data()) + offset, size) !=
        checksum)
      throw ArtifactError(what + ": the " + kSectionNames[kind] +
                          " section is corrupted (checksum mismatch)");
    ranges[kind] = {static_cast<size_t>(offset), static_cast<size_t>(offset + size), true};
  }

  // Padding between sections carries no data: it must be zero, so that no
  // byte of the file can change without an error.
  std::vector<std::pair<size_t, size_t>> covered = {
      {0, kHeaderBytes + sections * kSectionEntryBytes}};
  for (uint32_t kind = 1; kind <= 4; ++kind)
    covered.push_back({ranges[kind].begin, ranges[kind].end});
  std::sort(covered.begin(), covered.end());
  size_t cursor = 0;
  for (auto [begin, end] : covered) {
    if (begin < cursor)
      throw ArtifactError(what + ": sections overlap");
    for (size_t i = cursor; i < begin; ++i)
      if (bytes[i] != 0)
        throw ArtifactError(what + ": stray data at byte " + std::to_string(i) +
                            " between sections");
    cursor = end;
  }
  for (size_t i = cursor; i < bytes.size(); ++i)
    if (bytes[i] != 0)
      throw ArtifactError(what + ": stray data at byte " + std::to_string(i) +
                          " after the last section");

  Artifact a;
  auto section = [&](SectionKind kind, const char *name) {
    const Range &r = ranges[static_cast<uint32_t>(kind)];
    return Cursor(bytes, r.begin, r.end, what + " " + name + " section");
  };

  Cursor sig = section(SectionKind::Signature, "signature");
  uint32_t inputs = sig.count(12, "inputs"), outputs = sig.count(12, "outputs");
  for (uint32_t i = 0; i < inputs; ++i)
    a.inputs.push_back(readTensor(sig));
  for (uint32_t i = 0; i < outputs; ++i)
    a.outputs.push_back(readTensor(sig));
  a.arenaBytes = sig.read<uint64_t>();
  if (!sig.atEnd())
    sig.fail("trailing bytes");

  Cursor ker = section(SectionKind::Kernels, "kernels");
  uint32_t kernels = ker.count(8, "kernels");
  for (uint32_t k = 0; k < kernels; ++k) {
    KernelEntry entry;
    entry.name = ker.string(256);
    uint32_t images = ker.count(12, "images");
    for (uint32_t i = 0; i < images; ++i) {
      KernelImage image;
      image.arch = ker.string(32);
      image.data = ker.bytesOf(ker.read<uint64_t>());
      entry.images.push_back(std::move(image));
    }
    if (entry.images.empty())
      ker.fail("kernel '" + entry.name + "' has no image");
    a.kernels.push_back(std::move(entry));
  }
  if (!ker.atEnd())
    ker.fail("trailing bytes");

  const Range &weights = ranges[static_cast<uint32_t>(SectionKind::Weights)];
  a.weights = bytes.substr(weights.begin, weights.end - weights.begin);

  Cursor plan = section(SectionKind::Plan, "plan");
  uint32_t buffers = plan.count(24, "buffers");
  for (uint32_t b = 0; b < buffers; ++b) {
    BufferEntry e;
    uint32_t kind = plan.read<uint32_t>();
    if (kind < 1 || kind > 4)
      plan.fail("unknown buffer kind " + std::to_string(kind));
    e.kind = static_cast<BufferKind>(kind);
    e.index = plan.read<uint32_t>();
    e.offset = plan.read<uint64_t>();
    e.bytes = plan.read<uint64_t>();
    auto within = [&](uint64_t limit, const char *region) {
      if (e.offset > limit || e.bytes > limit - e.offset)
        plan.fail("buffer " + std::to_string(b) + " lies outside the " + region);
    };
    if (e.kind == BufferKind::Input && e.index >= a.inputs.size())
      plan.fail("buffer " + std::to_string(b) + " names input " + std::to_string(e.index));
    if (e.kind == BufferKind::Output && e.index >= a.outputs.size())
      plan.fail("buffer " + std::to_string(b) + " names output " + std::to_string(e.index));
    if (e.kind == BufferKind::Weight)
      within(a.weights.size(), "weights");
    if (e.kind == BufferKind::Arena)
      within(a.arenaBytes, "arena");
    a.buffers.push_back(e);
  }
  uint32_t launches = plan.count(32, "launches");
  for (uint32_t l = 0; l < launches; ++l) {
    LaunchEntry e;
    e.kernel = plan.read<uint32_t>();
    if (e.kernel >= a.kernels.size())
      plan.fail("launch " + std::to_string(l) + " names kernel " + std::to_string(e.kernel));
    for (uint32_t &g : e.grid) {
      g = plan.read<uint32_t>();
      if (g == 0)
        plan.fail("launch " + std::to_string(l) + " has an empty grid");
    }
    e.block = plan.read<uint32_t>();
    if (e.block == 0 || e.block > 1024)
      plan.fail("launch " + std::to_string(l) + " has a block of " + std::to_string(e.block));
    e.sharedBytes = plan.read<uint32_t>();
    if (e.sharedBytes > 227 * 1024)
      plan.fail("launch " + std::to_string(l) + " asks for " +
                std::to_string(e.sharedBytes) + " bytes of shared memory");
    uint32_t argc = plan.count(4, "arguments");
    for (uint32_t i = 0; i < argc; ++i) {
      uint32_t buffer = plan.read<uint32_t>();
      if (buffer >= a.buffers.size())
        plan.fail("launch " + std::to_string(l) + " names buffer " + std::to_string(buffer));
      e.buffers.push_back(buffer);
    }
    uint32_t maps = plan.count(32, "tensor maps");
    for (uint32_t m = 0; m < maps; ++m) {
      TensorMapEntry map;
      map.buffer = plan.read<uint32_t>();
      if (map.buffer >= a.buffers.size())
        plan.fail("tensor map of launch " + std::to_string(l) + " names buffer " +
                  std::to_string(map.buffer));
      map.dtype = readDType(plan);
      if (map.dtype != DType::F16 && map.dtype != DType::BF16)
        plan.fail("tensor maps are fp16 or bf16");
      map.rows = plan.read<uint64_t>();
      map.cols = plan.read<uint64_t>();
      map.boxRows = plan.read<uint32_t>();
      map.boxCols = plan.read<uint32_t>();
      const BufferEntry &buffer = a.buffers[map.buffer];
      uint64_t bytesNeeded = map.rows * map.cols * 2;
      bool fits = map.rows <= (1ull << 32) && map.cols <= (1ull << 32) &&
                  (buffer.kind == BufferKind::Input || buffer.kind == BufferKind::Output
                       ? true
                       : bytesNeeded <= buffer.bytes);
      if (!fits || map.boxRows == 0 || map.boxRows > 256 || map.boxCols == 0 ||
          map.boxCols > 64)
        plan.fail("tensor map of launch " + std::to_string(l) + " does not fit its buffer");
      e.tensorMaps.push_back(map);
    }
    a.launches.push_back(std::move(e));
  }
  if (!plan.atEnd())
    plan.fail("trailing bytes");
  return a;
}

Artifact Artifact::readFile(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw ArtifactError("cannot open '" + path + "'");
  std::ostringstream contents;
  contents << file.rdbuf();
  return parse(contents.str(), "'" + path + "'");
}
