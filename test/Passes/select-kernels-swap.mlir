// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-swap=true}))" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-swap=true explain=true}))" 2>&1 | FileCheck %s --check-prefix=WHY
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-swap=true targets=sm_80}))" | FileCheck %s --check-prefix=SM80

// GPT-2's FFN down-projection at batch 1 (128 tokens, 768 wide): 12 tiles
// of 128 x 64, under the few-row Hopper GEMM's quarter of the GPU. With
// wgmma-swap the weight's rows are wgmma's M side: 12 weight tiles by 8
// token tiles of 16 (96 blocks, one wave), clusters of 4 sharing each
// weight tile, the deepest ring up to 12 stages that lets two blocks share
// a multiprocessor (10 at 16 tokens). Off (the default), and
// without wgmma (sm_80), K stays split across a cluster.
// CHECK-LABEL: func.func @gpt2_ffn_down_batch1(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 16, 64], stages = 10, multicast = 4>
// OFF-LABEL: func.func @gpt2_ffn_down_batch1(
//       OFF:   #kiln.kernel<variant = gemm_split_k
// SM80-LABEL: func.func @gpt2_ffn_down_batch1(
//       SM80:   #kiln.kernel<variant = gemm_split_k
// WHY: gemm_wgmma_swap: 128 x 768 x 3072 is 12 tiles of 128 x 64, under 33 (wgmma-swap): the weight's rows as wgmma's M, 96 blocks of 64 x 16, clusters of 4, 10 stages
func.func @gpt2_ffn_down_batch1(%x: tensor<128x3072xf16>, %w: tensor<768x3072xf16>, %b: tensor<768xf16>, %r: tensor<128x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b, %r : tensor<128x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>, tensor<128x768xf16>) -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x3072xf16>, %bw: tensor<768x3072xf16>, %bb: tensor<768xf16>, %br: tensor<128x768xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<128x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<128x768xf16>
    %s = kiln.add %l, %br : tensor<128x768xf16>
    kiln.yield %s : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// ViT-B/16's output projection at batch 1 (197 tokens): 13 token tiles of
// 16 by 12 would be 156 blocks, over a wave, so tiles of 32 tokens: 7,
// rounded up to two clusters of 4 (a block past the tokens stores
// nothing). K = 768 is 12 k-steps; 8 stages of 32 tokens let two blocks
// share a multiprocessor.
// CHECK-LABEL: func.func @vit_out_proj_batch1(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 32, 64], stages = 8, multicast = 4>
// WHY: 96 blocks of 64 x 32, clusters of 4, 8 stages
func.func @vit_out_proj_batch1(%x: tensor<197x768xbf16>, %w: tensor<768x768xbf16>, %b: tensor<768xbf16>) -> tensor<197x768xbf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<197x768xbf16>, tensor<768x768xbf16>, tensor<768xbf16>) -> tensor<197x768xbf16> {
  ^bb0(%a: tensor<197x768xbf16>, %bw: tensor<768x768xbf16>, %bb: tensor<768xbf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<197x768xbf16>, tensor<768x768xbf16>, tensor<768xbf16>) -> tensor<197x768xbf16>
    kiln.yield %l : tensor<197x768xbf16>
  }
  return %0 : tensor<197x768xbf16>
}

// -----

// 20 tokens: two token tiles of 16, a cluster of 2; K = 128 is 2 k-steps,
// yet a ring of 3 stages (each consumer warpgroup holds one).
// CHECK-LABEL: func.func @few_tokens(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 16, 64], stages = 3, multicast = 2>
func.func @few_tokens(%x: tensor<20x128xf16>, %w: tensor<1024x128xf16>, %b: tensor<1024xf16>) -> tensor<20x1024xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<20x128xf16>, tensor<1024x128xf16>, tensor<1024xf16>) -> tensor<20x1024xf16> {
  ^bb0(%a: tensor<20x128xf16>, %bw: tensor<1024x128xf16>, %bb: tensor<1024xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<20x128xf16>, tensor<1024x128xf16>, tensor<1024xf16>) -> tensor<20x1024xf16>
    kiln.yield %l : tensor<20x1024xf16>
  }
  return %0 : tensor<20x1024xf16>
}

// -----

// Not where the weight's rows are not whole tiles of 64 (N = 1000), nor
// where the few-row Hopper GEMM already takes the shape (GPT-2's QKV: 36
// tiles of 128 x 64), nor for a [K, N] B (matmul).
// CHECK-LABEL: func.func @ragged_weight(
//       CHECK:   #kiln.kernel<variant = gemm_split_k
func.func @ragged_weight(%x: tensor<128x3072xf16>, %w: tensor<1000x3072xf16>, %b: tensor<1000xf16>) -> tensor<128x1000xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<128x3072xf16>, tensor<1000x3072xf16>, tensor<1000xf16>) -> tensor<128x1000xf16> {
  ^bb0(%a: tensor<128x3072xf16>, %bw: tensor<1000x3072xf16>, %bb: tensor<1000xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<128x3072xf16>, tensor<1000x3072xf16>, tensor<1000xf16>) -> tensor<128x1000xf16>
    kiln.yield %l : tensor<128x1000xf16>
  }
  return %0 : tensor<128x1000xf16>
}

// -----

// CHECK-LABEL: func.func @qkv_batch1(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 36>
func.func @qkv_batch1(%x: tensor<128x768xf16>, %w: tensor<2304x768xf16>, %b: tensor<2304xf16>) -> tensor<128x2304xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<128x768xf16>, tensor<2304x768xf16>, tensor<2304xf16>) -> tensor<128x2304xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<2304x768xf16>, %bb: tensor<2304xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<128x768xf16>, tensor<2304x768xf16>, tensor<2304xf16>) -> tensor<128x2304xf16>
    kiln.yield %l : tensor<128x2304xf16>
  }
  return %0 : tensor<128x2304xf16>
}

// -----

// CHECK-LABEL: func.func @matmul_batch1(
//   CHECK-NOT:   gemm_wgmma_swap
func.func @matmul_batch1(%x: tensor<128x3072xf16>, %w: tensor<3072x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x3072xf16>, tensor<3072x768xf16>) -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x3072xf16>, %bw: tensor<3072x768xf16>):
    %l = kiln.matmul %a, %bw : (tensor<128x3072xf16>, tensor<3072x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}
