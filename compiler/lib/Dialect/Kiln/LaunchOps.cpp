//===- LaunchOps.cpp - kernels, launches and their configurations ---------===//
//
// The launch plan's invariants, checked where the IR is built or parsed so
// that the artifact writer and the runtime's reader never meet a plan that
// CUDA would refuse: grids and blocks within CUDA's limits, one
// configuration per image, kernels that exist and implement the launch's
// fusion kind, tensor maps of existing inputs.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace kiln;

LogicalResult TensorMapAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t input,
                                    ArrayRef<int64_t> dims, ArrayRef<int64_t> box,
                                    ArrayRef<int64_t> strides) {
  if (input < 0)
    return emitError() << "a tensor map's input index cannot be negative";
  if (dims.size() < 2 || dims.size() > 5)
    return emitError() << "a tensor map has 2 to 5 dimensions, got " << dims.size();
  if (box.size() != dims.size() || (!strides.empty() && strides.size() != dims.size()))
    return emitError() << "a tensor map's box and strides have one entry per dimension ("
                       << dims.size() << ")";
  if (llvm::any_of(llvm::concat<const int64_t>(dims, box, strides),
                   [](int64_t v) { return v <= 0; }))
    return emitError() << "tensor map sizes, boxes and strides must be positive";
  return success();
}

LogicalResult LaunchConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                       StringRef arch, FlatSymbolRefAttr kernel,
                                       ArrayRef<int64_t> grid, int64_t block, int64_t shared,
                                       ArrayRef<int64_t> cluster, ArrayAttr tensorMaps,
                                       ArrayRef<int64_t> scalars) {
  if (arch.empty())
    return emitError() << "a launch configuration names its image's architecture";
  if (!kernel)
    return emitError() << "a launch configuration names its kernel";
  // CUDA's limits: x up to 2^31 - 1, y and z up to 65535.
  if (grid.size() != 3 || llvm::any_of(grid, [](int64_t v) { return v <= 0; }) ||
      grid[0] > 0x7fffffff || grid[1] > 65535 || grid[2] > 65535)
    return emitError() << "a grid is [x, y, z] within CUDA's limits (x < 2^31, y and z <= "
                          "65535)";
  if (block <= 0 || block > 1024)
    return emitError() << "a block has 1 to 1024 threads, got " << block;
  if (shared < 0)
    return emitError() << "dynamic shared memory cannot be negative";
  if (!cluster.empty() &&
      (cluster.size() != 3 || llvm::any_of(cluster, [](int64_t v) { return v <= 0; })))
    return emitError() << "a cluster is [x, y, z] of positive sizes";
  if (tensorMaps && !llvm::all_of(tensorMaps, llvm::IsaPred<TensorMapAttr>))
    return emitError() << "tensor_maps holds #kiln.tensor_map attributes only";
  return success();
}

LogicalResult CudaKernelOp::verify() {
  // The runtime looks the function up by the symbol's name.
  if (!getSource().contains("extern \"C\" __global__") ||
      !getSource().contains(" " + getSymName().str() + "("))
    return emitOpError("has no kernel function named '") << getSymName() << "' in its source";
  return success();
}

LaunchConfigAttr LaunchOp::imageFor(StringRef arch) {
  for (Attribute image : getImages())
    if (auto config = cast<LaunchConfigAttr>(image); config.getArch() == arch)
      return config;
  return {};
}

LogicalResult LaunchOp::verify() {
  if (getImages().empty())
    return emitOpError("has no launch configuration (one per target image)");
  llvm::StringSet<> archs;
  for (Attribute image : getImages()) {
    auto config = cast<LaunchConfigAttr>(image);
    if (!archs.insert(config.getArch()).second)
      return emitOpError("has two configurations for image '") << config.getArch() << "'";
    if (auto maps = config.getTensorMaps())
      for (Attribute map : maps)
        if (cast<TensorMapAttr>(map).getInput() >= static_cast<int64_t>(getInputs().size()))
          return emitOpError("has a tensor map of input ")
                 << cast<TensorMapAttr>(map).getInput() << " but " << getInputs().size()
                 << " inputs";
  }
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbols) {
  for (Attribute image : getImages()) {
    auto config = cast<LaunchConfigAttr>(image);
    auto kernel = symbols.lookupNearestSymbolFrom<CudaKernelOp>(*this, config.getKernel());
    if (!kernel)
      return emitOpError("names kernel ")
             << config.getKernel() << " for image '" << config.getArch()
             << "', which is no kiln.cuda_kernel of the module";
    if (kernel.getKind() != getKind())
      return emitOpError("is a ")
             << stringifyFusionKind(getKind()) << " launch but kernel " << config.getKernel()
             << " implements " << stringifyFusionKind(kernel.getKind());
  }
  return success();
}
