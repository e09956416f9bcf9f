// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=0}))" | FileCheck %s --check-prefix=FIRST
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=1}))" | FileCheck %s --check-prefix=SECOND
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=4}))" | FileCheck %s --check-prefix=FIFTH
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=9 explain=true}))" 2>&1 | FileCheck %s --check-prefix=PAST
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=1}))" | FileCheck %s --check-prefix=RING
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=1 wgmma-residual-ring=false}))" | FileCheck %s --check-prefix=COPIED
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=MODEL
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=6}))" | FileCheck %s --check-prefix=SEVENTH
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=7}))" | FileCheck %s --check-prefix=EIGHTH
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=-2}))" 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// BERT's FFN up-projection at batch 32: candidate 0 is the cost model's
// own choice (ping-pong 128 x 128, as without the option), then the other
// tiles it admitted, cheapest first, then the 192-row tiles narrower than
// 192 that only the tuner tries; past the ninth, its own again.
// FIRST:  kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 132, schedule = pingpong>
// SECOND: kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, schedule = pingpong>
// FIFTH:  kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 132>
// PAST:   remark: gemm_wgmma: {{.*}}wgmma-candidate 9: only 9, the cost model's kept
// PAST:   kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 132, schedule = pingpong>
// NEGATIVE: error: wgmma-candidate -2: -1 (the cost model's tile) or a candidate's index, 0 or more
func.func @batch32_up_projection(%x: tensor<4096x768xf16>, %w: tensor<3072x768xf16>) -> tensor<4096x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<3072x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16>
    kiln.yield %l : tensor<4096x3072xf16>
  }
  return %0 : tensor<4096x3072xf16>
}

// -----

// ResNet-50's 512 -> 2048 + residual at 7 x 7, batch 32: a 128 x 256 tile
// holds 128 accumulators a thread, past the residual's limit of 96. With
// the residual through the ring and its 104 tiles in one wave, it is the
// cost model's own choice (measured faster than 99 tiles of 192 x 192,
// now the second candidate); copied by rows it is never taken.
// RING-LABEL: func.func @expand_7x7(
//       RING:   kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 4, grid_limit = 99, residual_ring = true>
// COPIED-LABEL: func.func @expand_7x7(
//   COPIED-NOT:   tile = [128, 256, 64]
//       COPIED:   return
// MODEL-LABEL: func.func @expand_7x7(
//       MODEL:   kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 4, grid_limit = 104, residual_ring = true>
func.func @expand_7x7(%x: tensor<32x7x7x512xf16>, %w: tensor<2048x1x1x512xf16>, %r: tensor<32x7x7x2048xf16>) -> tensor<32x7x7x2048xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %r : tensor<32x7x7x512xf16>, tensor<2048x1x1x512xf16>, tensor<32x7x7x2048xf16>) -> tensor<32x7x7x2048xf16> {
  ^bb0(%a: tensor<32x7x7x512xf16>, %aw: tensor<2048x1x1x512xf16>, %ar: tensor<32x7x7x2048xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x7x7x512xf16>, tensor<2048x1x1x512xf16>) -> tensor<32x7x7x2048xf16>
    %t = kiln.add %y, %ar : tensor<32x7x7x2048xf16>
    %u = kiln.relu %t : tensor<32x7x7x2048xf16>
    kiln.yield %u : tensor<32x7x7x2048xf16>
  }
  return %0 : tensor<32x7x7x2048xf16>
}

// -----

// BERT's FFN down-projection with its residual at batch 32: the cost model
// keeps 128 x 192 (128 tiles); 192-row tiles narrower than 192, which it
// never takes for a GEMM, come last in the tuner's list (cuBLAS's 132 tiles
// of 192 x 128 among them).
// RING-LABEL: func.func @down_projection(
//       RING:   tile = [128, 64, 64]
// MODEL-LABEL: func.func @down_projection(
//       MODEL:   kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 128, residual_ring = true>
// SEVENTH-LABEL: func.func @down_projection(
//       SEVENTH:   kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], stages = 4, grid_limit = 132, residual_ring = true>
// EIGHTH-LABEL: func.func @down_projection(
//       EIGHTH:   kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [192, 64, 64], stages = 6, grid_limit = 132, residual_ring = true>
func.func @down_projection(%x: tensor<4096x3072xf16>, %w: tensor<768x3072xf16>, %r: tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x3072xf16>, %bw: tensor<768x3072xf16>, %br: tensor<4096x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x3072xf16>, tensor<768x3072xf16>) -> tensor<4096x768xf16>
    %s = kiln.add %l, %br : tensor<4096x768xf16>
    kiln.yield %s : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}
