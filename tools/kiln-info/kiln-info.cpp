//===- kiln-info.cpp - what a .kiln artifact holds, without a GPU ---------===//
//
//   kiln-info model.kiln [--json]
//
// Validates the artifact as kiln-run would (every checksum and bound) and
// prints its inputs and outputs, the GPU targets it carries, its memory, its
// kernels by kind and how it was made (the metadata section: kiln's
// version, the source model and its hash, inputs, precision, options).
// Needs no GPU and no CUDA driver. Exit status: 0, 1
// for an artifact that cannot be read, 2 for a usage error.
//
//===----------------------------------------------------------------------===//

#include "JsonReport.h"
#include "kiln/runtime/Artifact.h"
#include "kiln/runtime/Printable.h"

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace kiln;

namespace {

constexpr const char *kUsage = "usage: kiln-info model.kiln [--json]\n";

std::string shapeText(const rt::TensorSpec &spec) {
  std::string text = "[";
  for (size_t i = 0; i < spec.shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(spec.shape[i]);
  return text + "]";
}

struct Summary {
  std::set<std::string> targets;
  // kind -> (distinct kernels, launches)
  std::map<std::string, std::pair<int, int>> kinds;
};

Summary summarize(const rt::Artifact &a) {
  Summary s;
  for (const rt::KernelEntry &kernel : a.kernels) {
    ++s.kinds[kernel.kind].first;
    for (const rt::KernelImage &image : kernel.images)
      s.targets.insert(image.arch);
  }
  // Launch counts of the first plan (its newest image's).
  for (const rt::LaunchEntry &launch : a.plans.front().launches)
    ++s.kinds[a.kernels[launch.kernel].kind].second;
  return s;
}

void printText(const std::string &path, const rt::Artifact &a) {
  Summary s = summarize(a);
  std::printf("%s: kiln artifact, format %u\n", printable(path).c_str(),
              artifact::kVersion);
  std::string targets;
  for (const std::string &t : s.targets)
    targets += (targets.empty() ? "" : ", ") + t;
  std::printf("  targets: %s\n", targets.empty() ? "none" : targets.c_str());
  for (auto [role, tensors] : {std::pair{"input ", &a.inputs}, std::pair{"output", &a.outputs}})
    for (const rt::TensorSpec &spec : *tensors)
      std::printf("  %s %s %s %s\n", role, spec.name.c_str(), artifact::dtypeName(spec.dtype),
                  shapeText(spec).c_str());
  std::printf("  device memory: weights %.1f MiB, arena %.1f MiB\n",
              a.weights.size() / 1048576.0, a.arenaBytes / 1048576.0);
  std::printf("  kernels: %zu distinct, %zu launches\n", a.kernels.size(),
              a.plans.front().launches.size());
  for (const rt::LaunchPlan &plan : a.plans) {
    uint64_t shared = 0;
    for (const rt::LaunchEntry &launch : plan.launches)
      shared = std::max<uint64_t>(shared, launch.sharedBytes);
    std::printf("    plan for %-10s %4zu launches, up to %.1f KiB of dynamic shared memory\n",
                plan.arch.c_str(), plan.launches.size(), shared / 1024.0);
  }
  for (const auto &[kind, counts] : s.kinds)
    std::printf("    %-14s %3d kernels, %4d launches\n", kind.c_str(), counts.first,
                counts.second);
  // The reader admits printable ASCII alone in metadata: safe to print.
  if (!a.metadata.empty())
    std::printf("  made by:\n");
  for (const auto &[key, value] : a.metadata)
    std::printf("    %-15s %s\n", (key + ":").c_str(), value.c_str());
}

void printJson(const std::string &path, const rt::Artifact &a) {
  using J = JsonReport;
  Summary s = summarize(a);
  JsonReport report;
  report.add("path", J::str(path));
  report.add("format", std::to_string(artifact::kVersion));
  std::vector<std::string> targets;
  for (const std::string &t : s.targets)
    targets.push_back(J::str(t));
  report.add("targets", J::array(targets));
  for (auto [role, tensors] : {std::pair{"inputs", &a.inputs}, std::pair{"outputs", &a.outputs}}) {
    std::vector<std::string> rows;
    for (const rt::TensorSpec &spec : *tensors)
      rows.push_back(J::object({{"name", J::str(spec.name)},
                                {"dtype", J::str(artifact::dtypeName(spec.dtype))},
                                {"shape", shapeText(spec)}}));
    report.add(role, J::array(rows));
  }
  report.add("weights_bytes", std::to_string(a.weights.size()));
  report.add("arena_bytes", std::to_string(a.arenaBytes));
  report.add("kernels", std::to_string(a.kernels.size()));
  report.add("launches", std::to_string(a.plans.front().launches.size()));
  std::vector<std::string> plans;
  for (const rt::LaunchPlan &plan : a.plans)
    plans.push_back(J::object({{"arch", J::str(plan.arch)},
                               {"launches", std::to_string(plan.launches.size())}}));
  report.add("plans", J::array(plans));
  JsonReport::Fields kinds;
  for (const auto &[kind, counts] : s.kinds)
    kinds.emplace_back(kind, J::object({{"kernels", std::to_string(counts.first)},
                                        {"launches", std::to_string(counts.second)}}));
  report.add("kinds", J::object(kinds));
  JsonReport::Fields metadata;
  for (const auto &[key, value] : a.metadata)
    metadata.emplace_back(key, J::str(value));
  report.add("metadata", J::object(metadata));
  std::printf("%s", report.text().c_str());
}

} // namespace

int main(int argc, char **argv) {
  std::string path;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("%s\nPrints what a .kiln artifact holds (inputs, outputs, GPU targets, "
                  "memory, kernels), after checking it as kiln-run would. Needs no GPU.\n"
                  "  --json   the same as one JSON object\n",
                  kUsage);
      return 0;
    }
    if (arg == "--version") {
      std::printf("kiln-info (kiln artifact format %u)\n", artifact::kVersion);
      return 0;
    }
    if (arg == "--json") {
      json = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "kiln-info: error: unknown option %s\n%s",
                   printable(arg).c_str(), kUsage);
      return 2;
    } else if (path.empty()) {
      path = arg;
    } else {
      std::fprintf(stderr, "kiln-info: error: one artifact at a time\n%s", kUsage);
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "kiln-info: error: no artifact given\n%s", kUsage);
    return 2;
  }
  try {
    rt::Artifact artifact = rt::Artifact::readFile(path);
    json ? printJson(path, artifact) : printText(path, artifact);
  } catch (const rt::Error &e) {
    std::fprintf(stderr, "kiln-info: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
