//===- Artifact.h - read and validate a .kiln artifact ----------*- C++ -*-===//
//
// The reader treats every file as untrusted: each offset, size, count, name
// and enum is bounds-checked before use, every section's checksum is
// verified, and plan entries must refer to existing kernels and buffers
// inside their regions. All of it runs before CUDA is touched, so a bad file
// is one ArtifactError, testable without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ARTIFACT_H
#define KILN_RUNTIME_ARTIFACT_H

#include "kiln/runtime/ArtifactFormat.h"
#include "kiln/runtime/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::rt {

class ArtifactError : public Error {
public:
  using Error::Error;
};

struct TensorSpec {
  std::string name;
  artifact::DType dtype = artifact::DType::F32;
  std::vector<int64_t> shape;
  int64_t elements() const;
  size_t bytes() const { return elements() * artifact::dtypeBytes(dtype); }
};

struct KernelImage {
  std::string arch; // sm_90a, sm_80, compute_90 (PTX)
  std::string data;
};

struct KernelEntry {
  std::string name;
  std::vector<KernelImage> images;
};

struct BufferEntry {
  artifact::BufferKind kind;
  uint32_t index = 0;
  uint64_t offset = 0, bytes = 0;
};

struct TensorMapEntry {
  uint32_t buffer = 0;
  artifact::DType dtype = artifact::DType::F16;
  uint64_t rows = 0, cols = 0;
  uint32_t boxRows = 0, boxCols = 0;
};

struct LaunchEntry {
  uint32_t kernel = 0;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block = 1, sharedBytes = 0;
  std::vector<uint32_t> buffers;
  std::vector<TensorMapEntry> tensorMaps;
};

struct Artifact {
  std::vector<TensorSpec> inputs, outputs;
  uint64_t arenaBytes = 0;
  std::vector<KernelEntry> kernels;
  std::vector<BufferEntry> buffers;
  std::vector<LaunchEntry> launches;
  std::string weights;

  /// Parses and validates `bytes`; throws ArtifactError naming what is wrong
  /// and where (`what` names the source, e.g. the file).
  static Artifact parse(const std::string &bytes, const std::string &what);
  static Artifact readFile(const std::string &path);
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_ARTIFACT_H
