//===- SelectKernels.cpp - each fusion group's kernel variant -------------===//
//
// Every heuristic that picks a kernel lives here, apart from the code that
// writes kernels: the code generator emits what `kiln.kernel` says.
//
// For the primary target image (its multiprocessor count M, its tensor
// cores, whether it has clusters):
//
//   GEMM, fp16/bf16   [N, K] B, batch 1, K % 8 == N % 8 == 0, both
//                     <= 256, K % 64 != 0, K N / (K + N) <= gemm-stream-intensity
//                     (32 by default), rows >= 128 * M, two blocks'
//                     stages (2 to 4) in shared memory
//                                     -> gemm_stream, the weight in shared
//                                        memory, A through a cp.async ring
//                     else [N, K] B, K % 8 == 0, K <= 128, N % 4 == 0,
//                     K * N <= 16 (K + 2N),
//                     K * N <= gemm-narrow-fmas (256 by default, at most
//                     6144: a 24 KiB fp32 weight),
//                     rows >= 128 * M
//                                     -> gemm_narrow, a thread per row
//                     [N, K] B, M <= gemm-gemv-rows (8 by default,
//                     at most 32), N M K batch 2 bytes <= 16 MiB
//                                     -> gemm_gemv, a block per column
//                     tiles = ceil(rows / 128) * ceil(cols / 256) * batch
//                     tiles < M / 4 and K % 8 == 0 (and N % 8 == 0 for a
//                     [K, N] B), unless wgmma applies, rows are 4+
//                     tiles of 128 and tiles of 128 x 64 >= M / 2, or
//                     (wgmma-few-rows) 1-3 row tiles, a [N, K] B, no
//                     batch, and tiles of 128 x 64 >= M / 4
//                                     -> gemm_split_k, 64 x 64 tiles, K
//                                        split 2/4/8 ways across a cluster
//                     or with wgmma-swap (off by default) where wgmma
//                     applies, 1-3 row tiles, a [N, K] B, no batch and
//                     N % 64 == 0
//                                     -> gemm_wgmma_swap, 64 weight rows
//                                        by 16 or 32 tokens a block, all
//                                        of K, clusters of up to 4
//                     or (wgmma-swap-wide, on) where wgmma applies, 4+ row
//                     tiles, K >= 512, a [N, K] B, no batch, N % 64 == 0,
//                     and 64 weight rows by 64 to 128 tokens fill one wave
//                     with no more multiply-adds a multiprocessor than the
//                     K split
//                                     -> gemm_wgmma_swap, wide token tiles,
//                                        clusters of 2
//                     wgmma, K % 8 == 0 (N % 8 == 0 for a [K, N] B),
//                     each operand batched whole or not at all
//                                     -> gemm_wgmma, persistent: cooperative
//                                        tiles 128 x 64 to 256 or ping-pong
//                                        128 x 64 or 128 (with wgmma-rows 0
//                                        or 192: cooperative 192 x 192),
//                                        whichever the cost
//                                        model (wgmmaTile: tiles a block,
//                                        k-steps, epilogue overlap) says
//                                        ends first; at most 96 accumulators
//                                        a thread with a residual; with
//                                        wgmma-stream-k, stream_k where the
//                                        waves leave 15%+ of blocks idle
//                                        (streamKApplies; convolutions too);
//                                        with wgmma-split-k, K split over
//                                        pairs where they fit
//                     otherwise       -> gemm_mma, 128 x 128
//                     runtime-sizes (off by default): gemm_split_k, and
//                     gemm_wgmma on 128-row tiles, without a batch, N % 8
//                     == 0, an elementwise epilogue over the bias and
//                     inputs of the result's shape
//                                     -> runtime_sizes: M, N, K at launch
//   GEMM, fp32        kiln.tf32 (--precision tf32), tensor cores
//                                     -> gemm_tf32: mma.sync m16n8k8 on
//                                        128 x 128 tiles
//                     otherwise       -> gemm_simt
//   pooling           pool-vector (on by default), fp16/bf16, C % 8 == 0
//                                     -> pooling, tile [1, 8, 1] (eight
//                                        channels a thread), else a thread
//                                        per element
//   normalization     2+ rows of <= 1024 -> normalization_warp (a row
//                                        per warp, in registers)
//                     otherwise       -> normalization (a row per block)
//                     runtime-sizes, elementwise ops over rows, row
//                     vectors and single elements
//                                     -> runtime_sizes: the row count at
//                                        launch
//   convolution       depthwise       -> conv_depthwise; tile [1, 8, P]
//                                        (P: depthwise-columns, 1 by
//                                        default; with depthwise-patches,
//                                        P = 1 takes pixel_tile [1, R, C]:
//                                        R x C output patches in shared
//                                        memory)
//                                        (8 channels a thread) for fp16/bf16
//                                        NHWC, C % 8 == 0, and M * C / 8
//                                        >= 256 threads per multiprocessor
//                     fp16/bf16, one group, C < 8, O <= 128, the weight
//                     and 64 im2col rows in 48 KiB
//                                     -> conv_stem, persistent
//                     conv-wgmma (on by default), wgmma, fp16/bf16, one
//                     group, NHWC input, C % 8 == 0,
//                     boxes of output pixels x 256 columns >= M / 4
//                     (or x 64 columns >= M / 2), or an input that is a
//                     channel concat (no other variant reads one; an
//                     error where conv_wgmma does not apply)
//                                     -> conv_wgmma: the box of at most
//                                        128 pixels that covers the output
//                                        in the fewest boxes (pixelTile),
//                                        width and schedule as GEMMs
//                     fp16/bf16, NHWC input, Cin/groups % 8 == 0,
//                     128 x 128 tiles < M -> conv_split_k
//                     otherwise       -> conv_mma (fp32: conv_simt)
//   attention         fp16/bf16, D == Dv, D % 16 == 0, aligned rows
//                                     -> attention_mma, else attention_simt;
//                     attention-wgmma, sm_90, D of 64 or 128, q, k and v
//                     rows of a matrix (matrixRowsOf) -> attention_wgmma
//                                        (other images: attention_mma's
//                                        4-warp path in the same kernel)
//
// The split factor is the largest of 2, 4, 8 that keeps the blocks within
// split-k-max-blocks (two waves) and each split's K at split-k-min-k or
// more; 1 without clusters. A configuration already on a group is kept.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/KernelShapes.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Passes/Passes.h"
#include "kiln/Target/Target.h"

#include "HopperTiles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Debug.h"

#include <array>
#include <optional>
#include <string>

#define DEBUG_TYPE "kiln-select-kernels"

namespace kiln {
#define GEN_PASS_DEF_KILNSELECTKERNELS
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;
using namespace kiln::selection;

namespace {

/// The vectorized depthwise kernel's launch bounds' minimum (see below).
constexpr int64_t kDepthwiseBlocksPerSM = 8;
/// depthwise-patches: the largest patch of outputs (rows, columns) whose
/// input window and filters, for a slice of up to 128 channels, leave eight
/// blocks and more room on a multiprocessor (24 KiB each); none where
/// even 1 x 8 would not.
constexpr std::array<std::array<int64_t, 2>, 5> kDepthwisePatches = {
    {{4, 8}, {4, 4}, {2, 8}, {2, 4}, {1, 8}}};
constexpr int64_t kDepthwisePatchSharedBytes = 24 * 1024;
/// Its launch bounds' minimum: four blocks (64 registers a thread; its
/// window in shared memory, not registers, keeps the loads in flight). At
/// eight (32 registers) NVRTC spilled EfficientNet-B0's dw3x3 32 and 144 at
/// batch 32, at six (40) a bf16 stride-2 dilated case in the sm_80 image.
constexpr int64_t kDepthwisePatchBlocksPerSM = 4;

std::optional<std::array<int64_t, 2>> depthwisePatch(const ConvShape &s) {
  for (const std::array<int64_t, 2> &patch : kDepthwisePatches)
    if (depthwisePatchSharedBytes(s, patch[0], patch[1]) <= kDepthwisePatchSharedBytes)
      return patch;
  return std::nullopt;
}

/// A variant and the reasons it was taken (and the others refused).
struct Choice {
  KernelConfigAttr config;
  std::string why;
};

bool halfPrecision(Type element) { return element.isF16() || element.isBF16(); }

/// The split that brings `smallTiles` 64 x 64 tiles to at most maxBlocks
/// blocks, each walking at least minK of K.
int64_t splitFactor(int64_t smallTiles, int64_t K, const SplitKKnobs &knobs) {
  int64_t split = 1;
  for (int64_t candidate : {2, 4, 8})
    if (smallTiles * candidate <= knobs.maxBlocks && K / candidate >= knobs.minK)
      split = candidate;
  return split;
}

KernelConfigAttr config(MLIRContext *context, KernelVariant variant, ArrayRef<int64_t> tile = {},
                        int64_t stages = 0, int64_t splitK = 1, int64_t gridLimit = 0,
                        ArrayRef<int64_t> pixelTile = {},
                        WgmmaSchedule schedule = WgmmaSchedule::cooperative,
                        int64_t multicast = 1, int64_t blocksPerSM = 1, bool streamK = false,
                        bool runtimeSizes = false, bool residualRing = false,
                        bool multicastA = false) {
  return KernelConfigAttr::get(context, variant, tile, stages, splitK, gridLimit, pixelTile,
                               schedule, multicast, blocksPerSM, streamK, runtimeSizes,
                               residualRing, multicastA);
}

/// The split-K variant of a GEMM or convolution with `smallTiles` tiles.
Choice splitK(MLIRContext *context, KernelVariant variant, int64_t smallTiles, int64_t K,
              const TargetImage &target, const SplitKKnobs &knobs, std::string why,
              bool runtimeSizes = false) {
  int64_t split = target.clusters ? splitFactor(smallTiles, K, knobs) : 1;
  why += "; split " + str(split) +
         (target.clusters ? " (" + str(smallTiles) + " tiles of 64 x 64, at most " +
                                str(knobs.maxBlocks) + " blocks, K / split >= " +
                                str(knobs.minK) + ")"
                          : " (" + target.arch + " has no clusters)");
  return {config(context, variant, {64, 64, knobs.kTile}, knobs.stages, split, 0, {},
                 WgmmaSchedule::cooperative, 1, 1, false, runtimeSizes),
          why};
}

/// gemm_wgmma_swap on the wide token tiles swapWideTile chose.
Choice swapWideChoice(MLIRContext *context, const std::string &shape, const TargetImage &target,
                      const SwapWideTile &wide) {
  return {config(context, KernelVariant::gemm_wgmma_swap, {kSwapWeightRows, wide.tokens, 64},
                 wide.stages, 1, 0, {}, WgmmaSchedule::cooperative, wide.cluster),
          "gemm_wgmma_swap: " + shape + " on " + target.arch + "; " + wide.why +
              " (wgmma-swap-wide)"};
}

FailureOr<Choice> selectGemm(FusionOp group, const GemmShape &s, const TargetImage &target,
                             const SplitKKnobs &knobs) {
  MLIRContext *context = group.getContext();
  if (s.element.isF32()) {
    if (s.anchor->hasAttr(attr::kTf32) && target.tensorCores != TensorCoreGeneration::None)
      return Choice{config(context, KernelVariant::gemm_tf32, {128, 128, 16}),
                    "gemm_tf32: fp32 operands that may round to tf32 (kiln.tf32)"};
    return Choice{config(context, KernelVariant::gemm_simt, {64, 64, 16}),
                  std::string("gemm_simt: fp32 operands") +
                      (s.anchor->hasAttr(attr::kTf32) ? " (" + target.arch +
                                                            " has no tensor cores for tf32)"
                                                      : "")};
  }
  if (!halfPrecision(s.element))
    return group.emitOpError("no GEMM kernel for ") << s.element << " operands";
  if (target.tensorCores == TensorCoreGeneration::None)
    return group.emitOpError("fp16/bf16 GEMMs need tensor cores (sm_80 or newer); ")
           << target.arch << " has none";
  int64_t bigTiles = ceilDiv(s.M, 128) * ceilDiv(s.N, 256) * s.batch;
  std::string shape = str(s.M) + " x " + str(s.N) + " x " + str(s.K) +
                      (s.batch > 1 ? " (batch " + str(s.batch) + ")" : "");
  // At most 32 rows (a squeeze-and-excitation block's 1x1 convolutions on
  // the pooled [batch, C] tensor, a batch-1 classifier): a block per
  // column with K across a warp's lanes, where the tiled kernels put the
  // whole GEMM on a block or two (split K took 5-10 us a launch on
  // EfficientNet-B0's, cuDNN about 3). Each column's block reads all of A,
  // so only while the columns' reads of A together stay within 16 MiB (a
  // batch-32 classifier, 1000 x 2048, would read 128 MiB). Up to 8 rows by
  // default: on the GPU machine (2026-12-03) it took EfficientNet-B0 at
  // batch 1 from 0.414 to 0.335 ms and MobileNetV3 from 0.272 to 0.240,
  // where up to 32 rows moved batch 32 by -1.3% and +1.5%.
  if (s.kMajorB && s.M <= knobs.gemmGemvRows &&
      s.N * s.M * s.K * 2 * s.batch <= (16 << 20))
    return Choice{config(context, KernelVariant::gemm_gemv),
                  "gemm_gemv: " + shape + ", a block per column, K across a warp's lanes (" +
                      str(s.M) + " rows)"};
  // Bandwidth, not math (MobileNet's and EfficientNet's 1x1 convolutions
  // over 56 x 56 and 112 x 112 pixels at batch 32): K N / (K + N) FLOPs
  // a byte moved, at most gemm-stream-intensity, and a 128-row tile for
  // every multiprocessor. On the H200 the persistent wgmma GEMM took
  // such layers at 0.9-1.5 TB/s, 2-2.8x cuDNN's time (2026-12-04): one
  // block a multiprocessor waiting on its epilogues. gemm_stream keeps the
  // weight in shared memory and two blocks on each multiprocessor, with the
  // deepest ring of A tiles (and residual tiles) that lets two fit. Not
  // where K is a multiple of 64, wgmma's k-step, which the wgmma GEMM then
  // uses whole: there it stayed ahead (ResNet-50's 1x1 64 -> 64 at 56 x 56:
  // 11.5 against 13.7 us, MobileNetV3's 64 -> 24: 10.0 against 11.1), where
  // at K = 16 to 40 its k-step is mostly padding (EfficientNet's 16 -> 96 at
  // 112 x 112: 63.7 us against 44.8).
  if (knobs.gemmStreamIntensity > 0 && s.kMajorB && s.batch == 1 && s.K % 8 == 0 &&
      s.K % 64 != 0 && s.N % 8 == 0 && s.K <= 256 && s.N <= 256 &&
      s.K * s.N <= knobs.gemmStreamIntensity * (s.K + s.N) &&
      ceilDiv(s.M, kStreamRows) >= target.multiprocessors) {
    const bool residual = readsResidual(group);
    // gemm-stream-blocks blocks a multiprocessor with the deepest ring that
    // fits them, else fewer, down to two. Each block also costs the
    // multiprocessor 1 KiB of shared memory.
    for (int64_t blocks = knobs.gemmStreamBlocks; blocks >= 2; --blocks) {
      int64_t stages = kStreamMaxStages;
      while (stages >= 2 && blocks * (streamSharedBytes(s.N, s.K, stages, residual) + 1024) >
                                target.maxDynamicSharedBytes)
        --stages;
      if (stages < 2)
        continue;
      return Choice{config(context, KernelVariant::gemm_stream,
                           {kStreamRows, kStreamChunk, (s.K + 15) / 16 * 16}, stages, 1,
                           int64_t(target.multiprocessors) * blocks, {},
                           WgmmaSchedule::cooperative, 1, blocks),
                    "gemm_stream: " + shape + ", " + str(s.K * s.N / (s.K + s.N)) +
                        " FLOPs a byte moved (at most " + str(knobs.gemmStreamIntensity) +
                        "): the weight in shared memory, " + str(stages) + " stages of " +
                        str(kStreamRows) + " rows" + (residual ? " and their residual" : "") +
                        ", " + str(blocks) + " blocks a multiprocessor"};
    }
  }
  // Few columns and a short K over many rows (MobileNet's 1x1 convolutions
  // of 16 to 144 channels at batch 32): bytes, not math. The weight as fp32
  // in shared memory (the knob's bound keeps it within 24 KiB). Rows enough for a
  // block of 128 on every multiprocessor, and a row's K x N FMAs within 16
  // per byte-pair it moves (K + 2N: its input, output and a residual), so
  // CUDA cores (about 33 TFMA/s on an H200) keep up with memory (about 3.5
  // TB/s): 1x1 64 -> 64 would not. Measured on the GPU machine
  // (2026-12-03, compare_profiles.py), it pays only at the fewest FMAs a
  // row: MobileNetV3's 16 -> 16 + residual at 112 x 112, batch 32, 42.3 ->
  // 23.1 us (K N = 256); 16 -> 64 (1024) went 43.1 -> 55.4, 64 -> 24 (1536)
  // 10.8 -> 27.0. So K N <= gemm-narrow-fmas, 256 by default, and only where
  // gemm_stream does not apply: it took that 16 -> 16 + residual from 23.3
  // to 18.2 us (2026-12-04).
  if (s.K * s.N <= knobs.gemmNarrowFmas && s.kMajorB && s.K % 8 == 0 && s.K <= 128 &&
      s.N % 4 == 0 && s.K * s.N <= 16 * (s.K + 2 * s.N) &&
      s.M * s.batch >= 128 * target.multiprocessors)
    return Choice{config(context, KernelVariant::gemm_narrow, {}, 0, 1,
                         int64_t(target.multiprocessors) * 16),
                  "gemm_narrow: " + shape + ", a thread per row on CUDA cores (K <= 128, " +
                      str(s.K * s.N) + " FMAs a row, " + str(s.M * s.batch) + " rows)"};
  bool splitAligned = s.K % 8 == 0 && (s.kMajorB || s.N % 8 == 0);
  // TMA's 16-byte strides: K % 8 == 0, and N % 8 == 0 for a [K, N] B; a
  // batch as a third tensor-map dimension of each operand.
  // matmul and bmm with wgmma-matmul (the default: on the GPU machine,
  // 2026-12-05, 1.1-2.5x cuBLAS on five of six products where mma.sync
  // took 0.26-0.64x).
  const bool matmulOperands = !s.kMajorB || s.batch != 1;
  bool wgmma = target.tensorCores == TensorCoreGeneration::Wgmma && s.K % 8 == 0 &&
               (s.kMajorB || s.N % 8 == 0) && s.wholeBatches() &&
               (!matmulOperands || knobs.wgmmaMatmul);
  // As for convolutions: wgmma on 64-wide tiles that fill half the GPU
  // beats K split over mma.sync (ResNet-50's 1x1 2048 -> 512 at 7 x 7,
  // batch 32: 13 row tiles, split K took 26.3 us against cuDNN's 7.2;
  // 3x3 convolutions of that size went from 3.5x cuDNN to 1.24x this way).
  // Only with four row tiles or more; fewer take the few-rows rule below.
  int64_t rowTiles = ceilDiv(s.M, 128) * s.batch;
  int64_t narrowTiles = rowTiles * ceilDiv(s.N, 64);
  // wgmma-few-rows: one to three row tiles (a transformer layer at batch 1,
  // 128 or 197 tokens) on wgmma too, where 128 x 64 tiles fill a quarter of
  // the GPU. On the H100 (2026-12-07, gemm_vs_torch.py --set batch-1),
  // cuBLAS took 0.31-0.53x of gemm_split_k's time on these; a block a
  // 128 x 64 tile walking all of K took GPT-2's QKV 8.0 -> 4.3 us, its FFN
  // up-projection 8.8 -> 4.6, ViT-B/16's 14.3 -> 6.0 and its QKV 10.3 ->
  // 4.9 (cuBLAS 5.3), and K split over pairs of blocks (wgmma-split-k) only
  // to 5.0-7.9. Below a quarter (N = 768: 12 tiles) gemm_split_k's 64 x 64
  // tiles stay.
  const int64_t fewRowsTiles =
      knobs.wgmmaFewRowsTiles > 0 ? knobs.wgmmaFewRowsTiles : target.multiprocessors / 4;
  const bool fewRows = wgmma && knobs.wgmmaFewRows && rowTiles < 4 && s.kMajorB &&
                       s.batch == 1 && narrowTiles >= fewRowsTiles;
  bool fills = bigTiles >= target.multiprocessors / 4 || fewRows ||
               (wgmma && rowTiles >= 4 && narrowTiles >= target.multiprocessors / 2);
  // wgmma-swap: what that leaves to gemm_split_k (GPT-2's and BERT's
  // 768-wide projections at batch 1: 12 tiles of 128 x 64, 0.72-0.80x of
  // cuBLAS split over clusters on the H100, 2026-12-07) with the weight's
  // rows as wgmma's M side: 64 a block by 16 tokens where those tiles fit
  // in one wave, else 32, each block all of K, clusters of up to 4 token
  // tiles multicasting the weight tile. cuBLAS's kernel there is the same
  // shape (16 x 64 tiles in 4 x 2 clusters, 96 blocks).
  if (splitAligned && !fills && wgmma && knobs.wgmmaSwap && rowTiles < 4 && s.kMajorB &&
      s.batch == 1 && s.N % kSwapWeightRows == 0) {
    const int64_t weightTiles = s.N / kSwapWeightRows;
    const int64_t tokens = ceilDiv(s.M, 16) * weightTiles <= target.multiprocessors ? 16 : 32;
    const int64_t tokenTiles = ceilDiv(s.M, tokens);
    const int64_t cluster = tokenTiles >= 4 ? 4 : tokenTiles >= 2 ? 2 : 1;
    // Up to 12 stages, as many as let two blocks share a multiprocessor:
    // a cluster's blocks must share a GPC, and at one block a
    // multiprocessor the FFN block's 32 clusters of 4 (128 x 1024 x 4096)
    // took twice the others' time a k-step on the H200 (2026-12-07), as if
    // the last clusters waited for a second wave. At least 3: each of the
    // two consumer warpgroups holds a stage while it waits for its next.
    int64_t stages = std::max<int64_t>(std::min<int64_t>(ceilDiv(s.K, 64), 12), 3);
    while (stages > 3 && swapSharedBytes(tokens, stages) > kMaxDynamicSharedBytes / 2)
      --stages;
    const int64_t blocks = ceilDiv(tokenTiles, cluster) * cluster * weightTiles;
    return Choice{config(context, KernelVariant::gemm_wgmma_swap, {kSwapWeightRows, tokens, 64},
                         stages, 1, 0, {}, WgmmaSchedule::cooperative, cluster),
                  "gemm_wgmma_swap: " + shape + " is " + str(narrowTiles) +
                      " tiles of 128 x 64, under " + str(fewRowsTiles) +
                      " (wgmma-swap): the weight's rows as wgmma's M, " + str(blocks) +
                      " blocks of 64 x " + str(tokens) + ", clusters of " + str(cluster) +
                      ", " + str(stages) + " stages"};
  }
  // wgmma-swap-wide, where 128 x 64 tiles fill under half the GPU: the
  // wide swapped tiles against the K split that the rule below takes. (Not
  // against the Hopper GEMM's tiles under one wave: ResNet-50's 1x1 2048 ->
  // 512 at 7 x 7, batch 32, took 12.3 us on 112 blocks of 64 x 112 where
  // 104 tiles of 128 x 64 took 9.6, on the H100, 2026-12-07.)
  std::string swapWide;
  if (splitAligned && !fills && wgmma && knobs.wgmmaSwapWide && knobs.wgmmaCandidate < 0 &&
      target.clusters) {
    // gemm_split_k's busiest multiprocessor: its blocks over the GPU, up to
    // two at once, each 64 x 64 outputs over its share of K.
    const int64_t smallTiles = ceilDiv(s.M, 64) * ceilDiv(s.N, 64);
    const int64_t split = splitFactor(smallTiles, s.K, knobs);
    const int64_t perMultiprocessor = ceilDiv(smallTiles * split, target.multiprocessors);
    const SwapWideReference splitReference{
        perMultiprocessor * 64 * 64 * ceilDiv(ceilDiv(s.K, split), 64) * 64,
        "gemm_split_k's " + str(smallTiles * split) + " blocks of 64 x 64 (split " +
            str(split) + ", " + str(perMultiprocessor) + " a multiprocessor)"};
    if (std::optional<SwapWideTile> wide = swapWideTile(s, target, splitReference, swapWide))
      return swapWideChoice(context, shape, target, *wide);
  }
  if (splitAligned && !fills) {
    std::string sizes;
    const bool runtimeSizes = knobs.runtimeSizes && runtimeSizesApply(group, s, sizes);
    return splitK(context, KernelVariant::gemm_split_k,
                  ceilDiv(s.M, 64) * ceilDiv(s.N, 64) * s.batch, s.K, target, knobs,
                  "gemm_split_k: " + shape + " is " + str(bigTiles) +
                      " tiles of 128 x 256, under a quarter of " +
                      str(target.multiprocessors) + " multiprocessors" +
                      (wgmma && rowTiles >= 4
                           ? ", and " + str(narrowTiles) + " of 128 x 64, under half"
                           : "") +
                      (swapWide.empty() ? "" : "; " + swapWide) +
                      (knobs.runtimeSizes ? "; " + sizes : ""),
                  runtimeSizes);
  }
  std::string refusedSplit =
      !splitAligned ? "not gemm_split_k: K % 8 (or N % 8 for a [K, N] B) is not 0"
      : bigTiles >= target.multiprocessors / 4
          ? "not gemm_split_k: " + str(bigTiles) + " tiles of 128 x 256 fill a quarter of " +
                str(target.multiprocessors) + " multiprocessors"
      : fewRows
          ? "not gemm_split_k: wgmma-few-rows, and " + str(narrowTiles) +
                " tiles of 128 x 64, " + str(fewRowsTiles) + " or more" +
                (knobs.wgmmaFewRowsTiles > 0 ? " (wgmma-few-rows-tiles)"
                                             : " (a quarter of " +
                                                   str(target.multiprocessors) +
                                                   " multiprocessors)")
          : "not gemm_split_k: " + str(narrowTiles) + " tiles of 128 x 64 fill half of " +
                str(target.multiprocessors) + " multiprocessors";
  if (wgmma) {
    WgmmaTile tile = wgmmaTile(s, target, group, knobs);
    const int64_t blocks = target.multiprocessors * tile.blocksPerSM;
    std::string streamK;
    const bool streamed = knobs.wgmmaStreamK &&
                          streamKApplies(tile, s.batch, blocks, ceilDiv(s.K, 64),
                                         /*convResidual=*/false, streamK);
    std::string sizes = "sizes in the source: runtime sizes spill a 192-row tile's epilogue";
    const bool runtimeSizes =
        knobs.runtimeSizes && tile.rows == 128 && runtimeSizesApply(group, s, sizes);
    // Stream-K's tiles and sizes at launch keep the residual copied by
    // rows, in the ring that leaves room for it.
    if (tile.residualRing && (streamed || runtimeSizes)) {
      tile.residualRing = false;
      tile.stages = tile.copiedStages;
    }
    // wgmma-narrow: 128 x 56 tiles where the busiest block then computes
    // fewer outputs (a GEMM under one wave of 64-wide tiles).
    std::string narrow;
    const bool narrowed = knobs.wgmmaNarrow && narrowTile(tile, s, target, streamed, runtimeSizes,
                                                          readsResidual(group), narrow);
    // wgmma-multicast-a: the same tiles, in pairs along N sharing A (the
    // same count of blocks: the rule takes an even count of column tiles).
    std::string shareA;
    const bool multicastA = knobs.wgmmaMulticastA && !narrowed &&
                            sharesATile(tile, s, target, streamed, runtimeSizes,
                                        readsResidual(group), shareA);
    if (multicastA)
      tile.multicast = 2;
    return Choice{config(context, KernelVariant::gemm_wgmma, {tile.rows, tile.width, 64}, tile.stages,
                         tile.splitK, wgmmaGridLimit(tile, streamed, blocks), {},
                         tile.schedule, tile.multicast, tile.blocksPerSM, streamed,
                         runtimeSizes, tile.residualRing, multicastA),
                  "gemm_wgmma: " + shape + " on " + target.arch + "; " + tile.why + "; " +
                      refusedSplit + (knobs.wgmmaStreamK ? "; " + streamK : "") +
                      (knobs.runtimeSizes ? "; " + sizes : "") +
                      (knobs.wgmmaNarrow ? "; " + narrow : "") +
                      (knobs.wgmmaMulticastA ? "; " + shareA : "")};
  }
  std::string refusedWgmma =
      target.tensorCores != TensorCoreGeneration::Wgmma
          ? "not gemm_wgmma: " + target.arch + " has no wgmma"
          : !s.wholeBatches()
              ? "not gemm_wgmma: an operand broadcast along some batch dimensions and not "
                "others"
          : s.K % 8 != 0 || (!s.kMajorB && s.N % 8 != 0)
              ? "not gemm_wgmma: it needs K % 8 == 0 and, for a [K, N] B, N % 8 == 0 (TMA's "
                "16-byte strides)"
              : "not gemm_wgmma: wgmma-matmul is off";
  return Choice{config(context, KernelVariant::gemm_mma, {128, 128, 32}),
                "gemm_mma: " + shape + "; " + refusedSplit + "; " + refusedWgmma};
}

/// A 1x1 convolution that ends in its global average pool (GlobalPool):
/// gemm_wgmma with row tiles of whole images, their epilogue summing each
/// image's columns (kiln_gemm_sm90.cuh's wgmma_gemm_pooled). The cost
/// model's cooperative 128-row tile for the padded rows those tiles compute,
/// one block a multiprocessor, no cluster, no stream-K, sizes in the source,
/// a ring that leaves room for the sums.
FailureOr<Choice> selectPooledGemm(FusionOp group, const GemmShape &s, const GlobalPool &pool,
                                   const TargetImage &target, const SplitKKnobs &knobs) {
  if (target.tensorCores != TensorCoreGeneration::Wgmma)
    return group.emitOpError("sums a global average pool in its epilogue, which only "
                             "gemm_wgmma does, and ")
           << target.arch << " has no wgmma";
  const int64_t images = poolImagesPerTile(pool.pixels);
  if (!images || s.K % 8 != 0 || s.N % 2 != 0)
    return group.emitOpError("sums a global average pool in its epilogue, which takes images "
                             "of at most 128 pixels, K % 8 == 0 and an even channel count");
  GemmShape padded = s;
  padded.M = ceilDiv(pool.images, images) * 128;
  SplitKKnobs pooled = knobs;
  pooled.wgmmaRows = 128;
  pooled.wgmmaSchedule = "cooperative";
  pooled.wgmmaMulticast = 1;
  pooled.wgmmaBlocksPerSM = 1;
  pooled.wgmmaStreamK = false;
  pooled.wgmmaSplitK = false;
  pooled.wgmmaMulticastA = false;
  pooled.runtimeSizes = false;
  WgmmaTile tile = wgmmaTile(padded, target, group, pooled);
  // The sums are the kernel's static shared memory, beside the ring (a
  // residual through it may halve the staging, as the code generator does).
  const int64_t sums = images * tile.width * 4;
  auto bytes = [&](int64_t stages) {
    const bool halfStaging =
        tile.residualRing && wgmmaSharedBytes(tile.width, stages) > kMaxDynamicSharedBytes;
    return wgmmaSharedBytes(tile.width, stages, false, 128, false, false, 1, halfStaging) + sums;
  };
  while (tile.stages > 2 && bytes(tile.stages) > target.maxDynamicSharedBytes)
    --tile.stages;
  const int64_t blocks = target.multiprocessors;
  return Choice{config(group.getContext(), KernelVariant::gemm_wgmma, {128, tile.width, 64},
                       tile.stages, 1, wgmmaGridLimit(tile, false, blocks), {},
                       WgmmaSchedule::cooperative, 1, 1, false, false, tile.residualRing),
                "gemm_wgmma with its global average pool: " + str(pool.images) +
                    " images of " + str(pool.pixels) + " pixels, " + str(images) +
                    " a row tile of 128 (" + str(pool.images * pool.pixels * 100 / (padded.M)) +
                    "% of their rows used); " + tile.why};
}

/// The output pixels of a conv_wgmma row tile: the box of images x rows x
/// columns (at most 128 pixels) that covers the output in the fewest
/// tiles, each box row within TMA's 256 elements at the convolution's
/// stride. Every tile costs a full 128-row tile of math, so a box that
/// divides the output evenly wins: 8 x 8 pixels of 2 images at 56 x 56, 2 x
/// 2 pixels of 32 images at 14 x 14.
struct PixelTile {
  int64_t images = 1, rows = 1, columns = 1, tiles = 0;
  std::string why;
};

PixelTile pixelTile(const ConvShape &s) {
  Conv2dOp conv = s.conv;
  ArrayRef<int64_t> out = conv.getType().getShape();
  const int64_t N = out[0], OH = out[1], OW = out[2];
  // A channel concat's parts read their own strides in boxes of the same
  // pixels.
  int64_t strideH = conv.getStrides()[0], strideW = conv.getStrides()[1];
  for (const ConvInputPart &part : s.parts) {
    strideH = std::max(strideH, part.strideH);
    strideW = std::max(strideW, part.strideW);
  }
  PixelTile best;
  for (int64_t columns = std::min<int64_t>(OW, 128); columns >= 1; --columns) {
    if (columns * strideW > 256)
      continue;
    for (int64_t rows = std::min<int64_t>(OH, 128 / columns); rows >= 1; --rows) {
      if (rows * strideH > 256)
        continue;
      int64_t images = std::min<int64_t>(N, 128 / (columns * rows));
      int64_t tiles = ceilDiv(N, images) * ceilDiv(OH, rows) * ceilDiv(OW, columns);
      if (best.tiles == 0 || tiles < best.tiles)
        best = {images, rows, columns, tiles, ""};
    }
  }
  best.why = str(best.tiles) + " boxes of " + str(best.images) + " x " + str(best.rows) +
             " x " + str(best.columns) + " pixels (" +
             str(N * OH * OW * 100 / (best.tiles * 128)) + "% of their rows used)";
  return best;
}

FailureOr<Choice> selectConv(FusionOp group, const ConvShape &s, const TargetImage &target,
                             const SplitKKnobs &knobs) {
  MLIRContext *context = group.getContext();
  if (s.depthwise) {
    // Eight channels a thread (16-byte loads) where that still leaves a
    // block's worth of threads per multiprocessor; batch-1 layers (a 7 x 7
    // x 960 map: 5880 threads) keep a thread per element.
    const int64_t channels = s.groups * s.inChannelsPerGroup;
    const int64_t vectorThreads = s.M * channels / 8;
    // depthwise-columns > 1: adjacent output columns a thread, each input
    // column loaded once for all of them, while the threads still fill the
    // GPU as above (else one column).
    const int64_t columns =
        vectorThreads / knobs.depthwiseColumns >= int64_t(target.multiprocessors) * 256
            ? knobs.depthwiseColumns
            : 1;
    const bool vectorized = halfPrecision(s.element) && s.outChannels == channels &&
                            channels % 8 == 0 && !s.layoutChange &&
                            vectorThreads >= int64_t(target.multiprocessors) * 256;
    if (vectorized && columns == 1 && knobs.depthwisePatches)
      if (std::optional<std::array<int64_t, 2>> patch = depthwisePatch(s))
        return Choice{config(context, KernelVariant::conv_depthwise, {1, 8, 1}, 0, 1,
                             int64_t(target.multiprocessors) * 16, {1, (*patch)[0], (*patch)[1]},
                             WgmmaSchedule::cooperative, 1, kDepthwisePatchBlocksPerSM),
                      "conv_depthwise: one filter per channel, 8 channels a thread over " +
                          str((*patch)[0]) + " x " + str((*patch)[1]) +
                          " patches of outputs staged in shared memory (depthwise-patches)"};
    if (vectorized)
      // One column a thread: eight 256-thread blocks a multiprocessor (32
      // registers a thread). The loop waits on its loads, and on the H200
      // the most threads ran EfficientNet-B0's depthwise layers at batch 32
      // 3-8% faster than ptxas's own 40 registers (six blocks). Several
      // columns hold several columns' sums: ptxas's count.
      return Choice{config(context, KernelVariant::conv_depthwise, {1, 8, columns}, 0, 1,
                           int64_t(target.multiprocessors) * 16, {},
                           WgmmaSchedule::cooperative, 1,
                           columns == 1 ? kDepthwiseBlocksPerSM : 1),
                    "conv_depthwise: one filter per channel, 8 channels a thread (" +
                        str(vectorThreads) + " threads)"};
    return Choice{config(context, KernelVariant::conv_depthwise, {}, 0, 1,
                         int64_t(target.multiprocessors) * 16),
                  "conv_depthwise: one filter per channel, a thread per element"};
  }
  if (!halfPrecision(s.element))
    return Choice{config(context, KernelVariant::conv_simt, {64, 64, 16}),
                  "conv_simt: fp32 operands"};
  if (target.tensorCores == TensorCoreGeneration::None)
    return group.emitOpError("fp16/bf16 convolutions need tensor cores (sm_80 or newer); ")
           << target.arch << " has none";
  // Few input channels (a stem: C = 3): every im2col element is its own
  // gather, so the whole weight stays in shared memory and all of K runs
  // per tile of output positions, read from rows of the input where they
  // line up (StemGeometry::rows).
  if (s.groups == 1 && s.inChannelsPerGroup < 8 && s.outChannels <= 128) {
    StemGeometry stem = stemGeometryOf(s);
    // Input rows: the blocks a multiprocessor runs are the selection's
    // (the retry of a kernel ptxas spilled halves them); the im2col tile's
    // follow from O in its launch bounds.
    const int64_t blocks =
        stem.rows() ? std::clamp<int64_t>(target.maxDynamicSharedBytes / stem.sharedBytes(), 1,
                                          stem.blocksPerSM())
                    : 1;
    if (stem.fits(target.maxDynamicSharedBytes))
      return Choice{config(context, KernelVariant::conv_stem,
                           {stem.tileRows(), ceilDiv(s.outChannels, 16) * 16, stem.reduction()}, 0,
                           1, int64_t(target.multiprocessors) * (stem.rows() ? blocks : 4), {},
                           WgmmaSchedule::cooperative, 1, blocks),
                    "conv_stem: " + str(s.inChannelsPerGroup) + " input channels, the weight and " +
                        (stem.rows() ? str(stem.KH) + " input rows of " + str(stem.tileRows()) +
                                           " output columns, " + str(blocks) +
                                           " blocks a multiprocessor"
                                     : "an im2col tile of " + str(kStemRows) + " rows") +
                        " in shared memory"};
  }
  int64_t perGroup = s.outChannels / s.groups;
  int64_t bigTiles = ceilDiv(s.M, 128) * ceilDiv(perGroup, 128) * s.groups;
  bool splitAligned = !s.layoutChange && s.inChannelsPerGroup % 8 == 0;
  // Hopper: TMA boxes of input pixels into wgmma, unless its tiles would
  // fill under a quarter of the GPU and K can be split instead (as GEMMs).
  std::string refusedWgmma;
  if (target.tensorCores != TensorCoreGeneration::Wgmma)
    refusedWgmma = target.arch + " has no wgmma";
  else if (!knobs.convWgmma)
    refusedWgmma = "off (conv-wgmma=false)";
  else if (s.groups != 1 || s.layoutChange || s.inChannelsPerGroup % 8 != 0)
    refusedWgmma = "TMA boxes need one group and an NHWC input with C % 8 == 0";
  else if (llvm::any_of(Conv2dOp(s.conv).getStrides(), [](int64_t v) { return v > 8; }) ||
           llvm::any_of(s.parts, [](const ConvInputPart &part) {
             return part.strideH > 8 || part.strideW > 8;
           }))
    refusedWgmma = "strides past 8";
  else if (llvm::any_of(s.parts,
                        [](const ConvInputPart &part) { return part.channels % 8 != 0; }))
    refusedWgmma = "a part of its channel concat has channels that are not a multiple of 8";
  if (refusedWgmma.empty()) {
    PixelTile pixels = pixelTile(s);
    // Enough tiles to keep wgmma busy: a quarter of the GPU at 256 columns,
    // or half of it at 64 (ResNet-50's 7 x 7 x 512 at batch 32: 14 boxes,
    // 112 tiles 64 wide; K split over mma.sync took 3.5x cuDNN's time).
    int64_t wideTiles = pixels.tiles * ceilDiv(s.outChannels, 256);
    int64_t narrowTiles = pixels.tiles * ceilDiv(s.outChannels, 64);
    // A channel concat takes conv_wgmma however few its tiles: no other
    // main loop reads one in place.
    if (wideTiles >= target.multiprocessors / 4 || narrowTiles >= target.multiprocessors / 2 ||
        !s.parts.empty()) {
      GemmShape gemm;
      gemm.M = pixels.tiles * 128;
      gemm.N = s.outChannels;
      // Each filter tap reads its channels in 64-wide k-steps (each part of
      // a channel concat its own).
      gemm.K = s.reduction / s.inChannelsPerGroup * ceilDiv(s.inChannelsPerGroup, 64) * 64;
      if (!s.parts.empty()) {
        gemm.K = 0;
        for (const ConvInputPart &part : s.parts)
          gemm.K += ceilDiv(part.channels, 64) * 64;
      }
      WgmmaTile tile = wgmmaTile(gemm, target, group, knobs);
      const int64_t blocks = target.multiprocessors * tile.blocksPerSM;
      std::string streamK;
      const bool streamed = knobs.wgmmaStreamK &&
                            streamKApplies(tile, 1, blocks, gemm.K / 64,
                                           readsResidual(group), streamK);
      return Choice{config(context, KernelVariant::conv_wgmma, {128, tile.width, 64},
                           tile.stages, tile.splitK, wgmmaGridLimit(tile, streamed, blocks),
                           {pixels.images, pixels.rows, pixels.columns}, tile.schedule,
                           tile.multicast, tile.blocksPerSM, streamed),
                    "conv_wgmma: " + pixels.why + "; " + tile.why +
                        (knobs.wgmmaStreamK ? "; " + streamK : "")};
    }
    refusedWgmma = str(wideTiles) + " tiles of 128 x 256 fill under a quarter of " +
                   str(target.multiprocessors) + " multiprocessors, " + str(narrowTiles) +
                   " of 128 x 64 under half";
  }
  if (!s.parts.empty())
    return group.emitOpError("reads a channel concat in place, which only conv_wgmma does; "
                             "not conv_wgmma: ")
           << refusedWgmma;
  if (splitAligned && bigTiles < target.multiprocessors)
    return splitK(context, KernelVariant::conv_split_k,
                  ceilDiv(s.M, 64) * ceilDiv(perGroup, 64) * s.groups, s.reduction, target,
                  knobs,
                  "conv_split_k: " + str(bigTiles) + " tiles of 128 x 128 do not fill " +
                      str(target.multiprocessors) + " multiprocessors; not conv_wgmma: " +
                      refusedWgmma);
  return Choice{config(context, KernelVariant::conv_mma, {128, 128, 32}),
                "conv_mma: not conv_wgmma: " + refusedWgmma + "; " +
                    std::string(splitAligned
                                    ? str(bigTiles) + " tiles of 128 x 128 fill the GPU"
                                    : "not conv_split_k: the input is read through a "
                                      "layout change or Cin per group % 8 != 0")};
}

/// attention_mma takes 64 queries a block (4 warps) unless asked for 128:
/// 8 warps would read each K/V tile once for twice the queries and leave
/// half the blocks (BERT at batch 32: 384 blocks of 8 warps, all resident
/// at once, against 768 of 4 in 1.45 waves), but have not been timed.
/// attention_wgmma likewise at a head size of 64: asked for 128, two
/// consumer warpgroups share one K/V ring, one block a multiprocessor (not
/// yet timed).
Choice selectAttention(FusionOp group, const AttentionShape &s, const TargetImage &target,
                       const SplitKKnobs &knobs) {
  MLIRContext *context = group.getContext();
  int64_t D = s.q ? s.q->shape.back() : 0, Dv = s.v ? s.v->shape.back() : 0;
  std::string refused;
  if (!halfPrecision(s.element))
    refused = "fp32 operands";
  else if (target.tensorCores == TensorCoreGeneration::None)
    refused = target.arch + " has no tensor cores";
  else if (D != Dv || D % 16 != 0)
    refused = "head sizes " + str(D) + " and " + str(Dv) + " (mma needs equal multiples of 16)";
  else if (!s.rowsChunkAligned)
    refused = "q, k or v rows not 16-byte aligned";
  if (!refused.empty())
    return {config(context, KernelVariant::attention_simt), "attention_simt: " + refused};
  const int64_t rows = knobs.attentionRows == 128 ? 128 : 64;
  std::string refusedWgmma;
  if (!knobs.attentionWgmma)
    refusedWgmma = "turned off (--attention-wgmma=false)";
  else if (target.tensorCores != TensorCoreGeneration::Wgmma)
    refusedWgmma = target.arch + " has no wgmma";
  else if (D != 64 && D != 128)
    refusedWgmma = "head size " + str(D) + " (64 or 128)";
  else if (!matrixRowsOf(*s.q) || !matrixRowsOf(*s.k) || !matrixRowsOf(*s.v))
    refusedWgmma = "q, k or v are not rows of a matrix a tensor map can read";
  if (refusedWgmma.empty()) {
    const int64_t wgmmaRows = rows == 128 && D == 64 ? 128 : 64;
    // attention-blocks-per-sm=4: a fourth consumer warpgroup a
    // multiprocessor, with the cooperative schedule, without a mask (the
    // overlapped schedule, and a mask's loads, spill within the 96
    // registers of four blocks: NVRTC, 2026-12-06).
    const bool fourBlocks = knobs.attentionBlocksPerSM == 4 && D == 64 && wgmmaRows == 64 &&
                            !AttentionOp(s.attention).getMask();
    const bool overlapped =
        !fourBlocks && knobs.attentionOverlap && !overlappedAttentionSpills(s.attention);
    const int64_t blocksPerSM = fourBlocks ? 4 : 1;
    // attention-persistent: as many blocks as are resident at once, each
    // walking query blocks of heads.
    const int64_t resident =
        knobs.attentionPersistent
            ? target.multiprocessors * attentionWgmmaBlocksPerSM(wgmmaRows, D, blocksPerSM)
            : 0;
    // attention-stages: 3 only where three blocks a multiprocessor hold
    // them (a head size of 64).
    const int64_t stages = knobs.attentionStages == 3 && D != 64 ? 0 : knobs.attentionStages;
    return {config(context, KernelVariant::attention_wgmma, {wgmmaRows, 64, D}, stages, 1,
                   resident, {},
                   overlapped ? WgmmaSchedule::overlapped : WgmmaSchedule::cooperative, 1,
                   blocksPerSM),
            "attention_wgmma: head size " + str(D) + ", " + str(wgmmaRows) + " queries a block" +
                (wgmmaRows == 128 ? " (two consumer warpgroups)" : "") +
                (resident ? ", a persistent grid of " + str(resident) : std::string()) +
                (fourBlocks ? ", four blocks a multiprocessor (softmax and products in turn)"
                 : knobs.attentionBlocksPerSM != 4 ? ""
                 : D == 64 && wgmmaRows == 64
                     ? ", not four blocks a multiprocessor (with a mask they spill)"
                     : ", not four blocks a multiprocessor (a head size of 64 and 64 queries "
                       "only)") +
                (overlapped ? ", softmax overlapped with P V"
                 : knobs.attentionOverlap && !fourBlocks
                     ? ", softmax and products in turn (a float mask per score: the "
                       "overlapped schedule spills with it)"
                     : "")};
  }
  return {config(context, KernelVariant::attention_mma, {rows, 64, D}),
          "attention_mma: head size " + str(D) + ", " + str(rows) +
              " queries a block; not attention_wgmma: " + refusedWgmma};
}

/// A reduction over a middle run of dimensions (squeeze-and-excitation's
/// mean over an NHWC map's H and W) gets a block per image from the
/// generic layout: 32 blocks at batch 32, one at batch 1. On sm_90 the
/// blocks of an image split the reduced run as a thread-block cluster
/// (kiln_reduce.cuh): enough of them for two blocks per multiprocessor, at
/// most 8 (the portable cluster size), each thread walking 4 rows or more,
/// rounded down to a power of two.
/// Returns 1 where the kernel does not apply (the reduction reads a value
/// computed in the group, or the kept inner size is not a whole number of
/// 16-byte vectors, at most 256 of them).
int64_t reductionSplit(FusionOp group, const TargetImage &target) {
  std::optional<MiddleReductionShape> shape = middleReductionShapeOf(group);
  if (target.tensorCores != TensorCoreGeneration::Wgmma || !shape)
    return 1;
  const int64_t rowsPerBlock = 256 / (shape->inner / shape->vector);
  int64_t wanted = std::min({int64_t(8), ceilDiv(2 * target.multiprocessors, shape->outer),
                             shape->length / (4 * rowsPerBlock)});
  int64_t split = 1; // a power of two, as every split the configuration takes
  while (split * 2 <= wanted)
    split *= 2;
  return split;
}

FailureOr<Choice> select(FusionOp group, const TargetImage &target, const SplitKKnobs &knobs) {
  MLIRContext *context = group.getContext();
  switch (group.getKind()) {
  case FusionKind::elementwise:
    // elementwise-unroll > 1: that many elements a thread a step, every
    // load issued before the first store (1 until timed on the GPU).
    if (knobs.elementwiseUnroll > 1)
      return Choice{config(context, KernelVariant::elementwise,
                           {1, knobs.elementwiseUnroll, 1}, 0, 1,
                           int64_t(target.multiprocessors) * 16),
                    "elementwise: grid-stride loop, " + str(knobs.elementwiseUnroll) +
                        " elements a thread a step"};
    return Choice{config(context, KernelVariant::elementwise, {}, 0, 1,
                         int64_t(target.multiprocessors) * 16),
                  "elementwise: grid-stride loop"};
  case FusionKind::reduction: {
    int64_t split = reductionSplit(group, target);
    return Choice{config(context, KernelVariant::reduction, {}, 0, split,
                         int64_t(target.multiprocessors) * 16),
                  split > 1 ? "reduction: the reduced run split over a cluster of " + str(split) +
                                  " blocks per output row"
                            : "reduction: grid-stride over the kept elements"};
  }
  case FusionKind::normalization: {
    std::optional<NormalizationShape> shape = normalizationShapeOf(group);
    if (!shape)
      return group.emitOpError("a normalization group needs a layer_norm or softmax");
    std::string rows;
    const bool runtimeRows = knobs.runtimeSizes && runtimeRowsApply(group, *shape, rows);
    rows = knobs.runtimeSizes ? "; " + rows : "";
    // One row takes a block: a warp would leave the rest of the GPU idle
    // (and ptxas spills the one-trip row loop of the warp kernel).
    if (shape->rowLength <= kWarpRowMaxLength && shape->rows >= 2)
      return Choice{config(context, KernelVariant::normalization_warp, {}, 0, 1, 0, {},
                           WgmmaSchedule::cooperative, 1, 1, false, runtimeRows),
                    "normalization_warp: " + str(shape->rows) + " rows of " +
                        str(shape->rowLength) + " elements, at most " +
                        str(kWarpRowMaxLength) + " (32 registers a lane)" + rows};
    return Choice{config(context, KernelVariant::normalization, {}, 0, 1, 0, {},
                         WgmmaSchedule::cooperative, 1, 1, false, runtimeRows),
                  "normalization: " + str(shape->rows) + " rows of " + str(shape->rowLength) +
                      " elements (a warp per row needs 2 or more rows of at most " +
                      str(kWarpRowMaxLength) + ")" + rows};
  }
  case FusionKind::pooling: {
    // Eight channels of a pixel a thread, one 16-byte load per window
    // position: ResNet-50's max pool at batch 32 (64 MB) took 38.5 us a
    // thread per element and takes 22.3 this way (GPU machine, 2026-12-03).
    Pool2dOp pool;
    group.walk([&](Pool2dOp op) { pool = op; });
    if (knobs.poolVector && pool && halfPrecision(pool.getType().getElementType()) &&
        pool.getType().getShape()[3] % 8 == 0)
      return Choice{config(context, KernelVariant::pooling, {1, 8, 1}, 0, 1,
                           int64_t(target.multiprocessors) * 16),
                    "pooling: grid-stride over pixels, eight channels a thread"};
    return Choice{config(context, KernelVariant::pooling, {}, 0, 1,
                         int64_t(target.multiprocessors) * 16),
                  "pooling: grid-stride over the outputs"};
  }
  case FusionKind::gemm_epilogue:
  case FusionKind::conv_epilogue:
    if (std::optional<GemmShape> gemm = gemmShapeOf(group)) {
      if (std::optional<GlobalPool> pool = globalPoolOf(group))
        return selectPooledGemm(group, *gemm, *pool, target, knobs);
      return selectGemm(group, *gemm, target, knobs);
    }
    if (globalPoolOf(group))
      return group.emitOpError("sums a global average pool in its epilogue, which takes a 1x1 "
                               "convolution with stride 1, no padding and one group");
    if (std::optional<ConvShape> conv = convShapeOf(group))
      return selectConv(group, *conv, target, knobs);
    return group.emitOpError("has no GEMM or convolution anchor to select a kernel for");
  case FusionKind::attention:
    if (std::optional<AttentionShape> attention = attentionShapeOf(group))
      return selectAttention(group, *attention, target, knobs);
    return group.emitOpError("has no attention op to select a kernel for");
  }
  return group.emitOpError("unknown fusion kind");
}

} // namespace

namespace {

struct SelectKernelsPass : kiln::impl::KilnSelectKernelsBase<SelectKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    std::string error;
    std::optional<TargetDescription> description = describeTargets(
        std::vector<std::string>(targets.begin(), targets.end()), error, {},
        static_cast<int>(multiprocessors));
    if (!description) {
      fn.emitError(error);
      return signalPassFailure();
    }
    std::string knobsError = splitKKnobsError(splitKMaxBlocks, splitKMinK, splitKTile,
                                              splitKStages, multiprocessors);
    if (knobsError.empty())
      knobsError = wgmmaKnobsError(wgmmaSchedule, wgmmaMulticast, wgmmaBlocksPerSM, wgmmaRows);
    if (knobsError.empty() && wgmmaCandidate < -1)
      knobsError = "wgmma-candidate " + std::to_string(wgmmaCandidate) +
                   ": -1 (the cost model's tile) or a candidate's index, 0 or more";
    if (knobsError.empty())
      knobsError = attentionKnobsError(attentionRows, attentionStages, attentionBlocksPerSM);
    if (knobsError.empty())
      knobsError = gemvKnobsError(gemmGemvRows);
    if (knobsError.empty())
      knobsError = fewRowsKnobsError(wgmmaFewRowsTiles);
    if (knobsError.empty())
      knobsError = depthwiseKnobsError(depthwiseColumns);
    if (knobsError.empty())
      knobsError = narrowKnobsError(gemmNarrowFmas);
    if (knobsError.empty())
      knobsError = streamKnobsError(gemmStreamIntensity, gemmStreamBlocks);
    if (knobsError.empty())
      knobsError = elementwiseKnobsError(elementwiseUnroll);
    if (!knobsError.empty()) {
      fn.emitError(knobsError);
      return signalPassFailure();
    }
    const TargetImage &target = description->primary();
    SplitKKnobs knobs{splitKMaxBlocks > 0 ? splitKMaxBlocks : 2 * target.multiprocessors,
                      splitKMinK, splitKTile, splitKStages, convWgmma, gemmNarrowFmas, gemmGemvRows,
                      gemmStreamIntensity, gemmStreamBlocks, poolVector, depthwiseColumns, depthwisePatches,
                      elementwiseUnroll,
                      wgmmaSchedule,
                      wgmmaMulticast, wgmmaBlocksPerSM, wgmmaRows, attentionRows, attentionStages,
                      wgmmaStreamK,
                      wgmmaResidualPrefetch, wgmmaResidualRing, attentionWgmma,
                      attentionOverlap, attentionPersistent, runtimeSizes,
                      wgmmaMatmul, wgmmaSplitK};
    knobs.wgmmaCandidate = wgmmaCandidate;
    knobs.wgmmaFewRows = wgmmaFewRows;
    knobs.wgmmaFewRowsTiles = wgmmaFewRowsTiles;
    knobs.wgmmaSwap = wgmmaSwap;
    knobs.wgmmaSwapWide = wgmmaSwapWide;
    knobs.wgmmaMulticastA = wgmmaMulticastA;
    knobs.wgmmaNarrow = wgmmaNarrow;
    knobs.attentionBlocksPerSM = attentionBlocksPerSM;
    WalkResult result = fn.walk([&](FusionOp group) {
      if (group->hasAttr(attr::kKernel)) {
        if (!isa<KernelConfigAttr>(group->getAttr(attr::kKernel))) {
          group.emitOpError("kiln.kernel must be a #kiln.kernel<...> configuration");
          return WalkResult::interrupt();
        }
        if (explain)
          group.emitRemark("kept the configuration written in the input");
        return WalkResult::advance();
      }
      FailureOr<Choice> choice = select(group, target, knobs);
      if (failed(choice))
        return WalkResult::interrupt();
      group->setAttr(attr::kKernel, choice->config);
      LLVM_DEBUG(llvm::dbgs() << group.getLoc() << ": " << choice->why << "\n");
      if (explain)
        group.emitRemark(choice->why);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
