//===- Artifact.cpp - read and validate a .kiln artifact ------------------===//
//
// The file is untrusted input. Parsing runs in three passes over it, each
// relying only on what the previous one established:
//
// 1. Header and section table: magic, version, file size, then each section
//    inside the file, aligned, checksummed, non-overlapping, with only zero
//    bytes between them.
// 2. Sections, each through a Cursor confined to the section: every field is
//    read after a bounds check, every count is bounded by the bytes left, and
//    every failure names the byte where the offending field starts.
// 3. Cross references, while reading the plan: buffers inside the region
//    they name, launches naming existing kernels and buffers with shapes CUDA
//    accepts, tensor maps that fit their buffers.
//
// docs/ARTIFACT.md lists every check; nothing here touches CUDA.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Artifact.h"
#include "kiln/runtime/Printable.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fmt = kiln::artifact;
using kiln::rt::Artifact;
using kiln::rt::ArtifactError;
using kiln::rt::BufferEntry;
using kiln::rt::KernelEntry;
using kiln::rt::KernelImage;
using kiln::rt::LaunchEntry;
using kiln::rt::LaunchPlan;
using kiln::rt::SharedBytes;
using kiln::rt::TensorMapEntry;
using kiln::rt::TensorSpec;

int64_t TensorSpec::elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {

//===----------------------------------------------------------------------===//
// Reading fields
//===----------------------------------------------------------------------===//

[[noreturn]] void fail(const std::string &where, size_t at, const std::string &why) {
  throw ArtifactError(where + ": " + why + " (at byte " + std::to_string(at) + ")");
}

/// Reads little-endian fields from [begin, end) of the file. Every read is
/// checked; `fail` names the byte where the last field read starts.
class Cursor {
public:
  Cursor(std::string_view file, size_t begin, size_t end, std::string where)
      : file(file), pos(begin), field(begin), end(end), where(std::move(where)) {}

  [[noreturn]] void fail(const std::string &why) const { failAt(field, why); }
  [[noreturn]] void failAt(size_t at, const std::string &why) const {
    ::fail(where, at, why);
  }
  size_t position() const { return pos; }
  size_t fieldStart() const { return field; }

  template <typename T> T read() {
    field = pos;
    if (end - pos < sizeof(T))
      fail("truncated: a " + std::to_string(sizeof(T)) + "-byte field runs past the section");
    T value;
    std::memcpy(&value, file.data() + pos, sizeof(T));
    pos += sizeof(T);
    return value;
  }
  /// `size` raw bytes (the size field was read just before).
  std::string_view bytes(uint64_t size) {
    if (size > end - pos)
      fail("a " + std::to_string(size) + "-byte field runs past the section");
    std::string_view out = file.substr(pos, size);
    pos += size;
    return out;
  }
  /// A `str`: u32 length, then at most `limit` bytes.
  std::string string(size_t limit) {
    uint32_t size = read<uint32_t>();
    if (size > limit)
      fail("a name of " + std::to_string(size) + " bytes is implausible (at most " +
           std::to_string(limit) + ")");
    return std::string(bytes(size));
  }
  /// A count, bounded by how many `minBytes`-sized records could still fit.
  uint32_t count(size_t minBytes, const char *what) {
    uint32_t n = read<uint32_t>();
    if (n > (end - pos) / minBytes)
      fail(std::string("a count of ") + std::to_string(n) + " " + what +
           " cannot fit in the section");
    return n;
  }
  void expectEnd() {
    field = pos;
    if (pos != end)
      fail(std::to_string(end - pos) + " trailing bytes");
  }

private:
  std::string_view file;
  size_t pos, field, end;
  std::string where;
};

using kiln::printable;

bool isIdentifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

/// Tensor names become file names under a folder the user gave: no path
/// separator, no "." or "..", no hidden file, nothing a terminal interprets.
bool isTensorName(std::string_view name) {
  if (name.empty() || name[0] == '.')
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-';
  });
}

/// `sm_<NN>[a]` (a cubin) or `compute_<NN>[a]` (PTX), NN two or three digits.
bool isArch(std::string_view arch, bool &ptx) {
  ptx = arch.rfind("compute_", 0) == 0;
  if (!ptx && arch.rfind("sm_", 0) != 0)
    return false;
  std::string_view digits = arch.substr(ptx ? 8 : 3);
  if (!digits.empty() && digits.back() == 'a')
    digits.remove_suffix(1);
  return digits.size() >= 2 && digits.size() <= 3 && digits[0] != '0' &&
         std::all_of(digits.begin(), digits.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

fmt::DType readDType(Cursor &c) {
  uint32_t raw = c.read<uint32_t>();
  if (raw < 1 || raw > 6)
    c.fail("unknown dtype " + std::to_string(raw));
  return static_cast<fmt::DType>(raw);
}

/// Element counts stay below 2^63 / 16, so `bytes()` (up to 8 bytes per
/// element) cannot overflow.
constexpr int64_t kMaxElements = std::numeric_limits<int64_t>::max() / 16;

TensorSpec readTensor(Cursor &c, std::set<std::string> &names, const char *role) {
  TensorSpec spec;
  spec.name = c.string(fmt::kMaxNameBytes);
  if (spec.name.empty())
    c.fail(std::string("an ") + role + " without a name");
  if (!isTensorName(spec.name))
    c.fail(std::string("an ") + role + " named '" + printable(spec.name) +
           "' (names are letters, digits, '_', '.' and '-', not starting with '.')");
  if (!names.insert(spec.name).second)
    c.fail(std::string("two ") + role + "s named '" + spec.name + "'");
  spec.dtype = readDType(c);
  uint32_t rank = c.count(8, "dimensions");
  if (rank > 16)
    c.fail("rank " + std::to_string(rank) + " exceeds 16");
  int64_t elements = 1;
  for (uint32_t i = 0; i < rank; ++i) {
    int64_t d = c.read<int64_t>();
    if (d < 0)
      c.fail(std::string(role) + " '" + spec.name + "' has a negative dimension " +
             std::to_string(d));
    if (d > 0 && elements > kMaxElements / d)
      c.fail(std::string(role) + " '" + spec.name + "' has too many elements (dimension " +
             std::to_string(d) + " overflows the count)");
    elements *= d;
    spec.shape.push_back(d);
  }
  if (spec.bytes() > fmt::kMaxTensorBytes)
    c.fail(std::string(role) + " '" + spec.name + "' of " + std::to_string(elements) + " " +
           fmt::dtypeName(spec.dtype) + " elements would take " + std::to_string(spec.bytes()) + " bytes (at most " +
           std::to_string(fmt::kMaxTensorBytes) + ")");
  return spec;
}

//===----------------------------------------------------------------------===//
// Header and section table
//===----------------------------------------------------------------------===//

struct Range {
  size_t begin = 0, end = 0;
  bool seen = false;
};

const char *sectionName(uint32_t kind) {
  static const char *const names[] = {"", "signature", "kernels", "plan", "weights",
                                      "metadata"};
  return names[kind];
}

/// Checks the header and the table; returns each section's byte range,
/// indexed by SectionKind.
std::array<Range, 6> readLayout(std::string_view file, const std::string &what) {
  if (file.empty())
    fail(what, 0, "the file is empty, not a kiln artifact");
  if (file.size() < fmt::kHeaderBytes)
    fail(what, file.size(),
         "too short to be a kiln artifact (" + std::to_string(file.size()) + " bytes)");
  if (std::memcmp(file.data(), fmt::kMagic, sizeof(fmt::kMagic)) != 0)
    fail(what, 0, "not a kiln artifact (bad magic)");
  Cursor header(file, sizeof(fmt::kMagic), fmt::kHeaderBytes, what);
  uint32_t version = header.read<uint32_t>();
  if (version < fmt::kVersion)
    header.fail("artifact format version " + std::to_string(version) +
                "; this runtime reads version " + std::to_string(fmt::kVersion) +
                ": recompile the model");
  if (version > fmt::kVersion)
    header.fail("artifact format version " + std::to_string(version) +
                " is newer than this runtime, which reads version " +
                std::to_string(fmt::kVersion) +
                ": update the runtime or recompile the model with this kiln");
  uint32_t sections = header.read<uint32_t>();
  if (sections != fmt::kSectionCount)
    header.fail("expected " + std::to_string(fmt::kSectionCount) + " sections, found " +
                std::to_string(sections));
  uint64_t fileSize = header.read<uint64_t>();
  if (fileSize != file.size())
    header.fail("truncated or padded: the header says " + std::to_string(fileSize) +
                " bytes, the file has " + std::to_string(file.size()));
  const size_t tableEnd = fmt::kHeaderBytes + fmt::kSectionCount * fmt::kSectionEntryBytes;
  if (file.size() < tableEnd)
    fail(what, file.size(), "truncated section table");

  std::array<Range, 6> ranges;
  Cursor table(file, fmt::kHeaderBytes, tableEnd, what + " section table");
  for (uint32_t i = 0; i < fmt::kSectionCount; ++i) {
    uint32_t kind = table.read<uint32_t>();
    if (kind < 1 || kind > fmt::kSectionCount)
      table.fail("unknown section kind " + std::to_string(kind));
    const std::string name = sectionName(kind);
    if (ranges[kind].seen)
      table.fail("the " + name + " section appears twice");
    if (table.read<uint32_t>() != 0)
      table.fail("unknown flags on the " + name + " section (a newer format?)");
    uint64_t offset = table.read<uint64_t>();
    uint64_t alignment = kind == static_cast<uint32_t>(fmt::SectionKind::Weights)
                             ? fmt::kWeightsAlignment
                             : fmt::kSectionAlignment;
    if (offset < tableEnd || offset > file.size())
      table.fail("the " + name + " section starts at " + std::to_string(offset) +
                 ", outside the file");
    if (offset % alignment != 0)
      table.fail("the " + name + " section at " + std::to_string(offset) + " is not " +
                 std::to_string(alignment) + "-byte aligned");
    uint64_t size = table.read<uint64_t>();
    if (size > file.size() - offset)
      table.fail("the " + name + " section (" + std::to_string(size) + " bytes at " +
                 std::to_string(offset) + ") runs past the end of the file");
    uint64_t checksum = table.read<uint64_t>();
    if (fmt::checksum64(reinterpret_cast<const unsigned char *>(file.data()) + offset, size) !=
        checksum)
      fail(what, offset, "the " + name + " section is corrupted (checksum mismatch)");
    ranges[kind] = {static_cast<size_t>(offset), static_cast<size_t>(offset + size), true};
  }

  // Padding carries no data: it must be zero, so that no byte of the file
  // can change without an error.
  std::vector<std::pair<size_t, size_t>> covered = {{0, tableEnd}};
  for (uint32_t kind = 1; kind <= fmt::kSectionCount; ++kind)
    covered.push_back({ranges[kind].begin, ranges[kind].end});
  std::sort(covered.begin(), covered.end());
  size_t cursor = 0;
  for (auto [begin, end] : covered) {
    if (begin < cursor)
      fail(what, begin, "sections overlap");
    for (size_t i = cursor; i < begin; ++i)
      if (file[i] != 0)
        fail(what, i, "stray data between sections");
    cursor = end;
  }
  for (size_t i = cursor; i < file.size(); ++i)
    if (file[i] != 0)
      fail(what, i, "stray data after the last section");
  return ranges;
}

//===----------------------------------------------------------------------===//
// Sections
//===----------------------------------------------------------------------===//

void readSignature(Cursor c, Artifact &a) {
  uint32_t inputs = c.count(12, "inputs");
  uint32_t outputs = c.count(12, "outputs");
  std::set<std::string> inputNames, outputNames;
  for (uint32_t i = 0; i < inputs; ++i)
    a.inputs.push_back(readTensor(c, inputNames, "input"));
  for (uint32_t i = 0; i < outputs; ++i)
    a.outputs.push_back(readTensor(c, outputNames, "output"));
  a.arenaBytes = c.read<uint64_t>();
  if (a.arenaBytes > fmt::kMaxArenaBytes)
    c.fail("an arena of " + std::to_string(a.arenaBytes) + " bytes (at most " +
           std::to_string(fmt::kMaxArenaBytes) + ")");
  c.expectEnd();
}

void readKernels(Cursor c, Artifact &a) {
  uint32_t kernels = c.count(12, "kernels");
  std::set<std::string> names;
  for (uint32_t k = 0; k < kernels; ++k) {
    KernelEntry entry;
    entry.name = c.string(fmt::kMaxNameBytes);
    if (!isIdentifier(entry.name))
      c.fail("kernel " + std::to_string(k) + " has an invalid name '" +
             printable(entry.name) + "'");
    if (!names.insert(entry.name).second)
      c.fail("two kernels named '" + entry.name + "'");
    entry.kind = c.string(32);
    if (!fmt::isKernelKind(entry.kind))
      c.fail("kernel '" + entry.name + "' has an unknown fusion kind '" +
             printable(entry.kind) + "'");
    uint32_t images = c.count(12, "images");
    if (images == 0)
      c.fail("kernel '" + entry.name + "' has no image");
    for (uint32_t i = 0; i < images; ++i) {
      KernelImage image;
      image.arch = c.string(32);
      bool ptx = false;
      if (!isArch(image.arch, ptx))
        c.fail("kernel '" + entry.name + "' has an image for an unknown target '" +
               printable(image.arch) + "'");
      for (const KernelImage &other : entry.images)
        if (other.arch == image.arch)
          c.fail("kernel '" + entry.name + "' has two " + image.arch + " images");
      uint64_t size = c.read<uint64_t>();
      if (size == 0)
        c.fail("kernel '" + entry.name + "' has an empty " + image.arch + " image");
      std::string_view data = c.bytes(size);
      if (!ptx && data.substr(0, 4) != std::string_view("\x7f" "ELF", 4))
        c.failAt(c.position() - size,
                 "kernel '" + entry.name + "': the " + image.arch + " image is not a cubin");
      if (ptx && data.find('\0') != std::string_view::npos)
        c.failAt(c.position() - size + data.find('\0'),
                 "kernel '" + entry.name + "': the " + image.arch +
                     " image is not PTX text (a NUL byte)");
      image.data = std::string(data);
      entry.images.push_back(std::move(image));
    }
    a.kernels.push_back(std::move(entry));
  }
  c.expectEnd();
}

void readBuffers(Cursor &c, Artifact &a) {
  uint32_t buffers = c.count(24, "buffers");
  for (uint32_t b = 0; b < buffers; ++b) {
    const std::string name = "buffer " + std::to_string(b);
    BufferEntry e;
    uint32_t kind = c.read<uint32_t>();
    if (kind < 1 || kind > 4)
      c.fail(name + " has an unknown kind " + std::to_string(kind));
    e.kind = static_cast<fmt::BufferKind>(kind);
    e.index = c.read<uint32_t>();
    const std::vector<TensorSpec> *specs = e.kind == fmt::BufferKind::Input    ? &a.inputs
                                           : e.kind == fmt::BufferKind::Output ? &a.outputs
                                                                               : nullptr;
    if (specs && e.index >= specs->size())
      c.fail(name + " names " + (e.kind == fmt::BufferKind::Input ? "input " : "output ") +
             std::to_string(e.index) + " of " + std::to_string(specs->size()));
    if (!specs && e.index != 0)
      c.fail(name + " has index " + std::to_string(e.index) + " (weights and arena use 0)");
    e.offset = c.read<uint64_t>();
    if (specs && e.offset != 0)
      c.fail(name + " has offset " + std::to_string(e.offset) + " into an input or output");
    if (e.kind == fmt::BufferKind::Weight && e.offset % fmt::kWeightAlignment != 0)
      c.fail(name + ": a weight at " + std::to_string(e.offset) + " is not " +
             std::to_string(fmt::kWeightAlignment) + "-byte aligned");
    size_t offsetAt = c.fieldStart();
    e.bytes = c.read<uint64_t>();
    if (specs && e.bytes != (*specs)[e.index].bytes())
      c.fail(name + " has " + std::to_string(e.bytes) + " bytes; its tensor '" +
             (*specs)[e.index].name + "' has " + std::to_string((*specs)[e.index].bytes()));
    auto within = [&](uint64_t limit, const char *region) {
      if (e.offset > limit || e.bytes > limit - e.offset)
        c.failAt(offsetAt, name + " (" + std::to_string(e.bytes) + " bytes at " +
                               std::to_string(e.offset) + ") lies outside the " + region +
                               " (" + std::to_string(limit) + " bytes)");
    };
    if (e.kind == fmt::BufferKind::Weight)
      within(a.weights.size(), "weights");
    if (e.kind == fmt::BufferKind::Arena)
      within(a.arenaBytes, "arena");
    a.buffers.push_back(e);
  }
}

TensorMapEntry readTensorMap(Cursor &c, const Artifact &a, const LaunchEntry &launch,
                             const std::string &name) {
  TensorMapEntry map;
  size_t start = c.position();
  map.buffer = c.read<uint32_t>();
  if (map.buffer >= a.buffers.size())
    c.fail(name + " names buffer " + std::to_string(map.buffer) + " of " +
           std::to_string(a.buffers.size()));
  if (std::find(launch.buffers.begin(), launch.buffers.end(), map.buffer) ==
      launch.buffers.end())
    c.fail(name + " describes buffer " + std::to_string(map.buffer) +
           ", which is not an argument of the launch");
  map.dtype = readDType(c);
  if (map.dtype != fmt::DType::F16 && map.dtype != fmt::DType::BF16)
    c.fail(name + " has dtype " + fmt::dtypeName(map.dtype) + " (tensor maps are f16 or bf16)");
  const uint32_t rank = c.read<uint32_t>();
  if (rank < fmt::kMinTensorMapRank || rank > fmt::kMaxTensorMapRank)
    c.fail(name + " has rank " + std::to_string(rank) + " (" +
           std::to_string(fmt::kMinTensorMapRank) + " to " +
           std::to_string(fmt::kMaxTensorMapRank) + ")");
  map.dims.resize(rank);
  // The element count, kept exact: each size is at most 2^32 and the
  // product is compared against the buffer by division as it grows.
  const BufferEntry &buffer = a.buffers[map.buffer];
  uint64_t elements = 1;
  for (uint32_t d = 0; d < rank; ++d) {
    map.dims[d] = c.read<uint64_t>();
    if (map.dims[d] == 0 || map.dims[d] > (1ull << 32))
      c.fail(name + " has size " + std::to_string(map.dims[d]) + " in dimension " +
             std::to_string(d) + " (1 to 2^32)");
    if (d == 0 && map.dims[0] % 8 != 0)
      c.fail(name + " has an innermost size of " + std::to_string(map.dims[0]) +
             " (a multiple of 8: TMA strides are multiples of 16 bytes)");
    if (map.dims[d] > buffer.bytes / 2 / elements)
      c.failAt(start, name + " (dimension " + std::to_string(d) + " of size " +
                          std::to_string(map.dims[d]) + ") does not fit buffer " +
                          std::to_string(map.buffer) + " (" + std::to_string(buffer.bytes) +
                          " bytes)");
    elements *= map.dims[d];
  }
  map.box.resize(rank);
  for (uint32_t d = 0; d < rank; ++d) {
    map.box[d] = c.read<uint32_t>();
    uint32_t limit = d == 0 ? fmt::kMaxBoxRowBytes / 2 : fmt::kMaxBoxElements;
    if (map.box[d] == 0 || map.box[d] > limit)
      c.fail(name + " has a box of " + std::to_string(map.box[d]) + " in dimension " +
             std::to_string(d) + " (1 to " + std::to_string(limit) +
             (d == 0 ? ": 128-byte swizzle)" : ")"));
  }
  map.elementStrides.resize(rank);
  for (uint32_t d = 0; d < rank; ++d) {
    map.elementStrides[d] = c.read<uint32_t>();
    uint32_t limit = d == 0 ? 1 : fmt::kMaxElementStride;
    if (map.elementStrides[d] == 0 || map.elementStrides[d] > limit)
      c.fail(name + " has an element stride of " + std::to_string(map.elementStrides[d]) +
             " in dimension " + std::to_string(d) + " (1 to " + std::to_string(limit) + ")");
  }

  if (buffer.offset % 16 != 0)
    c.failAt(start, name + ": buffer " + std::to_string(map.buffer) + " at offset " +
                        std::to_string(buffer.offset) + " is not 16-byte aligned");
  const TensorSpec *spec = buffer.kind == fmt::BufferKind::Input    ? &a.inputs[buffer.index]
                           : buffer.kind == fmt::BufferKind::Output ? &a.outputs[buffer.index]
                                                                    : nullptr;
  if (spec && spec->dtype != map.dtype)
    c.failAt(start, name + " is " + fmt::dtypeName(map.dtype) + " but tensor '" + spec->name +
                        "' is " + fmt::dtypeName(spec->dtype));
  return map;
}

/// Launches of one kernel pass the same parameters in every plan:
/// (pointers, tensor maps, integers) per kernel.
using KernelParameters = std::vector<std::array<int64_t, 3>>;

void readLaunches(Cursor &c, Artifact &a, LaunchPlan &launchPlan, KernelParameters &parameters) {
  uint32_t launches = c.count(32, "launches");
  const std::string &arch = launchPlan.arch;
  for (uint32_t l = 0; l < launches; ++l) {
    const std::string name = "launch " + std::to_string(l) + " of the " + arch + " plan";
    size_t start = c.position();
    LaunchEntry e;
    e.kernel = c.read<uint32_t>();
    if (e.kernel >= a.kernels.size())
      c.fail(name + " names kernel " + std::to_string(e.kernel) + " of " +
             std::to_string(a.kernels.size()));
    const KernelEntry &kernel = a.kernels[e.kernel];
    if (std::none_of(kernel.images.begin(), kernel.images.end(),
                     [&](const KernelImage &image) { return image.arch == arch; }))
      c.failAt(start, name + " runs kernel '" + kernel.name + "', which has no " + arch +
                          " image");
    for (int d = 0; d < 3; ++d) {
      e.grid[d] = c.read<uint32_t>();
      uint32_t limit = d == 0 ? fmt::kMaxGridX : fmt::kMaxGridYZ;
      if (e.grid[d] == 0 || e.grid[d] > limit)
        c.fail(name + " has a grid of " + std::to_string(e.grid[d]) + " in " + "xyz"[d] +
               " (1 to " + std::to_string(limit) + ")");
    }
    e.block = c.read<uint32_t>();
    if (e.block == 0 || e.block > fmt::kMaxBlockThreads)
      c.fail(name + " has a block of " + std::to_string(e.block) + " threads (1 to " +
             std::to_string(fmt::kMaxBlockThreads) + ")");
    e.sharedBytes = c.read<uint32_t>();
    if (e.sharedBytes > fmt::kMaxSharedBytes)
      c.fail(name + " asks for " + std::to_string(e.sharedBytes) +
             " bytes of shared memory (at most " + std::to_string(fmt::kMaxSharedBytes) + ")");
    uint32_t argc = c.count(4, "arguments");
    for (uint32_t i = 0; i < argc; ++i) {
      uint32_t buffer = c.read<uint32_t>();
      if (buffer >= a.buffers.size())
        c.fail(name + " names buffer " + std::to_string(buffer) + " of " +
               std::to_string(a.buffers.size()));
      e.buffers.push_back(buffer);
    }
    // The smallest tensor map: rank 2 (12 + 2 * 16 bytes).
    uint32_t maps = c.count(44, "tensor maps");
    size_t mapsStart = c.position();
    for (uint32_t m = 0; m < maps; ++m)
      e.tensorMaps.push_back(
          readTensorMap(c, a, e, "tensor map " + std::to_string(m) + " of " + name));
    uint32_t scalars = c.count(8, "integer arguments");
    if (scalars > fmt::kMaxScalars)
      c.fail(name + " passes " + std::to_string(scalars) + " integers (at most " +
             std::to_string(fmt::kMaxScalars) + ")");
    for (uint32_t s = 0; s < scalars; ++s)
      e.scalars.push_back(c.read<int64_t>());
    if ((argc + scalars) * sizeof(uint64_t) + maps * fmt::kTensorMapBytes >
        fmt::kMaxParameterBytes)
      c.failAt(mapsStart - 4, name + " passes " + std::to_string(argc) + " pointers, " +
                                  std::to_string(maps) + " tensor maps and " +
                                  std::to_string(scalars) + " integers, over the " +
                                  std::to_string(fmt::kMaxParameterBytes) +
                                  "-byte parameter space");
    const std::array<int64_t, 3> passed = {argc, maps, scalars};
    auto &expected = parameters[e.kernel];
    if (expected[0] < 0)
      expected = passed;
    else if (expected != passed)
      c.failAt(start, name + " passes kernel '" + a.kernels[e.kernel].name + "' " +
                          std::to_string(argc) + " pointers, " + std::to_string(maps) +
                          " tensor maps and " + std::to_string(scalars) +
                          " integers; an earlier launch passed " + std::to_string(expected[0]) +
                          ", " + std::to_string(expected[1]) + " and " +
                          std::to_string(expected[2]));
    launchPlan.launches.push_back(std::move(e));
  }
}

/// Plans: u32 count, then count x (str arch, launches).
void readPlans(Cursor &c, Artifact &a) {
  uint32_t plans = c.count(8, "launch plans");
  if (plans == 0 || plans > fmt::kMaxPlans)
    c.fail(std::to_string(plans) + " launch plans (1 to " + std::to_string(fmt::kMaxPlans) +
           ")");
  KernelParameters parameters(a.kernels.size(), {-1, -1, -1});
  for (uint32_t p = 0; p < plans; ++p) {
    LaunchPlan plan;
    plan.arch = c.string(32);
    bool ptx = false;
    if (!isArch(plan.arch, ptx))
      c.fail("launch plan " + std::to_string(p) + " is for '" + printable(plan.arch) +
             "', not an architecture (sm_NN[a] or compute_NN[a])");
    for (const LaunchPlan &other : a.plans)
      if (other.arch == plan.arch)
        c.fail("two launch plans for " + plan.arch);
    readLaunches(c, a, plan, parameters);
    a.plans.push_back(std::move(plan));
  }
}

/// Metadata: u32 count, then count x (str key, str value).
void readMetadata(Cursor c, Artifact &a) {
  uint32_t count = c.count(8, "metadata entries");
  if (count > fmt::kMaxMetadataEntries)
    c.fail(std::to_string(count) + " metadata entries, more than " +
           std::to_string(fmt::kMaxMetadataEntries));
  for (uint32_t i = 0; i < count; ++i) {
    std::string key = c.string(fmt::kMaxMetadataKeyBytes);
    if (!fmt::isMetadataKey(key))
      c.fail("metadata key " + std::to_string(i) +
             " is not 1 to 64 characters of [a-z0-9._-]");
    for (const auto &[seen, value] : a.metadata)
      if (seen == key)
        c.fail("metadata key '" + key + "' appears twice");
    std::string value = c.string(fmt::kMaxMetadataValueBytes);
    if (!fmt::isMetadataValue(value))
      c.fail("the value of metadata key '" + key +
             "' holds a byte that is not printable ASCII");
    a.metadata.emplace_back(std::move(key), std::move(value));
  }
  c.expectEnd();
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

Artifact Artifact::parse(std::string_view bytes, std::shared_ptr<const void> owner,
                         const std::string &what) {
  std::array<Range, 6> ranges = readLayout(bytes, what);
  auto section = [&](fmt::SectionKind kind) {
    const Range &r = ranges[static_cast<uint32_t>(kind)];
    return Cursor(bytes, r.begin, r.end,
                  what + " " + sectionName(static_cast<uint32_t>(kind)) + " section");
  };
  Artifact a;
  readSignature(section(fmt::SectionKind::Signature), a);
  readKernels(section(fmt::SectionKind::Kernels), a);
  const Range &weights = ranges[static_cast<uint32_t>(fmt::SectionKind::Weights)];
  a.weights = SharedBytes(bytes.substr(weights.begin, weights.end - weights.begin),
                          std::move(owner));
  Cursor plan = section(fmt::SectionKind::Plan);
  readBuffers(plan, a);
  readPlans(plan, a);
  plan.expectEnd();
  readMetadata(section(fmt::SectionKind::Metadata), a);
  return a;
}

Artifact Artifact::parse(const std::string &bytes, const std::string &what) {
  Artifact a = parse(std::string_view(bytes), nullptr, what);
  auto copy = std::make_shared<const std::string>(a.weights.view());
  a.weights = SharedBytes(*copy, copy);
  return a;
}

Artifact Artifact::readFile(const std::string &path) {
  const std::string what = "'" + path + "'";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw ArtifactError("cannot open " + what + ": " + std::strerror(errno));
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    throw ArtifactError("cannot read " + what + ": " + std::strerror(error));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    throw ArtifactError(what + (S_ISDIR(info.st_mode) ? " is a directory"
                                                      : " is not a regular file") +
                        ", not a kiln artifact");
  }
  size_t size = static_cast<size_t>(info.st_size);
  if (size == 0) {
    ::close(fd);
    return parse(std::string_view(), nullptr, what); // the "empty" error
  }
  void *mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int error = errno;
  ::close(fd);
  if (mapped == MAP_FAILED)
    throw ArtifactError("cannot map " + what + ": " + std::strerror(error));
  std::shared_ptr<const void> mapping(mapped, [size](const void *p) {
    ::munmap(const_cast<void *>(p), size);
  });
  return parse(std::string_view(static_cast<const char *>(mapped), size), std::move(mapping),
               what);
}
