//===- KernelSelection.h - kiln-select-kernels' knobs -----------*- C++ -*-===//
//
// The selection policy's defaults and the checks of its knobs, shared by the
// pass, the graph pipeline's options and the tools that expose them as
// flags (passes/lib/KernelKnobs.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_KERNELSELECTION_H
#define KILN_PASSES_KERNELSELECTION_H

#include <cstdint>
#include <string>

namespace kiln {

/// Each block of a split walks at least this much of K.
inline constexpr int64_t kSplitKMinK = 128;
/// 64-wide k tiles, 3 deep: 32 KiB in flight per block. At batch 1 a
/// transformer's GEMMs are a few hundred such blocks streaming weights, and
/// bytes in flight set their pace: 32-wide tiles (16 KiB in flight) made
/// BERT 4% and ViT 10% slower at batch 1; 4 or 6 stages or 128-wide tiles
/// did not help (H200 sweep, bench/NOTES.md).
inline constexpr int64_t kSplitKTile = 64;
inline constexpr int64_t kSplitKStages = 3;

/// kiln-fold-layer-norm's least layer-norm output: 4 MiB, a pre-norm
/// transformer's at batch 32 (ViT-B/16 9.7 MB, GPT-2 at 128 tokens 6.3 MB).
/// At batch 1 (0.3 MB) the norm's kernel is launch-bound and a statistics
/// kernel would cost the same launch. On an H100 (2026-12-05) the fold took
/// ViT-B/16 at batch 32 from 2.504 to 2.484 ms and GPT-2 from 1.625 to
/// 1.597.
inline constexpr int64_t kFoldLayerNormBytes = 4 << 20;

/// kiln-merge-shortcut-conv's least result: 4 MiB, every projection
/// shortcut of ResNet-50 at batch 32 (6.4 MB in its last stage, 51 MB in
/// its first). At batch 1 (0.2-1.6 MB) the convolutions run split-K on
/// mma.sync, which reads no concat.
inline constexpr int64_t kMergeShortcutBytes = 4 << 20;

/// Empty when the knobs are usable (a max-blocks or multiprocessor count of
/// 0 means the target's default), else the error, naming the flags.
std::string splitKKnobsError(int64_t maxBlocks, int64_t minK, int64_t kTile, int64_t stages,
                             int64_t multiprocessors);

/// Empty when `schedule` names a Hopper main-loop schedule the selection
/// stage takes (auto, cooperative, pingpong) and `multicast` a cluster size
/// and `blocksPerSM` a count of blocks a multiprocessor (0: the cost
/// model's, 1, 2) and `rows` the tiles' rows (0: the cost model's, 128,
/// 192), else the error.
std::string wgmmaKnobsError(const std::string &schedule, int64_t multicast,
                            int64_t blocksPerSM, int64_t rows = 128);
/// "" when --attention-rows is 0, 64 or 128 and --attention-stages 0, 2 or
/// 3, else the message.
std::string attentionKnobsError(int64_t rows, int64_t stages = 0, int64_t blocksPerSM = 0);
/// "" or why --gemm-gemv-rows is out of range (0 to 32).
std::string gemvKnobsError(int64_t rows);
/// "" or why --wgmma-few-rows-tiles is negative.
std::string fewRowsKnobsError(int64_t tiles);
/// "" or why --depthwise-columns is not 1, 2 or 4.
std::string depthwiseKnobsError(int64_t columns);
/// "" or why --gemm-narrow-fmas is out of range (0 to 6144).
std::string narrowKnobsError(int64_t fmas);
/// "" or why --gemm-stream-intensity is out of range (0 to 128).
std::string streamKnobsError(int64_t intensity, int64_t blocks);
/// "" or why --elementwise-unroll is not 1, 2, 4 or 8.
std::string elementwiseKnobsError(int64_t unroll);

} // namespace kiln

#endif // KILN_PASSES_KERNELSELECTION_H
