//===- Model.h - a loaded kiln model and the sessions that run it -*- C++ -*-===//
//
// A Model is one validated artifact; on first use on a device it loads the
// kernel image that fits the GPU and uploads the weights once. A Session
// owns an arena for the intermediates and runs the launch plan.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_MODEL_H
#define KILN_RUNTIME_MODEL_H

#include "kiln/runtime/Artifact.h"
#include "kiln/runtime/Device.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::rt {

class Model {
public:
  /// Reads and validates; touches no GPU, so bad files fail anywhere.
  static std::shared_ptr<Model> load(const std::string &path);
  static std::shared_ptr<Model> fromBytes(const std::string &bytes,
                                          const std::string &what);

  const Artifact &artifact() const { return artifact_; }
  /// The image chosen for the current device: its arch (e.g. `sm_90a`).
  const std::string &loadedArch() const { return loadedArch_; }

private:
  friend class Session;
  explicit Model(Artifact artifact) : artifact_(std::move(artifact)) {}
  /// Loads kernels and uploads weights on first use (thread-safe).
  void prepare();
  uint32_t sharedBytesFor(const LaunchEntry &launch) const;

  Artifact artifact_;
  std::once_flag prepared_;
  std::unique_ptr<Context> context_;
  std::vector<std::unique_ptr<Module>> modules_;
  std::vector<CUfunction> functions_;
  std::unique_ptr<DeviceBuffer> weights_;
  std::string loadedArch_;
};

struct HostTensor {
  void *data = nullptr;
  size_t bytes = 0;
};

class Session {
public:
  explicit Session(std::shared_ptr<Model> model);

  /// Copies inputs in, runs every kernel, copies outputs out. Input and
  /// output counts and byte sizes are checked against the signature.
  void run(const std::vector<HostTensor> &inputs,
           const std::vector<HostTensor> &outputs);
  /// Milliseconds of device time of the launch plan alone (inputs already
  /// on the device from the last run), measured with CUDA events.
  float timeLaunches(int repetitions);

private:
  void launchAll();
  std::shared_ptr<Model> model_;
  std::vector<std::unique_ptr<DeviceBuffer>> inputs_, outputs_;
  std::unique_ptr<DeviceBuffer> arena_;
  std::vector<CUdeviceptr> addresses_; // per plan buffer
  /// Encoded once per session: the arena and the I/O buffers never move.
  std::vector<std::vector<TensorMap>> tensorMaps_; // per launch
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_MODEL_H
