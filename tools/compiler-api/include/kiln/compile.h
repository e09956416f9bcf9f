//===- compile.h - compiling a model at load time --------------*- C++ -*-===//
//
// The compiler as a library, for programs that compile when they start:
//
//   std::string artifact = kiln::compileModel("model.pt2", {});
//   auto model = kiln::Model::fromMemory(artifact);   // kiln/kiln.h
//
// Beside the runtime's kiln/kiln.h, which needs only the CUDA driver: this
// header's function needs the whole compiler (link `kiln_compiler_api`,
// which brings MLIR, LibTorch and NVRTC; not in the runtime-only build).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILE_H
#define KILN_COMPILE_H

#include "kiln/compile_report.h"
#include "kiln/kiln.h"

#include <string>
#include <vector>

namespace kiln {

struct CompileOptions {
  /// `NAME:SHAPE:DTYPE` per input (e.g. `x:64x1024:f16`); empty: the shapes
  /// a torch.export archive was exported with, or a traced archive recorded.
  std::vector<std::string> inputs;
  /// fp32, tf32, fp16 or bf16.
  std::string precision = "fp32";
  /// The floating-point inputs' and outputs' type: "declared" (the model's)
  /// or "f16" / "bf16" with precision fp16 / bf16, so the caller passes and
  /// gets the compute type and no cast runs at either end.
  std::string ioDtype = "declared";
  /// Cubins per target, newest first (`native`: this machine's GPU); kernels
  /// are selected for the first; PTX of the last rides along for newer GPUs.
  std::vector<std::string> archs = {"sm_90a", "sm_80"};
  /// Kernels that take their sizes at launch where the selection allows
  /// (kiln-compile --runtime-sizes): one kernel serves every layer of its
  /// configuration, and it can come from the kernel library.
  bool runtimeSizes = false;
  /// The kernel library's folder (kiln-kernel-library's output), read for
  /// kernels with runtime sizes after the kernel cache; empty:
  /// $KILN_KERNEL_LIBRARY, else share/kiln/kernels beside the running
  /// program's folder. A folder named here must exist.
  std::string kernelLibrary;
  /// A tuning file (bench/tune_layers.py's, kiln-compile --kernel-tuning):
  /// the layers it holds take the kernels it measured fastest; empty: the
  /// selection's cost model everywhere. A file that cannot be read, or was
  /// measured on another architecture or multiprocessor count, is an error.
  std::string kernelTuning;
};

/// Compiles a torch.export archive (`.pt2`, from torch.export.save) or a
/// TorchScript archive (`.pt`, from torch.jit.save) to `.kiln` bytes in
/// memory; the format is read from the file. Throws kiln::Error with every
/// diagnostic.
std::string compileModel(const std::string &path, const CompileOptions &options = {});
/// compileModel, and what it did with the kernel images into `report`.
std::string compileModel(const std::string &path, const CompileOptions &options,
                         CompileReport &report);

/// compileModel under the name it had before `.pt2` archives were read.
inline std::string compileTorchScript(const std::string &path,
                                      const CompileOptions &options = {}) {
  return compileModel(path, options);
}

} // namespace kiln

#endif // KILN_COMPILE_H
