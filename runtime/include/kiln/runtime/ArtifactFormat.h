//===- ArtifactFormat.h - the .kiln file layout -----------------*- C++ -*-===//
//
// Shared by the writer (codegen) and the reader (runtime); plain data, no
// dependencies. All integers little-endian.
//
//   Header   magic "KILNART\0", u32 version, u32 sectionCount, u64 fileSize
//   Table    sectionCount x { u32 kind, u32 flags, u64 offset, u64 size,
//                             u64 fnv1a64(section bytes) }
//   Sections at their offsets; the weights section starts 4096-aligned and
//   each weight inside it 256-aligned, so the file can be memory-mapped and
//   uploaded in place.
//
// Sections (each exactly once):
//   Signature  u32 inputs, u32 outputs; each tensor: str name, u32 dtype,
//              u32 rank, i64 dims[rank]. Then u64 arenaBytes.
//   Kernels    u32 count; each: str name, u32 images; each image: str arch
//              (`sm_90a`, or `compute_90` for PTX), u64 size, bytes.
//   Plan       u32 buffers; each: u32 kind, u32 index, u64 offset, u64 bytes.
//              u32 launches; each: u32 kernel, u32 grid[3], u32 block,
//              u32 sharedBytes, u32 argc, u32 buffer[argc], u32 maps; each
//              map (a TMA tensor map passed before the pointers): u32 buffer,
//              u32 dtype, u64 rows, u64 cols, u32 boxRows, u32 boxCols.
//   Weights    raw bytes.
// `str` is u32 length + bytes (no terminator).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ARTIFACTFORMAT_H
#define KILN_RUNTIME_ARTIFACTFORMAT_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::artifact {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'A', 'R', 'T', '\0'};
constexpr uint32_t kVersion = 2;
constexpr size_t kHeaderBytes = 24;
constexpr size_t kSectionEntryBytes = 32;
constexpr uint64_t kWeightsAlignment = 4096;
constexpr uint64_t kWeightAlignment = 256;

enum class SectionKind : uint32_t { Signature = 1, Kernels = 2, Plan = 3, Weights = 4 };
enum class DType : uint32_t { F32 = 1, F16 = 2, BF16 = 3, I64 = 4, I32 = 5, Bool = 6 };
enum class BufferKind : uint32_t {
  Input = 1,  // index: the input's position; offset/bytes unused
  Output = 2, // index: the output's position
  Weight = 3, // offset, bytes: inside the weights section
  Arena = 4,  // offset, bytes: inside the session's arena
};

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

inline uint64_t fnv1a64(const unsigned char *data, size_t size) {
  uint64_t hash = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i)
    hash = (hash ^ data[i]) * 1099511628211ull;
  return hash;
}

} // namespace kiln::artifact

#endif // KILN_RUNTIME_ARTIFACTFORMAT_H
