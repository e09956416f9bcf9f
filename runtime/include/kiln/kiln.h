//===- kiln.h - kiln's public C++ API ----------------------------*- C++ -*-===//
//
// Everything a host program needs, in one header with no CUDA, MLIR or
// LibTorch includes:
//
//   auto model = kiln::Model::load("model.kiln");     // or fromMemory(bytes)
//   kiln::Session session(model);                     // one per thread
//   session.run({kiln::Tensor::host(x, kiln::DType::F16, {64, 1024})},
//               {kiln::Tensor::host(y, kiln::DType::F16, {64, 1024})});
//
// A Model is immutable once loaded and shared by any number of Sessions;
// loading validates the whole file before touching CUDA. A Session owns its
// stream, its arena for intermediates and its pinned staging buffers, and is
// used by one thread at a time; sessions of one model run concurrently.
// Every failure is a kiln::Error (or a subclass) whose message names the
// cause.
//
// Link `kiln_runtime`. Compiling at load time is kiln/compile.h's
// `compileModel` (link `kiln_compiler_api`; not in the runtime-only
// build).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_KILN_H
#define KILN_KILN_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln {

//===--- Errors ---------------------------------------------------------===//

class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// This machine cannot run CUDA at all: no driver, or no device.
class NoDeviceError : public Error {
public:
  using Error::Error;
};

/// A device or pinned-host allocation failed; the message names what was
/// being allocated and the bytes asked for.
class OutOfMemoryError : public Error {
public:
  OutOfMemoryError(const std::string &message, size_t requestedBytes)
      : Error(message), requestedBytes_(requestedBytes) {}
  size_t requestedBytes() const { return requestedBytes_; }

private:
  size_t requestedBytes_;
};

//===--- Tensors --------------------------------------------------------===//

/// Element types; the numbering is the artifact's.
enum class DType : uint32_t { F32 = 1, F16 = 2, BF16 = 3, I64 = 4, I32 = 5, Bool = 6 };
const char *dtypeName(DType type);
size_t dtypeBytes(DType type);

/// An input or output of a compiled model.
struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t elements() const;
  size_t bytes() const { return static_cast<size_t>(elements()) * dtypeBytes(dtype); }
};

enum class Memory { Host, Device };

/// A caller-owned buffer. Host memory may be pageable or pinned; device
/// memory is a CUDA device pointer in the current device's context and is
/// read or written in place.
struct Tensor {
  void *data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  Memory memory = Memory::Host;

  static Tensor host(void *data, DType dtype, std::vector<int64_t> shape) {
    return {data, dtype, std::move(shape), Memory::Host};
  }
  static Tensor device(void *data, DType dtype, std::vector<int64_t> shape) {
    return {data, dtype, std::move(shape), Memory::Device};
  }
};

/// "[2, 3]": shapes as the error messages print them.
std::string shapeText(const std::vector<int64_t> &shape);

//===--- Models and sessions --------------------------------------------===//

class Session;

/// One validated artifact. Kernels load and weights upload once, on the
/// first session; every session shares them.
class Model {
public:
  /// Reads (memory-maps) and validates; touches no GPU.
  static std::shared_ptr<Model> load(const std::string &path);
  /// `name` labels error messages.
  static std::shared_ptr<Model> fromMemory(const std::string &bytes,
                                           const std::string &name = "<memory>");
  ~Model();

  const std::vector<TensorInfo> &inputs() const;
  const std::vector<TensorInfo> &outputs() const;
  /// Kernel launches per run in the plan of the loaded image (before the
  /// first session loads one: the first plan's, its newest image's).
  size_t launchCount() const;
  size_t kernelCount() const;
  /// Device memory the model needs: its weights (once, shared by every
  /// session) and each session's arena of intermediates.
  size_t weightBytes() const;
  size_t arenaBytes() const;
  /// The kernel image chosen for this GPU (e.g. `sm_90a`, or `compute_90`
  /// for PTX); empty until the first session loads it.
  std::string loadedArch() const;
  /// The GPU the model runs on (after the first session).
  std::string deviceName() const;

  struct Impl;
  Impl &impl() const { return *impl_; }

private:
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct SessionOptions {
  /// Capture the launch plan into a CUDA graph on the first run and replay
  /// it after. Rebinding device I/O to new addresses re-captures.
  bool cudaGraph = true;
  /// Time every kernel and copy with CUDA events (plain launches, no graph).
  bool profile = false;
  /// The CUDA device (ordinal) to run on. A model's weights live on the
  /// device of its first session; every later session must name the same
  /// device (load the model again for another one).
  int device = 0;
  /// A CUstream the caller owns (not the legacy default stream, which
  /// cannot be captured into a graph): the session's copies and kernels go
  /// on it, in order with the caller's own work. Null: the session makes a
  /// stream of its own.
  void *stream = nullptr;
};

/// One row of the profiler's table.
struct KernelProfile {
  std::string name;
  std::string kind; // fusion kind, or `copy` for host transfers
  size_t calls = 0;
  double totalMs = 0, meanMs = 0, percentOfRun = 0;
};

/// One launch of the plan timed alone (Session::timeEachLaunch).
struct LaunchTime {
  size_t launch = 0; // its place in the plan
  std::string kernel, kind;
  double meanMs = 0; // device time per launch, back to back
};

/// One profiled operation; start times of all sessions of a model share
/// one origin.
struct TraceEvent {
  std::string name, kind;
  int session = 0, run = 0;
  double startMs = 0, durationMs = 0;
};

class Session {
public:
  explicit Session(std::shared_ptr<Model> model, SessionOptions options = {});
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  /// Runs the model once and returns when the outputs are in place. Host
  /// inputs go through this session's pinned staging with asynchronous
  /// copies on its stream; device inputs and outputs are used in place.
  /// Counts, dtypes and shapes are checked against the model first.
  void run(const std::vector<Tensor> &inputs, const std::vector<Tensor> &outputs);

  /// Device milliseconds per repetition of the launch plan alone (the I/O
  /// of the last run stays bound), as plain launches or as graph replays.
  float timeLaunches(int repetitions, bool graph);

  /// Each launch of the plan timed alone, the way a vendor library's kernel
  /// is: `repetitions` launches of it back to back, replayed from one CUDA
  /// graph between two events, after one replay that warms the caches. In
  /// the model a kernel also pays for the launch before it (no programmatic
  /// overlap here) and finds cold what its predecessor did not leave in the
  /// cache; this is the kernel's own time. The I/O of the last run stays
  /// bound; intermediates are overwritten with what their launches compute
  /// again (an in-place launch compounds: do not read outputs afterwards).
  std::vector<LaunchTime> timeEachLaunch(int repetitions);

  /// Profiler (SessionOptions::profile): kernels sorted by total time.
  std::vector<KernelProfile> profile() const;
  /// The same as a printable table.
  std::string profileTable() const;
  /// Every profiled operation, in order.
  std::vector<TraceEvent> trace() const;
  /// Chrome trace JSON (chrome://tracing, Perfetto) of every profiled run;
  /// sessions of one model share a time base, so their traces merge.
  std::string chromeTrace() const;
  void resetProfile();

  /// Issues one run on the session's stream and returns without waiting:
  /// every input and output must be a device tensor (host outputs need
  /// run(), which waits to copy them out). The outputs are ready once the
  /// stream reaches this point: synchronize it, or record an event on it.
  /// Not with SessionOptions::profile, whose timings need run().
  void enqueue(const std::vector<Tensor> &inputs, const std::vector<Tensor> &outputs);

  /// The CUDA stream (a CUstream) the session runs on.
  void *stream() const;

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

/// Merges Chrome traces of several sessions into one JSON document.
std::string mergeChromeTraces(const std::vector<std::string> &traces);

} // namespace kiln

#endif // KILN_KILN_H
