//===- GpuExecutor.cpp - run compiled kiln IR on the GPU, for tests -------===//

#include "GpuExecutor.h"

#include "ReferenceEvaluator.h"

#include "kiln/Passes/Passes.h"
#include "kiln/codegen/CudaEmitter.h"
#include "kiln/runtime/Device.h"
#include "kiln/runtime/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>

using namespace mlir;

namespace kiln::testing {

double relativeL2(const at::Tensor &actual, const at::Tensor &expected) {
  at::Tensor a = actual.to(c10::kDouble), e = expected.to(c10::kDouble);
  if (a.isnan().any().item<bool>() || e.isnan().any().item<bool>())
    return std::nan("");
  double norm = e.norm().item<double>();
  double diff = (a - e).norm().item<double>();
  return norm > 0 ? diff / norm : diff;
}

namespace {
size_t bytesOf(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  unsigned bits = tensor.getElementType().getIntOrFloatBitWidth();
  return tensor.getNumElements() * std::max(bits / 8, 1u);
}

at::Tensor emptyLike(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return at::empty(tensor.getShape().vec(),
                   at::TensorOptions().dtype(
                       *frontend::scalarTypeOf(tensor.getElementType())));
}

/// Kernels compiled once per source, per process.
std::map<std::string, std::shared_ptr<rt::Module>> &moduleCache() {
  static std::map<std::string, std::shared_ptr<rt::Module>> cache;
  return cache;
}
} // namespace

FailureOr<std::vector<codegen::EmittedKernel>> emitSelectedKernels(ModuleOp module) {
  PassManager pm(module.getContext());
  // KILN_GPU_TEST_SELECT: kiln-select-kernels' options (e.g.
  // "wgmma-matmul=true"), for the cases that check a knob's choices.
  const char *options = std::getenv("KILN_GPU_TEST_SELECT");
  if (options && *options) {
    static const bool registered = (registerKilnSelectKernels(), true);
    (void)registered;
    if (failed(parsePassPipeline(
            std::string("func.func(kiln-select-kernels{") + options + "})", pm)))
      return failure();
  } else {
    pm.addNestedPass<func::FuncOp>(createKilnSelectKernels());
  }
  if (failed(pm.run(module)))
    return failure();
  return codegen::emitModuleKernels(module);
}

std::vector<at::Tensor> runOnGpu(func::FuncOp function,
                                 const std::vector<at::Tensor> &inputs) {
  rt::DeviceInfo device = rt::queryDevice(0);
  // KILN_GPU_TEST_ARCH=sm_80 runs an H200 on the code other GPUs get (the
  // mma.sync fallbacks of the Hopper kernels), through that image's PTX.
  const char *forcedArch = std::getenv("KILN_GPU_TEST_ARCH");
  const std::string arch = forcedArch && *forcedArch ? forcedArch : device.nvrtcArch();
  std::string archError;
  std::optional<TargetImage> image = describeArch(arch, archError);
  if (!image)
    throw std::runtime_error(archError);
  static rt::Context context(0);
  const rt::Driver &cu = rt::Driver::get();

  auto module = function->getParentOfType<ModuleOp>();
  auto kernels = emitSelectedKernels(module);
  if (failed(kernels))
    throw std::runtime_error("code generation failed for @" +
                             function.getName().str());

  // KILN_GPU_TEST_OFFSET=B places every argument, constant and result B
  // bytes past its allocation's start, as a view into a larger buffer may
  // lie: kernels that test their pointers' alignment take their unaligned
  // paths (for kernels that only run aligned, such as TMA's, it faults).
  const char *offsetSetting = std::getenv("KILN_GPU_TEST_OFFSET");
  const size_t offset = offsetSetting ? std::strtoull(offsetSetting, nullptr, 10) : 0;
  std::vector<std::unique_ptr<rt::DeviceBuffer>> owned;
  llvm::DenseMap<Value, CUdeviceptr> address;
  auto upload = [&](Value value, const at::Tensor &tensor) {
    at::Tensor data = tensor.contiguous();
    std::vector<unsigned char> placed(offset + data.nbytes());
    std::memcpy(placed.data() + offset, data.data_ptr(), data.nbytes());
    owned.push_back(std::make_unique<rt::DeviceBuffer>(std::max<size_t>(placed.size(), 1)));
    owned.back()->upload(placed.data(), placed.size());
    address[value] = owned.back()->address() + offset;
  };
  auto poisoned = [&](Value value) {
    at::Tensor nan = emptyLike(value.getType());
    if (at::isFloatingType(nan.scalar_type()))
      nan.fill_(std::nan(""));
    else
      nan.fill_(0x5A);
    upload(value, nan);
  };

  Block &body = function.getBody().front();
  for (auto [arg, tensor] : llvm::zip(body.getArguments(), inputs))
    upload(arg, tensor.to(*frontend::scalarTypeOf(
                    cast<RankedTensorType>(arg.getType()).getElementType())));

  int64_t arenaBytes = 0;
  if (auto attr = function->getAttrOfType<IntegerAttr>("kiln.arena_bytes"))
    arenaBytes = attr.getInt();
  rt::DeviceBuffer arena(std::max<int64_t>(arenaBytes, 1));
  {
    std::vector<unsigned char> junk(std::max<int64_t>(arenaBytes, 1), 0xFF);
    arena.upload(junk.data(), junk.size()); // NaN-like fp16/fp32 patterns
  }

  // One workspace for every launch, as the runtime's past its arena: its
  // state zero at the start, its scratch poisoned.
  uint64_t workspaceBytes = 0, workspaceStateBytes = 0;
  for (const codegen::EmittedKernel &kernel : *kernels) {
    workspaceBytes = std::max(workspaceBytes, kernel.workspaceBytes);
    workspaceStateBytes = std::max(workspaceStateBytes, kernel.workspaceStateBytes);
  }
  rt::DeviceBuffer workspace(std::max<uint64_t>(workspaceBytes, 1));
  if (workspaceBytes) {
    std::vector<unsigned char> start(workspaceBytes, 0xFF);
    std::fill_n(start.begin(), workspaceStateBytes, 0);
    workspace.upload(start.data(), start.size());
  }

  size_t next = 0;
  for (Operation &op : body) {
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      std::string error;
      auto value = frontend::constantValue(constant, error);
      if (!value)
        throw std::runtime_error(error);
      upload(constant.getResult(), *value);
      continue;
    }
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      address[reshape.getResult()] = address.lookup(reshape.getInput());
      continue;
    }
    auto group = dyn_cast<FusionOp>(op);
    if (!group)
      continue;
    auto offsets = group->getAttrOfType<DenseI64ArrayAttr>("kiln.offsets");
    for (auto [index, result] : llvm::enumerate(group.getResults())) {
      int64_t offset = offsets ? offsets[index] : -1;
      if (offset >= 0) {
        if (offset + static_cast<int64_t>(bytesOf(result.getType())) > arenaBytes)
          throw std::runtime_error("memory plan puts a buffer past the arena");
        address[result] = arena.address() + offset;
      } else {
        poisoned(result);
      }
    }
    const codegen::EmittedKernel &kernel = (*kernels)[next++];
    std::shared_ptr<rt::Module> &loaded = moduleCache()[kernel.source + arch];
    if (!loaded) {
      std::string error;
      auto cubin = codegen::compileKernel(kernel, arch, error);
      if (!cubin)
        throw std::runtime_error(error);
      // Another architecture's cubin does not load here (sm_80 SASS is not
      // sm_90's); its PTX does, JIT-compiled by the driver with that
      // architecture's code paths.
      loaded = std::make_shared<rt::Module>(forcedArch && *forcedArch
                                                ? cubin->ptx
                                                : cubin->cubin);
    }
    CUfunction fn = loaded->function(kernel.name.c_str());
    std::vector<CUdeviceptr> pointers;
    for (Value input : group.getInputs())
      pointers.push_back(address.lookup(input));
    for (Value result : group.getResults())
      pointers.push_back(address.lookup(result));
    if (kernel.workspaceBytes)
      pointers.push_back(workspace.address());
    std::vector<rt::TensorMap> maps;
    for (const codegen::TensorMapArg &map : kernel.tensorMaps) {
      Value input = group.getInputs()[map.input];
      bool bf16 = cast<RankedTensorType>(input.getType()).getElementType().isBF16();
      std::vector<uint64_t> dims(map.dims.begin(), map.dims.end());
      std::vector<uint32_t> box(map.box.begin(), map.box.end());
      std::vector<uint32_t> strides(map.elementStrides.begin(), map.elementStrides.end());
      strides.resize(dims.size(), 1);
      maps.push_back(rt::encodeTensorMap(address.lookup(input), bf16, dims, box, strides));
    }
    std::vector<void *> params;
    for (rt::TensorMap &map : maps)
      params.push_back(&map);
    for (CUdeviceptr &p : pointers)
      params.push_back(&p);
    std::vector<long long> scalars(kernel.scalars.begin(), kernel.scalars.end());
    for (long long &value : scalars)
      params.push_back(&value);
    // The launch the artifact's plan would hold for this image.
    const codegen::ImageLaunch launch = codegen::launchInImage(kernel, *image);
    const unsigned shared = launch.dynamicSharedBytes;
    if (shared > 48 * 1024)
      KILN_CU_CHECK(cu.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          static_cast<int>(shared)));
    KILN_CU_CHECK(cu.cuLaunchKernel(fn, launch.grid[0], launch.grid[1], launch.grid[2],
                                    launch.block, 1, 1, shared,
                                    nullptr, params.data(), nullptr));
    context.synchronize(); // a fault names this kernel
  }

  if (workspaceStateBytes) {
    std::vector<unsigned char> state(workspaceStateBytes);
    workspace.download(state.data(), state.size());
    if (llvm::any_of(state, [](unsigned char byte) { return byte != 0; }))
      throw std::runtime_error("a kernel left its workspace's state changed (a stream-K flag "
                               "still raised)");
  }

  std::vector<at::Tensor> results;
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (Value value : ret.getOperands()) {
    at::Tensor host = emptyLike(value.getType());
    auto found = address.find(value);
    if (found == address.end())
      throw std::runtime_error("a result has no device buffer");
    KILN_CU_CHECK(cu.cuMemcpyDtoH(host.data_ptr(), found->second, host.nbytes()));
    results.push_back(host);
  }
  return results;
}

} // namespace kiln::testing
