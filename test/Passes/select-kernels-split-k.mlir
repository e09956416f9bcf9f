// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-split-k=true}))" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-split-k=true wgmma-multicast=2}))" | FileCheck %s --check-prefix=PAIRS
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-split-k=true explain=true}))" 2>&1 | FileCheck %s --check-prefix=WHY
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-split-k=true wgmma-multicast=2 explain=true}))" 2>&1 | FileCheck %s --check-prefix=PAIRS-WHY

// K split over pairs of blocks (asked for): ResNet-50's last 3x3
// convolutions at batch 32 take 112 tiles of 128 x 64 by default, and with
// the switch 56 tiles of 128 x 128 in pairs on 112 of 132 multiprocessors,
// each block walking 36 of the 72 k-steps. Multicast pairs asked for too
// take precedence (a cluster is one or the other).
// CHECK-LABEL: func.func @conv3x3_7x7(
//       CHECK:   #kiln.kernel<variant = conv_wgmma, tile = [128, 128, 64], stages = 4, split_k = 2, grid_limit = 112, pixel_tile = [18, 1, 7]>
// OFF-LABEL: func.func @conv3x3_7x7(
//       OFF:   #kiln.kernel<variant = conv_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 112, pixel_tile = [18, 1, 7]>
// PAIRS-LABEL: func.func @conv3x3_7x7(
//   PAIRS-NOT:   split_k
//       PAIRS:   multicast = 2
// WHY: split K: 56 tiles in pairs of blocks on 112 of 132 multiprocessors, 36 of 72 k-steps a block
// PAIRS-WHY: not split K: it takes clusters, cooperative 128-row tiles, no multicast, one block a multiprocessor, a [N, K] B and no batch
func.func @conv3x3_7x7(%x: tensor<32x7x7x512xf16>, %w: tensor<512x3x3x512xf16>, %b: tensor<512xf16>) -> tensor<32x7x7x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<32x7x7x512xf16>, tensor<512x3x3x512xf16>, tensor<512xf16>) -> tensor<32x7x7x512xf16> {
  ^bb0(%ax: tensor<32x7x7x512xf16>, %aw: tensor<512x3x3x512xf16>, %ab: tensor<512xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x7x7x512xf16>, tensor<512x3x3x512xf16>, tensor<512xf16>) -> tensor<32x7x7x512xf16>
    %r = kiln.relu %y : tensor<32x7x7x512xf16>
    kiln.yield %r : tensor<32x7x7x512xf16>
  }
  return %0 : tensor<32x7x7x512xf16>
}

// -----

// A 1x1 convolution run as a GEMM (2048 -> 512 at 7 x 7, M = 1568): 104
// tiles of 128 x 64, or 52 pairs of 128 x 128 walking 16 of 32 k-steps.
// CHECK-LABEL: func.func @pointwise_2048_512(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 4, split_k = 2, grid_limit = 104>
// OFF-LABEL: func.func @pointwise_2048_512(
//   OFF-NOT:   split_k
// WHY: split K: 52 tiles in pairs of blocks on 104 of 132 multiprocessors, 16 of 32 k-steps a block
func.func @pointwise_2048_512(%x: tensor<32x7x7x2048xf16>, %w: tensor<512x1x1x2048xf16>, %b: tensor<512xf16>) -> tensor<32x7x7x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<32x7x7x2048xf16>, tensor<512x1x1x2048xf16>, tensor<512xf16>) -> tensor<32x7x7x512xf16> {
  ^bb0(%ax: tensor<32x7x7x2048xf16>, %aw: tensor<512x1x1x2048xf16>, %ab: tensor<512xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x7x7x2048xf16>, tensor<512x1x1x2048xf16>, tensor<512xf16>) -> tensor<32x7x7x512xf16>
    %r = kiln.relu %y : tensor<32x7x7x512xf16>
    kiln.yield %r : tensor<32x7x7x512xf16>
  }
  return %0 : tensor<32x7x7x512xf16>
}

// -----

// Not where pairs of tiles 128 wide or narrower take more than the
// multiprocessors (BERT's QKV projection at batch 32: 4096 x 2304), and not
// over a short main loop (K = 256: 4 k-steps).
// CHECK-LABEL: func.func @many_tiles(
//   CHECK-NOT:   split_k
// CHECK-LABEL: func.func @short_k(
//   CHECK-NOT:   split_k
//       CHECK:   variant = gemm_wgmma
// CHECK:       return
// WHY: not split K: pairs of blocks on 128-wide tiles or narrower take more than 132 multiprocessors
// WHY: not split K: 4 k-steps, under 8
func.func @many_tiles(%x: tensor<4096x768xf16>, %w: tensor<2304x768xf16>, %b: tensor<2304xf16>) -> tensor<4096x2304xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<4096x768xf16>, tensor<2304x768xf16>, tensor<2304xf16>) -> tensor<4096x2304xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<2304x768xf16>, %bb: tensor<2304xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<4096x768xf16>, tensor<2304x768xf16>, tensor<2304xf16>) -> tensor<4096x2304xf16>
    kiln.yield %l : tensor<4096x2304xf16>
  }
  return %0 : tensor<4096x2304xf16>
}
func.func @short_k(%x: tensor<1024x256xf16>, %w: tensor<1024x256xf16>, %b: tensor<1024xf16>) -> tensor<1024x1024xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<1024x256xf16>, tensor<1024x256xf16>, tensor<1024xf16>) -> tensor<1024x1024xf16> {
  ^bb0(%a: tensor<1024x256xf16>, %bw: tensor<1024x256xf16>, %bb: tensor<1024xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<1024x256xf16>, tensor<1024x256xf16>, tensor<1024xf16>) -> tensor<1024x1024xf16>
    kiln.yield %l : tensor<1024x1024xf16>
  }
  return %0 : tensor<1024x1024xf16>
}
