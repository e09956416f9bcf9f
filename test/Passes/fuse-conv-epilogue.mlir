// RUN: kiln-opt %s --split-input-file --kiln-fuse-conv-epilogue | FileCheck %s

// Bias, activation and the residual add join the convolution; the skip
// tensor enters as an input. The model input's channels-last permute joins
// the first convolution's group, so it costs no kernel.
// CHECK-LABEL: func.func @residual(
//       CHECK:   %[[A:.+]] = kiln.fusion conv_epilogue ins(%arg0, %arg1 : tensor<1x8x6x6xf16>, tensor<8x3x3x8xf16>)
//       CHECK:     kiln.permute %{{.*}} [0, 2, 3, 1]
//       CHECK:     kiln.conv2d
//       CHECK:     kiln.relu
//       CHECK:   kiln.fusion conv_epilogue ins(%[[A]], %arg1 :
//       CHECK:     kiln.conv2d
//       CHECK:     kiln.add
//       CHECK:     kiln.relu
//       CHECK:     kiln.yield
func.func @residual(%x: tensor<1x8x6x6xf16>, %w: tensor<8x3x3x8xf16>) -> tensor<1x6x6x8xf16> {
  %0 = kiln.permute %x [0, 2, 3, 1] : tensor<1x8x6x6xf16> -> tensor<1x6x6x8xf16>
  %1 = kiln.conv2d %0, %w strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<1x6x6x8xf16>, tensor<8x3x3x8xf16>) -> tensor<1x6x6x8xf16>
  %2 = kiln.relu %1 : tensor<1x6x6x8xf16>
  %3 = kiln.conv2d %2, %w strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<1x6x6x8xf16>, tensor<8x3x3x8xf16>) -> tensor<1x6x6x8xf16>
  %4 = kiln.add %3, %2 : tensor<1x6x6x8xf16>
  %5 = kiln.relu %4 : tensor<1x6x6x8xf16>
  return %5 : tensor<1x6x6x8xf16>
}

// -----

// Negative: a permute with another user, or of a computed value, stays out;
// an elementwise consumer over another shape stays out.
// CHECK-LABEL: func.func @boundaries(
//       CHECK:   %[[P:.+]] = kiln.permute %arg0
//       CHECK:   kiln.fusion conv_epilogue ins(%[[P]], %arg1 :
//   CHECK-NOT:     kiln.add
//       CHECK:     kiln.yield
//       CHECK:   kiln.add
func.func @boundaries(%x: tensor<1x8x6x6xf32>, %w: tensor<8x1x1x8xf32>, %big: tensor<2x1x6x6x8xf32>) -> (tensor<1x6x6x8xf32>, tensor<2x1x6x6x8xf32>) {
  %0 = kiln.permute %x [0, 2, 3, 1] : tensor<1x8x6x6xf32> -> tensor<1x6x6x8xf32>
  %1 = kiln.conv2d %0, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x6x6x8xf32>, tensor<8x1x1x8xf32>) -> tensor<1x6x6x8xf32>
  %2 = kiln.add %1, %big : tensor<1x6x6x8xf32>, tensor<2x1x6x6x8xf32> -> tensor<2x1x6x6x8xf32>
  return %0, %2 : tensor<1x6x6x8xf32>, tensor<2x1x6x6x8xf32>
}

// -----

// The test hook keeps a convolution out of every group.
// CHECK-LABEL: func.func @no_fuse(
//   CHECK-NOT:   kiln.fusion
func.func @no_fuse(%x: tensor<1x6x6x8xf32>, %w: tensor<8x1x1x8xf32>) -> tensor<1x6x6x8xf32> {
  %0 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 {kiln.no_fuse} : (tensor<1x6x6x8xf32>, tensor<8x1x1x8xf32>) -> tensor<1x6x6x8xf32>
  return %0 : tensor<1x6x6x8xf32>
}
