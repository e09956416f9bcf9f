//===- ApplyKernelTuning.cpp - kernels measured fastest, applied ----------===//
//
// Mechanics only: which configuration a group takes is what the tuning file
// measured (KernelTuning.h); the target check keeps a file measured on one
// GPU from steering another's kernels.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Passes/KernelTuning.h"
#include "kiln/Passes/Passes.h"
#include "kiln/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln {
#define GEN_PASS_DEF_KILNAPPLYKERNELTUNING
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace kiln;

namespace {

struct ApplyKernelTuningPass : kiln::impl::KilnApplyKernelTuningBase<ApplyKernelTuningPass> {
  using Base::Base;

  void runOnOperation() override {
    if (file.empty())
      return;
    mlir::func::FuncOp fn = getOperation();
    std::string error;
    std::optional<TargetDescription> description = describeTargets(
        std::vector<std::string>(targets.begin(), targets.end()), error, {},
        static_cast<int>(multiprocessors));
    if (!description) {
      fn.emitError(error);
      return signalPassFailure();
    }
    std::optional<KernelTuning> tuning = readKernelTuning(file, &getContext(), error);
    if (!tuning) {
      fn.emitError(error);
      return signalPassFailure();
    }
    const TargetImage &primary = description->primary();
    if (tuning->arch != primary.arch || tuning->multiprocessors != primary.multiprocessors) {
      fn.emitError() << "kernel tuning file " << file << " was measured on " << tuning->arch
                     << " with " << tuning->multiprocessors
                     << " multiprocessors; this compile's primary target is " << primary.arch
                     << " with " << primary.multiprocessors
                     << " (tune again on that GPU, or leave the file out)";
      return signalPassFailure();
    }
    fn.walk([&](FusionOp group) {
      if (group->hasAttr(attr::kKernel)) {
        if (explain)
          group.emitRemark("kept the configuration written in the input");
        return;
      }
      const std::string key = kernelTuningKey(group);
      auto found = tuning->kernels.find(key);
      if (found == tuning->kernels.end()) {
        if (explain)
          group.emitRemark() << "tuning key " << key << ": not in the file";
        return;
      }
      group->setAttr(attr::kKernel, found->second);
      if (explain)
        group.emitRemark() << "tuning key " << key << ": " << found->second;
    });
  }
};

} // namespace
