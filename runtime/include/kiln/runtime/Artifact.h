//===- Artifact.h - read and validate a .kiln artifact ----------*- C++ -*-===//
//
// The reader treats every file as untrusted: each offset, size, count, name
// and enum is bounds-checked before use, every section's checksum is
// verified, and plan entries must refer to existing kernels (with an image
// for the plan's architecture) and buffers inside their regions, with
// launch shapes CUDA accepts. All of it runs
// before CUDA is touched, so a bad file is one ArtifactError (naming the
// cause and the byte position), testable without a GPU. docs/ARTIFACT.md
// lists every check.
//
// A file is memory-mapped, not read: the weights stay a view of the mapping
// (uploaded from there), kept alive by whichever Artifact copies share it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ARTIFACT_H
#define KILN_RUNTIME_ARTIFACT_H

#include "kiln/runtime/ArtifactFormat.h"
#include "kiln/runtime/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::rt {

class ArtifactError : public Error {
public:
  using Error::Error;
};

/// Read-only bytes plus whatever keeps them alive (a file mapping or an owned
/// copy). Copies share the storage; a moved-from value is empty.
class SharedBytes {
public:
  SharedBytes() = default;
  SharedBytes(std::string_view bytes, std::shared_ptr<const void> owner)
      : bytes_(bytes), owner_(std::move(owner)) {}
  SharedBytes(const SharedBytes &) = default;
  SharedBytes &operator=(const SharedBytes &) = default;
  SharedBytes(SharedBytes &&other) noexcept
      : bytes_(std::exchange(other.bytes_, {})), owner_(std::move(other.owner_)) {}
  SharedBytes &operator=(SharedBytes &&other) noexcept {
    bytes_ = std::exchange(other.bytes_, {});
    owner_ = std::move(other.owner_);
    return *this;
  }

  const char *data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }
  std::string_view view() const { return bytes_; }
  operator std::string_view() const { return bytes_; }

private:
  std::string_view bytes_;
  std::shared_ptr<const void> owner_;
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
  std::string kind; // the fusion kind: elementwise, gemm_epilogue, ...
  std::vector<KernelImage> images;
};

struct BufferEntry {
  artifact::BufferKind kind;
  uint32_t index = 0;
  uint64_t offset = 0, bytes = 0;
};

/// A TMA view of a buffer as a packed tensor of `dims.size()` (2 to 5)
/// dimensions, innermost first, loaded in boxes of `box` elements traversed
/// with `elementStrides` (box[i] / elementStrides[i] elements land per
/// dimension), 128-byte swizzle.
struct TensorMapEntry {
  uint32_t buffer = 0;
  artifact::DType dtype = artifact::DType::F16;
  std::vector<uint64_t> dims;
  std::vector<uint32_t> box, elementStrides;
};

struct LaunchEntry {
  uint32_t kernel = 0;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block = 1, sharedBytes = 0;
  std::vector<uint32_t> buffers;
  std::vector<TensorMapEntry> tensorMaps;
  /// Passed after the pointers, as `long long` (a kernel's sizes).
  std::vector<int64_t> scalars;
};

/// The launches of one image (`arch`: a kernel image name, `sm_90a`,
/// `compute_80`), in order; every kernel they run has an image of `arch`.
struct LaunchPlan {
  std::string arch;
  std::vector<LaunchEntry> launches;
};

struct Artifact {
  std::vector<TensorSpec> inputs, outputs;
  uint64_t arenaBytes = 0;
  std::vector<KernelEntry> kernels;
  std::vector<BufferEntry> buffers;
  /// One per image, in the file's order.
  std::vector<LaunchPlan> plans;
  /// The weights section, in place in the mapped file (or the parsed copy).
  SharedBytes weights;
  /// How the artifact was made (kiln version, source model, options), in
  /// the file's order; for people and tools, not for running it.
  std::vector<std::pair<std::string, std::string>> metadata;

  /// Parses and validates `bytes`; throws ArtifactError naming what is wrong
  /// and where (`what` names the source, e.g. the file). Keeps a copy of the
  /// weights.
  static Artifact parse(const std::string &bytes, const std::string &what);
  /// The same on bytes that `owner` keeps alive; `weights` views them.
  static Artifact parse(std::string_view bytes, std::shared_ptr<const void> owner,
                        const std::string &what);
  /// Memory-maps `path` (read-only, private) and parses it.
  static Artifact readFile(const std::string &path);
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_ARTIFACT_H
