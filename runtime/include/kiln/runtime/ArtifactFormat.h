//===- ArtifactFormat.h - the .kiln file layout -----------------*- C++ -*-===//
//
// Shared by the writer (codegen) and the reader (runtime); plain data, no
// dependencies. docs/ARTIFACT.md is the specification: every field, the
// alignment rules, the versioning policy and what the reader validates.
//
// In short: a 24-byte header (magic, version, section count, file size), a
// table of five sections (kind, flags, offset, size, checksum64),
// then the Signature, Kernels, Plan, Metadata and Weights sections. Integers are
// little-endian; the weights section is 4096-aligned and each weight inside
// it 256-aligned, so the file can be memory-mapped and uploaded in place.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ARTIFACTFORMAT_H
#define KILN_RUNTIME_ARTIFACTFORMAT_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace kiln::artifact {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'A', 'R', 'T', '\0'};
/// 5: a Metadata section (how the artifact was made). 6: sections carry
/// checksum64, not FNV-1a (which read a large model's weights at under
/// 1 GB/s, on every write and every load). 7: one launch plan per image
/// (an image's launches carry its own shared memory). 8: a session's arena
/// is zero when it starts, and a launch may take a workspace in it (past
/// every planned buffer) that its kernel leaves as it found it. 9: a launch
/// passes 64-bit integers after its pointers (the sizes of a kernel that
/// takes them at run time). Readers accept exactly this version.
constexpr uint32_t kVersion = 9;
/// Launch plans of one artifact (one per image, PTX included).
constexpr uint32_t kMaxPlans = 16;
constexpr size_t kHeaderBytes = 24;
constexpr size_t kSectionEntryBytes = 32;
constexpr uint32_t kSectionCount = 5;
constexpr uint64_t kSectionAlignment = 8;
constexpr uint64_t kWeightsAlignment = 4096;
constexpr uint64_t kWeightAlignment = 256;

/// CUDA launch limits the reader enforces (compute capability 8.0 and up).
constexpr uint32_t kMaxBlockThreads = 1024;
constexpr uint32_t kMaxGridX = 0x7fffffff;
constexpr uint32_t kMaxGridYZ = 65535;
constexpr uint32_t kMaxSharedBytes = 227 * 1024;
/// Kernel parameters: 8-byte pointers after 128-byte tensor maps, then
/// 8-byte integers, within the classic 4 KiB parameter space.
constexpr size_t kMaxParameterBytes = 4096;
constexpr size_t kTensorMapBytes = 128;
/// Integers a launch passes: a GEMM's sizes take three; the bound keeps a
/// forged count from reserving memory.
constexpr uint32_t kMaxScalars = 16;
/// TMA tensor maps: rank, box and traversal-stride limits of
/// cuTensorMapEncodeTiled; a box row is at most the 128-byte swizzle span.
constexpr uint32_t kMinTensorMapRank = 2, kMaxTensorMapRank = 5;
constexpr uint32_t kMaxBoxElements = 256, kMaxBoxRowBytes = 128, kMaxElementStride = 8;
/// Sizes a file may declare: no GPU holds a tensor or an arena of more than
/// 1 TiB, and a bound well below 2^64 keeps every sum of sizes exact.
constexpr uint64_t kMaxTensorBytes = 1ull << 40;
constexpr uint64_t kMaxArenaBytes = 1ull << 40;
/// Input and output names become file names (kiln-run --save-outputs) and
/// are printed: at most this long, of `[A-Za-z0-9_.-]`, not starting with '.'.
constexpr size_t kMaxNameBytes = 256;

enum class SectionKind : uint32_t {
  Signature = 1,
  Kernels = 2,
  Plan = 3,
  Weights = 4,
  Metadata = 5
};
/// Metadata: key/value text pairs for people and tools (kiln-info), never
/// read by the runtime. Keys are 1 to 64 bytes of `[a-z0-9._-]`, each once;
/// values at most 4096 bytes of printable ASCII (no control characters, so
/// printing one cannot drive a terminal).
constexpr uint32_t kMaxMetadataEntries = 64;
constexpr size_t kMaxMetadataKeyBytes = 64, kMaxMetadataValueBytes = 4096;

inline bool isMetadataKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}
inline bool isMetadataKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxMetadataKeyBytes)
    return false;
  for (char c : key)
    if (!isMetadataKeyChar(c))
      return false;
  return true;
}
inline bool isMetadataValue(std::string_view value) {
  if (value.size() > kMaxMetadataValueBytes)
    return false;
  for (char c : value)
    if (c < 0x20 || c > 0x7e)
      return false;
  return true;
}
enum class DType : uint32_t { F32 = 1, F16 = 2, BF16 = 3, I64 = 4, I32 = 5, Bool = 6 };
enum class BufferKind : uint32_t {
  Input = 1,  // index: the input's position; offset 0, bytes: the input's
  Output = 2, // index: the output's position; offset 0, bytes: the output's
  Weight = 3, // index 0; offset (256-aligned), bytes: inside the weights section
  Arena = 4,  // index 0; offset, bytes: inside the session's arena
};

/// The fusion kinds a kernel may name: the compiler's FusionKind spellings
/// (the writer refuses to run if a FusionKind is missing here).
constexpr std::string_view kKernelKinds[] = {
    "elementwise",   "reduction", "normalization", "gemm_epilogue",
    "conv_epilogue", "attention", "pooling"};

inline bool isKernelKind(std::string_view kind) {
  for (std::string_view known : kKernelKinds)
    if (kind == known)
      return true;
  return false;
}

inline size_t dtypeBytes(DType t) {
  switch (t) {
  case DType::F32: case DType::I32: return 4;
  case DType::F16: case DType::BF16: return 2;
  case DType::I64: return 8;
  case DType::Bool: return 1;
  }
  return 0;
}

inline const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I64: return "i64";
  case DType::I32: return "i32";
  case DType::Bool: return "i1";
  }
  return "?";
}

/// The checksum of an artifact's sections (and of the model file in its
/// metadata): four independent multiply-rotate lanes over 8-byte
/// little-endian words, so it runs at memory speed, then the remaining
/// words and bytes, the length and a final avalanche. It detects
/// corruption; it is not a cryptographic hash. docs/ARTIFACT.md gives the
/// same steps.
/// checksum64 over bytes that arrive in pieces, in order (an artifact's
/// weights, written from wherever each one lies): the same value as
/// checksum64 over the pieces joined.
class Checksum64 {
public:
  void update(const unsigned char *data, size_t size) {
    total_ += size;
    if (pending_) {
      const size_t take = size < 32 - pending_ ? size : 32 - pending_;
      std::memcpy(stripe_ + pending_, data, take);
      pending_ += take;
      data += take;
      size -= take;
      if (pending_ < 32)
        return;
      mix(stripe_);
      pending_ = 0;
    }
    size_t i = 0;
    for (; i + 32 <= size; i += 32)
      mix(data + i);
    std::memcpy(stripe_, data + i, size - i);
    pending_ = size - i;
  }

  uint64_t finish() const {
    uint64_t h = rotl(lane_[0], 1) + rotl(lane_[1], 7) + rotl(lane_[2], 12) + rotl(lane_[3], 18);
    h ^= uint64_t(total_);
    size_t i = 0;
    for (; i + 8 <= pending_; i += 8)
      h = rotl(h ^ (word(stripe_ + i) * k2), 27) * k1;
    for (; i < pending_; ++i)
      h = rotl(h ^ (uint64_t(stripe_[i]) * k1), 11) * k2;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h;
  }

private:
  static constexpr uint64_t k1 = 0x9e3779b185ebca87ull, k2 = 0xc2b2ae3d27d4eb4full;
  static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  static uint64_t word(const unsigned char *p) {
    uint64_t w = 0;
    for (int i = 0; i < 8; ++i)
      w |= uint64_t(p[i]) << (8 * i);
    return w;
  }
  void mix(const unsigned char *stripe) {
    for (int l = 0; l < 4; ++l)
      lane_[l] = rotl(lane_[l] + word(stripe + 8 * l) * k2, 31) * k1;
  }

  uint64_t lane_[4] = {k1, k2, ~k1, ~k2};
  unsigned char stripe_[32] = {};
  size_t pending_ = 0;
  uint64_t total_ = 0;
};

inline uint64_t checksum64(const unsigned char *data, size_t size) {
  Checksum64 checksum;
  checksum.update(data, size);
  return checksum.finish();
}

/// 64-bit FNV-1a of `bytes`, continuing from `hash`: names derived from
/// short texts (kernels, cache keys).
inline uint64_t fnv1a64(std::string_view bytes, uint64_t hash = 1469598103934665603ull) {
  for (unsigned char c : bytes)
    hash = (hash ^ c) * 1099511628211ull;
  return hash;
}
inline uint64_t fnv1a64(const unsigned char *data, size_t size) {
  return fnv1a64(std::string_view(reinterpret_cast<const char *>(data), size));
}

} // namespace kiln::artifact

#endif // KILN_RUNTIME_ARTIFACTFORMAT_H
