// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-residual-prefetch=true wgmma-residual-ring=false}))" | FileCheck %s --check-prefix=PREFETCH

// ResNet-50's 1x1 64 -> 256 at 56 x 56, batch 32, into its residual add:
// cooperative 192 x 128 tiles with the residual through the ring; with
// wgmma-residual-prefetch and the residual copied by rows, ping-pong
// 64-wide tiles in a ring of 5 stages, not 6, which leave the code
// generator room to copy each tile's residual slices a tile ahead. Without a residual
// (its 64 -> 64) the ring keeps 6 stages either way; a 3x3 convolution with a
// residual (an implicit GEMM, 128 wide here) keeps its own ring.
// CHECK-LABEL: func.func @resnet_residuals(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], stages = 4, grid_limit = 132, residual_ring = true>
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, schedule = pingpong>
//       CHECK:   #kiln.kernel<variant = conv_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 98, pixel_tile = [32, 2, 2]>
// PREFETCH-LABEL: func.func @resnet_residuals(
//       PREFETCH:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 5, grid_limit = 132, schedule = pingpong>
//       PREFETCH:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, schedule = pingpong>
//       PREFETCH:   #kiln.kernel<variant = conv_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 98, pixel_tile = [32, 2, 2]>
func.func @resnet_residuals(%p0_x: tensor<32x56x56x64xf16>, %p0_w: tensor<256x1x1x64xf16>, %p0_r: tensor<32x56x56x256xf16>, %p1_x: tensor<32x56x56x64xf16>, %p1_w: tensor<64x1x1x64xf16>, %p2_x: tensor<32x14x14x256xf16>, %p2_w: tensor<256x3x3x256xf16>, %p2_r: tensor<32x14x14x256xf16>)
    -> (tensor<32x56x56x256xf16>, tensor<32x56x56x64xf16>, tensor<32x14x14x256xf16>) {
  %p0 = kiln.fusion conv_epilogue ins(%p0_x, %p0_w, %p0_r : tensor<32x56x56x64xf16>, tensor<256x1x1x64xf16>, tensor<32x56x56x256xf16>) -> tensor<32x56x56x256xf16> {
  ^bb0(%a: tensor<32x56x56x64xf16>, %aw: tensor<256x1x1x64xf16>, %ar: tensor<32x56x56x256xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x64xf16>, tensor<256x1x1x64xf16>) -> tensor<32x56x56x256xf16>
    %t = kiln.add %c, %ar : tensor<32x56x56x256xf16>
    %u = kiln.relu %t : tensor<32x56x56x256xf16>
    kiln.yield %u : tensor<32x56x56x256xf16>
  }
  %p1 = kiln.fusion conv_epilogue ins(%p1_x, %p1_w : tensor<32x56x56x64xf16>, tensor<64x1x1x64xf16>) -> tensor<32x56x56x64xf16> {
  ^bb0(%a: tensor<32x56x56x64xf16>, %aw: tensor<64x1x1x64xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x64xf16>, tensor<64x1x1x64xf16>) -> tensor<32x56x56x64xf16>
    %u = kiln.relu %c : tensor<32x56x56x64xf16>
    kiln.yield %u : tensor<32x56x56x64xf16>
  }
  %p2 = kiln.fusion conv_epilogue ins(%p2_x, %p2_w, %p2_r : tensor<32x14x14x256xf16>, tensor<256x3x3x256xf16>, tensor<32x14x14x256xf16>) -> tensor<32x14x14x256xf16> {
  ^bb0(%a: tensor<32x14x14x256xf16>, %aw: tensor<256x3x3x256xf16>, %ar: tensor<32x14x14x256xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x14x14x256xf16>, tensor<256x3x3x256xf16>) -> tensor<32x14x14x256xf16>
    %t = kiln.add %c, %ar : tensor<32x14x14x256xf16>
    %u = kiln.relu %t : tensor<32x14x14x256xf16>
    kiln.yield %u : tensor<32x14x14x256xf16>
  }
  return %p0, %p1, %p2 : tensor<32x56x56x256xf16>, tensor<32x56x56x64xf16>, tensor<32x14x14x256xf16>
}
