//===- Pipelines.cpp - kiln's pass pipelines ------------------------------===//

#include "kiln/Passes/Pipelines.h"
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void kiln::buildGraphPipeline(OpPassManager &pm,
                              const GraphPipelineOptions &options) {
  pm.addPass(createCanonicalizerPass());
  // Index arithmetic on traced constants, before it could reach a kernel.
  pm.addNestedPass<func::FuncOp>(createKilnFoldConstants());
  // Convolutional regions channels-last before anything groups them.
  pm.addNestedPass<func::FuncOp>(createKilnPropagateLayout());
  pm.addPass(createCSEPass());
  // A BatchNorm freezing left behind, once it sits next to its convolution.
  pm.addNestedPass<func::FuncOp>(createKilnFoldAffine());
  pm.addNestedPass<func::FuncOp>(createKilnPatchify());
  // RMSNorm as one normalization, its eps and statistics in fp32.
  pm.addNestedPass<func::FuncOp>(createKilnRaiseRmsNorm());
  // GELU written out as one op, which kernels compute in closed form.
  pm.addNestedPass<func::FuncOp>(createKilnRaiseGelu());
  KilnSetPrecisionOptions precision;
  precision.precision = options.precision;
  precision.ioDtype = options.ioDtype;
  pm.addNestedPass<func::FuncOp>(createKilnSetPrecision(precision));
  // Folds the casts the precision change made identities.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.fuse) {
    // Anchored groups first, so GEMMs and normalizations take the
    // elementwise ops next to them; what is left forms elementwise groups.
    pm.addNestedPass<func::FuncOp>(createKilnMergeProjections());
    pm.addNestedPass<func::FuncOp>(createKilnFuseAttention());
    // After the attention's projections have settled, before the GEMMs
    // take their epilogues.
    KilnFoldLayerNormOptions foldLayerNorm;
    foldLayerNorm.minBytes = options.foldLayerNormBytes;
    pm.addNestedPass<func::FuncOp>(createKilnFoldLayerNorm(foldLayerNorm));
    // Before the convolutions take their epilogues: the add it removes
    // would otherwise join one of them.
    KilnMergeShortcutConvOptions mergeShortcut;
    mergeShortcut.minBytes = options.mergeShortcutBytes;
    mergeShortcut.targets.assign(options.targets.begin(), options.targets.end());
    mergeShortcut.convWgmma = options.convWgmma;
    pm.addNestedPass<func::FuncOp>(createKilnMergeShortcutConv(mergeShortcut));
    KilnFuseConvEpilogueOptions convEpilogue;
    convEpilogue.globalPool = options.convGlobalPool;
    convEpilogue.targets.assign(options.targets.begin(), options.targets.end());
    convEpilogue.multiprocessors = options.multiprocessors;
    pm.addNestedPass<func::FuncOp>(createKilnFuseConvEpilogue(convEpilogue));
    pm.addNestedPass<func::FuncOp>(createKilnFuseGemmEpilogue());
    pm.addNestedPass<func::FuncOp>(createKilnFuseNormalization());
    pm.addNestedPass<func::FuncOp>(createKilnFuseWindows());
    pm.addNestedPass<func::FuncOp>(createKilnFuseElementwise());
  }
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createKilnPlanMemory());
  if (options.fuse) {
    KilnSelectKernelsOptions select;
    select.targets.assign(options.targets.begin(), options.targets.end());
    select.multiprocessors = options.multiprocessors;
    select.splitKMaxBlocks = options.splitKMaxBlocks;
    select.splitKMinK = options.splitKMinK;
    select.splitKTile = options.splitKTile;
    select.splitKStages = options.splitKStages;
    select.convWgmma = options.convWgmma;
    select.gemmNarrowFmas = options.gemmNarrowFmas;
    select.gemmGemvRows = options.gemmGemvRows;
    select.gemmStreamIntensity = options.gemmStreamIntensity;
    select.gemmStreamBlocks = options.gemmStreamBlocks;
    select.depthwiseColumns = options.depthwiseColumns;
    select.depthwisePatches = options.depthwisePatches;
    select.runtimeSizes = options.runtimeSizes;
    select.wgmmaMatmul = options.wgmmaMatmul;
    select.elementwiseUnroll = options.elementwiseUnroll;
    select.poolVector = options.poolVector;
    select.wgmmaSchedule = options.wgmmaSchedule;
    select.wgmmaMulticast = options.wgmmaMulticast;
    select.wgmmaBlocksPerSM = options.wgmmaBlocksPerSM;
    select.wgmmaStreamK = options.wgmmaStreamK;
    select.wgmmaResidualPrefetch = options.wgmmaResidualPrefetch;
    select.wgmmaResidualRing = options.wgmmaResidualRing;
    select.wgmmaSplitK = options.wgmmaSplitK;
    select.wgmmaFewRows = options.wgmmaFewRows;
    select.wgmmaFewRowsTiles = options.wgmmaFewRowsTiles;
    select.wgmmaSwap = options.wgmmaSwap;
    select.wgmmaSwapWide = options.wgmmaSwapWide;
    select.wgmmaMulticastA = options.wgmmaMulticastA;
    select.wgmmaNarrow = options.wgmmaNarrow;
    select.wgmmaRows = options.wgmmaRows;
    select.attentionRows = options.attentionRows;
    select.attentionWgmma = options.attentionWgmma;
    select.attentionOverlap = options.attentionOverlap;
    select.attentionPersistent = options.attentionPersistent;
    select.attentionStages = options.attentionStages;
    select.wgmmaCandidate = options.wgmmaCandidate;
    select.attentionBlocksPerSM = options.attentionBlocksPerSM;
    if (!options.kernelTuning.empty()) {
      // Before the selection, which keeps a configuration already written.
      KilnApplyKernelTuningOptions tuning;
      tuning.file = options.kernelTuning;
      tuning.targets.assign(options.targets.begin(), options.targets.end());
      tuning.multiprocessors = options.multiprocessors;
      pm.addNestedPass<func::FuncOp>(createKilnApplyKernelTuning(tuning));
    }
    pm.addNestedPass<func::FuncOp>(createKilnSelectKernels(select));
  }
}

void kiln::registerKilnPipelines() {
  PassPipelineRegistration<GraphPipelineOptions>(
      "kiln-graph-pipeline",
      "imported kiln IR -> canonical IR with fusion groups",
      buildGraphPipeline);
}
