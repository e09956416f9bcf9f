//===- ArtifactFuzzer.cpp - libFuzzer target for the artifact reader ------===//
//
// Feeds each input to Artifact::parse twice:
//
// 1. As it is. Checksums guard every section, so most mutations stop at the
//    section table; this covers the header, the table and the layout.
// 2. Resealed: the header's file size and the checksum of every section
//    that lies inside the input recomputed, so that mutations reach the
//    section parsers and the cross-reference checks.
//
// An ArtifactError is the expected answer to a bad input; any other
// exception, a crash or a sanitizer report is a bug. An accepted input is
// checked against the invariants the runtime relies on when it launches
// (indices in range, buffers inside their regions, launch shapes CUDA
// takes); a violation traps. The input is parsed in place (not copied), so
// AddressSanitizer sees any read past its end.
//
// Built by test/CMakeLists.txt with clang++-22 -fsanitize=fuzzer,address,
// undefined; test/fuzz/README.md says how to run it.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Artifact.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace fmt = kiln::artifact;
using kiln::rt::Artifact;
using kiln::rt::ArtifactError;

namespace {

void require(bool invariant) {
  if (!invariant)
    __builtin_trap();
}

/// What Session and Model assume of every artifact the reader accepts.
void checkInvariants(const Artifact &a, const uint8_t *data, size_t size) {
  const char *begin = reinterpret_cast<const char *>(data);
  require(a.weights.empty() ||
          (a.weights.data() >= begin && a.weights.size() <= size &&
           a.weights.data() - begin <= static_cast<ptrdiff_t>(size - a.weights.size())));
  for (const auto *specs : {&a.inputs, &a.outputs})
    for (const kiln::rt::TensorSpec &spec : *specs) {
      require(!spec.name.empty() && spec.elements() >= 0);
      // Names are safe as file names and on a terminal.
      require(spec.name[0] != '.' && spec.name.size() <= fmt::kMaxNameBytes);
      for (char c : spec.name)
        require((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '.' || c == '-');
      require(spec.bytes() <= fmt::kMaxTensorBytes);
      require(spec.bytes() / fmt::dtypeBytes(spec.dtype) ==
              static_cast<size_t>(spec.elements()));
    }
  require(a.arenaBytes <= fmt::kMaxArenaBytes);
  for (const kiln::rt::KernelEntry &k : a.kernels) {
    require(!k.name.empty() && fmt::isKernelKind(k.kind) && !k.images.empty());
    for (const kiln::rt::KernelImage &image : k.images)
      require(image.arch.size() >= 5 && !image.data.empty());
  }
  for (const kiln::rt::BufferEntry &b : a.buffers) {
    switch (b.kind) {
    case fmt::BufferKind::Input:
      require(b.index < a.inputs.size() && b.bytes == a.inputs[b.index].bytes());
      break;
    case fmt::BufferKind::Output:
      require(b.index < a.outputs.size() && b.bytes == a.outputs[b.index].bytes());
      break;
    case fmt::BufferKind::Weight:
      require(b.offset <= a.weights.size() && b.bytes <= a.weights.size() - b.offset);
      break;
    case fmt::BufferKind::Arena:
      require(b.offset <= a.arenaBytes && b.bytes <= a.arenaBytes - b.offset);
      break;
    default:
      require(false);
    }
  }
  require(!a.plans.empty() && a.plans.size() <= fmt::kMaxPlans);
  for (const kiln::rt::LaunchPlan &plan : a.plans)
  for (const kiln::rt::LaunchEntry &l : plan.launches) {
    require(l.kernel < a.kernels.size());
    require(l.grid[0] >= 1 && l.grid[0] <= fmt::kMaxGridX);
    require(l.grid[1] >= 1 && l.grid[1] <= fmt::kMaxGridYZ);
    require(l.grid[2] >= 1 && l.grid[2] <= fmt::kMaxGridYZ);
    require(l.block >= 1 && l.block <= fmt::kMaxBlockThreads);
    require(l.sharedBytes <= fmt::kMaxSharedBytes);
    for (uint32_t b : l.buffers)
      require(b < a.buffers.size());
    require(l.scalars.size() <= fmt::kMaxScalars);
    for (const kiln::rt::TensorMapEntry &m : l.tensorMaps) {
      require(m.buffer < a.buffers.size());
      const size_t rank = m.dims.size();
      require(rank >= fmt::kMinTensorMapRank && rank <= fmt::kMaxTensorMapRank);
      require(m.box.size() == rank && m.elementStrides.size() == rank);
      require(m.dims[0] % 8 == 0);
      uint64_t elements = 1;
      for (size_t d = 0; d < rank; ++d) {
        require(m.dims[d] >= 1 && m.dims[d] <= a.buffers[m.buffer].bytes / 2 / elements);
        elements *= m.dims[d];
        require(m.box[d] >= 1 && m.box[d] <= (d == 0 ? 64u : 256u));
        require(m.elementStrides[d] >= 1 && m.elementStrides[d] <= (d == 0 ? 1u : 8u));
      }
    }
  }
  // Copies share the weights; a moved-to artifact keeps them valid.
  Artifact copy = a;
  Artifact moved = std::move(copy);
  require(moved.weights.data() == a.weights.data() && copy.weights.empty());
}

void parse(const uint8_t *data, size_t size) {
  try {
    Artifact a = Artifact::parse(std::string_view(reinterpret_cast<const char *>(data), size),
                                 nullptr, "fuzz");
    checkInvariants(a, data, size);
  } catch (const ArtifactError &) {
  }
}

/// The input with its file size and in-bounds checksums made consistent.
std::string reseal(const uint8_t *data, size_t size) {
  std::string out(reinterpret_cast<const char *>(data), size);
  if (size < fmt::kHeaderBytes + fmt::kSectionCount * fmt::kSectionEntryBytes)
    return out;
  uint64_t fileSize = size;
  std::memcpy(out.data() + 16, &fileSize, 8);
  for (uint32_t i = 0; i < fmt::kSectionCount; ++i) {
    char *entry = out.data() + fmt::kHeaderBytes + i * fmt::kSectionEntryBytes;
    uint64_t offset, bytes;
    std::memcpy(&offset, entry + 8, 8);
    std::memcpy(&bytes, entry + 16, 8);
    if (offset > size || bytes > size - offset)
      continue;
    uint64_t checksum =
        fmt::checksum64(reinterpret_cast<const unsigned char *>(out.data()) + offset, bytes);
    std::memcpy(entry + 24, &checksum, 8);
  }
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  parse(data, size);
  std::string resealed = reseal(data, size);
  if (resealed.compare(0, resealed.size(), reinterpret_cast<const char *>(data), size) != 0) {
    // An exactly sized heap copy, so ASan still sees reads past the end.
    auto *copy = new uint8_t[resealed.size()];
    std::memcpy(copy, resealed.data(), resealed.size());
    parse(copy, resealed.size());
    delete[] copy;
  }
  return 0;
}
