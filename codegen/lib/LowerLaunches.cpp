//===- LowerLaunches.cpp - fusion groups -> kernels and launches ----------===//
//
// Each group is emitted twice: once under a fixed name, to hash its source
// (identical groups, the blocks of a layer stack, share one kernel), then
// under the name the hash gives. The launch takes its own group's emitted
// configuration, each image's as that image's code needs it
// (launchInImage).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Target/Target.h"
#include "kiln/codegen/CudaEmitter.h"
#include "kiln/codegen/Passes.h"
#include "kiln/runtime/ArtifactFormat.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

namespace kiln {
#define GEN_PASS_DEF_KILNLOWERLAUNCHES
#include "kiln/codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

namespace {

TensorMapAttr tensorMapAttr(MLIRContext *context, const TensorMapArg &map) {
  SmallVector<int64_t> box(map.box.begin(), map.box.end());
  SmallVector<int64_t> strides(map.elementStrides.begin(), map.elementStrides.end());
  return TensorMapAttr::get(context, map.input, map.dims, box, strides);
}

LaunchConfigAttr imageConfig(MLIRContext *context, const EmittedKernel &kernel,
                             const ImageLaunch &launch, const TargetImage &image,
                             FlatSymbolRefAttr symbol) {
  SmallVector<int64_t> grid(std::begin(launch.grid), std::end(launch.grid));
  SmallVector<int64_t> cluster;
  if (launch.clusterBlocks > 1)
    cluster = {launch.clusterBlocks, 1, 1};
  SmallVector<Attribute> maps;
  for (const TensorMapArg &map : kernel.tensorMaps)
    maps.push_back(tensorMapAttr(context, map));
  return LaunchConfigAttr::get(context, image.arch, symbol, grid, launch.block,
                               launch.dynamicSharedBytes, cluster,
                               maps.empty() ? ArrayAttr() : ArrayAttr::get(context, maps),
                               kernel.scalars);
}

struct LowerLaunches : public kiln::impl::KilnLowerLaunchesBase<LowerLaunches> {
  using KilnLowerLaunchesBase::KilnLowerLaunchesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    std::string error;
    std::optional<TargetDescription> description =
        describeTargets(std::vector<std::string>(targets.begin(), targets.end()), error);
    if (!description) {
      module.emitError(error);
      return signalPassFailure();
    }
    // Kernels go first in the module, in the order of their first launch.
    OpBuilder kernelBuilder(context);
    kernelBuilder.setInsertionPointToStart(module.getBody());
    SymbolTable symbols(module);
    std::map<std::string, CudaKernelOp> bySource;

    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.getBody().empty())
        continue;
      // Workspaces go past the planned buffers, where no other launch writes
      // and whatever a kernel leaves there stays; launches run one after
      // another, so they share one, as large as the largest. (Without a
      // memory plan, as kiln-translate lowers, the arena is the workspace.)
      auto arena = fn->getAttrOfType<IntegerAttr>(attr::kArenaBytes);
      const int64_t workspaceOffset = arena ? (arena.getInt() + 255) / 256 * 256 : 0;
      uint64_t workspaceBytes = 0;
      for (Operation &op : llvm::make_early_inc_range(fn.getBody().front())) {
        if (isa<ConstantOp, ReshapeOp, func::ReturnOp, LaunchOp>(op))
          continue;
        auto group = dyn_cast<FusionOp>(op);
        if (!group) {
          op.emitOpError("needs a kernel but is in no fusion group; the code generator "
                         "has no standalone kernel for it");
          return signalPassFailure();
        }
        if (!group->hasAttr(attr::kKernel)) {
          group.emitOpError("has no kernel configuration (run kiln-select-kernels first)");
          return signalPassFailure();
        }
        FailureOr<EmittedKernel> anonymous = emitKernel(group, "kiln_kernel");
        if (failed(anonymous))
          return signalPassFailure();
        auto [found, inserted] = bySource.try_emplace(anonymous->source);
        if (inserted) {
          std::string name = kernelSymbol(anonymous->source);
          if (symbols.lookup(name)) {
            group.emitOpError("emits a kernel whose name '")
                << name << "' another symbol of the module already has";
            return signalPassFailure();
          }
          FailureOr<EmittedKernel> named = emitKernel(group, name);
          if (failed(named))
            return signalPassFailure();
          found->second = CudaKernelOp::create(kernelBuilder, group.getLoc(), name,
                                               group.getKind(), named->source);
          symbols.insert(found->second);
        }
        auto symbol = FlatSymbolRefAttr::get(found->second.getSymNameAttr());
        SmallVector<Attribute> images;
        for (const TargetImage &image : description->images) {
          ImageLaunch launch = launchInImage(*anonymous, image);
          if (launch.dynamicSharedBytes > image.maxDynamicSharedBytes) {
            group.emitOpError("needs ")
                << launch.dynamicSharedBytes << " bytes of dynamic shared memory in its "
                << image.arch << " image, which grants a block at most "
                << image.maxDynamicSharedBytes << " (" << image.describe() << ")";
            return signalPassFailure();
          }
          images.push_back(imageConfig(context, *anonymous, launch, image, symbol));
        }
        OpBuilder builder(group);
        auto launch = LaunchOp::create(builder, group.getLoc(), group.getResultTypes(),
                                       group.getKind(), group.getInputs(),
                                       builder.getArrayAttr(images));
        if (Attribute offsets = group->getAttr(attr::kOffsets))
          launch->setAttr(attr::kOffsets, offsets);
        if (anonymous->workspaceBytes) {
          workspaceBytes = std::max(workspaceBytes, anonymous->workspaceBytes);
          launch->setAttr(attr::kWorkspace,
                          builder.getDenseI64ArrayAttr(
                              {workspaceOffset, static_cast<int64_t>(anonymous->workspaceBytes)}));
        }
        group.replaceAllUsesWith(launch.getResults());
        group.erase();
      }
      if (workspaceBytes)
        fn->setAttr(attr::kArenaBytes,
                    IntegerAttr::get(IntegerType::get(context, 64),
                                     workspaceOffset + static_cast<int64_t>(workspaceBytes)));
    }
  }
};

} // namespace
