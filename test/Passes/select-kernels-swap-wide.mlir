// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-swap-wide=true}))" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-swap-wide=true explain=true}))" 2>&1 | FileCheck %s --check-prefix=WHY
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-swap-wide=true wgmma-candidate=0}))" | FileCheck %s --check-prefix=TUNER
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-swap-wide=true targets=sm_80}))" | FileCheck %s --check-prefix=SM80

// ResNet-50's 1x1 2048 -> 512 at 7 x 7, batch 32 (1568 x 512 x 2048): the
// cost model's 104 tiles of 128 x 64 fill under one wave of 132, 8192
// outputs a block. With wgmma-swap-wide the weight's rows are wgmma's M
// side: 64 tokens would take 208 blocks and 96 tokens 144, over the wave;
// 112 tokens take 14 token tiles by 8 weight tiles, 112 blocks of 7168
// outputs (under 8192 x 2048 multiply-adds a multiprocessor), in pairs
// sharing each weight tile, 8 stages. Off (the default), for the tuner's
// forced candidates, and without wgmma, as before.
// CHECK-LABEL: func.func @last_stage_1x1(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 112, 64], stages = 8, multicast = 2>
// OFF-LABEL: func.func @last_stage_1x1(
//       OFF:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 104>
// TUNER-LABEL: func.func @last_stage_1x1(
//       TUNER:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64]
// SM80-LABEL: func.func @last_stage_1x1(
//   SM80-NOT:   gemm_wgmma_swap
//       SM80:   return
// WHY: gemm_wgmma_swap: 1568 x 512 x 2048 on sm_90a; the cost model's 104 tiles of 128 x 64 (one a multiprocessor): 112 blocks of 64 x 112 in one wave, clusters of 2, 8 stages (wgmma-swap-wide)
func.func @last_stage_1x1(%x: tensor<32x7x7x2048xf16>, %w: tensor<512x1x1x2048xf16>, %b: tensor<512xf16>) -> tensor<32x7x7x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<32x7x7x2048xf16>, tensor<512x1x1x2048xf16>, tensor<512xf16>) -> tensor<32x7x7x512xf16> {
  ^bb0(%a: tensor<32x7x7x2048xf16>, %aw: tensor<512x1x1x2048xf16>, %ab: tensor<512xf16>):
    %y = kiln.conv2d %a, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x7x7x2048xf16>, tensor<512x1x1x2048xf16>, tensor<512xf16>) -> tensor<32x7x7x512xf16>
    %u = kiln.relu %y : tensor<32x7x7x512xf16>
    kiln.yield %u : tensor<32x7x7x512xf16>
  }
  return %0 : tensor<32x7x7x512xf16>
}

// -----

// EfficientNet-B0's 1x1 1152 -> 192 at 7 x 7 with its residual, batch 32:
// 39 tiles of 128 x 64 fill under half the GPU, so K split over mma.sync
// (150 blocks of 64 x 64, split 2: two on some multiprocessors, 64 x 64 x
// 1152 multiply-adds there). 64 tokens by 3 weight tiles in pairs are 78
// blocks of as many, on wgmma.
// CHECK-LABEL: func.func @efficientnet_projection(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 64, 64], stages = 8, multicast = 2>
// OFF-LABEL: func.func @efficientnet_projection(
//       OFF:   #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64], stages = 3, split_k = 2>
// WHY: gemm_wgmma_swap: 1568 x 192 x 1152 on sm_90a; gemm_split_k's 150 blocks of 64 x 64 (split 2, 2 a multiprocessor): 78 blocks of 64 x 64 in one wave, clusters of 2, 8 stages (wgmma-swap-wide)
func.func @efficientnet_projection(%x: tensor<32x7x7x1152xf16>, %w: tensor<192x1x1x1152xf16>, %b: tensor<192xf16>, %r: tensor<32x7x7x192xf16>) -> tensor<32x7x7x192xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<32x7x7x1152xf16>, tensor<192x1x1x1152xf16>, tensor<192xf16>, tensor<32x7x7x192xf16>) -> tensor<32x7x7x192xf16> {
  ^bb0(%a: tensor<32x7x7x1152xf16>, %aw: tensor<192x1x1x1152xf16>, %ab: tensor<192xf16>, %ar: tensor<32x7x7x192xf16>):
    %y = kiln.conv2d %a, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x7x7x1152xf16>, tensor<192x1x1x1152xf16>, tensor<192xf16>) -> tensor<32x7x7x192xf16>
    %t = kiln.add %y, %ar : tensor<32x7x7x192xf16>
    kiln.yield %t : tensor<32x7x7x192xf16>
  }
  return %0 : tensor<32x7x7x192xf16>
}

// -----

// Not with a short main loop: the same layer over K = 448 (7 k-steps).
// CHECK-LABEL: func.func @short_k(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64]
// WHY: not wide swapped tiles: 7 k-steps, under 8
func.func @short_k(%x: tensor<1568x448xf16>, %w: tensor<512x448xf16>) -> tensor<1568x512xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<1568x448xf16>, tensor<512x448xf16>) -> tensor<1568x512xf16> {
  ^bb0(%a: tensor<1568x448xf16>, %bw: tensor<512x448xf16>):
    %l = kiln.linear %a, %bw : (tensor<1568x448xf16>, tensor<512x448xf16>) -> tensor<1568x512xf16>
    kiln.yield %l : tensor<1568x512xf16>
  }
  return %0 : tensor<1568x512xf16>
}

// -----

// Not where the weight's rows are not whole tiles of 64 (N = 520).
// CHECK-LABEL: func.func @ragged_weight(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma,
// WHY: not wide swapped tiles: they take a [N, K] B, no batch, K % 8 == 0 and N % 64 == 0
func.func @ragged_weight(%x: tensor<1568x2048xf16>, %w: tensor<520x2048xf16>) -> tensor<1568x520xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<1568x2048xf16>, tensor<520x2048xf16>) -> tensor<1568x520xf16> {
  ^bb0(%a: tensor<1568x2048xf16>, %bw: tensor<520x2048xf16>):
    %l = kiln.linear %a, %bw : (tensor<1568x2048xf16>, tensor<520x2048xf16>) -> tensor<1568x520xf16>
    kiln.yield %l : tensor<1568x520xf16>
  }
  return %0 : tensor<1568x520xf16>
}

// -----

// Not where the Hopper tiles fill a wave: BERT's QKV at batch 32 (384
// tiles).
// CHECK-LABEL: func.func @full_wave(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma,
// WHY: not wide swapped tiles: 384 Hopper tiles fill a wave of 132
func.func @full_wave(%x: tensor<4096x768xf16>, %w: tensor<2304x768xf16>) -> tensor<4096x2304xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<2304x768xf16>) -> tensor<4096x2304xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<2304x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<2304x768xf16>) -> tensor<4096x2304xf16>
    kiln.yield %l : tensor<4096x2304xf16>
  }
  return %0 : tensor<4096x2304xf16>
}

// -----

// Not where no wide token tile fills one wave with fewer outputs: BERT's
// FFN down-projection at batch 32 (128 tiles of 128 x 192) would take 384
// blocks of 128 tokens.
// CHECK-LABEL: func.func @no_wide_tile(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64]
// WHY: not wide swapped tiles: none of 64 to 128 tokens fills one wave of 132 within the cost model's 128 tiles of 128 x 192 (one a multiprocessor)
func.func @no_wide_tile(%x: tensor<4096x3072xf16>, %w: tensor<768x3072xf16>) -> tensor<4096x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x3072xf16>, tensor<768x3072xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x3072xf16>, %bw: tensor<768x3072xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x3072xf16>, tensor<768x3072xf16>) -> tensor<4096x768xf16>
    kiln.yield %l : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}

// -----

// Not where K split over mma.sync leaves each multiprocessor less: ResNet-50's
// 1x1 512 -> 128 at 28 x 28, batch 1 (104 blocks, K split 4, 64 x 64 x 128
// a multiprocessor, where 64 tokens would take all of K).
// CHECK-LABEL: func.func @split_k_shorter(
//       CHECK:   #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64], stages = 3, split_k = 4>
// WHY: not wide swapped tiles: none of 64 to 128 tokens fills one wave of 132 within gemm_split_k's 104 blocks of 64 x 64 (split 4, 1 a multiprocessor)
func.func @split_k_shorter(%x: tensor<1x28x28x512xf16>, %w: tensor<128x1x1x512xf16>, %b: tensor<128xf16>) -> tensor<1x28x28x128xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<1x28x28x512xf16>, tensor<128x1x1x512xf16>, tensor<128xf16>) -> tensor<1x28x28x128xf16> {
  ^bb0(%a: tensor<1x28x28x512xf16>, %aw: tensor<128x1x1x512xf16>, %ab: tensor<128xf16>):
    %y = kiln.conv2d %a, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x28x28x512xf16>, tensor<128x1x1x512xf16>, tensor<128xf16>) -> tensor<1x28x28x128xf16>
    %u = kiln.relu %y : tensor<1x28x28x128xf16>
    kiln.yield %u : tensor<1x28x28x128xf16>
  }
  return %0 : tensor<1x28x28x128xf16>
}

// -----

// Not under 4 row tiles of 128, which the few-row rules take: the FFN
// block's up-projection at batch 1 (128 x 4096 x 1024).
// CHECK-LABEL: func.func @few_rows(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64]
// WHY: not wide swapped tiles: 1 row tiles of 128, under 4
func.func @few_rows(%x: tensor<128x1024xf16>, %w: tensor<4096x1024xf16>) -> tensor<128x4096xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x1024xf16>, tensor<4096x1024xf16>) -> tensor<128x4096xf16> {
  ^bb0(%a: tensor<128x1024xf16>, %bw: tensor<4096x1024xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x1024xf16>, tensor<4096x1024xf16>) -> tensor<128x4096xf16>
    %g = kiln.gelu %l : tensor<128x4096xf16>
    kiln.yield %g : tensor<128x4096xf16>
  }
  return %0 : tensor<128x4096xf16>
}
