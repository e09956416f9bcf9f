// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-swap-wide=false}))" | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{explain=true}))" 2>&1 | FileCheck %s --check-prefix=WHY
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=0}))" | FileCheck %s --check-prefix=TUNER
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{targets=sm_80}))" | FileCheck %s --check-prefix=SM80

// EfficientNet-B0's 1x1 1152 -> 192 at 7 x 7 with its residual, batch 32:
// 39 tiles of 128 x 64 fill under half the GPU, so K would split over
// mma.sync (150 blocks of 64 x 64, split 2: two on some multiprocessors,
// 64 x 64 x 1152 multiply-adds there). 64 tokens by 3 weight tiles in
// pairs are 78 blocks of as many, on wgmma. With wgmma-swap-wide=false,
// for the tuner's forced candidates, and without wgmma, K splits.
// CHECK-LABEL: func.func @efficientnet_projection(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 64, 64], stages = 8, multicast = 2>
// OFF-LABEL: func.func @efficientnet_projection(
//       OFF:   #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64], stages = 3, split_k = 2>
// TUNER-LABEL: func.func @efficientnet_projection(
//       TUNER:   #kiln.kernel<variant = gemm_split_k
// SM80-LABEL: func.func @efficientnet_projection(
//   SM80-NOT:   gemm_wgmma_swap
//       SM80:   return
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

// Not against the Hopper GEMM's tiles under one wave: ResNet-50's 1x1 2048
// -> 512 at 7 x 7, batch 32 (104 tiles of 128 x 64) took 12.3 us on 112
// swapped blocks of 64 x 112 against 9.6 (the H100, 2026-12-07).
// CHECK-LABEL: func.func @last_stage_1x1(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 104>
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

// Not with a short main loop: the projection over K = 448 (7 k-steps).
// CHECK-LABEL: func.func @short_k(
//       CHECK:   #kiln.kernel<variant = gemm_split_k
// WHY: not wide swapped tiles: 7 k-steps, under 8
func.func @short_k(%x: tensor<1568x448xf16>, %w: tensor<192x448xf16>) -> tensor<1568x192xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<1568x448xf16>, tensor<192x448xf16>) -> tensor<1568x192xf16> {
  ^bb0(%a: tensor<1568x448xf16>, %bw: tensor<192x448xf16>):
    %l = kiln.linear %a, %bw : (tensor<1568x448xf16>, tensor<192x448xf16>) -> tensor<1568x192xf16>
    kiln.yield %l : tensor<1568x192xf16>
  }
  return %0 : tensor<1568x192xf16>
}

// -----

// Not where the weight's rows are not whole tiles of 64 (MobileNetV3's
// 960 -> 160 at 7 x 7).
// CHECK-LABEL: func.func @ragged_weight(
//       CHECK:   #kiln.kernel<variant = gemm_split_k
// WHY: not wide swapped tiles: they take a [N, K] B, no batch, K % 8 == 0 and N % 64 == 0
func.func @ragged_weight(%x: tensor<1568x960xf16>, %w: tensor<160x960xf16>) -> tensor<1568x160xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<1568x960xf16>, tensor<160x960xf16>) -> tensor<1568x160xf16> {
  ^bb0(%a: tensor<1568x960xf16>, %bw: tensor<160x960xf16>):
    %l = kiln.linear %a, %bw : (tensor<1568x960xf16>, tensor<160x960xf16>) -> tensor<1568x160xf16>
    kiln.yield %l : tensor<1568x160xf16>
  }
  return %0 : tensor<1568x160xf16>
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

// Not under 4 row tiles of 128, which the few-row rules take (and explain).
// CHECK-LABEL: func.func @few_rows(
//       CHECK:   #kiln.kernel<variant = gemm_split_k
// WHY: gemm_split_k: 320 x 192 x 1152 is 3 tiles of 128 x 256, under a quarter of 132 multiprocessors; split 8
func.func @few_rows(%x: tensor<320x1152xf16>, %w: tensor<192x1152xf16>) -> tensor<320x192xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<320x1152xf16>, tensor<192x1152xf16>) -> tensor<320x192xf16> {
  ^bb0(%a: tensor<320x1152xf16>, %bw: tensor<192x1152xf16>):
    %l = kiln.linear %a, %bw : (tensor<320x1152xf16>, tensor<192x1152xf16>) -> tensor<320x192xf16>
    kiln.yield %l : tensor<320x192xf16>
  }
  return %0 : tensor<320x192xf16>
}
