// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-few-rows=false}))" | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{explain=true}))" 2>&1 | FileCheck %s --check-prefix=WHY
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{targets=sm_80}))" | FileCheck %s --check-prefix=SM80
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-split-k=true}))" | FileCheck %s --check-prefix=PAIRS
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-few-rows-tiles=12 explain=true}))" 2>&1 | FileCheck %s --check-prefix=TWELVE
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-few-rows-tiles=-1}))" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: --wgmma-few-rows-tiles must be 0 (a quarter of the multiprocessors) or a count of 128 x 64 tiles, got -1

// GPT-2's QKV projection at batch 1 (128 tokens): 36 tiles of 128 x 64, a
// quarter of the 132 multiprocessors, so the Hopper GEMM takes it, a block
// a tile walking all 12 k-steps (wgmma-split-k still splits them over
// pairs, 6 each); without the switch, 64 x 64 mma.sync tiles with K split
// across a cluster; without wgmma (sm_80), the same.
// CHECK-LABEL: func.func @gpt2_qkv_batch1(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 36>
// PAIRS-LABEL: func.func @gpt2_qkv_batch1(
//       PAIRS:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, split_k = 2, grid_limit = 72>
// OFF-LABEL: func.func @gpt2_qkv_batch1(
//       OFF:   #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64], stages = 3, split_k = 2>
// SM80-LABEL: func.func @gpt2_qkv_batch1(
//       SM80:   #kiln.kernel<variant = gemm_split_k
// WHY: gemm_wgmma: 128 x 2304 x 768 on sm_90a; cooperative 128 x 64 tiles, 6 stages
// WHY-SAME: not gemm_split_k: wgmma-few-rows, and 36 tiles of 128 x 64, 33 or more (a quarter of 132 multiprocessors)
func.func @gpt2_qkv_batch1(%x: tensor<128x768xf16>, %w: tensor<2304x768xf16>, %b: tensor<2304xf16>) -> tensor<128x2304xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<128x768xf16>, tensor<2304x768xf16>, tensor<2304xf16>) -> tensor<128x2304xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<2304x768xf16>, %bb: tensor<2304xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<128x768xf16>, tensor<2304x768xf16>, tensor<2304xf16>) -> tensor<128x2304xf16>
    kiln.yield %l : tensor<128x2304xf16>
  }
  return %0 : tensor<128x2304xf16>
}

// -----

// ViT-B/16's FFN up-projection at batch 1 (197 tokens, two row tiles, the
// second part empty): 96 tiles of 128 x 64 on 96 multiprocessors.
// CHECK-LABEL: func.func @vit_ffn_up_batch1(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 96>
// OFF-LABEL: func.func @vit_ffn_up_batch1(
//       OFF:   variant = gemm_split_k
func.func @vit_ffn_up_batch1(%x: tensor<197x768xf16>, %w: tensor<3072x768xf16>, %b: tensor<3072xf16>) -> tensor<197x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<197x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<197x3072xf16> {
  ^bb0(%a: tensor<197x768xf16>, %bw: tensor<3072x768xf16>, %bb: tensor<3072xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<197x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<197x3072xf16>
    %g = kiln.gelu %l : tensor<197x3072xf16>
    kiln.yield %g : tensor<197x3072xf16>
  }
  return %0 : tensor<197x3072xf16>
}

// -----

// Not where 128 x 64 tiles fill under a quarter of the GPU (GPT-2's output
// projection at batch 1: 12 tiles) unless wgmma-few-rows-tiles lowers the
// bound, nor over four row tiles or more (512 tokens: the batch-32 rule's),
// nor for a [K, N] B (matmul) or a batch.
// TWELVE: not gemm_split_k: wgmma-few-rows, and 12 tiles of 128 x 64, 12 or more (wgmma-few-rows-tiles)
// TWELVE-LABEL: func.func @out_proj_batch1(
//       TWELVE:   variant = gemm_wgmma, tile = [128, 64, 64]
// TWELVE-LABEL: func.func @four_row_tiles(
//       TWELVE:   variant = gemm_split_k
// CHECK-LABEL: func.func @out_proj_batch1(
//       CHECK:   variant = gemm_split_k
// CHECK-LABEL: func.func @four_row_tiles(
//       CHECK:   variant = gemm_split_k
// CHECK-LABEL: func.func @matmul_kn(
//       CHECK:   variant = gemm_split_k
// WHY: gemm_split_k: 128 x 768 x 768 is 3 tiles of 128 x 256
// WHY: gemm_split_k: 512 x 256 x 768 is 4 tiles of 128 x 256
// WHY: gemm_split_k: 128 x 2304 x 768 is 9 tiles of 128 x 256
func.func @out_proj_batch1(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>, %b: tensor<768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<128x768xf16>, tensor<768x768xf16>, tensor<768xf16>) -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>, %bb: tensor<768xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<128x768xf16>, tensor<768x768xf16>, tensor<768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}
func.func @four_row_tiles(%x: tensor<512x768xf16>, %w: tensor<256x768xf16>, %b: tensor<256xf16>) -> tensor<512x256xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<512x768xf16>, tensor<256x768xf16>, tensor<256xf16>) -> tensor<512x256xf16> {
  ^bb0(%a: tensor<512x768xf16>, %bw: tensor<256x768xf16>, %bb: tensor<256xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<512x768xf16>, tensor<256x768xf16>, tensor<256xf16>) -> tensor<512x256xf16>
    kiln.yield %l : tensor<512x256xf16>
  }
  return %0 : tensor<512x256xf16>
}
func.func @matmul_kn(%x: tensor<128x768xf16>, %w: tensor<768x2304xf16>) -> tensor<128x2304xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x2304xf16>) -> tensor<128x2304xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x2304xf16>):
    %m = kiln.matmul %a, %bw : (tensor<128x768xf16>, tensor<768x2304xf16>) -> tensor<128x2304xf16>
    kiln.yield %m : tensor<128x2304xf16>
  }
  return %0 : tensor<128x2304xf16>
}
