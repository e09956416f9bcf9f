//===- ModelImpl.h - the state behind kiln::Model and kiln::Session -*- C++ -*-===//

#ifndef KILN_RUNTIME_MODELIMPL_H
#define KILN_RUNTIME_MODELIMPL_H

#include "Profiler.h"

#include "kiln/kiln.h"
#include "kiln/runtime/Artifact.h"
#include "kiln/runtime/Device.h"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln {

struct Model::Impl {
  explicit Impl(rt::Artifact artifact);
  /// Makes the context current so the weights and modules are released in
  /// it, whichever thread drops the last reference.
  ~Impl();

  /// Loads the kernel images that fit device `ordinal`, uploads the
  /// weights and records the profilers' origin event; once, whichever
  /// session is first. A later session on another device is an error.
  void prepare(int ordinal);

  rt::Artifact artifact;
  std::vector<TensorInfo> inputs, outputs;

  std::mutex prepareMutex;
  bool prepared = false;
  int deviceOrdinal = -1;
  std::unique_ptr<rt::Context> context;
  std::vector<std::unique_ptr<rt::Module>> modules;
  std::vector<CUfunction> functions; // per artifact kernel
  std::unique_ptr<rt::DeviceBuffer> weights;
  std::unique_ptr<rt::Event> origin;
  std::string deviceName;
  /// The plan of the loaded image, named by its architecture (set by
  /// prepare).
  const rt::LaunchPlan *plan = nullptr;
  /// Launch each kernel as a programmatic dependent of the one before
  /// (sm_90 and newer, with KILN_PDL=1: measured slower, kept to compare).
  bool programmaticLaunch = false;
  std::atomic<int> nextSessionId{0};
};

struct Session::Impl {
  Impl(std::shared_ptr<Model> model, SessionOptions options);
  ~Impl();

  void check(const std::vector<Tensor> &inputs, const std::vector<Tensor> &outputs) const;
  /// Points the plan's input and output buffers at these addresses: tensor
  /// maps are re-encoded, parameters rebuilt and the graph marked stale.
  void bind(const std::vector<CUdeviceptr> &inputs, const std::vector<CUdeviceptr> &outputs);
  /// Launch `index` of the plan on the session's stream.
  void launchOne(size_t index, bool programmaticDependent);
  void launchPlan(bool profile);
  /// What `enqueue` issues on the session's stream, captured as a graph
  /// (the caller destroys it).
  CUgraph capture(const std::function<void()> &enqueue);
  void captureGraph();
  CUdeviceptr ownBuffer(std::vector<std::unique_ptr<rt::DeviceBuffer>> &buffers, size_t index,
                        const TensorInfo &info, const char *role);
  unsigned char *staging(std::vector<std::unique_ptr<rt::PinnedBuffer>> &buffers,
                         size_t index, const TensorInfo &info, const char *role);

  std::shared_ptr<Model> model;
  Model::Impl &m;
  SessionOptions options;
  int id;
  std::unique_ptr<rt::Stream> stream;
  std::unique_ptr<rt::DeviceBuffer> arena;
  // Made on first host use of each input/output slot.
  std::vector<std::unique_ptr<rt::DeviceBuffer>> inputBuffers, outputBuffers;
  std::vector<std::unique_ptr<rt::PinnedBuffer>> inputStaging, outputStaging;

  bool bound = false;
  std::vector<CUdeviceptr> boundInputs, boundOutputs;
  std::vector<CUdeviceptr> addresses;                 // per plan buffer
  std::vector<std::vector<rt::TensorMap>> tensorMaps; // per launch
  std::vector<std::vector<CUdeviceptr>> arguments;    // per launch
  std::vector<std::vector<long long>> scalars;        // per launch
  std::vector<std::vector<void *>> parameters;        // per launch
  CUgraphExec graph = nullptr;
  bool graphCurrent = false;
  std::unique_ptr<rt::Profiler> profiler;
};

} // namespace kiln

#endif // KILN_RUNTIME_MODELIMPL_H
