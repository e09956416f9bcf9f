//===- CompilerDriver.cpp - TorchScript to a .kiln artifact ---------------===//

#include "CompilerDriver.h"
#include "NativeDevice.h"
#include "kiln/GitHash.h"

#include <chrono>

#include <system_error>
#include "TorchScriptImporter.h"

#include "kiln/Dialect/Kiln/KernelShapes.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Passes/KernelFallback.h"
#include "kiln/Passes/Pipelines.h"
#include "kiln/codegen/CudaEmitter.h"
#include "kiln/codegen/Passes.h"
#include "kiln/codegen/ArtifactWriter.h"
#include "kiln/codegen/Nvrtc.h"
#include "kiln/runtime/ArtifactFormat.h"
#include "kiln/runtime/Device.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <fstream>

using namespace kiln;

driver::ModelFingerprint driver::fingerprintModel(const std::string &path) {
  ModelFingerprint fingerprint;
  // Over a mapping of the file: the byte-at-a-time FNV-1a it replaced took
  // longer than the import.
  if (auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false)) {
    const llvm::StringRef bytes = (*file)->getBuffer();
    fingerprint.read = true;
    fingerprint.bytes = bytes.size();
    fingerprint.checksum = artifact::checksum64(
        reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size());
  }
  return fingerprint;
}

bool driver::importModel(const std::string &path, const std::vector<std::string> &inputSpecs,
                         mlir::MLIRContext &context, Compilation &c, std::string &error) {
  try {
    c.fingerprint = std::async(std::launch::async, fingerprintModel, path).share();
  } catch (const std::system_error &) {
    // No thread to spare: artifactMetadata computes it when it needs it.
  }
  c.importSteps.clear();
  auto stepStart = std::chrono::steady_clock::now();
  auto step = [&](const char *what) {
    auto now = std::chrono::steady_clock::now();
    c.importSteps.emplace_back(what, std::chrono::duration<double>(now - stepStart).count());
    stepStart = now;
  };
  c.model = frontend::TorchScriptModule::load(path, error);
  if (!c.model)
    return false;
  step("read and freeze");
  c.specs.clear();
  for (const std::string &text : inputSpecs) {
    frontend::InputSpec spec;
    if (!frontend::parseInputSpec(text, spec, error))
      return false;
    c.specs.push_back(spec);
  }
  if (c.specs.empty())
    c.specs = c.model->tracedInputs();
  if (c.specs.empty() && !c.model->inputNames().empty()) {
    std::string names;
    for (const std::string &name : c.model->inputNames())
      names += (names.empty() ? "" : ", ") + name;
    error = "'" + path + "' records no example inputs; declare each input (" + names +
            ") with --input NAME:SHAPE:DTYPE";
    return false;
  }
  if (!c.model->specialize(c.specs, error))
    return false;
  step("learn shapes");
  c.imported = frontend::importTorchScript(*c.model, context, error);
  step("import into kiln IR");
  return static_cast<bool>(c.imported);
}

std::optional<TargetDescription> driver::describeTargets(const KernelSelection &selection,
                                                         std::string &error) {
  auto native = [](std::string &why) -> std::optional<TargetImage> {
    std::string unavailable;
    std::optional<rt::DeviceInfo> device = queryNativeDevice(unavailable);
    if (!device) {
      why = "native needs a GPU on this machine: " + unavailable;
      return std::nullopt;
    }
    std::optional<TargetImage> image = describeArch(device->nvrtcArch(), why);
    if (!image) {
      why = "native: " + device->name + " is " + device->nvrtcArch() +
            ", which kiln has no kernels for";
      return std::nullopt;
    }
    image->multiprocessors = device->multiprocessors;
    return image;
  };
  // The split-K knobs are checked here too, so that a bad one fails before
  // the model is loaded rather than in the pipeline.
  error = splitKKnobsError(selection.splitKMaxBlocks, selection.splitKMinK, selection.splitKTile,
                           selection.splitKStages, selection.multiprocessors);
  if (error.empty())
    error = wgmmaKnobsError(selection.wgmmaSchedule, selection.wgmmaMulticast,
                            selection.wgmmaBlocksPerSM, selection.wgmmaRows);
  if (error.empty())
    error = attentionKnobsError(selection.attentionRows, selection.attentionStages,
                                selection.attentionBlocksPerSM);
  if (error.empty())
    error = gemvKnobsError(selection.gemmGemvRows);
  if (error.empty())
    error = fewRowsKnobsError(selection.wgmmaFewRowsTiles);
  if (error.empty())
    error = depthwiseKnobsError(selection.depthwiseColumns);
  if (error.empty())
    error = narrowKnobsError(selection.gemmNarrowFmas);
  if (error.empty())
    error = streamKnobsError(selection.gemmStreamIntensity, selection.gemmStreamBlocks);
  if (error.empty())
    error = elementwiseKnobsError(selection.elementwiseUnroll);
  if (!error.empty())
    return std::nullopt;
  return kiln::describeTargets(selection.archs, error, native,
                               static_cast<int>(selection.multiprocessors));
}

std::optional<driver::Precision> driver::parsePrecision(const std::string &compute,
                                                        const std::string &io,
                                                        std::string &error) {
  std::optional<kiln::Precision> parsed = symbolizePrecision(compute);
  if (!parsed) {
    error = "unknown precision '" + compute + "' (use fp32, tf32, fp16 or bf16)";
    return std::nullopt;
  }
  if (io != "declared" && io != "f16" && io != "bf16") {
    error = "unknown io-dtype '" + io + "' (use declared, f16 or bf16)";
    return std::nullopt;
  }
  if ((io == "f16" && *parsed != kiln::Precision::fp16) ||
      (io == "bf16" && *parsed != kiln::Precision::bf16)) {
    error = "io-dtype " + io + " needs precision " + (io == "f16" ? "fp16" : "bf16") +
            " (inputs and outputs in the compute type), not " + compute;
    return std::nullopt;
  }
  return Precision{*parsed, io};
}

bool driver::optimize(Compilation &c, const Precision &precision,
                      const TargetDescription &targets, const KernelSelection &selection,
                      std::string &error,
                      const std::function<bool(mlir::PassManager &)> &configure) {
  c.optimized = c.imported->clone();
  mlir::PassManager pm(c.optimized->getContext());
  if (configure && !configure(pm)) {
    error = "bad pass manager options";
    return false;
  }
  GraphPipelineOptions pipeline;
  pipeline.precision = precision.compute;
  pipeline.ioDtype = precision.io;
  std::vector<std::string> archs = targets.archs();
  pipeline.targets = archs;
  // Resolved: `native` has become an architecture and its GPU's count.
  pipeline.multiprocessors = targets.primary().multiprocessors;
  pipeline.splitKMaxBlocks = selection.splitKMaxBlocks;
  pipeline.splitKMinK = selection.splitKMinK;
  pipeline.splitKTile = selection.splitKTile;
  pipeline.splitKStages = selection.splitKStages;
  pipeline.convWgmma = selection.convWgmma;
  pipeline.gemmNarrowFmas = selection.gemmNarrowFmas;
  pipeline.gemmGemvRows = selection.gemmGemvRows;
  pipeline.gemmStreamIntensity = selection.gemmStreamIntensity;
  pipeline.gemmStreamBlocks = selection.gemmStreamBlocks;
  pipeline.depthwiseColumns = selection.depthwiseColumns;
  pipeline.depthwisePatches = selection.depthwisePatches;
  pipeline.runtimeSizes = selection.runtimeSizes;
  pipeline.wgmmaMatmul = selection.wgmmaMatmul;
  pipeline.elementwiseUnroll = selection.elementwiseUnroll;
  pipeline.poolVector = selection.poolVector;
  pipeline.convGlobalPool = selection.convGlobalPool;
  pipeline.wgmmaSchedule = selection.wgmmaSchedule;
  pipeline.wgmmaMulticast = selection.wgmmaMulticast;
  pipeline.wgmmaBlocksPerSM = selection.wgmmaBlocksPerSM;
  pipeline.wgmmaStreamK = selection.wgmmaStreamK;
  pipeline.wgmmaResidualPrefetch = selection.wgmmaResidualPrefetch;
  pipeline.wgmmaResidualRing = selection.wgmmaResidualRing;
  pipeline.wgmmaSplitK = selection.wgmmaSplitK;
  pipeline.wgmmaFewRows = selection.wgmmaFewRows;
  pipeline.wgmmaFewRowsTiles = selection.wgmmaFewRowsTiles;
  pipeline.wgmmaSwap = selection.wgmmaSwap;
  pipeline.wgmmaSwapWide = selection.wgmmaSwapWide;
  pipeline.wgmmaMulticastA = selection.wgmmaMulticastA;
  pipeline.wgmmaNarrow = selection.wgmmaNarrow;
  pipeline.wgmmaCandidate = selection.wgmmaCandidate;
  pipeline.attentionBlocksPerSM = selection.attentionBlocksPerSM;
  pipeline.kernelTuning = selection.kernelTuning;
  pipeline.wgmmaRows = selection.wgmmaRows;
  pipeline.attentionWgmma = selection.attentionWgmma;
  pipeline.attentionOverlap = selection.attentionOverlap;
  pipeline.attentionPersistent = selection.attentionPersistent;
  pipeline.attentionStages = selection.attentionStages;
  pipeline.foldLayerNormBytes = selection.foldLayerNormBytes;
  pipeline.mergeShortcutBytes = selection.mergeShortcutBytes;
  pipeline.attentionRows = selection.attentionRows;
  buildGraphPipeline(pm, pipeline);
  if (mlir::failed(pm.run(*c.optimized))) {
    error = "the graph pipeline failed (see the diagnostics above)";
    return false;
  }
  return true;
}

codegen::ArtifactMetadata driver::artifactMetadata(const std::string &modelPath,
                                                   const Compilation &c,
                                                   const Precision &precision,
                                                   const std::vector<std::string> &archs,
                                                   const KernelSelection &selection) {
  codegen::ArtifactMetadata metadata;
  std::string version = KILN_VERSION;
  if (!std::string(KILN_GIT_HASH).empty())
    version += std::string(" (") + KILN_GIT_HASH + ")";
  metadata.emplace_back("kiln.version", version);
  metadata.emplace_back("source.name", llvm::sys::path::filename(modelPath).str());
  // Joined here, before the kernels compile in forked processes.
  ModelFingerprint fingerprint =
      c.fingerprint.valid() ? c.fingerprint.get() : fingerprintModel(modelPath);
  if (fingerprint.read) {
    metadata.emplace_back("source.bytes", std::to_string(fingerprint.bytes));
    metadata.emplace_back("source.checksum64",
                          llvm::utohexstr(fingerprint.checksum, /*LowerCase=*/true, 16));
  }
  std::string inputs;
  for (const frontend::InputSpec &spec : c.specs) {
    std::string dims;
    for (int64_t d : spec.shape)
      dims += (dims.empty() ? "" : "x") + std::to_string(d);
    inputs += (inputs.empty() ? "" : ", ") + spec.name + ":" + dims + ":" + spec.dtype;
  }
  metadata.emplace_back("inputs", inputs);
  metadata.emplace_back("precision", stringifyPrecision(precision.compute).str());
  if (precision.io != "declared")
    metadata.emplace_back("io-dtype", precision.io);
  std::string images;
  for (const std::string &arch : archs)
    images += (images.empty() ? "" : ",") + arch;
  metadata.emplace_back("archs", images);
  std::string options;
  auto option = [&](const std::string &text) { options += (options.empty() ? "" : " ") + text; };
  KernelSelection defaults;
  if (selection.multiprocessors != defaults.multiprocessors)
    option("--multiprocessors=" + std::to_string(selection.multiprocessors));
  if (selection.splitKMaxBlocks != defaults.splitKMaxBlocks)
    option("--split-k-max-blocks=" + std::to_string(selection.splitKMaxBlocks));
  if (selection.splitKMinK != defaults.splitKMinK)
    option("--split-k-min-k=" + std::to_string(selection.splitKMinK));
  if (selection.splitKTile != defaults.splitKTile)
    option("--split-k-k-tile=" + std::to_string(selection.splitKTile));
  if (selection.splitKStages != defaults.splitKStages)
    option("--split-k-stages=" + std::to_string(selection.splitKStages));
  if (selection.convWgmma != defaults.convWgmma)
    option(std::string("--conv-wgmma=") + (selection.convWgmma ? "true" : "false"));
  if (selection.gemmNarrowFmas != defaults.gemmNarrowFmas)
    option("--gemm-narrow-fmas=" + std::to_string(selection.gemmNarrowFmas));
  if (selection.gemmStreamIntensity != defaults.gemmStreamIntensity)
    option("--gemm-stream-intensity=" + std::to_string(selection.gemmStreamIntensity));
  if (selection.gemmStreamBlocks != defaults.gemmStreamBlocks)
    option("--gemm-stream-blocks=" + std::to_string(selection.gemmStreamBlocks));
  if (selection.gemmGemvRows != defaults.gemmGemvRows)
    option("--gemm-gemv-rows=" + std::to_string(selection.gemmGemvRows));
  if (selection.depthwiseColumns != defaults.depthwiseColumns)
    option("--depthwise-columns=" + std::to_string(selection.depthwiseColumns));
  if (selection.depthwisePatches != defaults.depthwisePatches)
    option(std::string("--depthwise-patches=") + (selection.depthwisePatches ? "true" : "false"));
  if (selection.runtimeSizes != defaults.runtimeSizes)
    option(std::string("--runtime-sizes=") + (selection.runtimeSizes ? "true" : "false"));
  if (selection.wgmmaMatmul != defaults.wgmmaMatmul)
    option(std::string("--wgmma-matmul=") + (selection.wgmmaMatmul ? "true" : "false"));
  if (selection.elementwiseUnroll != defaults.elementwiseUnroll)
    option("--elementwise-unroll=" + std::to_string(selection.elementwiseUnroll));
  if (selection.convGlobalPool != defaults.convGlobalPool)
    option(std::string("--conv-global-pool=") + (selection.convGlobalPool ? "true" : "false"));
  if (selection.poolVector != defaults.poolVector)
    option(std::string("--pool-vector=") + (selection.poolVector ? "true" : "false"));
  if (selection.wgmmaSchedule != defaults.wgmmaSchedule)
    option("--wgmma-schedule=" + selection.wgmmaSchedule);
  if (selection.wgmmaMulticast != defaults.wgmmaMulticast)
    option("--wgmma-multicast=" + std::to_string(selection.wgmmaMulticast));
  if (selection.wgmmaBlocksPerSM != defaults.wgmmaBlocksPerSM)
    option("--wgmma-blocks-per-sm=" + std::to_string(selection.wgmmaBlocksPerSM));
  if (selection.wgmmaRows != defaults.wgmmaRows)
    option("--wgmma-rows=" + std::to_string(selection.wgmmaRows));
  if (selection.wgmmaStreamK != defaults.wgmmaStreamK)
    option(std::string("--wgmma-stream-k=") + (selection.wgmmaStreamK ? "true" : "false"));
  if (selection.wgmmaResidualPrefetch != defaults.wgmmaResidualPrefetch)
    option(std::string("--wgmma-residual-prefetch=") +
           (selection.wgmmaResidualPrefetch ? "true" : "false"));
  if (selection.wgmmaResidualRing != defaults.wgmmaResidualRing)
    option(std::string("--wgmma-residual-ring=") +
           (selection.wgmmaResidualRing ? "true" : "false"));
  if (selection.wgmmaSplitK != defaults.wgmmaSplitK)
    option(std::string("--wgmma-split-k=") + (selection.wgmmaSplitK ? "true" : "false"));
  if (selection.wgmmaFewRows != defaults.wgmmaFewRows)
    option(std::string("--wgmma-few-rows=") + (selection.wgmmaFewRows ? "true" : "false"));
  if (selection.wgmmaFewRowsTiles != defaults.wgmmaFewRowsTiles)
    option("--wgmma-few-rows-tiles=" + std::to_string(selection.wgmmaFewRowsTiles));
  if (selection.wgmmaSwap != defaults.wgmmaSwap)
    option(std::string("--wgmma-swap=") + (selection.wgmmaSwap ? "true" : "false"));
  if (selection.wgmmaSwapWide != defaults.wgmmaSwapWide)
    option(std::string("--wgmma-swap-wide=") + (selection.wgmmaSwapWide ? "true" : "false"));
  if (selection.wgmmaNarrow != defaults.wgmmaNarrow)
    option(std::string("--wgmma-narrow=") + (selection.wgmmaNarrow ? "true" : "false"));
  if (selection.wgmmaMulticastA != defaults.wgmmaMulticastA)
    option(std::string("--wgmma-multicast-a=") + (selection.wgmmaMulticastA ? "true" : "false"));
  if (selection.wgmmaCandidate != defaults.wgmmaCandidate)
    option("--wgmma-candidate=" + std::to_string(selection.wgmmaCandidate));
  if (selection.attentionBlocksPerSM != defaults.attentionBlocksPerSM)
    option("--attention-blocks-per-sm=" + std::to_string(selection.attentionBlocksPerSM));
  if (selection.kernelTuning != defaults.kernelTuning)
    option("--kernel-tuning=" + selection.kernelTuning);
  if (selection.attentionWgmma != defaults.attentionWgmma)
    option(std::string("--attention-wgmma=") + (selection.attentionWgmma ? "true" : "false"));
  if (selection.attentionOverlap != defaults.attentionOverlap)
    option(std::string("--attention-overlap=") + (selection.attentionOverlap ? "true" : "false"));
  if (selection.attentionStages != defaults.attentionStages)
    option("--attention-stages=" + std::to_string(selection.attentionStages));
  if (selection.attentionPersistent != defaults.attentionPersistent)
    option(std::string("--attention-persistent=") +
           (selection.attentionPersistent ? "true" : "false"));
  if (selection.foldLayerNormBytes != defaults.foldLayerNormBytes)
    option("--fold-layer-norm-bytes=" + std::to_string(selection.foldLayerNormBytes));
  if (selection.mergeShortcutBytes != defaults.mergeShortcutBytes)
    option("--merge-shortcut-bytes=" + std::to_string(selection.mergeShortcutBytes));
  if (selection.attentionRows != defaults.attentionRows)
    option("--attention-rows=" + std::to_string(selection.attentionRows));
  metadata.emplace_back("options", options.empty() ? "(defaults)" : options);
  return metadata;
}

bool driver::lowerLaunches(Compilation &c, const std::vector<std::string> &archs,
                           std::string &error) {
  c.lowered = c.optimized->clone();
  mlir::PassManager pm(c.lowered->getContext());
  KilnLowerLaunchesOptions options;
  options.targets.assign(archs.begin(), archs.end());
  pm.addPass(createKilnLowerLaunches(options));
  if (mlir::failed(pm.run(*c.lowered))) {
    error = "code generation failed (see the diagnostics above)";
    return false;
  }
  return true;
}

namespace {
/// Gives the groups whose kernel is `kernel` (a symbol of
/// kiln-lower-launches) the next safer configuration, and says what it
/// gave up in `note`. False where no group has that kernel or nothing
/// safer is left.
bool retryRejectedKernel(mlir::ModuleOp optimized, const std::string &kernel,
                         std::string &note) {
  bool retried = false;
  // Emitting again names each kernel as the lowering did, without
  // compiling anything; a group that does not emit is not the one.
  mlir::ScopedDiagnosticHandler quiet(optimized.getContext(),
                                      [](mlir::Diagnostic &) { return mlir::success(); });
  optimized.walk([&](FusionOp group) {
    auto config = group->getAttrOfType<KernelConfigAttr>(attr::kKernel);
    if (!config)
      return;
    mlir::FailureOr<codegen::EmittedKernel> emitted = codegen::emitKernel(group, "kiln_kernel");
    if (mlir::failed(emitted) || codegen::kernelSymbol(emitted->source) != kernel)
      return;
    std::string why;
    // A pooled GEMM's sums (images a 128-row tile) beside the ring.
    std::optional<GlobalPool> pool = globalPoolOf(group);
    const int64_t poolImages = pool ? poolImagesPerTile(pool->pixels) : 0;
    std::optional<KernelConfigAttr> safer = saferKernelConfig(config, why, poolImages);
    if (!safer)
      return;
    group->setAttr(attr::kKernel, *safer);
    if (!retried)
      note = "kernel " + kernel + " rejected; its groups retried with " + why;
    retried = true;
  });
  return retried;
}
} // namespace

bool driver::checkKernelLibrary(const std::string &folder, std::string &error) {
  if (folder.empty() || llvm::sys::fs::is_directory(folder))
    return true;
  error = "kernel library '" + folder + "': " +
          (llvm::sys::fs::exists(folder) ? "not a folder" : "no such folder") +
          " (kiln-kernel-library -o FOLDER builds one)";
  return false;
}

std::optional<codegen::ArtifactImage> driver::writeArtifact(Compilation &c,
                                                 const std::vector<std::string> &archs,
                                                 codegen::ArtifactStats &stats,
                                                 std::string &error,
                                                 const codegen::ArtifactMetadata &metadata,
                                                 unsigned compileJobs,
                                                 const std::string &kernelLibrary) {
  // A kernel whose ptxas report kiln refuses (a spill, a performance
  // warning) is retried with a safer configuration of its groups, a step at
  // a time, rather than failing the model; the kernels compiled before are
  // cache hits the next time round where a kernel cache is set.
  constexpr int kMostRetries = 4;
  for (int attempt = 0;; ++attempt) {
    if (!c.lowered && !lowerLaunches(c, archs, error))
      return std::nullopt;
    auto functions = c.lowered->getOps<mlir::func::FuncOp>();
    if (functions.empty()) {
      error = "the lowered module has no function";
      return std::nullopt;
    }
    // Each attempt's counts alone (the images of the last one are the
    // artifact's); the notes of the retries before it stay.
    std::vector<std::string> notes = std::move(stats.notes);
    stats = codegen::ArtifactStats{};
    stats.notes = std::move(notes);
    std::string attemptError;
    auto image = codegen::writeArtifact(*functions.begin(), archs, stats, attemptError, metadata,
                                        compileJobs, kernelLibrary);
    if (image)
      return image;
    error = attemptError.empty() ? "cannot write the artifact (see the diagnostics above)"
                                 : attemptError;
    std::string note;
    if (stats.rejectedKernel.empty() || attempt == kMostRetries ||
        !retryRejectedKernel(*c.optimized, stats.rejectedKernel, note))
      return std::nullopt;
    stats.notes.push_back(note + " (" + stats.rejectedArch + ": " +
                          error.substr(0, error.find('\n')) + ")");
    c.lowered = nullptr;
  }
}

bool driver::compileToArtifact(const std::string &path, const std::vector<std::string> &inputs,
                               const std::string &computePrecision,
                               const std::string &ioDtype,
                               const std::vector<std::string> &archs, bool runtimeSizes,
                               const std::string &kernelLibrary,
                               const std::string &kernelTuning, std::string &bytes,
                               std::string &error, CompileReport *report) {
  // Diagnostics become part of the one error the caller gets, instead of
  // going to stderr of a process that may be a server.
  mlir::MLIRContext context;
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error) {
      std::string location;
      llvm::raw_string_ostream os(location);
      diagnostic.getLocation().print(os);
      diagnostics += "\n  " + location + ": " + diagnostic.str();
    }
    return mlir::success();
  });
  Compilation compilation;
  codegen::ArtifactStats stats;
  bool ok = false;
  std::optional<Precision> precision = parsePrecision(computePrecision, ioDtype, error);
  KernelSelection selection;
  selection.archs = archs;
  selection.runtimeSizes = runtimeSizes;
  selection.kernelTuning = kernelTuning;
  std::optional<TargetDescription> targets;
  // An unknown architecture fails before the import, not after it.
  auto archsKnown = [&] {
    for (const std::string &arch : targets->archs())
      if (!codegen::checkArch(arch, error))
        return false;
    return true;
  };
  if (archs.empty())
    error = "no target architectures given";
  else if (checkKernelLibrary(kernelLibrary, error) && precision &&
           (targets = describeTargets(selection, error)) && archsKnown() &&
           importModel(path, inputs, context, compilation, error) &&
           optimize(compilation, *precision, *targets, selection, error)) {
    auto written =
        writeArtifact(compilation, targets->archs(), stats, error,
                      artifactMetadata(path, compilation, *precision, targets->archs(), selection),
                      /*compileJobs=*/0, kernelLibrary);
    if (written) {
      bytes = written->bytes();
      ok = true;
    }
  }
  if (report) {
    report->cachedImages = stats.cachedImages;
    report->libraryImages = stats.libraryImages;
    report->compiledImages = stats.compiledImages;
    report->kernelSeconds = stats.kernelSeconds;
    for (const codegen::ArtifactStats::ImageTime &image : stats.imageTimes)
      report->images.push_back({image.kernel, image.kind, image.arch, image.seconds});
  }
  if (!ok)
    error = "cannot compile '" + path + "': " + error + diagnostics;
  return ok;
}
