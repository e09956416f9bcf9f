//===- Model.cpp - a loaded kiln model and the sessions that run it -------===//

#include "kiln/runtime/Model.h"

using namespace kiln;
using namespace kiln::rt;

std::shared_ptr<Model> Model::load(const std::string &path) {
  return std::shared_ptr<Model>(new Model(Artifact::readFile(path)));
}

std::shared_ptr<Model> Model::fromBytes(const std::string &bytes,
                                        const std::string &what) {
  return std::shared_ptr<Model>(new Model(Artifact::parse(bytes, what)));
}

namespace {
/// The best image for a device of compute capability major.minor: its exact
/// cubin (`sm_90a` on Hopper), else a cubin of the same major and a lower
/// minor (binary compatible), else PTX of an older or equal target.
const KernelImage *chooseImage(const KernelEntry &kernel, const DeviceInfo &device,
                               std::string &available) {
  const KernelImage *best = nullptr;
  int bestScore = -1;
  int cc = device.computeMajor * 10 + device.computeMinor;
  for (const KernelImage &image : kernel.images) {
    available += (available.empty() ? "" : ", ") + image.arch;
    bool ptx = image.arch.rfind("compute_", 0) == 0;
    std::string digits = image.arch.substr(ptx ? 8 : 3);
    bool archSpecific = !digits.empty() && digits.back() == 'a';
    int target = std::atoi(digits.c_str());
    int score = -1;
    if (!ptx && (archSpecific ? target == cc : (target / 10 == cc / 10 && target <= cc)))
      score = 2000 + target + (archSpecific ? 1000 : 0);
    else if (ptx && !archSpecific && target <= cc)
      score = target;
    if (score > bestScore) {
      bestScore = score;
      best = &image;
    }
  }
  return best;
}
} // namespace

uint32_t Model::sharedBytesFor(const LaunchEntry &launch) const {
  // A launch with tensor maps is a Hopper kernel whose dynamic shared memory
  // feeds its TMA pipeline; the fallback code in other images needs none
  // (and GPUs with less shared memory could not grant it).
  bool hopperImage = loadedArch_ == "sm_90a";
  return launch.tensorMaps.empty() || hopperImage ? launch.sharedBytes : 0;
}

void Model::prepare() {
  std::call_once(prepared_, [&] {
    DeviceInfo device = queryDevice(0);
    context_ = std::make_unique<Context>(0);
    for (const KernelEntry &kernel : artifact_.kernels) {
      std::string available;
      const KernelImage *image = chooseImage(kernel, device, available);
      if (!image)
        throw Error("the artifact has no code for " + device.name + " (sm_" +
                    std::to_string(device.computeMajor * 10 + device.computeMinor) +
                    "): kernel '" + kernel.name + "' has " + available +
                    "; recompile with --arch for this GPU");
      loadedArch_ = image->arch;
      modules_.push_back(std::make_unique<Module>(image->data));
      CUfunction fn = modules_.back()->function(kernel.name.c_str());
      functions_.push_back(fn);
    }
    for (const LaunchEntry &launch : artifact_.launches)
      if (sharedBytesFor(launch) > 48 * 1024)
        KILN_CU_CHECK(Driver::get().cuFuncSetAttribute(
            functions_[launch.kernel], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            static_cast<int>(sharedBytesFor(launch))));
    weights_ = std::make_unique<DeviceBuffer>(std::max<size_t>(artifact_.weights.size(), 1));
    if (!artifact_.weights.empty())
      weights_->upload(artifact_.weights.data(), artifact_.weights.size());
  });
  if (functions_.size() != artifact_.kernels.size())
    throw Error("the model failed to load on an earlier attempt");
}

Session::Session(std::shared_ptr<Model> model) : model_(std::move(model)) {
  model_->prepare();
  const Artifact &a = model_->artifact();
  for (const TensorSpec &spec : a.inputs)
    inputs_.push_back(std::make_unique<DeviceBuffer>(std::max<size_t>(spec.bytes(), 1)));
  for (const TensorSpec &spec : a.outputs)
    outputs_.push_back(std::make_unique<DeviceBuffer>(std::max<size_t>(spec.bytes(), 1)));
  arena_ = std::make_unique<DeviceBuffer>(std::max<uint64_t>(a.arenaBytes, 1));
  for (const BufferEntry &b : a.buffers) {
    switch (b.kind) {
    case artifact::BufferKind::Input:
      addresses_.push_back(inputs_[b.index]->address());
      break;
    case artifact::BufferKind::Output:
      addresses_.push_back(outputs_[b.index]->address());
      break;
    case artifact::BufferKind::Weight:
      addresses_.push_back(model_->weights_->address() + b.offset);
      break;
    case artifact::BufferKind::Arena:
      addresses_.push_back(arena_->address() + b.offset);
      break;
    }
  }
  for (const LaunchEntry &launch : a.launches) {
    tensorMaps_.emplace_back();
    for (const TensorMapEntry &map : launch.tensorMaps)
      tensorMaps_.back().push_back(encodeTensorMap2D(
          addresses_[map.buffer], map.dtype == artifact::DType::BF16, map.rows, map.cols,
          map.boxRows, map.boxCols));
  }
}

void Session::launchAll() {
  const Artifact &a = model_->artifact();
  const Driver &cu = Driver::get();
  std::vector<CUdeviceptr> args;
  std::vector<void *> params;
  for (size_t index = 0; index < a.launches.size(); ++index) {
    const LaunchEntry &launch = a.launches[index];
    args.clear();
    params.clear();
    for (TensorMap &map : tensorMaps_[index])
      params.push_back(&map);
    for (uint32_t buffer : launch.buffers)
      args.push_back(addresses_[buffer]);
    for (CUdeviceptr &p : args)
      params.push_back(&p);
    KILN_CU_CHECK(cu.cuLaunchKernel(model_->functions_[launch.kernel], launch.grid[0],
                                    launch.grid[1], launch.grid[2], launch.block, 1, 1,
                                    model_->sharedBytesFor(launch), nullptr,
                                    params.data(), nullptr));
  }
}

void Session::run(const std::vector<HostTensor> &inputs,
                  const std::vector<HostTensor> &outputs) {
  const Artifact &a = model_->artifact();
  if (inputs.size() != a.inputs.size())
    throw Error("the model takes " + std::to_string(a.inputs.size()) +
                " inputs, got " + std::to_string(inputs.size()));
  if (outputs.size() != a.outputs.size())
    throw Error("the model has " + std::to_string(a.outputs.size()) +
                " outputs, got room for " + std::to_string(outputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].bytes != a.inputs[i].bytes())
      throw Error("input '" + a.inputs[i].name + "' holds " +
                  std::to_string(inputs[i].bytes) + " bytes; the model expects " +
                  std::to_string(a.inputs[i].bytes()) + " (" +
                  artifact::dtypeName(a.inputs[i].dtype) + ")");
    inputs_[i]->upload(inputs[i].data, inputs[i].bytes);
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].bytes != a.outputs[i].bytes())
      throw Error("output '" + a.outputs[i].name + "' needs " +
                  std::to_string(a.outputs[i].bytes()) + " bytes, got " +
                  std::to_string(outputs[i].bytes));
  launchAll();
  KILN_CU_CHECK(Driver::get().cuCtxSynchronize());
  for (size_t i = 0; i < outputs.size(); ++i)
    outputs_[i]->download(outputs[i].data, outputs[i].bytes);
}

float Session::timeLaunches(int repetitions) {
  const Driver &cu = Driver::get();
  CUevent start, stop;
  KILN_CU_CHECK(cu.cuEventCreate(&start, CU_EVENT_DEFAULT));
  KILN_CU_CHECK(cu.cuEventCreate(&stop, CU_EVENT_DEFAULT));
  KILN_CU_CHECK(cu.cuEventRecord(start, nullptr));
  for (int i = 0; i < repetitions; ++i)
    launchAll();
  KILN_CU_CHECK(cu.cuEventRecord(stop, nullptr));
  KILN_CU_CHECK(cu.cuEventSynchronize(stop));
  float ms = 0;
  KILN_CU_CHECK(cu.cuEventElapsedTime(&ms, start, stop));
  cu.cuEventDestroy(start);
  cu.cuEventDestroy(stop);
  return ms / repetitions;
}
