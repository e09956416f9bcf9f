//===- Pipelines.h - kiln's pass pipelines ----------------------*- C++ -*-===//
//
// Pipelines are built by functions taking an options struct, so kiln-compile,
// the C++ API and kiln-opt (for lit tests) run the very same sequence.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PIPELINES_H
#define KILN_PASSES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace kiln {

struct GraphPipelineOptions
    : public mlir::PassPipelineOptions<GraphPipelineOptions> {
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("form fusion groups"),
                    llvm::cl::init(true)};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("compute precision: fp32, tf32, fp16 or bf16"),
      llvm::cl::init("fp32")};
};

/// The graph-level pipeline from imported IR to fusion groups: canonicalize
/// (folds view chains, no-op casts), then fusion, then cleanup.
void buildGraphPipeline(mlir::OpPassManager &pm,
                        const GraphPipelineOptions &options);

/// Registers `kiln-graph-pipeline` for kiln-opt.
void registerKilnPipelines();

} // namespace kiln

#endif // KILN_PASSES_PIPELINES_H
