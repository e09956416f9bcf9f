//===- Model.cpp - a loaded kiln model ------------------------------------===//

#include "ModelImpl.h"

#include <cstdlib>

using namespace kiln;
using namespace kiln::rt;

//===----------------------------------------------------------------------===//
// Public helpers
//===----------------------------------------------------------------------===//

const char *kiln::dtypeName(DType type) {
  return artifact::dtypeName(static_cast<artifact::DType>(type));
}

size_t kiln::dtypeBytes(DType type) {
  return artifact::dtypeBytes(static_cast<artifact::DType>(type));
}

int64_t TensorInfo::elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string kiln::shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

namespace {
std::vector<TensorInfo> infos(const std::vector<TensorSpec> &specs) {
  std::vector<TensorInfo> out;
  for (const TensorSpec &spec : specs)
    out.push_back({spec.name, static_cast<DType>(spec.dtype), spec.shape});
  return out;
}

/// The best plan for a device of compute capability major.minor: its exact
/// cubins (`sm_90a` on Hopper), else cubins of the same major and a lower
/// minor (binary compatible), else PTX of an older or equal target.
const LaunchPlan *choosePlan(const Artifact &artifact, const DeviceInfo &device,
                             std::string &available) {
  const LaunchPlan *best = nullptr;
  int bestScore = -1;
  int cc = device.computeMajor * 10 + device.computeMinor;
  for (const LaunchPlan &plan : artifact.plans) {
    available += (available.empty() ? "" : ", ") + plan.arch;
    bool ptx = plan.arch.rfind("compute_", 0) == 0;
    std::string digits = plan.arch.substr(ptx ? 8 : 3);
    bool archSpecific = !digits.empty() && digits.back() == 'a';
    int target = std::atoi(digits.c_str());
    int score = -1;
    if (!ptx && (archSpecific ? target == cc : (target / 10 == cc / 10 && target <= cc)))
      score = 2000 + target + (archSpecific ? 1000 : 0);
    else if (ptx && !archSpecific && target <= cc)
      score = target;
    if (score > bestScore) {
      bestScore = score;
      best = &plan;
    }
  }
  return best;
}
} // namespace

Model::Impl::Impl(Artifact a)
    : artifact(std::move(a)), inputs(infos(artifact.inputs)), outputs(infos(artifact.outputs)) {}

Model::Impl::~Impl() {
  if (!context)
    return;
  try {
    context->makeCurrent();
  } catch (const Error &) {
    // The device is gone: the releases below fail quietly.
  }
  origin.reset();
  weights.reset();
  modules.clear();
}

void Model::Impl::prepare(int ordinal) {
  std::lock_guard<std::mutex> lock(prepareMutex);
  if (prepared) {
    if (ordinal != deviceOrdinal)
      throw Error("the model's weights are on CUDA device " + std::to_string(deviceOrdinal) +
                  ", where its first session runs; a session on device " +
                  std::to_string(ordinal) + " needs the model loaded again");
    context->makeCurrent();
    return;
  }
  // A failed attempt leaves nothing behind: the next session tries afresh.
  modules.clear();
  functions.clear();
  DeviceInfo device = queryDevice(ordinal);
  context = std::make_unique<Context>(ordinal);
  deviceOrdinal = ordinal;
  // The reader bounds each size (ArtifactFormat.h), so the sum is exact.
  checkFreeMemory(artifact.weights.size() + artifact.arenaBytes,
                  "the model (" + std::to_string(artifact.weights.size()) +
                      " bytes of weights and an arena of " +
                      std::to_string(artifact.arenaBytes) + " bytes per session)");
  std::string available;
  const LaunchPlan *chosen = choosePlan(artifact, device, available);
  if (!chosen)
    throw Error("the artifact has no code for " + device.name + " (sm_" +
                std::to_string(device.computeMajor * 10 + device.computeMinor) +
                "): it has " + available + "; recompile with --arch for this GPU");
  // The kernels the plan runs, in the plan's image (the reader checked each
  // has one); the others stay unloaded.
  functions.assign(artifact.kernels.size(), nullptr);
  for (const LaunchEntry &launch : chosen->launches) {
    const KernelEntry &kernel = artifact.kernels[launch.kernel];
    if (functions[launch.kernel])
      continue;
    for (const KernelImage &image : kernel.images)
      if (image.arch == chosen->arch) {
        modules.push_back(std::make_unique<Module>(image.data));
        functions[launch.kernel] = modules.back()->function(kernel.name.c_str());
      }
  }
  // Generated kernels open with griddepcontrol.wait (kiln_common.cuh), so a
  // dependent launch is safe for every one of them; but on the H200 it made
  // batch 1 slower (ViT-B/16 0.671 -> 0.809 ms, BERT 0.516 -> 0.565,
  // ResNet-50 0.355 -> 0.403; bench/NOTES.md), so it waits behind KILN_PDL=1.
  const char *pdl = std::getenv("KILN_PDL");
  programmaticLaunch = device.computeMajor >= 9 && pdl && std::string(pdl) == "1";
  for (const LaunchEntry &launch : chosen->launches)
    if (launch.sharedBytes > 48 * 1024)
      KILN_CU_CHECK(Driver::get().cuFuncSetAttribute(
          functions[launch.kernel], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
          static_cast<int>(launch.sharedBytes)));
  weights = std::make_unique<DeviceBuffer>(std::max<size_t>(artifact.weights.size(), 1),
                                           "the model's weights");
  if (!artifact.weights.empty())
    weights->upload(artifact.weights.data(), artifact.weights.size());
  origin = std::make_unique<Event>();
  origin->record(nullptr);
  KILN_CU_CHECK(Driver::get().cuCtxSynchronize());
  deviceName = device.name;
  plan = chosen;
  prepared = true;
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

std::shared_ptr<Model> Model::load(const std::string &path) {
  return std::shared_ptr<Model>(new Model(std::make_unique<Impl>(Artifact::readFile(path))));
}

std::shared_ptr<Model> Model::fromMemory(const std::string &bytes, const std::string &name) {
  return std::shared_ptr<Model>(new Model(std::make_unique<Impl>(Artifact::parse(bytes, name))));
}

const std::vector<TensorInfo> &Model::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo> &Model::outputs() const { return impl_->outputs; }
size_t Model::launchCount() const {
  std::lock_guard<std::mutex> lock(impl_->prepareMutex);
  return (impl_->plan ? *impl_->plan : impl_->artifact.plans.front()).launches.size();
}
size_t Model::kernelCount() const { return impl_->artifact.kernels.size(); }
size_t Model::weightBytes() const { return impl_->artifact.weights.size(); }
size_t Model::arenaBytes() const { return impl_->artifact.arenaBytes; }

std::string Model::loadedArch() const {
  std::lock_guard<std::mutex> lock(impl_->prepareMutex);
  return impl_->plan ? impl_->plan->arch : std::string();
}

std::string Model::deviceName() const {
  std::lock_guard<std::mutex> lock(impl_->prepareMutex);
  return impl_->deviceName;
}
