//===- CompileJobs.h - many NVRTC compiles at once --------------*- C++ -*-===//
//
// NVRTC runs one compile at a time per process: on the GPU machine (16
// cores), 16 threads took 6.8 s for ResNet-50's 114 kernel images and 16
// processes 1.1 s (2026-12-02). So the jobs run in worker processes forked
// from this one, each taking the next job from a shared counter and sending
// its result back through a pipe. Where fork is unavailable or a worker
// dies, the jobs left run here, in threads.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_COMPILEJOBS_H
#define KILN_CODEGEN_COMPILEJOBS_H

#include "kiln/codegen/Nvrtc.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::codegen {

struct CompileJobResult {
  std::optional<NvrtcOutput> output;
  /// Why `output` is empty.
  std::string error;
  /// CPU seconds of the thread or process that ran the job.
  double cpuSeconds = 0;
};

/// The cores this process may run on: the CPUs of its affinity mask,
/// fewer where a cgroup CPU quota allows less (v2: `cpu.max` of the
/// process's cgroup under `cgroupRoot`; v1: `cpu/cpu.cfs_quota_us`). std::thread::hardware_concurrency()
/// counts the host's CPUs: in a container given 16 of 96, 96 workers would
/// share 16 cores.
unsigned usableCores(const std::string &cgroupRoot = "/sys/fs/cgroup");

/// Runs `job(i, error)` for every i in [0, count). In worker processes (at
/// most `workers`, 0: one per core) when there are two or more jobs and
/// `useProcesses`, so the job must touch nothing but its inputs, NVRTC and
/// the kernel cache: its memory writes stay in the worker. Results are in
/// job order.
std::vector<CompileJobResult>
runCompileJobs(size_t count,
               const std::function<std::optional<NvrtcOutput>(size_t, std::string &)> &job,
               unsigned workers = 0, bool useProcesses = true);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_COMPILEJOBS_H
