//===- Pipelines.h - kiln's pass pipelines ----------------------*- C++ -*-===//
//
// Pipelines are built by functions taking an options struct, so kiln-compile,
// the C++ API and kiln-opt (for lit tests) run the very same sequence.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PIPELINES_H
#define KILN_PASSES_PIPELINES_H

#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "kiln/Passes/KernelSelection.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace kiln {

struct GraphPipelineOptions
    : public mlir::PassPipelineOptions<GraphPipelineOptions> {
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("form fusion groups"),
                    llvm::cl::init(true)};
  Option<Precision> precision{
      *this, "precision", llvm::cl::desc("the arithmetic to compute in"),
      llvm::cl::init(Precision::fp32),
      llvm::cl::values(clEnumValN(Precision::fp32, "fp32", "the model's types"),
                       clEnumValN(Precision::tf32, "tf32",
                                  "fp32, GEMM operands rounded to tf32 (tensor cores)"),
                       clEnumValN(Precision::fp16, "fp16", "fp16, statistics in fp32"),
                       clEnumValN(Precision::bf16, "bf16", "bf16, statistics in fp32"))};
  Option<std::string> ioDtype{
      *this, "io-dtype",
      llvm::cl::desc("floating-point inputs and outputs: declared, or f16 / bf16 (the "
                     "compute type of fp16 / bf16)"),
      llvm::cl::init("declared")};
  // Kernel selection (kiln-select-kernels).
  ListOption<std::string> targets{
      *this, "targets",
      llvm::cl::desc("GPU architectures of the artifact, newest first (default sm_90a,sm_80)")};
  Option<int64_t> multiprocessors{
      *this, "multiprocessors",
      llvm::cl::desc("the primary GPU's multiprocessor count (0: the architecture's)"),
      llvm::cl::init(0)};
  Option<int64_t> splitKMaxBlocks{
      *this, "split-k-max-blocks",
      llvm::cl::desc("most blocks a split-K GEMM may launch (0: two per multiprocessor)"),
      llvm::cl::init(0)};
  Option<int64_t> splitKMinK{*this, "split-k-min-k",
                             llvm::cl::desc("least K each block of a split walks"),
                             llvm::cl::init(kSplitKMinK)};
  Option<int64_t> splitKTile{*this, "split-k-k-tile",
                             llvm::cl::desc("k-tile width of the split-K pipeline"),
                             llvm::cl::init(kSplitKTile)};
  Option<int64_t> splitKStages{*this, "split-k-stages",
                               llvm::cl::desc("depth of the split-K pipeline"),
                               llvm::cl::init(kSplitKStages)};
  Option<bool> convWgmma{*this, "conv-wgmma",
                         llvm::cl::desc("choose the Hopper implicit-GEMM convolution "
                                        "(conv_wgmma) where it applies"),
                         llvm::cl::init(true)};
  Option<int64_t> gemmNarrowFmas{
      *this, "gemm-narrow-fmas",
      llvm::cl::desc("GEMMs of at most this many FMAs a row (K x N; 0: none) run as "
                     "gemm_narrow, a thread per row on CUDA cores"),
      llvm::cl::init(256)};
  Option<int64_t> gemmStreamIntensity{
      *this, "gemm-stream-intensity",
      llvm::cl::desc("GEMMs of at most this many FLOPs a byte moved (K N / (K + N); 0: none) "
                     "run as gemm_stream, A streamed past a weight in shared memory"),
      llvm::cl::init(32)};
  Option<int64_t> gemmStreamBlocks{
      *this, "gemm-stream-blocks",
      llvm::cl::desc("blocks of gemm_stream a multiprocessor runs (2 to 4)"), llvm::cl::init(2)};
  Option<int64_t> gemmGemvRows{*this, "gemm-gemv-rows",
                               llvm::cl::desc("GEMMs of at most this many rows (0 to 32) run "
                                              "as gemm_gemv, a block per column"),
                               llvm::cl::init(8)};
  Option<int64_t> depthwiseColumns{
      *this, "depthwise-columns",
      llvm::cl::desc("adjacent output columns (1, 2 or 4) a vectorized depthwise thread takes"),
      llvm::cl::init(1)};
  Option<bool> depthwisePatches{
      *this, "depthwise-patches",
      llvm::cl::desc("vectorized depthwise convolutions over 2-D patches of outputs staged in "
                     "shared memory"),
      llvm::cl::init(false)};
  Option<bool> wgmmaMatmul{
      *this, "wgmma-matmul",
      llvm::cl::desc("matmul and bmm as gemm_wgmma where TMA takes them"),
      llvm::cl::init(true)};
  Option<bool> runtimeSizes{
      *this, "runtime-sizes",
      llvm::cl::desc("GEMMs that take M, N and K, and normalizations that take their row "
                     "count, at launch where their epilogue allows"),
      llvm::cl::init(false)};
  Option<int64_t> elementwiseUnroll{
      *this, "elementwise-unroll",
      llvm::cl::desc("elements (1, 2, 4 or 8) an elementwise thread takes a step"),
      llvm::cl::init(1)};
  Option<bool> convGlobalPool{
      *this, "conv-global-pool",
      llvm::cl::desc("a global average pool that alone reads a 1x1 convolution's result "
                     "fuses into it, summed by the Hopper GEMM's epilogue"),
      llvm::cl::init(false)};
  Option<bool> poolVector{*this, "pool-vector",
                          llvm::cl::desc("pool fp16/bf16 NHWC tensors with C % 8 == 0 eight "
                                         "channels a thread"),
                          llvm::cl::init(true)};
  Option<std::string> wgmmaSchedule{
      *this, "wgmma-schedule",
      llvm::cl::desc("the Hopper main loop's schedule: auto, cooperative, pingpong or "
                     "epilogue_warpgroups"),
      llvm::cl::init("auto")};
  Option<int64_t> wgmmaMulticast{
      *this, "wgmma-multicast",
      llvm::cl::desc("blocks of a cluster sharing the Hopper main loop's B tiles: 0 (the "
                     "cost model), 1 or 2"),
      llvm::cl::init(0)};
  Option<int64_t> wgmmaBlocksPerSM{
      *this, "wgmma-blocks-per-sm",
      llvm::cl::desc("blocks of the Hopper main loop a multiprocessor runs at once: 0 (the "
                     "cost model), 1 or 2"),
      llvm::cl::init(0)};
  Option<int64_t> wgmmaRows{
      *this, "wgmma-rows",
      llvm::cl::desc("rows of the Hopper GEMM's tiles: 0 (the cost model), 128 or 192"),
      llvm::cl::init(0)};
  Option<bool> wgmmaStreamK{
      *this, "wgmma-stream-k",
      llvm::cl::desc("the Hopper GEMM shares its last waves' tiles by k-iterations"),
      llvm::cl::init(false)};
  Option<bool> wgmmaSplitK{
      *this, "wgmma-split-k",
      llvm::cl::desc("pairs of Hopper GEMM blocks split K where the tiles fill at most half "
                     "the multiprocessors"),
      llvm::cl::init(false)};
  Option<bool> wgmmaFewRows{
      *this, "wgmma-few-rows",
      llvm::cl::desc("GEMMs of one to three 128-row tiles on the Hopper GEMM where its 128 "
                     "x 64 tiles fill a quarter of the GPU, instead of gemm_split_k"),
      llvm::cl::init(true)};
  Option<int64_t> wgmmaFewRowsTiles{
      *this, "wgmma-few-rows-tiles",
      llvm::cl::desc("the fewest 128 x 64 tiles that take wgmma-few-rows: 0 (a quarter of "
                     "the multiprocessors) or a count"),
      llvm::cl::init(0)};
  Option<bool> wgmmaSwap{
      *this, "wgmma-swap",
      llvm::cl::desc("few-row GEMMs left to gemm_split_k run as gemm_wgmma_swap: the "
                     "weight's rows as wgmma's M side, the tokens as its N side"),
      llvm::cl::init(false)};
  Option<bool> wgmmaNarrow{
      *this, "wgmma-narrow",
      llvm::cl::desc("the Hopper GEMM's 128 x 56 tiles where they leave the busiest block "
                     "fewer outputs"),
      llvm::cl::init(false)};
  Option<bool> wgmmaMulticastA{
      *this, "wgmma-multicast-a",
      llvm::cl::desc("gemm_wgmma's tiles run in clusters of two on consecutive column "
                     "tiles that share the A tile by TMA multicast"),
      llvm::cl::init(false)};
  Option<bool> wgmmaSwapWide{
      *this, "wgmma-swap-wide",
      llvm::cl::desc("GEMMs that would split K over mma.sync run as gemm_wgmma_swap's "
                     "wide token tiles where those fill one wave with no more work a "
                     "multiprocessor"),
      llvm::cl::init(true)};
  Option<int64_t> attentionBlocksPerSM{
      *this, "attention-blocks-per-sm",
      llvm::cl::desc("Hopper attention's blocks a multiprocessor: 0 (the kernel's) or 4"),
      llvm::cl::init(0)};
  Option<int64_t> wgmmaCandidate{
      *this, "wgmma-candidate",
      llvm::cl::desc("-1: the cost model's Hopper GEMM tile; N: the N-th it considered"),
      llvm::cl::init(-1)};
  Option<std::string> kernelTuning{
      *this, "kernel-tuning",
      llvm::cl::desc("a tuning file: the groups it holds take the kernels it measured fastest"),
      llvm::cl::init("")};
  Option<bool> wgmmaResidualPrefetch{
      *this, "wgmma-residual-prefetch",
      llvm::cl::desc("ping-pong 64-wide Hopper GEMM tiles with a residual copy it a tile ahead"),
      llvm::cl::init(false)};
  Option<bool> wgmmaResidualRing{
      *this, "wgmma-residual-ring",
      llvm::cl::desc("cooperative Hopper GEMM tiles read a residual through the main loop's "
                     "ring, one stage deeper where the staging's row-input half makes room"),
      llvm::cl::init(true)};
  Option<bool> attentionWgmma{
      *this, "attention-wgmma",
      llvm::cl::desc("attention on Hopper with TMA and wgmma where it applies"),
      llvm::cl::init(true)};
  Option<bool> attentionOverlap{
      *this, "attention-overlap",
      llvm::cl::desc("the Hopper attention overlaps a tile's softmax with the previous "
                     "tile's P V"),
      llvm::cl::init(true)};
  Option<int64_t> attentionStages{
      *this, "attention-stages",
      llvm::cl::desc("the Hopper attention's K/V stages: 0 (2), 2, or 3 at a head size of 64"),
      llvm::cl::init(0)};
  Option<bool> attentionPersistent{
      *this, "attention-persistent",
      llvm::cl::desc("the Hopper attention on a persistent grid, each block walking "
                     "query blocks of heads"),
      llvm::cl::init(true)};
  Option<int64_t> foldLayerNormBytes{
      *this, "fold-layer-norm-bytes",
      llvm::cl::desc("an fp16 or bf16 layer norm with an output of at least this many bytes "
                     "that feeds one linear alone moves into it, its statistics a kernel of "
                     "their own (kiln-fold-layer-norm; -1: none)"),
      llvm::cl::init(kFoldLayerNormBytes)};
  Option<int64_t> mergeShortcutBytes{
      *this, "merge-shortcut-bytes",
      llvm::cl::desc("two fp16 or bf16 1x1 convolutions whose results of at least this many "
                     "bytes are added (a bottleneck's projection shortcut) become one over "
                     "their inputs side by side, on a target that runs conv_wgmma "
                     "(kiln-merge-shortcut-conv; -1: none)"),
      llvm::cl::init(kMergeShortcutBytes)};
  Option<int64_t> attentionRows{
      *this, "attention-rows",
      llvm::cl::desc("queries a block of the tensor-core attention kernels take: 0 (the "
                     "cost model), 64 or 128"),
      llvm::cl::init(0)};
};

/// The graph-level pipeline from imported IR to fusion groups: canonicalize
/// (folds view chains, no-op casts), then fusion, then cleanup.
void buildGraphPipeline(mlir::OpPassManager &pm,
                        const GraphPipelineOptions &options);

/// Registers `kiln-graph-pipeline` for kiln-opt.
void registerKilnPipelines();

} // namespace kiln

#endif // KILN_PASSES_PIPELINES_H
