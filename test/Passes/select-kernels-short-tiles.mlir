// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-rows=64}))" | FileCheck %s --check-prefix=SHORT
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=MODEL
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=9}))" | FileCheck %s --check-prefix=TUNER
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-rows=64 wgmma-schedule=cooperative}))" 2>&1 | FileCheck %s --check-prefix=BADCOOP
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-rows=64 wgmma-multicast=2}))" 2>&1 | FileCheck %s --check-prefix=BADPAIRS

// 64-row ping-pong tiles (each warpgroup a whole tile, its epilogue beside
// the other's main loop) where asked for: ViT-B/16's FFN up-projection with
// its GELU in 99 x 12 = 1188 tiles of 64 x 256, 9 a block on 132
// multiprocessors, 4 stages of 40 KiB beside a 128-row tile's staging. The
// cost model keeps its 192-row cooperative tiles (the 64-row ones are not
// measured yet); the tuner reaches them past every tile the model ranks.
// SHORT-LABEL: func.func @vit_ffn_up_gelu(
//       SHORT:   #kiln.kernel<variant = gemm_wgmma, tile = [64, 256, 64], stages = 4, grid_limit = 132, schedule = pingpong>
// MODEL-LABEL: func.func @vit_ffn_up_gelu(
//       MODEL:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 132>
// TUNER-LABEL: func.func @vit_ffn_up_gelu(
//       TUNER:   #kiln.kernel<variant = gemm_wgmma, tile = [64, 256, 64], stages = 4, grid_limit = 132, schedule = pingpong>
// BADCOOP: error: --wgmma-rows=64 takes the ping-pong schedule, one block a multiprocessor and no multicast
// BADPAIRS: error: --wgmma-rows=64 takes the ping-pong schedule, one block a multiprocessor and no multicast
func.func @vit_ffn_up_gelu(%x: tensor<6304x768xf16>, %w: tensor<3072x768xf16>, %b: tensor<3072xf16>) -> tensor<6304x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<6304x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<6304x3072xf16> {
  ^bb0(%a: tensor<6304x768xf16>, %bw: tensor<3072x768xf16>, %bb: tensor<3072xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<6304x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<6304x3072xf16>
    %g = kiln.gelu %l : tensor<6304x3072xf16>
    kiln.yield %g : tensor<6304x3072xf16>
  }
  return %0 : tensor<6304x3072xf16>
}

// -----

// With a residual the 256-wide tile's 128 accumulators a thread are past
// what a residual copied by rows allows (ping-pong takes no ring): 192
// wide (96 accumulators), 4 x 12 = 48 tiles on BERT's down-projection.
// SHORT-LABEL: func.func @bert_down(
//       SHORT:   #kiln.kernel<variant = gemm_wgmma, tile = [64, 192, 64], stages = 5, grid_limit = 132, schedule = pingpong>
// MODEL-LABEL: func.func @bert_down(
//       MODEL:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 128, residual_ring = true>
func.func @bert_down(%x: tensor<4096x3072xf16>, %w: tensor<768x3072xf16>, %r: tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x3072xf16>, %bw: tensor<768x3072xf16>, %res: tensor<4096x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x3072xf16>, tensor<768x3072xf16>) -> tensor<4096x768xf16>
    %s = kiln.add %l, %res : tensor<4096x768xf16>
    kiln.yield %s : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}

// -----

// A matmul's [K, N] B (and a batch) keeps 128 rows: the 64-row tile takes
// a linear's weight of one matrix.
// SHORT-LABEL: func.func @matmul(
//       SHORT:   #kiln.kernel<variant = gemm_wgmma, tile = [128, {{[0-9]+}}, 64]
func.func @matmul(%x: tensor<4096x768xf16>, %w: tensor<768x3072xf16>) -> tensor<4096x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<768x3072xf16>) -> tensor<4096x3072xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x3072xf16>):
    %l = kiln.matmul %a, %bw : (tensor<4096x768xf16>, tensor<768x3072xf16>) -> tensor<4096x3072xf16>
    kiln.yield %l : tensor<4096x3072xf16>
  }
  return %0 : tensor<4096x3072xf16>
}
