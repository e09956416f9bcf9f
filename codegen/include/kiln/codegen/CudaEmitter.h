//===- CudaEmitter.h - kiln.fusion groups -> CUDA C++ kernels ---*- C++ -*-===//
//
// One public entry: emitKernel turns a fusion group into the source of one
// CUDA kernel plus its launch configuration. Shapes are static, so sizes,
// strides and the grid are constants of the kernel.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDAEMITTER_H
#define KILN_CODEGEN_CUDAEMITTER_H

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Target/Target.h"
#include "kiln/codegen/Nvrtc.h"

#include "mlir/Support/LLVM.h"

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::codegen {

/// A TMA tensor map the runtime encodes for a group input seen as a packed
/// tensor of `dims` (innermost first, 2 to 5 of them), loaded in boxes of
/// `box` elements traversed with `elementStrides` (empty: all 1), 128-byte
/// swizzle; it is passed by value before the pointer parameters.
struct TensorMapArg {
  unsigned input = 0;
  std::vector<int64_t> dims;
  std::vector<unsigned> box, elementStrides;

  /// A row-major [rows, cols] matrix in boxes of boxRows x boxCols.
  static TensorMapArg matrix(unsigned input, int64_t rows, int64_t cols, unsigned boxRows,
                             unsigned boxCols) {
    return {input, {cols, rows}, {boxCols, boxRows}, {1, 1}};
  }
};

struct EmittedKernel {
  std::string name;
  /// The fusion kind it implements (`elementwise`, `gemm_epilogue`, ...): the
  /// spelling of FusionKind, recorded per kernel in the artifact.
  std::string kind;
  std::string source;
  unsigned grid[3] = {1, 1, 1};
  unsigned block = 256;
  unsigned dynamicSharedBytes = 0;
  /// Kernel parameters, in order: the tensor maps, the group's inputs
  /// (`const T *`), its results (`T *`), then, with workspaceBytes, a
  /// `float *workspace`, then one `long long` for each of `scalars`.
  std::vector<TensorMapArg> tensorMaps;
  unsigned numInputs = 0, numOutputs = 0;
  /// The values a kernel that takes its sizes at run time is launched with
  /// (its source names none of them, so groups of one configuration and any
  /// sizes share one kernel).
  std::vector<int64_t> scalars;
  /// Device memory the kernel keeps between launches (stream-K's flags and
  /// partial tiles): zero when a session starts, and left as the kernel
  /// found it. kiln-lower-launches reserves it past the arena.
  uint64_t workspaceBytes = 0;
  /// Its leading bytes that hold state (the flags): the rest is scratch,
  /// written before it is read within a launch.
  uint64_t workspaceStateBytes = 0;
  /// Blocks of the thread-block cluster the kernel declares for its wgmma
  /// image (split-K: the blocks that share one output); 1: none.
  unsigned clusterBlocks = 1;
  /// Where the dynamic shared memory feeds a TMA + wgmma pipeline that only
  /// the wgmma image runs: what the same source's path in the other images
  /// takes (the Hopper GEMM's and convolution's mma.sync loops: 0, static
  /// shared memory alone; attention_wgmma's flash_attention: its own).
  std::optional<unsigned> otherImagesSharedBytes;
  /// Likewise the block the other images launch, where the wgmma image's
  /// has more warpgroups than their path uses (the epilogue warpgroups'
  /// GEMM: 640 threads there, 384 elsewhere).
  std::optional<unsigned> otherImagesBlock;
  /// Likewise the grid, where the wgmma image's path walks its work
  /// persistently (attention_wgmma) and the others' take a block an item.
  std::optional<std::array<unsigned, 3>> otherImagesGrid;
};

/// How `kernel` is launched in `image`: the image's code decides its dynamic
/// shared memory and cluster (see EmittedKernel).
struct ImageLaunch {
  unsigned grid[3] = {1, 1, 1};
  unsigned block = 1, dynamicSharedBytes = 0;
  unsigned clusterBlocks = 1;
};
ImageLaunch launchInImage(const EmittedKernel &kernel, const TargetImage &image);

/// Emits the kernel for `group`, named `name`. On an unsupported group emits
/// an error at the group (naming what is missing) and fails.
mlir::FailureOr<EmittedKernel> emitKernel(FusionOp group, llvm::StringRef name);
/// The symbol kiln-lower-launches gives the kernel of `source` (emitted
/// with any name: the hash of the source, so identical groups share it).
std::string kernelSymbol(llvm::StringRef source);

/// Every kernel of `module`, in program order: one per fusion group, named
/// `<function>_k<index>`. Fails (with an error at the op) on a group without
/// an emitter or a kernel op left outside any group.
mlir::FailureOr<std::vector<EmittedKernel>> emitModuleKernels(mlir::ModuleOp module);

/// The kernel cache's (and library's) key of `kernel` compiled for `arch`.
std::string kernelCacheKey(const EmittedKernel &kernel, const std::string &arch);

/// Compiles `kernel` for `arch` with NVRTC and checks ptxas' report: a kernel
/// that spills registers or uses a stack frame is rejected. Returns the
/// cubin and PTX, or nothing with `error` set. Before NVRTC, the kernel
/// cache and then the kernel library (`kernelLibrary`, else where
/// KernelCache::library looks) are asked for it.
std::optional<NvrtcOutput> compileKernel(const EmittedKernel &kernel,
                                         const std::string &arch,
                                         std::string &error,
                                         const std::string &kernelLibrary = {});

/// The device headers every kernel includes (`kiln_common.cuh`, ...), as
/// (include name, contents) pairs for NVRTC.
const std::vector<std::pair<std::string, std::string>> &deviceHeaders();

} // namespace kiln::codegen

#endif // KILN_CODEGEN_CUDAEMITTER_H
