// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-narrow=true}))" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-narrow=true explain=true}))" 2>&1 | FileCheck %s --check-prefix=WHY
// The graph pipeline's option reaches the selection stage (kiln-compile's
// --wgmma-narrow sets it).
// RUN: kiln-opt %s --split-input-file --kiln-graph-pipeline='wgmma-narrow=true' | FileCheck %s --check-prefix=PIPELINE
// PIPELINE-LABEL: func.func @last_stage_1x1(
//       PIPELINE:   tile = [128, 56, 64], stages = 6, grid_limit = 130

// wgmma-narrow takes 128 x 56 tiles where the busiest block then computes
// fewer outputs. Off by default.

// ResNet-50's 1x1 2048 -> 512 at 7 x 7, batch 32: 104 tiles of 128 x 64
// (one a block on 132 multiprocessors, 8192 outputs each) become 130 of
// 128 x 56 (7168 each).
// OFF-LABEL: func.func @last_stage_1x1(
//       OFF:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 104>
// CHECK-LABEL: func.func @last_stage_1x1(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 56, 64], stages = 6, grid_limit = 130>
// WHY: gemm_wgmma: 1568 x 512 x 2048 on sm_90a;{{.*}}; 130 tiles of 128 x 56 (wgmma-narrow): the busiest block computes 7168 outputs, not 8192
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

// Negative: BERT's FFN down-projection at batch 32 with its residual (the
// ring's slices are 64 wide), the same without one (448 narrow tiles: more
// than a wave), its up-projection (12 k-steps: the epilogue sets the
// pace), and a matmul's [K, N] B.
// CHECK-LABEL: func.func @stays(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64]
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64]
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64]
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64]
// WHY: not 56 wide: it takes a [N, K] B without a batch, at least 56 columns and no residual (its ring's slices are 64 wide)
// WHY: not 56 wide: 448 tiles of 128 x 56 (or the tile's 128) fill more than one wave of 132
// WHY: not 56 wide: 12 k-steps, under 16
// WHY: not 56 wide: it takes a [N, K] B without a batch, at least 56 columns and no residual (its ring's slices are 64 wide)
func.func @stays(%x: tensor<4096x3072xf16>, %w: tensor<768x3072xf16>, %b: tensor<768xf16>, %r: tensor<4096x768xf16>, %h: tensor<4096x768xf16>, %wu: tensor<3072x768xf16>, %m: tensor<1568x2048xf16>, %k: tensor<2048x512xf16>) -> (tensor<4096x768xf16>, tensor<4096x768xf16>, tensor<4096x3072xf16>, tensor<1568x512xf16>) {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b, %r : tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>, tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x3072xf16>, %aw: tensor<768x3072xf16>, %ab: tensor<768xf16>, %ar: tensor<4096x768xf16>):
    %l = kiln.linear %a, %aw, %ab : (tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<4096x768xf16>
    %s = kiln.add %l, %ar : tensor<4096x768xf16>
    kiln.yield %s : tensor<4096x768xf16>
  }
  %1 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x3072xf16>, %aw: tensor<768x3072xf16>, %ab: tensor<768xf16>):
    %l = kiln.linear %a, %aw, %ab : (tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<4096x768xf16>
    kiln.yield %l : tensor<4096x768xf16>
  }
  %2 = kiln.fusion gemm_epilogue ins(%h, %wu : tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %aw: tensor<3072x768xf16>):
    %l = kiln.linear %a, %aw : (tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16>
    %g = kiln.gelu %l : tensor<4096x3072xf16>
    kiln.yield %g : tensor<4096x3072xf16>
  }
  %3 = kiln.fusion gemm_epilogue ins(%m, %k : tensor<1568x2048xf16>, tensor<2048x512xf16>) -> tensor<1568x512xf16> {
  ^bb0(%a: tensor<1568x2048xf16>, %ak: tensor<2048x512xf16>):
    %l = kiln.matmul %a, %ak : (tensor<1568x2048xf16>, tensor<2048x512xf16>) -> tensor<1568x512xf16>
    kiln.yield %l : tensor<1568x512xf16>
  }
  return %0, %1, %2, %3 : tensor<4096x768xf16>, tensor<4096x768xf16>, tensor<4096x3072xf16>, tensor<1568x512xf16>
}
