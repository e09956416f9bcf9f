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

// A merged projection shortcut: the channel concat marked read_in_place
// and the strided slice under it join the 1x1 convolution's group (its
// kernel reads both inputs in place), as does the relu after it.
// CHECK-LABEL: func.func @shortcut(
//       CHECK:   kiln.fusion conv_epilogue ins(%arg1, %arg0, %arg2 :
//       CHECK:     kiln.slice
//       CHECK:     kiln.concat
//       CHECK:     kiln.conv2d
//       CHECK:     kiln.relu
//       CHECK:     kiln.yield
func.func @shortcut(%h: tensor<1x4x4x8xf16>, %x: tensor<1x8x8x8xf16>, %w: tensor<8x1x1x16xf16>) -> tensor<1x4x4x8xf16> {
  %s = kiln.slice %x offsets = [0, 0, 0, 0] strides = [1, 2, 2, 1] : tensor<1x8x8x8xf16> -> tensor<1x4x4x8xf16>
  %j = kiln.concat %h, %s dim = 3 {kiln.read_in_place} : (tensor<1x4x4x8xf16>, tensor<1x4x4x8xf16>) -> tensor<1x4x4x16xf16>
  %c = kiln.conv2d %j, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x16xf16>, tensor<8x1x1x16xf16>) -> tensor<1x4x4x8xf16>
  %r = kiln.relu %c : tensor<1x4x4x8xf16>
  return %r : tensor<1x4x4x8xf16>
}

// -----

// Negative: a marked concat something else reads too, one along another
// dimension, and an unmarked one (a model's own torch.cat before a 1x1
// convolution, which an fp32 or pre-Hopper kernel could not read in
// place) stay out of the group: their own kernels copy them.
// CHECK-LABEL: func.func @shared_concat(
//       CHECK:   %[[J:.+]] = kiln.concat
//       CHECK:   kiln.fusion conv_epilogue ins(%[[J]], %arg2 :
//   CHECK-NOT:     kiln.concat
//       CHECK:     kiln.yield
//       CHECK:   %[[K:.+]] = kiln.concat
//       CHECK:   kiln.fusion conv_epilogue ins(%[[K]], %arg3 :
//   CHECK-NOT:     kiln.concat
//       CHECK:     kiln.yield
//       CHECK:   %[[L:.+]] = kiln.concat
//       CHECK:   kiln.fusion conv_epilogue ins(%[[L]], %arg2 :
//   CHECK-NOT:     kiln.concat
//       CHECK:     kiln.yield
func.func @shared_concat(%h: tensor<1x4x4x8xf16>, %x: tensor<1x4x4x8xf16>, %w: tensor<8x1x1x16xf16>, %w2: tensor<8x1x1x8xf16>) -> (tensor<1x4x4x8xf16>, tensor<1x4x4x16xf16>, tensor<1x4x8x8xf16>, tensor<1x4x4x8xf16>) {
  %j = kiln.concat %h, %x dim = 3 {kiln.read_in_place} : (tensor<1x4x4x8xf16>, tensor<1x4x4x8xf16>) -> tensor<1x4x4x16xf16>
  %c = kiln.conv2d %j, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x16xf16>, tensor<8x1x1x16xf16>) -> tensor<1x4x4x8xf16>
  %k = kiln.concat %h, %x dim = 2 {kiln.read_in_place} : (tensor<1x4x4x8xf16>, tensor<1x4x4x8xf16>) -> tensor<1x4x8x8xf16>
  %d = kiln.conv2d %k, %w2 strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x8x8xf16>, tensor<8x1x1x8xf16>) -> tensor<1x4x8x8xf16>
  %l = kiln.concat %x, %h dim = 3 : (tensor<1x4x4x8xf16>, tensor<1x4x4x8xf16>) -> tensor<1x4x4x16xf16>
  %e = kiln.conv2d %l, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x16xf16>, tensor<8x1x1x16xf16>) -> tensor<1x4x4x8xf16>
  return %c, %j, %d, %e : tensor<1x4x4x8xf16>, tensor<1x4x4x16xf16>, tensor<1x4x8x8xf16>, tensor<1x4x4x8xf16>
}

// -----

// The test hook keeps a convolution out of every group.
// CHECK-LABEL: func.func @no_fuse(
//   CHECK-NOT:   kiln.fusion
func.func @no_fuse(%x: tensor<1x6x6x8xf32>, %w: tensor<8x1x1x8xf32>) -> tensor<1x6x6x8xf32> {
  %0 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 {kiln.no_fuse} : (tensor<1x6x6x8xf32>, tensor<8x1x1x8xf32>) -> tensor<1x6x6x8xf32>
  return %0 : tensor<1x6x6x8xf32>
}
