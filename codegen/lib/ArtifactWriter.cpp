//===- ArtifactWriter.cpp - launches -> a .kiln artifact ------------------===//
//
// Reads a function that went through kiln-lower-launches and nothing else:
// 1. Signature from the function's arguments (named by `kiln.name`) and
//    results.
// 2. Buffers: arguments are inputs, returned values outputs (a reshape is a
//    view of its source), constants are weights (256-byte aligned in a
//    4096-aligned section), launch results sit in the arena at the offsets
//    kiln-plan-memory chose.
// 3. Kernels: the `kiln.cuda_kernel`s the launches name, each compiled for
//    the images that launch it, in parallel; PTX of the last image for
//    GPUs newer than every cubin.
// 4. One launch plan per image, in program order (the PTX's plan is its
//    image's).
//
//===----------------------------------------------------------------------===//

#include "kiln/codegen/ArtifactWriter.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/codegen/CompileJobs.h"
#include "kiln/codegen/CudaEmitter.h"
#include "kiln/codegen/Nvrtc.h"
#include "kiln/runtime/ArtifactFormat.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <numeric>
#include <iterator>
#include <deque>
#include <map>

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;
namespace fmt = kiln::artifact;

namespace {

class ByteWriter {
public:
  std::string bytes;
  template <typename T> void put(T value) {
    bytes.append(reinterpret_cast<const char *>(&value), sizeof(T));
  }
  void string(const std::string &s) {
    put<uint32_t>(s.size());
    bytes += s;
  }
  void pad(size_t alignment) {
    bytes.resize((bytes.size() + alignment - 1) / alignment * alignment, '\0');
  }
};

std::optional<fmt::DType> dtypeOf(Type type) {
  Type e = cast<RankedTensorType>(type).getElementType();
  if (e.isF32()) return fmt::DType::F32;
  if (e.isF16()) return fmt::DType::F16;
  if (e.isBF16()) return fmt::DType::BF16;
  if (e.isInteger(64)) return fmt::DType::I64;
  if (e.isInteger(32)) return fmt::DType::I32;
  if (e.isInteger(1)) return fmt::DType::Bool;
  return std::nullopt;
}

size_t bytesOf(Type type) {
  return cast<RankedTensorType>(type).getNumElements() * fmt::dtypeBytes(*dtypeOf(type));
}

void tensor(ByteWriter &w, const std::string &name, Type type) {
  w.string(name);
  w.put<uint32_t>(static_cast<uint32_t>(*dtypeOf(type)));
  auto shape = cast<RankedTensorType>(type).getShape();
  w.put<uint32_t>(shape.size());
  for (int64_t d : shape)
    w.put<int64_t>(d);
}

/// A constant's bytes in memory order (bools one byte each).
/// A constant's bytes as the artifact stores them: a view of the data it
/// already holds where the layout matches (a model's weights: hundreds of
/// megabytes, copied once, into the file), else a copy made in `owned`.
std::optional<ArrayRef<char>> constantBytes(ConstantOp op, std::deque<std::string> &owned) {
  auto type = op.getType();
  size_t elementBytes = fmt::dtypeBytes(*dtypeOf(type));
  int64_t count = type.getNumElements();
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(op.getValue())) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != count * elementBytes)
      return std::nullopt;
    return blob->getData();
  }
  auto dense = cast<DenseElementsAttr>(op.getValue());
  ArrayRef<char> raw = dense.getRawData();
  if (!type.getElementType().isInteger(1) && !dense.isSplat())
    return raw;
  std::string &out = owned.emplace_back(count * elementBytes, '\0');
  if (type.getElementType().isInteger(1)) {
    int64_t i = 0;
    for (bool b : dense.getValues<bool>())
      out[i++] = b ? 1 : 0;
    return ArrayRef<char>(out.data(), out.size());
  }
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(out.data() + i * elementBytes, raw.data(), elementBytes);
  return ArrayRef<char>(out.data(), out.size());
}
} // namespace

std::optional<ArtifactImage> kiln::codegen::writeArtifact(func::FuncOp fn,
                                                        const std::vector<std::string> &archs,
                                                        ArtifactStats &stats, std::string &error,
                                                        const ArtifactMetadata &metadata,
                                                        unsigned compileJobs,
                                                        const std::string &kernelLibrary) {
  for (uint32_t raw = 0; raw <= getMaxEnumValForFusionKind(); ++raw)
    if (auto kind = symbolizeFusionKind(raw);
        kind && !fmt::isKernelKind(stringifyFusionKind(*kind))) {
      fn.emitError("the artifact format does not know the fusion kind '")
          << stringifyFusionKind(*kind) << "' (add it to kKernelKinds in ArtifactFormat.h)";
      return std::nullopt;
    }
  if (archs.empty()) {
    fn.emitError("an artifact needs at least one target image");
    return std::nullopt;
  }
  Block &body = fn.getBody().front();
  for (Type t : llvm::concat<const Type>(fn.getArgumentTypes(), fn.getResultTypes()))
    if (!dtypeOf(t)) {
      fn.emitError("a signature type the artifact cannot describe: ") << t;
      return std::nullopt;
    }

  // Signature.
  ByteWriter signature;
  signature.put<uint32_t>(fn.getNumArguments());
  signature.put<uint32_t>(fn.getNumResults());
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    auto name = fn.getArgAttrOfType<StringAttr>(i, attr::kName);
    tensor(signature, name ? name.str() : "input" + std::to_string(i),
           fn.getArgumentTypes()[i]);
  }
  for (unsigned i = 0; i < fn.getNumResults(); ++i) {
    auto name = fn.getResultAttrOfType<StringAttr>(i, attr::kName);
    tensor(signature, name ? name.str() : "output" + std::to_string(i), fn.getResultTypes()[i]);
  }
  int64_t arenaBytes = 0;
  if (auto arena = fn->getAttrOfType<IntegerAttr>(attr::kArenaBytes))
    arenaBytes = arena.getInt();
  signature.put<uint64_t>(arenaBytes);

  // Buffers.
  struct Buffer {
    fmt::BufferKind kind;
    uint32_t index;
    uint64_t offset, bytes;
  };
  std::vector<Buffer> buffers;
  llvm::DenseMap<Value, uint32_t> bufferOf;
  auto root = [&](Value v) {
    while (auto reshape = v.getDefiningOp<ReshapeOp>())
      v = reshape.getInput();
    return v;
  };
  for (BlockArgument arg : body.getArguments()) {
    bufferOf[arg] = buffers.size();
    buffers.push_back({fmt::BufferKind::Input, arg.getArgNumber(), 0, bytesOf(arg.getType())});
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  llvm::DenseMap<Value, unsigned> outputOf;
  llvm::DenseMap<Operation *, uint32_t> workspaceBuffer;
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    Value source = root(value);
    if (!isa_and_nonnull<LaunchOp>(source.getDefiningOp())) {
      ret.emitOpError("result ") << index << " is an input or constant of the "
                                    "function; kiln cannot return it without a "
                                    "kernel yet";
      return std::nullopt;
    }
    if (!outputOf.try_emplace(source, index).second) {
      ret.emitOpError("returns one tensor twice (results ")
          << outputOf[source] << " and " << index << "); not supported yet";
      return std::nullopt;
    }
  }
  // Weights stay where they are until the file is assembled.
  ArtifactImage image;
  std::vector<ArtifactImage::Piece> &weights = image.weights;
  std::deque<std::string> &ownedWeights = image.owned;
  uint64_t weightBytes = 0;
  for (Operation &op : body) {
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      auto data = constantBytes(constant, ownedWeights);
      if (!data) {
        constant.emitOpError("has no data to serialize");
        return std::nullopt;
      }
      weightBytes = (weightBytes + fmt::kWeightAlignment - 1) / fmt::kWeightAlignment *
                    fmt::kWeightAlignment;
      bufferOf[constant.getResult()] = buffers.size();
      buffers.push_back({fmt::BufferKind::Weight, 0, weightBytes, data->size()});
      weights.push_back({weightBytes, *data});
      weightBytes += data->size();
      continue;
    }
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      auto found = bufferOf.find(reshape.getInput());
      if (found == bufferOf.end()) {
        reshape.emitOpError("reshapes a value without a buffer");
        return std::nullopt;
      }
      bufferOf[reshape.getResult()] = found->second;
      continue;
    }
    if (isa<func::ReturnOp>(op))
      continue;
    auto launch = dyn_cast<LaunchOp>(op);
    if (!launch) {
      op.emitOpError(isa<FusionOp>(op) ? "is a fusion group not lowered to a launch (run "
                                         "kiln-lower-launches)"
                                       : "needs a kernel but has no launch");
      return std::nullopt;
    }
    auto offsets = launch->getAttrOfType<DenseI64ArrayAttr>(attr::kOffsets);
    for (auto [index, result] : llvm::enumerate(launch.getResults())) {
      bufferOf[result] = buffers.size();
      auto output = outputOf.find(result);
      if (output != outputOf.end()) {
        buffers.push_back({fmt::BufferKind::Output, output->second, 0, bytesOf(result.getType())});
      } else if (offsets && static_cast<int64_t>(index) < offsets.size() && offsets[index] >= 0) {
        buffers.push_back({fmt::BufferKind::Arena, 0, static_cast<uint64_t>(offsets[index]),
                           bytesOf(result.getType())});
      } else {
        launch.emitOpError("result ") << index << " has no place in the memory plan "
                                         "(run kiln-plan-memory)";
        return std::nullopt;
      }
    }
    // The kernel's workspace: its last parameter, in the arena.
    if (auto workspace = launch->getAttrOfType<DenseI64ArrayAttr>(attr::kWorkspace)) {
      if (workspace.size() != 2 || workspace[0] < 0 || workspace[1] <= 0) {
        launch.emitOpError("has a malformed kiln.workspace (expected offset, bytes)");
        return std::nullopt;
      }
      workspaceBuffer[launch] = buffers.size();
      buffers.push_back({fmt::BufferKind::Arena, 0, static_cast<uint64_t>(workspace[0]),
                         static_cast<uint64_t>(workspace[1])});
    }
  }
  stats.weightBytes = weightBytes;

  // Kernels: those the launches name, in order of first use, each compiled
  // for the images that launch it.
  SymbolTable symbols(fn->getParentOfType<ModuleOp>());
  std::vector<CudaKernelOp> kernelOps;
  llvm::DenseMap<Operation *, unsigned> kernelIndex;
  std::vector<std::vector<bool>> kernelInImage; // [kernel][target]
  std::vector<LaunchOp> launches;
  for (auto launch : body.getOps<LaunchOp>()) {
    launches.push_back(launch);
    for (auto [t, arch] : llvm::enumerate(archs)) {
      LaunchConfigAttr config = launch.imageFor(arch);
      if (!config) {
        launch.emitOpError("has no configuration for image '") << arch << "'";
        return std::nullopt;
      }
      auto kernel = symbols.lookup<CudaKernelOp>(config.getKernel().getValue());
      if (!kernel) {
        launch.emitOpError("names kernel ") << config.getKernel() << ", which the module lacks";
        return std::nullopt;
      }
      if (config.getScalars().size() > fmt::kMaxScalars) {
        launch.emitOpError("passes ")
            << config.getScalars().size() << " integers; the artifact holds at most "
            << fmt::kMaxScalars;
        return std::nullopt;
      }
      auto [it, inserted] = kernelIndex.try_emplace(kernel, kernelOps.size());
      if (inserted) {
        kernelOps.push_back(kernel);
        kernelInImage.emplace_back(archs.size(), false);
      }
      kernelInImage[it->second][t] = true;
    }
  }
  stats.launches = launches.size();
  stats.distinctKernels = kernelOps.size();
  stats.launchKernels.clear();
  for (LaunchOp launch : launches)
    stats.launchKernels.push_back(launch.imageFor(archs.front()).getKernel().getValue().str());

  std::vector<std::pair<unsigned, unsigned>> jobs; // (kernel, target)
  for (unsigned k = 0; k < kernelOps.size(); ++k)
    for (unsigned t = 0; t < archs.size(); ++t)
      if (kernelInImage[k][t])
        jobs.emplace_back(k, t);
  std::vector<EmittedKernel> sources(kernelOps.size());
  for (auto [k, op] : llvm::enumerate(kernelOps)) {
    sources[k].name = op.getSymName().str();
    sources[k].kind = stringifyFusionKind(op.getKind()).str();
    sources[k].source = op.getSource().str();
  }
  // The longest compiles start first: with a worker per core the phase ends
  // when its slowest image does, and one started last would run alone at
  // the end. The Hopper main loops' sm_90a images are the slowest (BERT-base:
  // a GEMM's 1.23 s against 0.1-0.4 s for the others, on the GPU machine).
  std::vector<size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  auto heavy = [&](size_t job) {
    const std::string &source = sources[jobs[job].first].source;
    return archs[jobs[job].second] == "sm_90a" &&
           (source.find("kiln_gemm_sm90.cuh") != std::string::npos ||
            source.find("kiln_conv_sm90.cuh") != std::string::npos);
  };
  std::stable_partition(order.begin(), order.end(), heavy);
  auto compileStart = std::chrono::steady_clock::now();
  // KILN_NVRTC_PROCESSES=0 keeps the compiles in threads of this process
  // (an application that must not fork).
  const char *processes = std::getenv("KILN_NVRTC_PROCESSES");
  std::vector<CompileJobResult> started = runCompileJobs(
      jobs.size(),
      [&](size_t i, std::string &jobError) {
        const auto &[kernel, target] = jobs[order[i]];
        return compileKernel(sources[kernel], archs[target], jobError, kernelLibrary);
      },
      /*workers=*/compileJobs, /*useProcesses=*/!processes || std::string(processes) != "0");
  std::vector<CompileJobResult> compiled(jobs.size());
  for (size_t i = 0; i < order.size(); ++i)
    compiled[order[i]] = std::move(started[i]);
  // PTX of the last image, for GPUs none of the cubins fits.
  std::string lastArch = archs.back();
  std::string digits = lastArch.substr(3);
  if (!digits.empty() && digits.back() == 'a')
    digits.pop_back();
  const std::string ptxArch = "compute_" + digits;
  ByteWriter kernels;
  kernels.put<uint32_t>(kernelOps.size());
  size_t job = 0;
  for (size_t k = 0; k < kernelOps.size(); ++k) {
    kernels.string(sources[k].name);
    kernels.string(sources[k].kind);
    const bool hasPtx = kernelInImage[k].back();
    kernels.put<uint32_t>(llvm::count(kernelInImage[k], true) + (hasPtx ? 1 : 0));
    std::string ptx;
    for (size_t t = 0; t < archs.size(); ++t) {
      if (!kernelInImage[k][t])
        continue;
      CompileJobResult &result = compiled[job++];
      std::optional<NvrtcOutput> &out = result.output;
      if (!out) {
        // Where in the model the kernel's group comes from: a rejected
        // kernel is kiln's limit, but the user needs to know which layer.
        error = result.error;
        if (isPtxasRejection(error)) {
          stats.rejectedKernel = sources[k].name;
          stats.rejectedArch = archs[t];
        }
        if (auto file = kernelOps[k].getLoc()->findInstanceOf<FileLineColLoc>())
          error = "the kernel of the ops at " + file.getFilename().str() + ":" +
                  std::to_string(file.getLine()) + ": " + error;
        return std::nullopt;
      }
      ++(out->fromCache     ? stats.cachedImages
         : out->fromLibrary ? stats.libraryImages
                            : stats.compiledImages);
      if (!out->fromCache && !out->fromLibrary)
        stats.imageTimes.push_back(
            {sources[k].name, sources[k].kind, archs[t], result.cpuSeconds});
      kernels.string(archs[t]);
      kernels.put<uint64_t>(out->cubin.size());
      kernels.bytes += out->cubin;
      ptx = out->ptx;
    }
    if (hasPtx) {
      kernels.string(ptxArch);
      kernels.put<uint64_t>(ptx.size());
      kernels.bytes += ptx;
    }
  }
  stats.kernelSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - compileStart).count();
  std::stable_sort(stats.imageTimes.begin(), stats.imageTimes.end(),
                   [](const ArtifactStats::ImageTime &a, const ArtifactStats::ImageTime &b) {
                     return a.seconds > b.seconds;
                   });

  ByteWriter plan;
  plan.put<uint32_t>(buffers.size());
  for (const Buffer &b : buffers) {
    plan.put<uint32_t>(static_cast<uint32_t>(b.kind));
    plan.put<uint32_t>(b.index);
    plan.put<uint64_t>(b.offset);
    plan.put<uint64_t>(b.bytes);
  }
  auto writeLaunches = [&](const std::string &arch) {
    plan.string(arch);
    const std::string &image = arch == ptxArch ? lastArch : arch;
    plan.put<uint32_t>(launches.size());
    for (LaunchOp launch : launches) {
      LaunchConfigAttr config = launch.imageFor(image);
      plan.put<uint32_t>(
          kernelIndex.lookup(symbols.lookup<CudaKernelOp>(config.getKernel().getValue())));
      for (int64_t g : config.getGrid())
        plan.put<uint32_t>(static_cast<uint32_t>(g));
      plan.put<uint32_t>(static_cast<uint32_t>(config.getBlock()));
      plan.put<uint32_t>(static_cast<uint32_t>(config.getShared()));
      auto workspace = workspaceBuffer.find(launch);
      const bool hasWorkspace = workspace != workspaceBuffer.end();
      plan.put<uint32_t>(launch.getInputs().size() + launch.getResults().size() +
                         (hasWorkspace ? 1 : 0));
      for (Value v : llvm::concat<Value>(launch.getInputs(), launch.getResults()))
        plan.put<uint32_t>(bufferOf.lookup(v));
      if (hasWorkspace)
        plan.put<uint32_t>(workspace->second);
      ArrayAttr maps = config.getTensorMaps();
      plan.put<uint32_t>(maps ? maps.size() : 0);
      for (Attribute attribute : maps ? maps.getValue() : ArrayRef<Attribute>()) {
        auto map = cast<TensorMapAttr>(attribute);
        Value input = launch.getInputs()[map.getInput()];
        plan.put<uint32_t>(bufferOf.lookup(input));
        plan.put<uint32_t>(static_cast<uint32_t>(*dtypeOf(input.getType())));
        plan.put<uint32_t>(map.getDims().size());
        for (int64_t size : map.getDims())
          plan.put<uint64_t>(size);
        for (int64_t box : map.getBox())
          plan.put<uint32_t>(static_cast<uint32_t>(box));
        for (size_t d = 0; d < map.getDims().size(); ++d)
          plan.put<uint32_t>(d < map.getStrides().size() ? map.getStrides()[d] : 1);
      }
      plan.put<uint32_t>(config.getScalars().size());
      for (int64_t value : config.getScalars())
        plan.put<int64_t>(value);
    }
  };
  plan.put<uint32_t>(archs.size() + 1);
  for (const std::string &arch : archs)
    writeLaunches(arch);
  writeLaunches(ptxArch);

  // Metadata: what the caller gave, made valid (keys of the allowed
  // characters, once each; printable values), at most the reader's count.
  ByteWriter about;
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto &[rawKey, rawValue] : metadata) {
    std::string key;
    for (char c : rawKey)
      if (key.size() < fmt::kMaxMetadataKeyBytes && fmt::isMetadataKeyChar(c))
        key += c;
    if (key.empty() || entries.size() == fmt::kMaxMetadataEntries ||
        llvm::any_of(entries, [&](const auto &e) { return e.first == key; }))
      continue;
    std::string value = rawValue.substr(0, fmt::kMaxMetadataValueBytes);
    for (char &c : value)
      if (c < 0x20 || c > 0x7e)
        c = '?';
    entries.emplace_back(std::move(key), std::move(value));
  }
  about.put<uint32_t>(entries.size());
  for (const auto &[key, value] : entries) {
    about.put<uint32_t>(key.size());
    about.bytes += key;
    about.put<uint32_t>(value.size());
    about.bytes += value;
  }

  // Assemble the head (header, table, sections, padding to the weights);
  // the weights stay where they are until the file is written, checksummed
  // here piece by piece.
  std::pair<fmt::SectionKind, const std::string *> sections[] = {
      {fmt::SectionKind::Signature, &signature.bytes},
      {fmt::SectionKind::Kernels, &kernels.bytes},
      {fmt::SectionKind::Plan, &plan.bytes},
      {fmt::SectionKind::Metadata, &about.bytes},
      {fmt::SectionKind::Weights, nullptr}};
  static_assert(std::size(sections) == fmt::kSectionCount, "every section once");
  ByteWriter file;
  file.bytes.append(fmt::kMagic, sizeof(fmt::kMagic));
  file.put<uint32_t>(fmt::kVersion);
  file.put<uint32_t>(fmt::kSectionCount);
  file.put<uint64_t>(0); // file size, patched below
  size_t tableAt = file.bytes.size();
  file.bytes.resize(tableAt + fmt::kSectionCount * fmt::kSectionEntryBytes, '\0');
  for (auto [index, section] : llvm::enumerate(sections)) {
    const bool isWeights = section.first == fmt::SectionKind::Weights;
    file.pad(isWeights ? fmt::kWeightsAlignment : 8);
    uint64_t offset = file.bytes.size(), sectionBytes, checksum;
    if (isWeights) {
      fmt::Checksum64 sum;
      image.forEachWeightRun([&](const char *data, size_t size) {
        sum.update(reinterpret_cast<const unsigned char *>(data), size);
      });
      sectionBytes = weightBytes;
      checksum = sum.finish();
    } else {
      file.bytes += *section.second;
      sectionBytes = section.second->size();
      checksum = fmt::checksum64(
          reinterpret_cast<const unsigned char *>(file.bytes.data()) + offset, sectionBytes);
    }
    ByteWriter entry;
    entry.put<uint32_t>(static_cast<uint32_t>(section.first));
    entry.put<uint32_t>(0);
    entry.put<uint64_t>(offset);
    entry.put<uint64_t>(sectionBytes);
    entry.put<uint64_t>(checksum);
    std::memcpy(file.bytes.data() + tableAt + index * fmt::kSectionEntryBytes,
                entry.bytes.data(), fmt::kSectionEntryBytes);
  }
  image.head = std::move(file.bytes);
  image.weightBytes = weightBytes;
  uint64_t size = image.size();
  std::memcpy(image.head.data() + 16, &size, 8);
  return image;
}

void ArtifactImage::forEachWeightRun(
    llvm::function_ref<void(const char *, size_t)> consume) const {
  static const char zeros[4096] = {};
  uint64_t at = 0;
  for (const Piece &weight : weights) {
    while (at < weight.offset) {
      const uint64_t gap = std::min<uint64_t>(sizeof(zeros), weight.offset - at);
      consume(zeros, gap);
      at += gap;
    }
    consume(weight.bytes.data(), weight.bytes.size());
    at = weight.offset + weight.bytes.size();
  }
}

void ArtifactImage::writeTo(llvm::raw_ostream &os) const {
  os << head;
  forEachWeightRun([&](const char *data, size_t size) { os.write(data, size); });
}

std::string ArtifactImage::bytes() const {
  std::string out;
  out.reserve(size());
  llvm::raw_string_ostream os(out);
  writeTo(os);
  os.flush();
  return out;
}
