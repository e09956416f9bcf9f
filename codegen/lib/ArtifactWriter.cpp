//===- ArtifactWriter.cpp - kiln IR -> a .kiln artifact -------------------===//
//
// 1. Signature from the function's arguments (named by `kiln.name`) and
//    results.
// 2. One kernel per fusion group, emitted under a placeholder name and
//    deduplicated by source: identical groups (the blocks of a layer stack)
//    share one kernel, named after its hash and tagged with its fusion kind. Distinct kernels compile in
//    parallel, for every architecture.
// 3. Buffers: arguments are inputs, returned values outputs (a reshape is a
//    view of its source), constants are weights (256-byte aligned in a
//    4096-aligned section), everything else sits in the arena at the offset
//    kiln-plan-memory chose.
// 4. Launches in program order.
//
//===----------------------------------------------------------------------===//

#include "kiln/codegen/ArtifactWriter.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/codegen/CompileJobs.h"
#include "kiln/codegen/CudaEmitter.h"
#include "kiln/runtime/ArtifactFormat.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <chrono>
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

std::optional<std::string> kiln::codegen::writeArtifact(func::FuncOp fn,
                                                        const std::vector<std::string> &archs,
                                                        ArtifactStats &stats, std::string &error,
                                                        const ArtifactMetadata &metadata) {
  for (uint32_t raw = 0; raw <= getMaxEnumValForFusionKind(); ++raw)
    if (auto kind = symbolizeFusionKind(raw);
        kind && !fmt::isKernelKind(stringifyFusionKind(*kind))) {
      fn.emitError("the artifact format does not know the fusion kind '")
          << stringifyFusionKind(*kind) << "' (add it to kKernelKinds in ArtifactFormat.h)";
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
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    Value source = root(value);
    if (!isa_and_nonnull<FusionOp>(source.getDefiningOp())) {
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
  struct Weight {
    uint64_t offset;
    ArrayRef<char> bytes;
  };
  std::vector<Weight> weights;
  std::deque<std::string> ownedWeights;
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
    auto group = dyn_cast<FusionOp>(op);
    if (!group) {
      op.emitOpError("needs a kernel but is in no fusion group");
      return std::nullopt;
    }
    auto offsets = group->getAttrOfType<DenseI64ArrayAttr>(attr::kOffsets);
    for (auto [index, result] : llvm::enumerate(group.getResults())) {
      bufferOf[result] = buffers.size();
      auto output = outputOf.find(result);
      if (output != outputOf.end()) {
        buffers.push_back({fmt::BufferKind::Output, output->second, 0, bytesOf(result.getType())});
      } else if (offsets && offsets[index] >= 0) {
        buffers.push_back({fmt::BufferKind::Arena, 0, static_cast<uint64_t>(offsets[index]),
                           bytesOf(result.getType())});
      } else {
        group.emitOpError("result ") << index << " has no place in the memory plan "
                                        "(run kiln-plan-memory)";
        return std::nullopt;
      }
    }
  }
  stats.weightBytes = weightBytes;

  // Kernels: emit, deduplicate by source, compile in parallel.
  struct Launch {
    unsigned kernel;
    EmittedKernel emitted;
    std::vector<uint32_t> args;
    std::vector<fmt::DType> mapTypes;
    std::vector<uint32_t> mapBuffers;
  };
  std::vector<Launch> launches;
  std::vector<EmittedKernel> distinct;
  std::map<std::string, unsigned> bySource;
  for (Operation &op : body) {
    auto group = dyn_cast<FusionOp>(op);
    if (!group)
      continue;
    // A kernel is named by its content: emitted once under a fixed name to
    // hash it, then again under the name the hash gives.
    auto anonymous = emitKernel(group, "kiln_kernel");
    if (failed(anonymous))
      return std::nullopt;
    if (!fmt::isKernelKind(anonymous->kind)) {
      group.emitOpError("emitted a kernel of kind '")
          << anonymous->kind << "', which the artifact format does not know";
      return std::nullopt;
    }
    auto [it, inserted] = bySource.try_emplace(anonymous->source, distinct.size());
    if (inserted) {
      std::string name =
          "kiln_" + llvm::utohexstr(fmt::fnv1a64(
                        reinterpret_cast<const unsigned char *>(anonymous->source.data()),
                        anonymous->source.size()));
      auto named = emitKernel(group, name);
      if (failed(named))
        return std::nullopt;
      distinct.push_back(*named);
    }
    // The launch takes its own group's configuration (the same source has
    // the same sizes, but the plan should not depend on it).
    const EmittedKernel *kernel = &*anonymous;
    Launch launch{it->second, *kernel, {}, {}, {}};
    for (Value v : llvm::concat<Value>(group.getInputs(), group.getResults()))
      launch.args.push_back(bufferOf.lookup(v));
    for (const TensorMapArg &map : kernel->tensorMaps) {
      Value input = group.getInputs()[map.input];
      launch.mapBuffers.push_back(bufferOf.lookup(input));
      launch.mapTypes.push_back(*dtypeOf(input.getType()));
    }
    launches.push_back(std::move(launch));
  }
  stats.launches = launches.size();
  stats.launchKernels.clear();
  for (const Launch &launch : launches)
    stats.launchKernels.push_back(distinct[launch.kernel].name);
  stats.distinctKernels = distinct.size();

  std::vector<std::string> targets = archs;
  auto compileStart = std::chrono::steady_clock::now();
  // Job k * targets + t: kernel k for target t. KILN_NVRTC_PROCESSES=0
  // keeps them in threads of this process (an application that must not
  // fork).
  const char *processes = std::getenv("KILN_NVRTC_PROCESSES");
  std::vector<CompileJobResult> compiled = runCompileJobs(
      distinct.size() * targets.size(),
      [&](size_t job, std::string &jobError) {
        return compileKernel(distinct[job / targets.size()], targets[job % targets.size()],
                             jobError);
      },
      /*workers=*/0, /*useProcesses=*/!processes || std::string(processes) != "0");
  ByteWriter kernels;
  kernels.put<uint32_t>(distinct.size());
  for (size_t k = 0; k < distinct.size(); ++k) {
    kernels.string(distinct[k].name);
    kernels.string(distinct[k].kind);
    kernels.put<uint32_t>(targets.size() + 1);
    std::string ptx;
    for (size_t t = 0; t < targets.size(); ++t) {
      CompileJobResult &result = compiled[k * targets.size() + t];
      std::optional<NvrtcOutput> &out = result.output;
      if (!out) {
        error = result.error;
        return std::nullopt;
      }
      ++(out->fromCache ? stats.cachedImages : stats.compiledImages);
      if (!out->fromCache)
        stats.imageTimes.push_back(
            {distinct[k].name, distinct[k].kind, targets[t], result.cpuSeconds});
      kernels.string(targets[t]);
      kernels.put<uint64_t>(out->cubin.size());
      kernels.bytes += out->cubin;
      if (t + 1 == targets.size() || ptx.empty())
        ptx = out->ptx;
    }
    // PTX of the last target, for GPUs none of the cubins fits.
    std::string last = targets.back();
    std::string digits = last.substr(3);
    if (!digits.empty() && digits.back() == 'a')
      digits.pop_back();
    kernels.string("compute_" + digits);
    kernels.put<uint64_t>(ptx.size());
    kernels.bytes += ptx;
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
  plan.put<uint32_t>(launches.size());
  for (const Launch &l : launches) {
    plan.put<uint32_t>(l.kernel);
    for (unsigned g : l.emitted.grid)
      plan.put<uint32_t>(g);
    plan.put<uint32_t>(l.emitted.block);
    plan.put<uint32_t>(l.emitted.dynamicSharedBytes);
    plan.put<uint32_t>(l.args.size());
    for (uint32_t a : l.args)
      plan.put<uint32_t>(a);
    plan.put<uint32_t>(l.emitted.tensorMaps.size());
    for (auto [index, map] : llvm::enumerate(l.emitted.tensorMaps)) {
      plan.put<uint32_t>(l.mapBuffers[index]);
      plan.put<uint32_t>(static_cast<uint32_t>(l.mapTypes[index]));
      plan.put<uint32_t>(map.dims.size());
      for (int64_t size : map.dims)
        plan.put<uint64_t>(size);
      for (unsigned box : map.box)
        plan.put<uint32_t>(box);
      for (size_t d = 0; d < map.dims.size(); ++d)
        plan.put<uint32_t>(d < map.elementStrides.size() ? map.elementStrides[d] : 1);
    }
  }

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

  // Assemble: header, table, sections (weights last, 4096-aligned), in one
  // buffer sized up front, each weight copied once, straight from its
  // constant.
  std::pair<fmt::SectionKind, const std::string *> sections[] = {
      {fmt::SectionKind::Signature, &signature.bytes},
      {fmt::SectionKind::Kernels, &kernels.bytes},
      {fmt::SectionKind::Plan, &plan.bytes},
      {fmt::SectionKind::Metadata, &about.bytes},
      {fmt::SectionKind::Weights, nullptr}};
  static_assert(std::size(sections) == fmt::kSectionCount, "every section once");
  auto alignUp = [](uint64_t at, uint64_t alignment) {
    return (at + alignment - 1) / alignment * alignment;
  };
  uint64_t beforeWeights = fmt::kHeaderBytes + fmt::kSectionCount * fmt::kSectionEntryBytes;
  for (const auto &section : sections)
    if (section.second)
      beforeWeights = alignUp(beforeWeights, 8) + section.second->size();
  ByteWriter file;
  file.bytes.reserve(alignUp(beforeWeights, fmt::kWeightsAlignment) + weightBytes);
  file.bytes.append(fmt::kMagic, sizeof(fmt::kMagic));
  file.put<uint32_t>(fmt::kVersion);
  file.put<uint32_t>(fmt::kSectionCount);
  file.put<uint64_t>(0); // file size, patched below
  size_t tableAt = file.bytes.size();
  file.bytes.resize(tableAt + fmt::kSectionCount * fmt::kSectionEntryBytes, '\0');
  for (auto [index, section] : llvm::enumerate(sections)) {
    const bool isWeights = section.first == fmt::SectionKind::Weights;
    file.pad(isWeights ? fmt::kWeightsAlignment : 8);
    uint64_t offset = file.bytes.size();
    if (isWeights) {
      file.bytes.resize(offset + weightBytes, '\0');
      for (const Weight &weight : weights)
        std::memcpy(file.bytes.data() + offset + weight.offset, weight.bytes.data(),
                    weight.bytes.size());
    } else {
      file.bytes += *section.second;
    }
    const uint64_t sectionBytes = file.bytes.size() - offset;
    ByteWriter entry;
    entry.put<uint32_t>(static_cast<uint32_t>(section.first));
    entry.put<uint32_t>(0);
    entry.put<uint64_t>(offset);
    entry.put<uint64_t>(sectionBytes);
    entry.put<uint64_t>(fmt::checksum64(
        reinterpret_cast<const unsigned char *>(file.bytes.data()) + offset, sectionBytes));
    std::memcpy(file.bytes.data() + tableAt + index * fmt::kSectionEntryBytes,
                entry.bytes.data(), fmt::kSectionEntryBytes);
  }
  uint64_t size = file.bytes.size();
  std::memcpy(file.bytes.data() + 16, &size, 8);
  return file.bytes;
}
