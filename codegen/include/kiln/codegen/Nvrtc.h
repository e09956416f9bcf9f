//===- Nvrtc.h - compile CUDA C++ to cubin and PTX with NVRTC ---*- C++ -*-===//
//
// The one place kiln calls NVRTC. Needs no GPU: CI compiles every generated
// kernel with it. A failed compile returns the NVRTC log together with the
// numbered source, since generated code has no file a user could open.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_NVRTC_H
#define KILN_CODEGEN_NVRTC_H

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::codegen {

struct NvrtcOptions {
  /// A real architecture (`sm_90a`, `sm_80`): NVRTC makes a cubin only for
  /// those; PTX comes with it for forward compatibility.
  std::string arch = "sm_90a";
  /// Include folders beyond the toolkit's include/ and include/cccl.
  std::vector<std::string> includeDirs;
  std::vector<std::string> extraOptions;
  /// Headers given to NVRTC from memory: (include name, contents).
  std::vector<std::pair<std::string, std::string>> headers;
};

struct NvrtcOutput {
  std::string cubin;
  std::string ptx;
  /// The compiler's log (warnings, ptxas -v when asked) of a successful build.
  std::string log;
  /// Read from the kernel cache rather than compiled.
  bool fromCache = false;
  /// Read from the kernel library built with kiln (KernelCache::library).
  bool fromLibrary = false;
};

/// Compiles `source` (named `name` in diagnostics). On failure returns nothing
/// and sets `error` to the log and the numbered source.
std::optional<NvrtcOutput> compileWithNvrtc(std::string_view source,
                                            std::string_view name,
                                            const NvrtcOptions &options,
                                            std::string &error);

/// Whether NVRTC can make a cubin for `arch` (`sm_<NN>`, or `sm_<NN>a` from
/// sm_90 on). If not, sets `error` to one line naming `arch` and every
/// architecture this NVRTC accepts, so a typo fails before any work.
bool checkArch(const std::string &arch, std::string &error);

/// Held by compileWithNvrtc around each compile: NVRTC runs one compile at
/// a time per process anyway, and runCompileJobs forks its workers under it.
std::mutex &nvrtcCompileMutex();

/// `major.minor` of the NVRTC library in use (part of every cache key).
std::string nvrtcVersion();

/// The CUDA toolkit root whose headers kernels are compiled against.
std::string cudaToolkitRoot();

/// Why ptxas' report `log` (ptxas -v and its warnings) rejects kernel `name`
/// for `arch`: a stack frame or spills (it would run from local memory), or
/// a performance warning (C75xx: wgmmas serialized, ...). One line naming
/// the cause, then the report's lines that say it, indented; empty where
/// the kernel is accepted.
std::string ptxasRejection(const std::string &name, const std::string &arch,
                           const std::string &log);
/// Whether `error` is a ptxasRejection (the kernel compiled and kiln
/// refused ptxas' report), which another configuration may avoid, rather
/// than a failure to compile at all.
bool isPtxasRejection(const std::string &error);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_NVRTC_H
