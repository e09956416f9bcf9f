// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{explain=true}))" 2>&1 | FileCheck %s --check-prefix=WHY
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{targets=sm_80}))" 2>&1 | FileCheck %s --check-prefix=SM80

// A 1x1 convolution that ends in its global average pool runs as the
// pooled Hopper GEMM: cooperative 128-row tiles, one block a
// multiprocessor, whatever the schedule, cluster or stream-K knobs ask
// for. Each row tile holds whole images (two of 7 x 7), so ResNet-50's
// last expand at batch 32 has 16 row tiles; its residual comes through
// the ring (its staging halved), in a ring that leaves room for the sums. On sm_80 no kernel
// sums the pool: an error that says so.
// CHECK-LABEL: func.func @resnet_tail(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 4, grid_limit = 128, residual_ring = true>
// WHY: gemm_wgmma with its global average pool: 32 images of 49 pixels, 2 a row tile of 128 (76% of their rows used)
// SM80: error: 'kiln.fusion' op sums a global average pool in its epilogue, which only gemm_wgmma does, and sm_80 has no wgmma
func.func @resnet_tail(%x: tensor<32x7x7x512xf16>, %w: tensor<2048x1x1x512xf16>, %b: tensor<2048xf16>, %r: tensor<32x7x7x2048xf16>) -> tensor<32x1x1x2048xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<32x7x7x512xf16>, tensor<2048x1x1x512xf16>, tensor<2048xf16>, tensor<32x7x7x2048xf16>) -> tensor<32x1x1x2048xf16> {
  ^bb0(%a: tensor<32x7x7x512xf16>, %aw: tensor<2048x1x1x512xf16>, %ab: tensor<2048xf16>, %ar: tensor<32x7x7x2048xf16>):
    %y = kiln.conv2d %a, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x7x7x512xf16>, tensor<2048x1x1x512xf16>, tensor<2048xf16>) -> tensor<32x7x7x2048xf16>
    %s = kiln.add %y, %ar : tensor<32x7x7x2048xf16>
    %u = kiln.relu %s : tensor<32x7x7x2048xf16>
    %m = kiln.reduce_mean %u dims = [1, 2] keepdim : tensor<32x7x7x2048xf16> -> tensor<32x1x1x2048xf16>
    kiln.yield %m : tensor<32x1x1x2048xf16>
  }
  return %0 : tensor<32x1x1x2048xf16>
}

// -----

// EfficientNet-B0's last 1x1 (320 -> 1280 and SiLU) at batch 32, pooled
// without keepdim; and at batch 1, where one row tile holds the one image.
// CHECK-LABEL: func.func @efficientnet_tail(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, {{[0-9]+}}, 64], stages = {{[0-9]+}}, grid_limit = {{[0-9]+}}>
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, {{[0-9]+}}, 64], stages = {{[0-9]+}}, grid_limit = {{[0-9]+}}>
// WHY: gemm_wgmma with its global average pool: 32 images of 49 pixels, 2 a row tile of 128
// WHY: gemm_wgmma with its global average pool: 1 images of 49 pixels, 2 a row tile of 128 (38% of their rows used)
func.func @efficientnet_tail(%x: tensor<32x7x7x320xf16>, %w: tensor<1280x1x1x320xf16>, %b: tensor<1280xf16>, %x1: tensor<1x7x7x320xf16>) -> (tensor<32x1280xf16>, tensor<1x1280xf16>) {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<32x7x7x320xf16>, tensor<1280x1x1x320xf16>, tensor<1280xf16>) -> tensor<32x1280xf16> {
  ^bb0(%a: tensor<32x7x7x320xf16>, %aw: tensor<1280x1x1x320xf16>, %ab: tensor<1280xf16>):
    %y = kiln.conv2d %a, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x7x7x320xf16>, tensor<1280x1x1x320xf16>, tensor<1280xf16>) -> tensor<32x7x7x1280xf16>
    %u = kiln.silu %y : tensor<32x7x7x1280xf16>
    %m = kiln.reduce_mean %u dims = [1, 2] : tensor<32x7x7x1280xf16> -> tensor<32x1280xf16>
    kiln.yield %m : tensor<32x1280xf16>
  }
  %1 = kiln.fusion conv_epilogue ins(%x1, %w, %b : tensor<1x7x7x320xf16>, tensor<1280x1x1x320xf16>, tensor<1280xf16>) -> tensor<1x1280xf16> {
  ^bb0(%a: tensor<1x7x7x320xf16>, %aw: tensor<1280x1x1x320xf16>, %ab: tensor<1280xf16>):
    %y = kiln.conv2d %a, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x7x7x320xf16>, tensor<1280x1x1x320xf16>, tensor<1280xf16>) -> tensor<1x7x7x1280xf16>
    %u = kiln.silu %y : tensor<1x7x7x1280xf16>
    %m = kiln.reduce_mean %u dims = [1, 2] : tensor<1x7x7x1280xf16> -> tensor<1x1280xf16>
    kiln.yield %m : tensor<1x1280xf16>
  }
  return %0, %1 : tensor<32x1280xf16>, tensor<1x1280xf16>
}
