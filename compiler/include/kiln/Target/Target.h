//===- Target.h - the GPUs an artifact is compiled for ----------*- C++ -*-===//
//
// One description per requested image (`--arch`): everything kernel
// selection and code generation may know of a GPU. No other code holds a
// GPU figure (multiprocessor count, shared memory size, instruction set).
// An architecture name gives the most common part of that architecture
// (sm_90a: an H100/H200 SXM); `native` describes the GPU of this machine.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_TARGET_H
#define KILN_TARGET_TARGET_H

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// The tensor-core instructions an image may use.
enum class TensorCoreGeneration { None, MmaSync, Wgmma };

struct TargetImage {
  std::string arch;            // NVRTC's name: sm_90a, sm_80, ...
  int computeCapability = 0;   // 90, 80, ...
  bool archSpecific = false;   // the `a` suffix: wgmma, setmaxnreg, TMA multicast
  int multiprocessors = 0;
  int64_t maxDynamicSharedBytes = 0; // per block, with the opt-in attribute
  bool clusters = false;       // thread-block clusters, distributed shared memory
  TensorCoreGeneration tensorCores = TensorCoreGeneration::None;

  /// One line for reports and diagnostics.
  std::string describe() const;
};

/// The images of one artifact, newest first: kernel selection decides for
/// the first (the primary image); the others run the same kernels.
struct TargetDescription {
  std::vector<TargetImage> images;
  const TargetImage &primary() const { return images.front(); }
  std::vector<std::string> archs() const;
};

/// The image `arch` names, or nullopt with `error` listing the known names.
std::optional<TargetImage> describeArch(const std::string &arch, std::string &error);

/// The architectures kiln knows, newest first.
std::vector<std::string> knownArchs();

/// Describes `archs` (an empty list: sm_90a, sm_80). `native` asks
/// `queryNative` for the GPU of this machine; it fails with its error.
/// `multiprocessors` > 0 overrides every image's count.
std::optional<TargetDescription>
describeTargets(const std::vector<std::string> &archs, std::string &error,
                const std::function<std::optional<TargetImage>(std::string &)> &queryNative = {},
                int multiprocessors = 0);

} // namespace kiln

#endif // KILN_TARGET_TARGET_H
