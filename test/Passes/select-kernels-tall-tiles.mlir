// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-rows=128}))" | FileCheck %s --check-prefix=SHORT
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=MODEL
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-rows=192}))" | FileCheck %s --check-prefix=TALL
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-rows=96}))" 2>&1 | FileCheck %s --check-prefix=BADROWS
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-rows=192 wgmma-schedule=pingpong}))" 2>&1 | FileCheck %s --check-prefix=BADTALL

// 192-row tiles where the cost model finds them faster (wgmma-rows=0, the
// default):
// ViT's FFN down-projection at batch 32 (6304 rows) in 33 x 4 = 132 tiles
// of 192 x 192, one wave, where 128 x 192 tiles make 200 (two waves, the
// second half empty); 3 stages of 48 KiB fit beside the staging.
// SHORT-LABEL: func.func @vit_down(
//       SHORT:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 132>
// MODEL-LABEL: func.func @vit_down(
//       MODEL:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 132>
// TALL-LABEL: func.func @vit_down(
//       TALL:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 132>
// BADROWS: error: --wgmma-rows must be 0 (the cost model's choice), 128 or 192, got 96
// BADTALL: error: --wgmma-rows=192 takes the cooperative schedule, one block a multiprocessor and no multicast
func.func @vit_down(%x: tensor<6304x3072xf16>, %w: tensor<768x3072xf16>, %r: tensor<6304x768xf16>) -> tensor<6304x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<6304x3072xf16>, tensor<768x3072xf16>, tensor<6304x768xf16>) -> tensor<6304x768xf16> {
  ^bb0(%a: tensor<6304x3072xf16>, %bw: tensor<768x3072xf16>, %res: tensor<6304x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<6304x3072xf16>, tensor<768x3072xf16>) -> tensor<6304x768xf16>
    %s = kiln.add %l, %res : tensor<6304x768xf16>
    kiln.yield %s : tensor<6304x768xf16>
  }
  return %0 : tensor<6304x768xf16>
}

// -----

// BERT's (4096 rows): 22 row tiles of 192 make 88 tiles, two thirds of the
// multiprocessors, where 128 x 192 tiles make 128: the model keeps 128
// rows; forced, 192.
// MODEL-LABEL: func.func @bert_down(
//       MODEL:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 128>
// TALL-LABEL: func.func @bert_down(
//       TALL:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 88>
func.func @bert_down(%x: tensor<4096x3072xf16>, %w: tensor<768x3072xf16>, %r: tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x3072xf16>, %bw: tensor<768x3072xf16>, %res: tensor<4096x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x3072xf16>, tensor<768x3072xf16>) -> tensor<4096x768xf16>
    %s = kiln.add %l, %res : tensor<4096x768xf16>
    kiln.yield %s : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}
