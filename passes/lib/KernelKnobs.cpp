//===- KernelKnobs.cpp - the checks of kiln-select-kernels' knobs ---------===//
//
// Each knob's range, with the message that names its flag: the pass, the
// compiler driver and kiln-compile check before anything is compiled.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/KernelSelection.h"

std::string kiln::splitKKnobsError(int64_t maxBlocks, int64_t minK, int64_t kTile,
                                   int64_t stages, int64_t multiprocessors) {
  if (kTile > 0 && kTile % 16 == 0 && stages >= 2 && minK > 0 && maxBlocks >= 0 &&
      multiprocessors >= 0)
    return "";
  return "split-K options: --split-k-k-tile must be a positive multiple of 16, "
         "--split-k-stages 2 or more, --split-k-min-k positive and --split-k-max-blocks "
         "and --multiprocessors not negative (got " +
         std::to_string(kTile) + ", " + std::to_string(stages) + ", " + std::to_string(minK) +
         ", " + std::to_string(maxBlocks) + " and " + std::to_string(multiprocessors) + ")";
}

std::string kiln::elementwiseKnobsError(int64_t unroll) {
  if (unroll != 1 && unroll != 2 && unroll != 4 && unroll != 8)
    return "--elementwise-unroll must be 1, 2, 4 or 8, got " + std::to_string(unroll);
  return "";
}

std::string kiln::narrowKnobsError(int64_t fmas) {
  if (fmas < 0 || fmas > 128 * 48)
    return "--gemm-narrow-fmas must be 0 (never) to 6144 (the largest K x N the kernel's "
           "24 KiB weight holds), got " +
           std::to_string(fmas);
  return "";
}

std::string kiln::streamKnobsError(int64_t intensity, int64_t blocks) {
  if (blocks < 2 || blocks > 4)
    return "--gemm-stream-blocks must be 2, 3 or 4, got " + std::to_string(blocks);
  // K N / (K + N) is at most 128 where both are at most 256.
  if (intensity < 0 || intensity > 128)
    return "--gemm-stream-intensity must be 0 (never) to 128 (every GEMM of K and N up to 256), "
           "got " +
           std::to_string(intensity);
  return "";
}

std::string kiln::depthwiseKnobsError(int64_t columns) {
  if (columns != 1 && columns != 2 && columns != 4)
    return "--depthwise-columns must be 1, 2 or 4, got " + std::to_string(columns);
  return "";
}

std::string kiln::gemvKnobsError(int64_t rows) {
  if (rows < 0 || rows > 32)
    return "--gemm-gemv-rows must be 0 (never) to 32 (the kernel's most), got " +
           std::to_string(rows);
  return "";
}

std::string kiln::fewRowsKnobsError(int64_t tiles) {
  if (tiles < 0)
    return "--wgmma-few-rows-tiles must be 0 (a quarter of the multiprocessors) or a count "
           "of 128 x 64 tiles, got " +
           std::to_string(tiles);
  return "";
}

std::string kiln::attentionKnobsError(int64_t rows, int64_t stages, int64_t blocksPerSM) {
  if (rows != 0 && rows != 64 && rows != 128)
    return "--attention-rows must be 0 (the cost model's choice), 64 or 128, got " +
           std::to_string(rows);
  if (blocksPerSM != 0 && blocksPerSM != 4)
    return "--attention-blocks-per-sm must be 0 (the cost model's choice) or 4, got " +
           std::to_string(blocksPerSM);
  if (blocksPerSM == 4 && rows == 128)
    return "--attention-blocks-per-sm=4 takes 64 queries a block, not --attention-rows=128";
  if (blocksPerSM == 4 && stages == 3)
    return "--attention-blocks-per-sm=4 takes 2 stages (four blocks' shared memory), not "
           "--attention-stages=3";
  if (stages != 0 && stages != 2 && stages != 3)
    return "--attention-stages must be 0 (the kernel's 2), 2 or 3, got " +
           std::to_string(stages);
  return "";
}

std::string kiln::wgmmaKnobsError(const std::string &schedule, int64_t multicast,
                                  int64_t blocksPerSM, int64_t rows) {
  if (schedule != "auto" && schedule != "cooperative" && schedule != "pingpong" &&
      schedule != "epilogue_warpgroups")
    return "--wgmma-schedule must be auto, cooperative, pingpong or epilogue_warpgroups, got '" +
           schedule + "'";
  if (multicast < 0 || multicast > 2)
    return "--wgmma-multicast must be 0 (the cost model's choice), 1 or 2, got " +
           std::to_string(multicast);
  if (blocksPerSM < 0 || blocksPerSM > 2)
    return "--wgmma-blocks-per-sm must be 0 (the cost model's choice), 1 or 2, got " +
           std::to_string(blocksPerSM);
  if (rows != 0 && rows != 128 && rows != 192)
    return "--wgmma-rows must be 0 (the cost model's choice), 128 or 192, got " +
           std::to_string(rows);
  if (rows == 192 && ((schedule != "auto" && schedule != "cooperative") || multicast == 2 ||
                      blocksPerSM == 2))
    return "--wgmma-rows=192 takes the cooperative schedule, one block a multiprocessor and "
           "no multicast";
  if (schedule == "epilogue_warpgroups" && (multicast == 2 || blocksPerSM == 2))
    return "--wgmma-schedule=epilogue_warpgroups takes one block a multiprocessor and no "
           "multicast";
  return "";
}
