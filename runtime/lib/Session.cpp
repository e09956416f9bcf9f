//===- Session.cpp - run a model: bindings, graphs, staged copies ---------===//
//
// A session binds the plan's input and output buffers to addresses (its own
// device buffers for host I/O, the caller's pointers for device I/O),
// encodes the tensor maps and kernel parameters for that binding once, and
// replays them: as a CUDA graph captured on the first run, or as plain
// launches. A new binding (device I/O at new addresses) re-encodes and
// re-captures; cuGraphExecUpdate keeps the instantiated graph when it can.
//
//===----------------------------------------------------------------------===//

#include "ModelImpl.h"

#include <cstring>

using namespace kiln;
using namespace kiln::rt;

Session::Impl::Impl(std::shared_ptr<Model> modelIn, SessionOptions optionsIn)
    : model(std::move(modelIn)), m(model->impl()), options(optionsIn),
      id(m.nextSessionId++) {
  m.prepare(options.device);
  stream = options.stream ? std::make_unique<Stream>(static_cast<CUstream>(options.stream))
                          : std::make_unique<Stream>();
  arena = std::make_unique<DeviceBuffer>(std::max<uint64_t>(m.artifact.arenaBytes, 1),
                                         "the session's arena of intermediates");
  // Kernels may keep state past the planned buffers (stream-K's flags,
  // ArtifactFormat.h): zero when the session starts, left as found.
  arena->zero();
  inputBuffers.resize(m.inputs.size());
  outputBuffers.resize(m.outputs.size());
  inputStaging.resize(m.inputs.size());
  outputStaging.resize(m.outputs.size());
  if (options.profile)
    profiler = std::make_unique<Profiler>(*m.origin, id);
}

Session::Impl::~Impl() {
  try {
    m.context->makeCurrent();
    stream->synchronize();
  } catch (const Error &) {
    // A failing device cannot be waited for; release what we own anyway.
  }
  if (graph)
    Driver::get().cuGraphExecDestroy(graph);
}

void Session::Impl::check(const std::vector<Tensor> &inputs,
                          const std::vector<Tensor> &outputs) const {
  auto names = [](const std::vector<TensorInfo> &infos) {
    std::string text;
    for (const TensorInfo &info : infos)
      text += (text.empty() ? "" : ", ") + info.name;
    return text;
  };
  if (inputs.size() != m.inputs.size())
    throw Error("the model takes " + std::to_string(m.inputs.size()) + " inputs (" +
                names(m.inputs) + "), got " + std::to_string(inputs.size()));
  if (outputs.size() != m.outputs.size())
    throw Error("the model has " + std::to_string(m.outputs.size()) + " outputs (" +
                names(m.outputs) + "), got " + std::to_string(outputs.size()));
  // A device pointer already bound was checked when it was bound: the query
  // costs microseconds a batch-1 run should not spend again.
  auto checkOne = [](const char *role, const TensorInfo &info, const Tensor &t,
                     CUdeviceptr bound) {
    std::string what = std::string(role) + " '" + info.name + "'";
    if (t.dtype != info.dtype || t.shape != info.shape)
      throw Error(what + ": the model expects " + dtypeName(info.dtype) + " " +
                  shapeText(info.shape) + ", got " + dtypeName(t.dtype) + " " +
                  shapeText(t.shape));
    if (!t.data && info.bytes() > 0)
      throw Error(what + ": the data pointer is null");
    if (t.memory == Memory::Device) {
      auto address = reinterpret_cast<CUdeviceptr>(t.data);
      if (address % 16 != 0)
        throw Error(what + ": device memory must be 16-byte aligned");
      if (address != bound && !isDeviceRange(address, info.bytes()))
        throw Error(what + " is marked as device memory, but its " +
                    std::to_string(info.bytes()) +
                    " bytes are not within one device allocation of this GPU");
    }
  };
  for (size_t i = 0; i < inputs.size(); ++i)
    checkOne("input", m.inputs[i], inputs[i], bound ? boundInputs[i] : 0);
  for (size_t i = 0; i < outputs.size(); ++i)
    checkOne("output", m.outputs[i], outputs[i], bound ? boundOutputs[i] : 0);
}

CUdeviceptr Session::Impl::ownBuffer(std::vector<std::unique_ptr<DeviceBuffer>> &buffers,
                                     size_t index, const TensorInfo &info, const char *role) {
  if (!buffers[index])
    buffers[index] = std::make_unique<DeviceBuffer>(
        std::max<size_t>(info.bytes(), 1), std::string(role) + " '" + info.name + "'");
  return buffers[index]->address();
}

unsigned char *Session::Impl::staging(std::vector<std::unique_ptr<PinnedBuffer>> &buffers,
                                      size_t index, const TensorInfo &info,
                                      const char *role) {
  if (!buffers[index])
    buffers[index] = std::make_unique<PinnedBuffer>(
        info.bytes(), std::string("staging for ") + role + " '" + info.name + "'");
  return buffers[index]->data();
}

void Session::Impl::bind(const std::vector<CUdeviceptr> &inputs,
                         const std::vector<CUdeviceptr> &outputs) {
  const Artifact &a = m.artifact;
  addresses.clear();
  for (const BufferEntry &b : a.buffers) {
    switch (b.kind) {
    case artifact::BufferKind::Input:
      addresses.push_back(inputs[b.index]);
      break;
    case artifact::BufferKind::Output:
      addresses.push_back(outputs[b.index]);
      break;
    case artifact::BufferKind::Weight:
      addresses.push_back(m.weights->address() + b.offset);
      break;
    case artifact::BufferKind::Arena:
      addresses.push_back(arena->address() + b.offset);
      break;
    }
  }
  const std::vector<LaunchEntry> &launches = m.plan->launches;
  tensorMaps.assign(launches.size(), {});
  arguments.assign(launches.size(), {});
  scalars.assign(launches.size(), {});
  parameters.assign(launches.size(), {});
  for (size_t index = 0; index < launches.size(); ++index) {
    const LaunchEntry &launch = launches[index];
    for (const TensorMapEntry &map : launch.tensorMaps)
      tensorMaps[index].push_back(encodeTensorMap(addresses[map.buffer],
                                                  map.dtype == artifact::DType::BF16, map.dims,
                                                  map.box, map.elementStrides));
    for (uint32_t buffer : launch.buffers)
      arguments[index].push_back(addresses[buffer]);
    // Tensor maps come first (the kernels' signature), then the pointers.
    for (TensorMap &map : tensorMaps[index])
      parameters[index].push_back(&map);
    for (CUdeviceptr &pointer : arguments[index])
      parameters[index].push_back(&pointer);
    scalars[index].assign(launch.scalars.begin(), launch.scalars.end());
    for (long long &value : scalars[index])
      parameters[index].push_back(&value);
  }
  boundInputs = inputs;
  boundOutputs = outputs;
  bound = true;
  graphCurrent = false;
}

void Session::Impl::launchOne(size_t index, bool programmaticDependent) {
  const LaunchEntry &launch = m.plan->launches[index];
  const Driver &cu = Driver::get();
  if (programmaticDependent) {
    CUlaunchAttribute dependent{};
    dependent.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    dependent.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config{};
    config.gridDimX = launch.grid[0];
    config.gridDimY = launch.grid[1];
    config.gridDimZ = launch.grid[2];
    config.blockDimX = launch.block;
    config.blockDimY = 1;
    config.blockDimZ = 1;
    config.sharedMemBytes = launch.sharedBytes;
    config.hStream = stream->handle();
    config.attrs = &dependent;
    config.numAttrs = 1;
    KILN_CU_CHECK(cu.cuLaunchKernelEx(&config, m.functions[launch.kernel],
                                      parameters[index].data(), nullptr));
  } else {
    KILN_CU_CHECK(cu.cuLaunchKernel(m.functions[launch.kernel], launch.grid[0], launch.grid[1],
                                    launch.grid[2], launch.block, 1, 1, launch.sharedBytes,
                                    stream->handle(), parameters[index].data(), nullptr));
  }
}

void Session::Impl::launchPlan(bool profile) {
  const Artifact &a = m.artifact;
  const std::vector<LaunchEntry> &launches = m.plan->launches;
  for (size_t index = 0; index < launches.size(); ++index) {
    const LaunchEntry &launch = launches[index];
    if (profile)
      profiler->begin(stream->handle(), a.kernels[launch.kernel].name,
                      a.kernels[launch.kernel].kind);
    // Unprofiled, each kernel after the first is a programmatic dependent of
    // the one before: it launches while that one drains and waits for it in
    // its first instruction. Profiling times kernels one at a time.
    launchOne(index, m.programmaticLaunch && !profile && index > 0);
    if (profile)
      profiler->end(stream->handle());
  }
}

CUgraph Session::Impl::capture(const std::function<void()> &enqueue) {
  const Driver &cu = Driver::get();
  // Thread-local capture: other sessions keep launching and allocating on
  // their own threads while this one records.
  KILN_CU_CHECK(cu.cuStreamBeginCapture(stream->handle(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  CUgraph captured = nullptr;
  try {
    enqueue();
  } catch (...) {
    cu.cuStreamEndCapture(stream->handle(), &captured);
    if (captured)
      cu.cuGraphDestroy(captured);
    throw;
  }
  KILN_CU_CHECK(cu.cuStreamEndCapture(stream->handle(), &captured));
  return captured;
}

void Session::Impl::captureGraph() {
  const Driver &cu = Driver::get();
  CUgraph captured = capture([&] { launchPlan(false); });
  bool updated = false;
  if (graph) {
    CUgraphExecUpdateResultInfo info{};
    updated = cu.cuGraphExecUpdate(graph, captured, &info) == CUDA_SUCCESS;
    if (!updated) {
      cu.cuGraphExecDestroy(graph);
      graph = nullptr;
    }
  }
  CUresult instantiated = updated ? CUDA_SUCCESS : cu.cuGraphInstantiate(&graph, captured, 0);
  cu.cuGraphDestroy(captured);
  KILN_CU_CHECK(instantiated);
  graphCurrent = true;
}

//===----------------------------------------------------------------------===//
// kiln::Session
//===----------------------------------------------------------------------===//

Session::Session(std::shared_ptr<Model> model, SessionOptions options) {
  if (!model)
    throw Error("a session needs a model (got a null pointer)");
  impl_ = std::make_unique<Impl>(std::move(model), options);
}

Session::~Session() = default;

/// One run issued on the session's stream; with `wait`, waited for and the
/// host outputs copied out.
static void issue(Session::Impl &s, const std::vector<Tensor> &inputs,
                  const std::vector<Tensor> &outputs, bool wait) {
  s.m.context->makeCurrent();
  s.check(inputs, outputs);
  std::vector<CUdeviceptr> in(inputs.size()), out(outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    in[i] = inputs[i].memory == Memory::Device
                ? reinterpret_cast<CUdeviceptr>(inputs[i].data)
                : s.ownBuffer(s.inputBuffers, i, s.m.inputs[i], "input");
  for (size_t i = 0; i < outputs.size(); ++i)
    out[i] = outputs[i].memory == Memory::Device
                 ? reinterpret_cast<CUdeviceptr>(outputs[i].data)
                 : s.ownBuffer(s.outputBuffers, i, s.m.outputs[i], "output");
  if (!s.bound || in != s.boundInputs || out != s.boundOutputs)
    s.bind(in, out);

  const Driver &cu = Driver::get();
  CUstream stream = s.stream->handle();
  bool profile = s.profiler != nullptr;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].memory != Memory::Host || s.m.inputs[i].bytes() == 0)
      continue;
    const TensorInfo &info = s.m.inputs[i];
    unsigned char *pinned = s.staging(s.inputStaging, i, info, "input");
    std::memcpy(pinned, inputs[i].data, info.bytes());
    if (profile)
      s.profiler->begin(stream, "copy to device: " + info.name, "copy");
    KILN_CU_CHECK(cu.cuMemcpyHtoDAsync(in[i], pinned, info.bytes(), stream));
    if (profile)
      s.profiler->end(stream);
  }
  if (profile || !s.options.cudaGraph) {
    s.launchPlan(profile);
  } else {
    if (!s.graphCurrent)
      s.captureGraph();
    KILN_CU_CHECK(cu.cuGraphLaunch(s.graph, stream));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].memory != Memory::Host || s.m.outputs[i].bytes() == 0)
      continue;
    const TensorInfo &info = s.m.outputs[i];
    unsigned char *pinned = s.staging(s.outputStaging, i, info, "output");
    if (profile)
      s.profiler->begin(stream, "copy to host: " + info.name, "copy");
    KILN_CU_CHECK(cu.cuMemcpyDtoHAsync(pinned, out[i], info.bytes(), stream));
    if (profile)
      s.profiler->end(stream);
  }
  if (!wait)
    return;
  s.stream->synchronize();
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].memory == Memory::Host && s.m.outputs[i].bytes() > 0)
      std::memcpy(outputs[i].data, s.outputStaging[i]->data(), s.m.outputs[i].bytes());
  if (profile)
    s.profiler->finishRun();
}

void Session::run(const std::vector<Tensor> &inputs, const std::vector<Tensor> &outputs) {
  issue(*impl_, inputs, outputs, /*wait=*/true);
}

void Session::enqueue(const std::vector<Tensor> &inputs, const std::vector<Tensor> &outputs) {
  if (impl_->profiler)
    throw Error("enqueue does not profile (its runs are not waited for): use run() with "
                "SessionOptions::profile");
  for (const auto &[tensors, role] : {std::pair{&inputs, "input"}, std::pair{&outputs, "output"}})
    for (size_t i = 0; i < tensors->size(); ++i)
      if ((*tensors)[i].memory != Memory::Device)
        throw Error(std::string("enqueue takes device tensors; ") + role + " " +
                    std::to_string(i) + " is in host memory (use run(), which waits to copy)");
  issue(*impl_, inputs, outputs, /*wait=*/false);
}

float Session::timeLaunches(int repetitions, bool graph) {
  Impl &s = *impl_;
  if (!s.bound)
    throw Error("timeLaunches needs a run first (it keeps that run's inputs and outputs)");
  if (repetitions <= 0)
    throw Error("timeLaunches needs a positive repetition count");
  s.m.context->makeCurrent();
  const Driver &cu = Driver::get();
  if (graph && !s.graphCurrent)
    s.captureGraph();
  Event start, stop;
  start.record(s.stream->handle());
  for (int i = 0; i < repetitions; ++i) {
    if (graph)
      KILN_CU_CHECK(cu.cuGraphLaunch(s.graph, s.stream->handle()));
    else
      s.launchPlan(false);
  }
  stop.record(s.stream->handle());
  s.stream->synchronize();
  return stop.since(start) / repetitions;
}

std::vector<LaunchTime> Session::timeEachLaunch(int repetitions) {
  Impl &s = *impl_;
  if (!s.bound)
    throw Error("timeEachLaunch needs a run first (it keeps that run's inputs and outputs)");
  if (repetitions <= 0)
    throw Error("timeEachLaunch needs a positive repetition count");
  s.m.context->makeCurrent();
  const Driver &cu = Driver::get();
  const Artifact &a = s.m.artifact;
  CUstream stream = s.stream->handle();
  std::vector<LaunchTime> times;
  for (size_t index = 0; index < s.m.plan->launches.size(); ++index) {
    // One graph of the launch repeated, as a vendor library's kernel is
    // timed: the launches follow one another on the device with no host in
    // between and no programmatic overlap, and the repetitions leave the
    // caches as that kernel alone leaves them. The plan's sizes and
    // addresses do not change between repetitions, so none reads or writes
    // out of bounds; values may (an in-place launch compounds).
    CUgraph captured = s.capture([&] {
      for (int r = 0; r < repetitions; ++r)
        s.launchOne(index, false);
    });
    CUgraphExec replay = nullptr;
    CUresult instantiated = cu.cuGraphInstantiate(&replay, captured, 0);
    cu.cuGraphDestroy(captured);
    KILN_CU_CHECK(instantiated);
    try {
      KILN_CU_CHECK(cu.cuGraphLaunch(replay, stream)); // uploads the graph, warms the caches
      Event start, stop;
      start.record(stream);
      KILN_CU_CHECK(cu.cuGraphLaunch(replay, stream));
      stop.record(stream);
      s.stream->synchronize();
      const LaunchEntry &launch = s.m.plan->launches[index];
      times.push_back({index, a.kernels[launch.kernel].name, a.kernels[launch.kernel].kind,
                       stop.since(start) / repetitions});
    } catch (...) {
      cu.cuGraphExecDestroy(replay);
      throw;
    }
    cu.cuGraphExecDestroy(replay);
  }
  return times;
}

std::vector<KernelProfile> Session::profile() const {
  return impl_->profiler ? impl_->profiler->table() : std::vector<KernelProfile>{};
}

std::string Session::profileTable() const {
  if (!impl_->profiler)
    throw Error("the session was made without SessionOptions::profile");
  return impl_->profiler->tableText();
}

std::vector<TraceEvent> Session::trace() const {
  return impl_->profiler ? impl_->profiler->events() : std::vector<TraceEvent>{};
}

std::string Session::chromeTrace() const {
  if (!impl_->profiler)
    throw Error("the session was made without SessionOptions::profile");
  return impl_->profiler->chromeTrace();
}

void Session::resetProfile() {
  if (impl_->profiler)
    impl_->profiler->reset();
}

void *Session::stream() const { return impl_->stream->handle(); }
