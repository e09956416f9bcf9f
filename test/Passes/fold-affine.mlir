// RUN: kiln-opt %s --split-input-file --kiln-fold-affine | FileCheck %s

// BatchNorm's scale and shift (per output channel, NHWC) fold into the
// convolution's weights and a new bias: w[o] * s[o], b[o] = t[o].
// CHECK-LABEL: func.func @conv_batch_norm(
//   CHECK-DAG:   %[[W:.+]] = kiln.constant dense_resource<[[WN:folded_weight.*]]> : tensor<2x1x1x2xf32>
//   CHECK-DAG:   %[[B:.+]] = kiln.constant dense_resource<[[BN:folded_bias.*]]> : tensor<2xf32>
//       CHECK:   %[[C:.+]] = kiln.conv2d %arg0, %[[W]], %[[B]]
//   CHECK-NOT:   kiln.mul
//   CHECK-NOT:   kiln.add
//       CHECK:   return %[[C]]
//       CHECK: [[WN]]: "0x400000000000803F0000004000004040000080C0"
//       CHECK: [[BN]]: "0x400000000000003F000080BF"
func.func @conv_batch_norm(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = kiln.constant dense<[[[[1.0, 2.0]]], [[[1.5, -2.0]]]]> : tensor<2x1x1x2xf32>
  %s = kiln.constant dense<[[[[1.0, 2.0]]]]> : tensor<1x1x1x2xf32>
  %t = kiln.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %0 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x2xf32>, tensor<2x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  %1 = kiln.mul %0, %s : tensor<1x4x4x2xf32>, tensor<1x1x1x2xf32> -> tensor<1x4x4x2xf32>
  %2 = kiln.add %1, %t : tensor<1x4x4x2xf32>, tensor<2xf32> -> tensor<1x4x4x2xf32>
  return %2 : tensor<1x4x4x2xf32>
}

// -----

// The same BatchNorm as torch.export gives it: [C, 1, 1] constants, reshaped
// to [1, 1, 1, C] once the layout went channels-last. The reshape keeps the
// elements' order, so they fold alike.
// CHECK-LABEL: func.func @conv_batch_norm_reshaped(
//   CHECK-DAG:   %[[W:.+]] = kiln.constant dense_resource<[[WN:folded_weight.*]]> : tensor<2x1x1x2xf32>
//   CHECK-DAG:   %[[B:.+]] = kiln.constant dense_resource<[[BN:folded_bias.*]]> : tensor<2xf32>
//       CHECK:   %[[C:.+]] = kiln.conv2d %arg0, %[[W]], %[[B]]
//   CHECK-NOT:   kiln.mul
//   CHECK-NOT:   kiln.add
//       CHECK:   return %[[C]]
//       CHECK: [[WN]]: "0x400000000000803F0000004000004040000080C0"
//       CHECK: [[BN]]: "0x400000000000003F000080BF"
func.func @conv_batch_norm_reshaped(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = kiln.constant dense<[[[[1.0, 2.0]]], [[[1.5, -2.0]]]]> : tensor<2x1x1x2xf32>
  %s0 = kiln.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %t0 = kiln.constant dense<[[[0.5]], [[-1.0]]]> : tensor<2x1x1xf32>
  %s = kiln.reshape %s0 : tensor<2x1x1xf32> -> tensor<1x1x1x2xf32>
  %t = kiln.reshape %t0 : tensor<2x1x1xf32> -> tensor<1x1x1x2xf32>
  %0 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x2xf32>, tensor<2x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  %1 = kiln.mul %0, %s : tensor<1x4x4x2xf32>, tensor<1x1x1x2xf32> -> tensor<1x4x4x2xf32>
  %2 = kiln.add %1, %t : tensor<1x4x4x2xf32>, tensor<1x1x1x2xf32> -> tensor<1x4x4x2xf32>
  return %2 : tensor<1x4x4x2xf32>
}

// -----

// A constant reshaped so that a dimension other than the last varies (here
// [2, 1, 1] to [1, 2, 1, 1]) is not per output channel: kept.
// CHECK-LABEL: func.func @conv_scale_other_dim(
//       CHECK:   kiln.mul
func.func @conv_scale_other_dim(%x: tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32> {
  %w = kiln.constant dense<[[[[1.0, 2.0]]], [[[1.5, -2.0]]]]> : tensor<2x1x1x2xf32>
  %s0 = kiln.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %s = kiln.reshape %s0 : tensor<2x1x1xf32> -> tensor<1x2x1x1xf32>
  %0 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x4x2xf32>, tensor<2x1x1x2xf32>) -> tensor<1x2x4x2xf32>
  %1 = kiln.mul %0, %s : tensor<1x2x4x2xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x2xf32>
  return %1 : tensor<1x2x4x2xf32>
}

// -----

// A linear layer with a bias and a scalar scale on either side.
// CHECK-LABEL: func.func @linear_scale(
//       CHECK:   %[[L:.+]] = kiln.linear %arg0, %{{.+}}, %{{.+}} :
//   CHECK-NOT:   kiln.mul
//       CHECK:   return %[[L]]
func.func @linear_scale(%x: tensor<3x4xf16>) -> tensor<3x2xf16> {
  %w = kiln.constant dense<1.0> : tensor<2x4xf16>
  %b = kiln.constant dense<[1.0, 2.0]> : tensor<2xf16>
  %s = kiln.constant dense<0.5> : tensor<f16>
  %0 = kiln.linear %x, %w, %b : (tensor<3x4xf16>, tensor<2x4xf16>, tensor<2xf16>) -> tensor<3x2xf16>
  %1 = kiln.mul %s, %0 : tensor<f16>, tensor<3x2xf16> -> tensor<3x2xf16>
  return %1 : tensor<3x2xf16>
}

// -----

// Negative: a layer result with another user, a constant that varies
// along a spatial dimension, and non-constant weights all stay as they are.
// CHECK-LABEL: func.func @not_foldable(
//       CHECK:   kiln.mul %[[A:.+]], %{{.+}} : tensor<1x4x4x2xf32>, tensor<1x1x1x2xf32>
//       CHECK:   kiln.mul %{{.+}}, %{{.+}} : tensor<1x4x4x2xf32>, tensor<1x4x1x1xf32>
//       CHECK:   kiln.add %{{.+}}, %{{.+}} : tensor<1x4x4x2xf32>, tensor<2xf32>
func.func @not_foldable(%x: tensor<1x4x4x2xf32>, %dynamic: tensor<2x1x1x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) {
  %w = kiln.constant dense<1.0> : tensor<2x1x1x2xf32>
  %s = kiln.constant dense<[[[[1.0, 2.0]]]]> : tensor<1x1x1x2xf32>
  %h = kiln.constant dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]]> : tensor<1x4x1x1xf32>
  %t = kiln.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %0 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x2xf32>, tensor<2x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  %1 = kiln.mul %0, %s : tensor<1x4x4x2xf32>, tensor<1x1x1x2xf32> -> tensor<1x4x4x2xf32>
  %2 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x2xf32>, tensor<2x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  %3 = kiln.mul %2, %h : tensor<1x4x4x2xf32>, tensor<1x4x1x1xf32> -> tensor<1x4x4x2xf32>
  %4 = kiln.conv2d %x, %dynamic strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x2xf32>, tensor<2x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  %5 = kiln.add %4, %t : tensor<1x4x4x2xf32>, tensor<2xf32> -> tensor<1x4x4x2xf32>
  return %0, %1, %3, %5 : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>
}
