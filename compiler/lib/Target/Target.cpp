//===- Target.cpp - the GPUs an artifact is compiled for ------------------===//
//
// The table of known architectures, each with the figures of its most
// common data-center part (consumer parts of the same architecture have
// fewer multiprocessors; `--arch native` reads the real ones).
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/Target.h"

#include <algorithm>

using namespace kiln;

namespace {
struct KnownArch {
  const char *name;
  int capability;
  bool archSpecific;
  int multiprocessors;
  int64_t sharedBytes;
  const char *part;
};

// Shared memory: the opt-in maximum per block (cudaDevAttrMaxSharedMemoryPerBlockOptin).
constexpr KnownArch kKnown[] = {
    {"sm_100a", 100, true, 148, 232448, "B200"},
    {"sm_100", 100, false, 148, 232448, "B200"},
    {"sm_90a", 90, true, 132, 232448, "H100/H200 SXM"},
    {"sm_90", 90, false, 132, 232448, "H100/H200 SXM"},
    {"sm_89", 89, false, 142, 101376, "L40S"},
    {"sm_86", 86, false, 84, 101376, "A40"},
    {"sm_80", 80, false, 108, 166912, "A100"},
    {"sm_75", 75, false, 40, 65536, "T4"},
    {"sm_70", 70, false, 80, 98304, "V100"},
};

TargetImage imageOf(const KnownArch &known) {
  TargetImage image;
  image.arch = known.name;
  image.computeCapability = known.capability;
  image.archSpecific = known.archSpecific;
  image.multiprocessors = known.multiprocessors;
  image.maxDynamicSharedBytes = known.sharedBytes;
  image.clusters = known.capability >= 90;
  // wgmma exists only in the arch-specific sm_90a instruction set.
  image.tensorCores = known.capability == 90 && known.archSpecific ? TensorCoreGeneration::Wgmma
                      : known.capability >= 80                     ? TensorCoreGeneration::MmaSync
                                                                   : TensorCoreGeneration::None;
  return image;
}
} // namespace

std::string TargetImage::describe() const {
  const char *cores = tensorCores == TensorCoreGeneration::Wgmma     ? "wgmma"
                      : tensorCores == TensorCoreGeneration::MmaSync ? "mma.sync"
                                                                     : "no tensor cores";
  return arch + ": " + std::to_string(multiprocessors) + " multiprocessors, " +
         std::to_string(maxDynamicSharedBytes / 1024) + " KiB shared memory per block, " +
         cores + (clusters ? ", clusters" : "");
}

std::vector<std::string> TargetDescription::archs() const {
  std::vector<std::string> names;
  for (const TargetImage &image : images)
    names.push_back(image.arch);
  return names;
}

std::vector<std::string> kiln::knownArchs() {
  std::vector<std::string> names;
  for (const KnownArch &known : kKnown)
    names.push_back(known.name);
  return names;
}

std::optional<TargetImage> kiln::describeArch(const std::string &arch, std::string &error) {
  for (const KnownArch &known : kKnown)
    if (arch == known.name)
      return imageOf(known);
  error = "unknown GPU architecture '" + arch + "' (known: native";
  for (const KnownArch &known : kKnown)
    error += std::string(", ") + known.name;
  error += ")";
  return std::nullopt;
}

std::optional<TargetDescription>
kiln::describeTargets(const std::vector<std::string> &archs, std::string &error,
                      const std::function<std::optional<TargetImage>(std::string &)> &queryNative,
                      int multiprocessors) {
  TargetDescription targets;
  for (const std::string &arch : archs.empty() ? std::vector<std::string>{"sm_90a", "sm_80"}
                                               : archs) {
    std::optional<TargetImage> image;
    if (arch == "native") {
      if (!queryNative) {
        error = "--arch native needs a GPU query, which this tool does not have";
        return std::nullopt;
      }
      image = queryNative(error);
    } else {
      image = describeArch(arch, error);
    }
    if (!image)
      return std::nullopt;
    if (std::any_of(targets.images.begin(), targets.images.end(),
                    [&](const TargetImage &other) { return other.arch == image->arch; })) {
      error = "GPU architecture '" + image->arch + "' is given twice";
      return std::nullopt;
    }
    if (multiprocessors > 0)
      image->multiprocessors = multiprocessors;
    targets.images.push_back(*image);
  }
  return targets;
}
