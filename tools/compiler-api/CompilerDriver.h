//===- CompilerDriver.h - TorchScript to optimized kiln IR, as steps -*- C++ -*-===//
//
// The steps kiln-compile and the load-time API (kiln::compileModel)
// share: load and specialize a TorchScript archive, import it, run the graph
// pipeline, write the artifact. Each returns false with one message naming
// the cause; MLIR diagnostics go to the context's handler.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_H
#define KILN_COMPILER_DRIVER_H

#include "TorchScriptModule.h"

#include "kiln/codegen/ArtifactWriter.h"
#include "kiln/compile_report.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"

#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "kiln/Passes/KernelSelection.h"
#include "kiln/Target/Target.h"

#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::driver {

/// The model file's size and checksum64 (64 bits of hex in the metadata).
struct ModelFingerprint {
  bool read = false;
  uint64_t bytes = 0, checksum = 0;
};
/// Reads `path` whole for its fingerprint (nothing when it cannot).
ModelFingerprint fingerprintModel(const std::string &path);

struct Compilation {
  std::unique_ptr<frontend::TorchScriptModule> model;
  std::vector<frontend::InputSpec> specs;
  /// As imported; after the graph pipeline; lowered to kernels and launches.
  mlir::OwningOpRef<mlir::ModuleOp> imported, optimized, lowered;
  /// The model file's fingerprint, computed on a thread of its own from the
  /// start of the import: a model can be gigabytes (GPT-2's 500 MB took
  /// about half a second on a 2-core machine, on the critical path).
  std::shared_future<ModelFingerprint> fingerprint;
  /// importModel's steps and their seconds, in order: reading and freezing
  /// the archive, learning the shapes, the import into kiln IR.
  std::vector<std::pair<std::string, double>> importSteps;
};

/// Loads `path`, specializes it to `inputSpecs` (NAME:SHAPE:DTYPE; empty: a
/// traced archive's recorded inputs) and imports it.
bool importModel(const std::string &path, const std::vector<std::string> &inputSpecs,
                 mlir::MLIRContext &context, Compilation &compilation, std::string &error);

/// What kernel selection is told: the artifact's architectures (`native`:
/// this machine's GPU) and the split-K policy's knobs.
struct KernelSelection {
  std::vector<std::string> archs; // empty: sm_90a, sm_80
  int64_t multiprocessors = 0;    // 0: the architecture's (native: the GPU's)
  int64_t splitKMaxBlocks = 0, splitKMinK = kSplitKMinK, splitKTile = kSplitKTile,
          splitKStages = kSplitKStages;
  bool convWgmma = true; // conv_wgmma where it applies
  int64_t gemmNarrowFmas = 256; // gemm_narrow up to this many FMAs a row (K x N)
  int64_t gemmGemvRows = 8; // GEMMs of at most this many rows as gemm_gemv
  int64_t gemmStreamIntensity = 32; // gemm_stream up to this K N / (K + N)
  int64_t gemmStreamBlocks = 2;      // gemm_stream's blocks a multiprocessor
  int64_t depthwiseColumns = 1; // output columns a vectorized depthwise thread takes
  bool depthwisePatches = false; // one column a thread over 2-D patches in shared memory
  bool runtimeSizes = false; // Hopper GEMMs take M, N and K at launch where they can
  bool wgmmaMatmul = true;   // matmul and bmm on the Hopper GEMM
  int64_t elementwiseUnroll = 1; // elements an elementwise thread takes a step
  bool poolVector = true;  // pooling eight channels a thread where it applies
  bool convGlobalPool = false; // a global average pool in its 1x1 convolution's epilogue
  std::string wgmmaSchedule = "auto"; // auto, cooperative or pingpong
  int64_t wgmmaMulticast = 0;         // 0: the cost model's, else 1 or 2
  int64_t wgmmaBlocksPerSM = 0;       // 0: the cost model's, else 1 or 2
  int64_t wgmmaRows = 0;              // 0: the cost model's, else 128 or 192
  int64_t attentionRows = 0;          // 0: the cost model's, else 64 or 128
  bool wgmmaStreamK = false;           // stream-K in the Hopper GEMM's last waves
  bool wgmmaResidualPrefetch = false;  // residual slices a tile ahead (ping-pong 64 wide)
  bool wgmmaResidualRing = true;       // a residual through the ring, a stage deeper
  bool wgmmaSplitK = false;            // pairs of blocks split K under half a wave
  bool wgmmaFewRows = true;            // 1-3 row tiles on the Hopper GEMM, not gemm_split_k
  int64_t wgmmaFewRowsTiles = 0;       // its fewest 128 x 64 tiles: 0, a quarter of the SMs
  bool wgmmaSwap = false;              // the rest as gemm_wgmma_swap, not gemm_split_k
  bool wgmmaSwapWide = true;           // wide swapped tiles, not K split over mma.sync
  bool wgmmaMulticastA = false;
  bool wgmmaNarrow = false; // the Hopper GEMM's 128 x 56 tiles where they fill a wave better        // Hopper GEMM pairs along N sharing the A tile
  int64_t wgmmaCandidate = -1;         // -1: the cost model's tile; N: its N-th considered
  int64_t attentionBlocksPerSM = 0;    // Hopper attention: 0 (the kernel's) or 4
  std::string kernelTuning;            // a tuning file's measured kernels (empty: none)
  bool attentionWgmma = true;          // attention on Hopper's TMA and wgmma
  bool attentionOverlap = true;        // its softmax overlapped with P V
  bool attentionPersistent = true;     // its blocks walking query blocks of heads
  int64_t attentionStages = 0;         // its K/V ring: 0 (2), 2, or 3 at head size 64
  int64_t foldLayerNormBytes = kFoldLayerNormBytes; // layer norms this large into their linear
  int64_t mergeShortcutBytes = kMergeShortcutBytes; // projection shortcuts this large merged
};

/// The images `selection` names, `native` resolved through the CUDA driver
/// (a clear error where there is no GPU).
std::optional<TargetDescription> describeTargets(const KernelSelection &selection,
                                                 std::string &error);

/// The compute precision and the type of the floating-point inputs and
/// outputs: `declared` (the model's) or the compute type (f16 with fp16,
/// bf16 with bf16: no cast kernels at the ends).
struct Precision {
  kiln::Precision compute = kiln::Precision::fp32;
  std::string io = "declared";
};
/// Reads `--precision` and `--io-dtype` as given; on a bad name or pair,
/// nothing, with `error` naming it.
std::optional<Precision> parsePrecision(const std::string &compute, const std::string &io,
                                        std::string &error);

/// Runs the graph pipeline at `precision` on a copy of the imported IR,
/// selecting kernels for `targets`. `configure` may add options to the pass
/// manager (kiln-compile's flags).
bool optimize(Compilation &compilation, const Precision &precision,
              const TargetDescription &targets, const KernelSelection &selection,
              std::string &error,
              const std::function<bool(mlir::PassManager &)> &configure = {});

/// What the artifact records of how it was made, for kiln-info: kiln's
/// version, the model file's name, size and checksum64, the inputs it
/// was specialized to, the precision, the images and the selection knobs
/// that differ from their defaults.
codegen::ArtifactMetadata artifactMetadata(const std::string &modelPath,
                                           const Compilation &compilation,
                                           const Precision &precision,
                                           const std::vector<std::string> &archs,
                                           const KernelSelection &selection);

/// Lowers a copy of the optimized IR to kernels and launches for `archs`
/// (kiln-lower-launches): the stage the artifact is written from.
bool lowerLaunches(Compilation &compilation, const std::vector<std::string> &archs,
                   std::string &error);

/// The artifact of the lowered IR (lowered first when it is not), with
/// cubins for `archs`; its weights are views of the compilation's
/// constants, so it is written while `compilation` lives. `compileJobs`:
/// NVRTC compiles at once (0: one per core).
std::optional<codegen::ArtifactImage> writeArtifact(Compilation &compilation,
                                         const std::vector<std::string> &archs,
                                         codegen::ArtifactStats &stats, std::string &error,
                                         const codegen::ArtifactMetadata &metadata = {},
                                         unsigned compileJobs = 0,
                                         const std::string &kernelLibrary = {});

/// A kernel library folder the caller named: empty (the default places), or
/// a folder that exists. Otherwise false with `error` naming it.
bool checkKernelLibrary(const std::string &folder, std::string &error);

/// All of it, with MLIR's error diagnostics appended to `error` rather than
/// printed: what kiln::compileModel (kiln/compile.h) runs.
/// (Plain strings: CompileApi.cpp, built apart, declares it again.)
/// `report`, when given, learns what happened to the kernel images.
bool compileToArtifact(const std::string &path, const std::vector<std::string> &inputs,
                       const std::string &precision, const std::string &ioDtype,
                       const std::vector<std::string> &archs, bool runtimeSizes,
                       const std::string &kernelLibrary, const std::string &kernelTuning,
                       std::string &bytes, std::string &error, CompileReport *report);

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_H
