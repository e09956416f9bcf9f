//===- ArtifactWriter.h - launches -> a .kiln artifact ----------*- C++ -*-===//
//
// Serializes a function lowered by kiln-lower-launches (launches with their
// memory plan, constants, reshapes) into the format of runtime/include/kiln/
// runtime/ArtifactFormat.h: its signature, every kernel the launches name,
// compiled for each image that launches it plus PTX, the weights, and one
// launch plan per image.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_ARTIFACTWRITER_H
#define KILN_CODEGEN_ARTIFACTWRITER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::codegen {

struct ArtifactStats {
  size_t launches = 0, distinctKernels = 0, weightBytes = 0;
  /// Kernel images (one per kernel and architecture) read from the kernel
  /// cache and compiled with NVRTC, and the seconds spent on them.
  size_t cachedImages = 0, libraryImages = 0, compiledImages = 0;
  double kernelSeconds = 0;
  /// Each image NVRTC compiled (cache hits left out), slowest first: kernel
  /// name, kind, architecture and the compiling thread's CPU seconds.
  /// Compiles run concurrently: their sum over the cores is the phase's
  /// floor, and the first bounds it however many cores there are.
  struct ImageTime {
    std::string kernel, kind, arch;
    double seconds = 0;
  };
  std::vector<ImageTime> imageTimes;
  /// The kernel each launch runs, in launch order (the fusion groups'
  /// order): the names `kiln-run --profile` reports.
  std::vector<std::string> launchKernels;
  /// Where the artifact failed on a kernel whose ptxas report kiln refused
  /// (a spill, a performance warning): its symbol and image; empty
  /// otherwise. The compiler driver retries its groups with a safer
  /// configuration.
  std::string rejectedKernel, rejectedArch;
  /// What the compiler driver retried, a line each, for the tools to print.
  std::vector<std::string> notes;
};

/// Key/value text the artifact carries for people and tools (kiln-info):
/// the writer drops characters a key may not hold and replaces a value's
/// unprintable bytes with '?', so the file always passes the reader.
using ArtifactMetadata = std::vector<std::pair<std::string, std::string>>;

/// An artifact ready to be written: everything before the weights section
/// (header, section table, the other sections, padding) in `head`, then the
/// weights section as pieces at their offsets in it, zeros between them.
/// The pieces are views of the constants' data (kept alive by the module
/// they came from) or of `owned`, so a model's weights are copied once, into
/// the file, as it is written.
struct ArtifactImage {
  std::string head;
  struct Piece {
    uint64_t offset;
    llvm::ArrayRef<char> bytes;
  };
  std::vector<Piece> weights;
  uint64_t weightBytes = 0;
  std::deque<std::string> owned;

  uint64_t size() const { return head.size() + weightBytes; }
  /// Calls `consume` on the weights section's bytes in order: the pieces
  /// and the zeros between them.
  void forEachWeightRun(llvm::function_ref<void(const char *, size_t)> consume) const;
  /// Writes the whole file to `os`.
  void writeTo(llvm::raw_ostream &os) const;
  /// The whole file in memory.
  std::string bytes() const;
};

/// The artifact, or nothing after emitting an error at the op that
/// cannot be serialized (or setting `error` for a kernel that fails to
/// compile). `archs` are real targets (`sm_90a`, `sm_80`), each launch has a
/// configuration for each; PTX for the oldest of them is added for forward
/// compatibility. `compileJobs`: NVRTC compiles at once, each in a worker
/// process (0: one per core). `kernelLibrary`: the kernel library's folder
/// (empty: KernelCache::library's default).
std::optional<ArtifactImage> writeArtifact(mlir::func::FuncOp function,
                                         const std::vector<std::string> &archs,
                                         ArtifactStats &stats, std::string &error,
                                         const ArtifactMetadata &metadata = {},
                                         unsigned compileJobs = 0,
                                         const std::string &kernelLibrary = {});

} // namespace kiln::codegen

#endif // KILN_CODEGEN_ARTIFACTWRITER_H
