// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-blocks-per-sm=1}))" | FileCheck %s --check-prefix=ONE
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-schedule=pingpong}))" | FileCheck %s --check-prefix=PINGPONG
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{explain=true}))" 2>&1 | FileCheck %s --check-prefix=WHY

// The cost model's two blocks a multiprocessor: a residual epilogue after a
// main loop of 2 to 4 k-steps, with at least 6 tiles for each of two blocks
// on every multiprocessor (ResNet-50's 28 x 28 x 512 outputs at batch 32:
// 1568 tiles of 128 x 64). Asked for one block, it takes 192 x 192 tiles
// with the residual through the ring (393 tiles, three waves nearly full);
// asked for ping-pong (whose ring does not carry the residual), 128 x 64.
// CHECK-LABEL: func.func @k128_residual(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 3, grid_limit = 264, blocks_per_sm = 2>
// ONE-LABEL: func.func @k128_residual(
//       ONE:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 4, grid_limit = 132, residual_ring = true>
// PINGPONG-LABEL: func.func @k128_residual(
//       PINGPONG:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, schedule = pingpong>
// WHY: two blocks a multiprocessor: a residual after 2 k-steps
func.func @k128_residual(%x: tensor<32x28x28x128xf16>, %w: tensor<512x1x1x128xf16>, %b: tensor<512xf16>, %r: tensor<32x28x28x512xf16>) -> tensor<32x28x28x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<32x28x28x128xf16>, tensor<512x1x1x128xf16>, tensor<512xf16>, tensor<32x28x28x512xf16>) -> tensor<32x28x28x512xf16> {
  ^bb0(%ax: tensor<32x28x28x128xf16>, %aw: tensor<512x1x1x128xf16>, %ab: tensor<512xf16>, %ar: tensor<32x28x28x512xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x28x28x128xf16>, tensor<512x1x1x128xf16>, tensor<512xf16>) -> tensor<32x28x28x512xf16>
    %s = kiln.add %y, %ar : tensor<32x28x28x512xf16>
    %t = kiln.relu %s : tensor<32x28x28x512xf16>
    kiln.yield %t : tensor<32x28x28x512xf16>
  }
  return %0 : tensor<32x28x28x512xf16>
}

// -----

// The strided 1x1 (an implicit GEMM) with K = 256 takes them too.
// CHECK-LABEL: func.func @k256_stride2_residual(
//       CHECK:   #kiln.kernel<variant = conv_wgmma, tile = [128, 64, 64], stages = 3, grid_limit = 264, pixel_tile = [8, 4, 4], blocks_per_sm = 2>
func.func @k256_stride2_residual(%x: tensor<32x56x56x256xf16>, %w: tensor<512x1x1x256xf16>, %b: tensor<512xf16>, %r: tensor<32x28x28x512xf16>) -> tensor<32x28x28x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<32x56x56x256xf16>, tensor<512x1x1x256xf16>, tensor<512xf16>, tensor<32x28x28x512xf16>) -> tensor<32x28x28x512xf16> {
  ^bb0(%ax: tensor<32x56x56x256xf16>, %aw: tensor<512x1x1x256xf16>, %ab: tensor<512xf16>, %ar: tensor<32x28x28x512xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [2, 2] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x256xf16>, tensor<512x1x1x256xf16>, tensor<512xf16>) -> tensor<32x28x28x512xf16>
    %s = kiln.add %y, %ar : tensor<32x28x28x512xf16>
    %t = kiln.relu %s : tensor<32x28x28x512xf16>
    kiln.yield %t : tensor<32x28x28x512xf16>
  }
  return %0 : tensor<32x28x28x512xf16>
}

// -----

// Not without a residual, not after one k-step (K = 64) or more than four
// (K = 512), and not with 3 tiles a block (14 x 14 x 1024: 784 tiles).
// CHECK-LABEL: func.func @no_residual(
//   CHECK-NOT:   blocks_per_sm
// CHECK-LABEL: func.func @k64_residual(
//   CHECK-NOT:   blocks_per_sm
// CHECK-LABEL: func.func @k512_residual(
//   CHECK-NOT:   blocks_per_sm
// CHECK-LABEL: func.func @few_tiles_residual(
//   CHECK-NOT:   blocks_per_sm
// CHECK:       return
func.func @no_residual(%x: tensor<32x28x28x128xf16>, %w: tensor<512x1x1x128xf16>, %b: tensor<512xf16>) -> tensor<32x28x28x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<32x28x28x128xf16>, tensor<512x1x1x128xf16>, tensor<512xf16>) -> tensor<32x28x28x512xf16> {
  ^bb0(%ax: tensor<32x28x28x128xf16>, %aw: tensor<512x1x1x128xf16>, %ab: tensor<512xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x28x28x128xf16>, tensor<512x1x1x128xf16>, tensor<512xf16>) -> tensor<32x28x28x512xf16>
    kiln.yield %y : tensor<32x28x28x512xf16>
  }
  return %0 : tensor<32x28x28x512xf16>
}
func.func @k64_residual(%x: tensor<32x56x56x64xf16>, %w: tensor<256x1x1x64xf16>, %b: tensor<256xf16>, %r: tensor<32x56x56x256xf16>) -> tensor<32x56x56x256xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<32x56x56x64xf16>, tensor<256x1x1x64xf16>, tensor<256xf16>, tensor<32x56x56x256xf16>) -> tensor<32x56x56x256xf16> {
  ^bb0(%ax: tensor<32x56x56x64xf16>, %aw: tensor<256x1x1x64xf16>, %ab: tensor<256xf16>, %ar: tensor<32x56x56x256xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x64xf16>, tensor<256x1x1x64xf16>, tensor<256xf16>) -> tensor<32x56x56x256xf16>
    %s = kiln.add %y, %ar : tensor<32x56x56x256xf16>
    %t = kiln.relu %s : tensor<32x56x56x256xf16>
    kiln.yield %t : tensor<32x56x56x256xf16>
  }
  return %0 : tensor<32x56x56x256xf16>
}
func.func @k512_residual(%x: tensor<32x7x7x512xf16>, %w: tensor<2048x1x1x512xf16>, %b: tensor<2048xf16>, %r: tensor<32x7x7x2048xf16>) -> tensor<32x7x7x2048xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<32x7x7x512xf16>, tensor<2048x1x1x512xf16>, tensor<2048xf16>, tensor<32x7x7x2048xf16>) -> tensor<32x7x7x2048xf16> {
  ^bb0(%ax: tensor<32x7x7x512xf16>, %aw: tensor<2048x1x1x512xf16>, %ab: tensor<2048xf16>, %ar: tensor<32x7x7x2048xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x7x7x512xf16>, tensor<2048x1x1x512xf16>, tensor<2048xf16>) -> tensor<32x7x7x2048xf16>
    %s = kiln.add %y, %ar : tensor<32x7x7x2048xf16>
    %t = kiln.relu %s : tensor<32x7x7x2048xf16>
    kiln.yield %t : tensor<32x7x7x2048xf16>
  }
  return %0 : tensor<32x7x7x2048xf16>
}
func.func @few_tiles_residual(%x: tensor<32x14x14x256xf16>, %w: tensor<1024x1x1x256xf16>, %b: tensor<1024xf16>, %r: tensor<32x14x14x1024xf16>) -> tensor<32x14x14x1024xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<32x14x14x256xf16>, tensor<1024x1x1x256xf16>, tensor<1024xf16>, tensor<32x14x14x1024xf16>) -> tensor<32x14x14x1024xf16> {
  ^bb0(%ax: tensor<32x14x14x256xf16>, %aw: tensor<1024x1x1x256xf16>, %ab: tensor<1024xf16>, %ar: tensor<32x14x14x1024xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x14x14x256xf16>, tensor<1024x1x1x256xf16>, tensor<1024xf16>) -> tensor<32x14x14x1024xf16>
    %s = kiln.add %y, %ar : tensor<32x14x14x1024xf16>
    %t = kiln.relu %s : tensor<32x14x14x1024xf16>
    kiln.yield %t : tensor<32x14x14x1024xf16>
  }
  return %0 : tensor<32x14x14x1024xf16>
}
