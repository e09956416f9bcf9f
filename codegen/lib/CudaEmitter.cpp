//===- CudaEmitter.cpp - kiln.fusion groups -> CUDA C++ kernels -----------===//
//
// One emitter per kernel family, behind emitKernel:
//   elementwise:   one thread per output element (or 2, 4, 8 a step),
//                  grid-stride loop.
//   gemm_epilogue: GemmEmitter.cpp: a main loop for the chosen variant whose
//                  epilogue functor applies bias and the group's elementwise
//                  ops to each accumulator and stores every result once.
//   normalization: NormalizationEmitter.cpp: one warp per row held in
//                  registers (rows of up to 1024), else one block per row
//                  cached in shared memory; statistics reduced in fp32.
//
//===----------------------------------------------------------------------===//

#include "kiln/codegen/CudaEmitter.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Dialect/Kiln/KernelShapes.h"

#include "ElementCode.h"
#include "Emitters.h"

#include "kiln/codegen/KernelCache.h"
#include "kiln/codegen/Nvrtc.h"
#include "kiln/runtime/ArtifactFormat.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdio>
#include <cstdlib>
#include <regex>

#include <algorithm>

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;
using namespace kiln::codegen::detail;

std::string kiln::codegen::detail::kernelOpen(FusionOp group, StringRef name,
                                             unsigned threads, unsigned tensorMaps,
                                             unsigned minBlocks, bool splitCluster,
                                             bool workspace, StringRef threadsText,
                                             ArrayRef<std::string> integers) {
  // A Hopper main loop asks for two blocks a multiprocessor in its sm_90a
  // image only (wgmmaBlocksPreamble): the other images' mma.sync loop
  // needs its registers.
  std::string blocks = minBlocks ? std::to_string(minBlocks) : "";
  if (tensorMaps)
    blocks = minBlocks == 2 ? "KILN_WGMMA_BLOCKS_PER_SM" : "1";
  std::string text = std::string("extern \"C\" __global__ void ") +
                     (splitCluster ? "KILN_SPLIT_CLUSTER " : "") + "__launch_bounds__(" +
                     (threadsText.empty() ? std::to_string(threads) : threadsText.str()) +
                     (blocks.empty() ? "" : ", " + blocks) + ") " +
                     name.str() + "(";
  std::vector<std::string> params;
  for (unsigned i = 0; i < tensorMaps; ++i)
    params.push_back("const __grid_constant__ kiln::sm90::TensorMap map" +
                     std::to_string(i));
  for (auto [index, input] : llvm::enumerate(group.getInputs()))
    params.push_back("const " +
                     cudaType(cast<RankedTensorType>(input.getType()).getElementType()) +
                     " *__restrict__ in" + std::to_string(index));
  for (auto [index, result] : llvm::enumerate(group.getResults()))
    params.push_back(cudaType(cast<RankedTensorType>(result.getType()).getElementType()) +
                     " *__restrict__ out" + std::to_string(index));
  if (workspace)
    params.push_back("float *__restrict__ workspace");
  for (const std::string &integer : integers)
    params.push_back("const long long " + integer);
  for (size_t i = 0; i < params.size(); ++i)
    text += (i ? ", " : "") + params[i];
  // Every kernel opens by waiting for the kernel before it, so that the
  // runtime may launch it as that kernel's programmatic dependent (sm_90,
  // KILN_PDL=1) and overlap its launch with the previous kernel's tail.
  // Every thread waits, not just the first reader: a kernel whose blocks all
  // left without waiting could complete before its predecessor, and its own
  // dependent would then read unfinished results.
  return text + ") {\n  kiln::grid_dependency_sync();\n";
}

EmittedKernel kiln::codegen::detail::kernelFor(FusionOp group, StringRef name, StringRef kind) {
  EmittedKernel kernel;
  kernel.name = name.str();
  kernel.kind = kind.str();
  kernel.numInputs = group.getInputs().size();
  kernel.numOutputs = group.getNumResults();
  return kernel;
}

std::string kiln::codegen::detail::header(FusionOp group, StringRef family,
                                         bool withLocation) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (withLocation) {
    os << "// kiln " << family << " kernel for the group at ";
    group.getLoc().print(os);
  } else {
    os << "// kiln " << family << " kernel, sizes given at launch";
  }
  os << "\n#include \"kiln_common.cuh\"\n";
  return text;
}

YieldOp kiln::codegen::detail::yieldOf(FusionOp group) {
  return cast<YieldOp>(group.getBody().front().getTerminator());
}

int64_t kiln::codegen::detail::elementCount(Type type) {
  return cast<RankedTensorType>(type).getNumElements();
}

llvm::SetVector<Operation *> kiln::codegen::detail::prologueOf(Operation *anchor) {
  Block *body = anchor->getBlock();
  llvm::SetVector<Operation *> prologue;
  SmallVector<Operation *> worklist = {anchor};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        if (producer->getBlock() == body && prologue.insert(producer))
          worklist.push_back(producer);
  }
  return prologue;
}

std::string kiln::codegen::detail::roundedTo(Type element, const std::string &value) {
  return element.isF32() ? value
                         : "kiln::to_float(kiln::from_float<" + cudaType(element) + ">(" +
                               value + "))";
}

namespace {

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

FailureOr<EmittedKernel> emitElementwise(FusionOp group, StringRef name) {
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(group.getResult(0).getType()).getShape();
  for (Value result : group.getResults())
    if (cast<RankedTensorType>(result.getType()).getShape() != shape)
      return group.emitOpError("an elementwise kernel needs every result in "
                               "one shape");
  int64_t total = elementCount(group.getResult(0).getType());
  ElementCode element(group, shape, "idx", "    ");
  for (Operation &op : group.getBody().front().without_terminator())
    if (failed(element.emit(&op)))
      return failure();
  for (auto [index, value] : llvm::enumerate(yieldOf(group).getValues()))
    element.store(index, value);

  // Tile [1, U, 1]: U elements a thread per step of the grid-stride loop, a grid
  // stride apart (coalesced across the warp), all loaded before any is
  // stored. One 2-byte load a thread in flight is far from what keeps the
  // memory busy: small broadcast multiplies ran at 0.5-1 TB/s.
  ArrayRef<int64_t> tile = configOf(group).getTile();
  const int64_t unroll = tile.size() == 3 ? tile[1] : 1;
  if (!tile.empty() && (tile.size() != 3 || tile[0] != 1 || tile[2] != 1 ||
                        (unroll != 2 && unroll != 4 && unroll != 8)))
    return group.emitOpError("cannot run as elementwise: it takes no tile (an element a "
                             "thread a step) or [1, U, 1], U = 2, 4 or 8 elements a thread a "
                             "step");
  EmittedKernel kernel = kernelFor(group, name, "elementwise");
  kernel.block = kThreads;
  kernel.grid[0] = gridStrideBlocks(group, (total + unroll - 1) / unroll, kThreads);
  std::string loop;
  if (unroll == 1) {
    loop = gridStrideLoop("idx", total) + element.code + "  }\n";
  } else {
    const std::string threads = std::to_string(kThreads), count = std::to_string(total) + "LL";
    // Where all U elements are in range the steps have no branch between
    // them, so (the operands being __restrict__) the compiler issues every
    // step's loads before the first store; a bounds test per step would
    // keep each load behind its own branch. The last, partial steps test.
    const std::string step = "(long long)gridDim.x * " + threads, u = std::to_string(unroll);
    loop = "  for (long long first = (long long)blockIdx.x * " + threads +
           " + threadIdx.x; first < " + count + "; first += " + step + " * " + u + ") {\n" +
           "    if (first + (" + u + " - 1) * " + step + " < " + count + ") {\n" +
           "#pragma unroll\n      for (int u = 0; u < " + u + "; ++u) {\n" +
           "    const long long idx = first + u * " + step + ";\n" + element.code +
           "      }\n    } else {\n" +
           "#pragma unroll\n      for (int u = 0; u < " + u + "; ++u) {\n" +
           "    const long long idx = first + u * " + step + ";\n    if (idx < " + count +
           ") {\n" + element.code + "    }\n      }\n    }\n  }\n";
  }
  // Four blocks per multiprocessor at least (64 registers a thread): with
  // no minimum, ptxas has chosen 40 registers and a stack slot for a
  // four-way concat (Swin V2-B) that fits in 23 under this bound.
  kernel.source = header(group, kernel.kind) +
                  kernelOpen(group, name, kThreads, 0, /*minBlocks=*/4) + loop + "}\n";
  return kernel;
}

} // namespace

KernelConfigAttr kiln::codegen::detail::configOf(FusionOp group) {
  return cast<KernelConfigAttr>(group->getAttr(attr::kKernel));
}

std::string kiln::codegen::detail::gridStrideLoop(const std::string &var, int64_t count) {
  const std::string threads = std::to_string(kThreads);
  return "  for (long long " + var + " = (long long)blockIdx.x * " + threads +
         " + threadIdx.x; " + var + " < " + std::to_string(count) + "LL; " + var +
         " += (long long)gridDim.x * " + threads + ") {\n";
}

unsigned kiln::codegen::detail::gridStrideBlocks(FusionOp group, int64_t work,
                                                 int64_t perBlock) {
  int64_t limit = configOf(group).getGridLimit();
  int64_t blocks = std::max<int64_t>((work + perBlock - 1) / perBlock, 1);
  return static_cast<unsigned>(limit > 0 ? std::min(blocks, limit) : blocks);
}

namespace {

FailureOr<EmittedKernel> emitFamily(FusionOp group, StringRef name) {
  switch (group.getKind()) {
  case FusionKind::elementwise:
    return emitElementwise(group, name);
  case FusionKind::gemm_epilogue:
    return emitGemm(group, name);
  case FusionKind::normalization:
    return emitNormalization(group, name);
  case FusionKind::conv_epilogue:
    return emitConv(group, name);
  case FusionKind::pooling:
    return emitPooling(group, name);
  case FusionKind::reduction:
    return emitReduction(group, name);
  case FusionKind::attention:
    return emitAttention(group, name);
  default:
    return group.emitOpError("no kernel emitter for ")
           << stringifyFusionKind(group.getKind()) << " groups yet";
  }
}

} // namespace

namespace {
/// Whether `variant` is a kernel of `kind`'s family (a convolution that is a
/// plain GEMM runs as one).
bool variantOfFamily(FusionKind kind, KernelVariant variant) {
  switch (kind) {
  case FusionKind::elementwise:
    return variant == KernelVariant::elementwise;
  case FusionKind::reduction:
    return variant == KernelVariant::reduction;
  case FusionKind::normalization:
    return variant == KernelVariant::normalization ||
           variant == KernelVariant::normalization_warp;
  case FusionKind::pooling:
    return variant == KernelVariant::pooling;
  case FusionKind::gemm_epilogue:
    return (variant >= KernelVariant::gemm_simt && variant <= KernelVariant::gemm_split_k) ||
           variant == KernelVariant::gemm_tf32 || variant == KernelVariant::gemm_narrow ||
           variant == KernelVariant::gemm_gemv || variant == KernelVariant::gemm_stream ||
           variant == KernelVariant::gemm_wgmma_swap;
  case FusionKind::conv_epilogue:
    return (variant >= KernelVariant::gemm_simt && variant <= KernelVariant::conv_depthwise) ||
           variant == KernelVariant::conv_wgmma || variant == KernelVariant::conv_stem ||
           variant == KernelVariant::gemm_narrow || variant == KernelVariant::gemm_gemv ||
           variant == KernelVariant::gemm_stream || variant == KernelVariant::gemm_wgmma_swap;
  case FusionKind::attention:
    return variant == KernelVariant::attention_mma || variant == KernelVariant::attention_simt ||
           variant == KernelVariant::attention_wgmma;
  }
  return false;
}
} // namespace

FailureOr<EmittedKernel> kiln::codegen::emitKernel(FusionOp group, StringRef name) {
  auto config = dyn_cast_if_present<KernelConfigAttr>(group->getAttr(attr::kKernel));
  if (!config)
    return group.emitOpError("has no kernel configuration (kiln.kernel): "
                             "kiln-select-kernels chooses one");
  if (!variantOfFamily(group.getKind(), config.getVariant()))
    return group.emitOpError("of kind '")
           << stringifyFusionKind(group.getKind()) << "' cannot run as "
           << stringifyKernelVariant(config.getVariant());
  return emitFamily(group, name);
}

std::string kiln::codegen::kernelSymbol(llvm::StringRef source) {
  return "kiln_" + llvm::utohexstr(artifact::fnv1a64(
                       reinterpret_cast<const unsigned char *>(source.data()), source.size()));
}

ImageLaunch kiln::codegen::launchInImage(const EmittedKernel &kernel, const TargetImage &image) {
  // The Hopper paths (TMA pipelines, clusters) sit under
  // __CUDA_ARCH_FEAT_SM90_ALL: only the wgmma image compiles them.
  const bool hopperPath = image.tensorCores == TensorCoreGeneration::Wgmma;
  ImageLaunch launch;
  if (kernel.otherImagesGrid && !hopperPath)
    std::copy(kernel.otherImagesGrid->begin(), kernel.otherImagesGrid->end(), launch.grid);
  else
    std::copy(std::begin(kernel.grid), std::end(kernel.grid), launch.grid);
  launch.block = kernel.otherImagesBlock && !hopperPath ? *kernel.otherImagesBlock : kernel.block;
  launch.dynamicSharedBytes =
      kernel.otherImagesSharedBytes && !hopperPath ? *kernel.otherImagesSharedBytes
                                                   : kernel.dynamicSharedBytes;
  launch.clusterBlocks = hopperPath ? kernel.clusterBlocks : 1;
  return launch;
}

FailureOr<std::vector<EmittedKernel>>
kiln::codegen::emitModuleKernels(ModuleOp module) {
  std::vector<EmittedKernel> kernels;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.getBody().empty())
      continue;
    unsigned index = 0;
    for (Operation &op : fn.getBody().front()) {
      if (isa<ConstantOp, ReshapeOp, func::ReturnOp>(op))
        continue;
      auto group = dyn_cast<FusionOp>(op);
      if (!group)
        return op.emitOpError("needs a kernel but is in no fusion group; the "
                              "code generator has no standalone kernel for it yet");
      auto kernel = emitKernel(group, (fn.getName() + "_k" + Twine(index++)).str());
      if (failed(kernel))
        return failure();
      kernels.push_back(std::move(*kernel));
    }
  }
  return kernels;
}

namespace {
NvrtcOptions kernelOptions(const std::string &arch) {
  NvrtcOptions options;
  options.arch = arch;
  options.headers = deviceHeaders();
  options.extraOptions = {"--ptxas-options=-v", "-lineinfo"};
  return options;
}

/// The source, every header, the options, the target and NVRTC's version:
/// anything that changes the binary changes the key.
std::string cacheKey(const EmittedKernel &kernel, const NvrtcOptions &options) {
  const std::string &arch = options.arch;
  std::string keyText = kernel.source + '\0' + arch + '\0' + nvrtcVersion();
  for (const std::string &option : options.extraOptions)
    keyText += '\0' + option;
  for (const auto &[name, contents] : options.headers)
    keyText += '\0' + name + '\0' + contents;
  // FNV-1a from two offset bases: a 128-bit key.
  char hash[40];
  std::snprintf(hash, sizeof(hash), "%016llx%016llx",
                (unsigned long long)artifact::fnv1a64(keyText, 1469598103934665603ull),
                (unsigned long long)artifact::fnv1a64(keyText, 0x9e3779b97f4a7c15ull));
  return std::string(hash) + "-" + arch;
}
} // namespace

std::string kiln::codegen::kernelCacheKey(const EmittedKernel &kernel, const std::string &arch) {
  return cacheKey(kernel, kernelOptions(arch));
}

std::optional<NvrtcOutput> kiln::codegen::compileKernel(const EmittedKernel &kernel,
                                                        const std::string &arch,
                                                        std::string &error,
                                                        const std::string &kernelLibrary) {
  NvrtcOptions options = kernelOptions(arch);
  // Fault injection for the tests of what follows a rejection (the
  // compiler's retry with a safer configuration): a kernel whose source
  // holds KILN_TEST_REJECT's text (each of its "&&"-separated texts) gets a
  // ptxas performance warning of its own in its report, before the cache
  // is asked.
  auto holdsAll = [&](llvm::StringRef texts) {
    llvm::SmallVector<llvm::StringRef> parts;
    texts.split(parts, "&&");
    return llvm::all_of(parts, [&](llvm::StringRef part) {
      return kernel.source.find(part.str()) != std::string::npos;
    });
  };
  if (const char *reject = std::getenv("KILN_TEST_REJECT"); reject && *reject && holdsAll(reject)) {
    error = ptxasRejection(kernel.name, arch,
                           std::string("ptxas warning : (C7599) KILN_TEST_REJECT: the source "
                                       "holds '") +
                               reject + "'");
    return std::nullopt;
  }
  std::optional<KernelCache> cache = KernelCache::fromEnvironment();
  std::optional<KernelCache> library = KernelCache::library(kernelLibrary);
  const std::string key = cache || library ? cacheKey(kernel, options) : std::string();
  // A verified entry whose cubin is not an ELF file was not written by this
  // code: it is recompiled (and, in the cache, replaced) like a corrupted one.
  auto entry = [&](const std::optional<KernelCache> &folder) -> std::optional<NvrtcOutput> {
    if (!folder)
      return std::nullopt;
    auto found = folder->lookup(key);
    if (!found || found->cubin.compare(0, 4, "\x7f" "ELF") != 0)
      return std::nullopt;
    return found;
  };
  if (auto cached = entry(cache)) {
    cached->fromCache = true;
    return cached;
  }
  if (auto built = entry(library)) {
    built->fromLibrary = true;
    return built;
  }

  auto compiled = compileWithNvrtc(kernel.source, kernel.name, options, error);
  if (!compiled)
    return std::nullopt;
  error = ptxasRejection(kernel.name, arch, compiled->log);
  if (!error.empty())
    return std::nullopt;
  // The cache only saves time: a failed write (a full disk) costs the next
  // compile its speed, never its result.
  std::string ignored;
  if (cache)
    cache->store(key, *compiled, ignored);
  return compiled;
}
