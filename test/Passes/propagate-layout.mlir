// RUN: kiln-opt %s --split-input-file --kiln-propagate-layout --canonicalize | FileCheck %s

// Between two convolutions the channels-first permute sinks through the
// per-channel affine (BatchNorm's scale and shift), the activation and the
// residual add, and cancels against the next channels-last permute.
// CHECK-LABEL: func.func @conv_chain(
//   CHECK-NOT:   kiln.permute %{{.*}} [0, 3, 1, 2]
//       CHECK:   %[[C1:.+]] = kiln.conv2d
//       CHECK:   kiln.reshape %{{.*}} : tensor<8x1x1xf32> -> tensor<1x1x1x8xf32>
//       CHECK:   %[[M:.+]] = kiln.mul %[[C1]], %{{.*}} : tensor<1x6x6x8xf32>, tensor<1x1x1x8xf32> -> tensor<1x6x6x8xf32>
//       CHECK:   %[[R:.+]] = kiln.relu
//       CHECK:   %[[A:.+]] = kiln.add %[[R]], %[[C1]] : tensor<1x6x6x8xf32>
//       CHECK:   %[[C2:.+]] = kiln.conv2d %[[A]]
//       CHECK:   %[[OUT:.+]] = kiln.permute %[[C2]] [0, 3, 1, 2]
//       CHECK:   return %[[OUT]]
func.func @conv_chain(%x: tensor<1x8x6x6xf32>, %w: tensor<8x3x3x8xf32>, %s: tensor<8x1x1xf32>) -> tensor<1x8x6x6xf32> {
  %0 = kiln.permute %x [0, 2, 3, 1] : tensor<1x8x6x6xf32> -> tensor<1x6x6x8xf32>
  %1 = kiln.conv2d %0, %w strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<1x6x6x8xf32>, tensor<8x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  %2 = kiln.permute %1 [0, 3, 1, 2] : tensor<1x6x6x8xf32> -> tensor<1x8x6x6xf32>
  %3 = kiln.mul %2, %s : tensor<1x8x6x6xf32>, tensor<8x1x1xf32> -> tensor<1x8x6x6xf32>
  %4 = kiln.relu %3 : tensor<1x8x6x6xf32>
  %5 = kiln.add %4, %2 : tensor<1x8x6x6xf32>
  %6 = kiln.permute %5 [0, 2, 3, 1] : tensor<1x8x6x6xf32> -> tensor<1x6x6x8xf32>
  %7 = kiln.conv2d %6, %w strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<1x6x6x8xf32>, tensor<8x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  %8 = kiln.permute %7 [0, 3, 1, 2] : tensor<1x6x6x8xf32> -> tensor<1x8x6x6xf32>
  return %8 : tensor<1x8x6x6xf32>
}

// -----

// A residual from the NCHW model input reuses the input's existing
// channels-last permute: no new permute appears.
// CHECK-LABEL: func.func @skip_from_input(
//       CHECK:   %[[IN:.+]] = kiln.permute %arg0 [0, 2, 3, 1]
//       CHECK:   %[[C:.+]] = kiln.conv2d %[[IN]]
//       CHECK:   kiln.add %[[C]], %[[IN]] : tensor<1x6x6x8xf32>
//   CHECK-NOT:   kiln.permute %{{.*}} [0, 2, 3, 1]
func.func @skip_from_input(%x: tensor<1x8x6x6xf32>, %w: tensor<8x3x3x8xf32>) -> tensor<1x8x6x6xf32> {
  %0 = kiln.permute %x [0, 2, 3, 1] : tensor<1x8x6x6xf32> -> tensor<1x6x6x8xf32>
  %1 = kiln.conv2d %0, %w strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<1x6x6x8xf32>, tensor<8x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  %2 = kiln.permute %1 [0, 3, 1, 2] : tensor<1x6x6x8xf32> -> tensor<1x8x6x6xf32>
  %3 = kiln.add %2, %x : tensor<1x8x6x6xf32>
  return %3 : tensor<1x8x6x6xf32>
}

// -----

// Global average pooling: the mean's dims are renamed; the permute of the
// 1x1 result moves only unit dims and becomes a reshape.
// CHECK-LABEL: func.func @global_mean(
//       CHECK:   %[[M:.+]] = kiln.reduce_mean %arg0 dims = [1, 2] keepdim : tensor<2x7x7x64xf16> -> tensor<2x1x1x64xf16>
//       CHECK:   kiln.reshape %[[M]] : tensor<2x1x1x64xf16> -> tensor<2x64xf16>
//   CHECK-NOT:   kiln.permute
func.func @global_mean(%x: tensor<2x7x7x64xf16>) -> tensor<2x64xf16> {
  %0 = kiln.permute %x [0, 3, 1, 2] : tensor<2x7x7x64xf16> -> tensor<2x64x7x7xf16>
  %1 = kiln.reduce_mean %0 dims = [2, 3] keepdim : tensor<2x64x7x7xf16> -> tensor<2x64x1x1xf16>
  %2 = kiln.reshape %1 : tensor<2x64x1x1xf16> -> tensor<2x64xf16>
  return %2 : tensor<2x64xf16>
}

// -----

// Without keepdim the surviving dims come back in the original order.
// CHECK-LABEL: func.func @reduce_channels(
//       CHECK:   %[[S:.+]] = kiln.reduce_sum %arg0 dims = [3] : tensor<2x5x6x4xf32> -> tensor<2x5x6xf32>
//       CHECK:   return %[[S]]
func.func @reduce_channels(%x: tensor<2x5x6x4xf32>) -> tensor<2x5x6xf32> {
  %0 = kiln.permute %x [0, 3, 1, 2] : tensor<2x5x6x4xf32> -> tensor<2x4x5x6xf32>
  %1 = kiln.reduce_sum %0 dims = [1] : tensor<2x4x5x6xf32> -> tensor<2x5x6xf32>
  return %1 : tensor<2x5x6xf32>
}

// -----

// Negative: a full-size NCHW operand with no channels-last copy would need
// a new permute kernel, so the add stays channels-first.
// CHECK-LABEL: func.func @no_new_permutes(
//       CHECK:   %[[P:.+]] = kiln.permute %arg0 [0, 3, 1, 2]
//       CHECK:   kiln.add %[[P]], %arg1 : tensor<1x8x6x6xf32>
func.func @no_new_permutes(%x: tensor<1x6x6x8xf32>, %y: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %0 = kiln.permute %x [0, 3, 1, 2] : tensor<1x6x6x8xf32> -> tensor<1x8x6x6xf32>
  %1 = kiln.add %0, %y : tensor<1x8x6x6xf32>
  return %1 : tensor<1x8x6x6xf32>
}

// -----

// Negative: other permutations and ranks are left alone.
// CHECK-LABEL: func.func @other_permutes(
//       CHECK:   kiln.permute %arg0 [0, 2, 1, 3]
//       CHECK:   kiln.relu
//       CHECK:   kiln.permute %arg1 [2, 0, 1]
//       CHECK:   kiln.relu
func.func @other_permutes(%x: tensor<1x2x3x4xf32>, %y: tensor<2x3x4xf32>) -> (tensor<1x3x2x4xf32>, tensor<4x2x3xf32>) {
  %0 = kiln.permute %x [0, 2, 1, 3] : tensor<1x2x3x4xf32> -> tensor<1x3x2x4xf32>
  %1 = kiln.relu %0 : tensor<1x3x2x4xf32>
  %2 = kiln.permute %y [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %3 = kiln.relu %2 : tensor<4x2x3xf32>
  return %1, %3 : tensor<1x3x2x4xf32>, tensor<4x2x3xf32>
}

// -----

// Conv1d as a convolution of height 1 (Whisper's front end): the result
// leaves as [N, C, L] through a reshape that drops the unit height, GELU
// runs there, and the next convolution reshapes and permutes it back. GELU
// is computed on the channels-last value and both permutes cancel.
// CHECK-LABEL: func.func @conv1d_gelu(
//       CHECK:   %[[C1:.+]] = kiln.conv2d
//       CHECK:   %[[G:.+]] = kiln.gelu %[[C1]] {{.*}}: tensor<1x1x16x8xf32>
//       CHECK:   %[[C2:.+]] = kiln.conv2d %[[G]]
//   CHECK-NOT:   kiln.permute %{{.*}} [0, 2, 3, 1]
func.func @conv1d_gelu(%x: tensor<1x1x16x8xf32>, %w: tensor<8x1x3x8xf32>) -> tensor<1x1x16x8xf32> {
  %0 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 1, 0, 1] dilation = [1, 1] groups = 1 : (tensor<1x1x16x8xf32>, tensor<8x1x3x8xf32>) -> tensor<1x1x16x8xf32>
  %1 = kiln.permute %0 [0, 3, 1, 2] : tensor<1x1x16x8xf32> -> tensor<1x8x1x16xf32>
  %2 = kiln.reshape %1 : tensor<1x8x1x16xf32> -> tensor<1x8x16xf32>
  %3 = kiln.gelu %2 : tensor<1x8x16xf32>
  %4 = kiln.reshape %3 : tensor<1x8x16xf32> -> tensor<1x8x1x16xf32>
  %5 = kiln.permute %4 [0, 2, 3, 1] : tensor<1x8x1x16xf32> -> tensor<1x1x16x8xf32>
  %6 = kiln.conv2d %5, %w strides = [1, 1] padding = [0, 1, 0, 1] dilation = [1, 1] groups = 1 : (tensor<1x1x16x8xf32>, tensor<8x1x3x8xf32>) -> tensor<1x1x16x8xf32>
  return %6 : tensor<1x1x16x8xf32>
}

// -----

// A reshape that merges dims larger than 1 is not a change of view of the
// same layout: the activation stays after it, on [N, C, H*W].
// CHECK-LABEL: func.func @merging_reshape(
//       CHECK:   kiln.permute %{{.*}} [0, 3, 1, 2]
//       CHECK:   %[[R:.+]] = kiln.reshape %{{.*}} : tensor<1x8x4x4xf32> -> tensor<1x8x16xf32>
//       CHECK:   kiln.gelu %[[R]]
func.func @merging_reshape(%x: tensor<1x4x4x8xf32>) -> tensor<1x8x16xf32> {
  %0 = kiln.permute %x [0, 3, 1, 2] : tensor<1x4x4x8xf32> -> tensor<1x8x4x4xf32>
  %1 = kiln.reshape %0 : tensor<1x8x4x4xf32> -> tensor<1x8x16xf32>
  %2 = kiln.gelu %1 : tensor<1x8x16xf32>
  return %2 : tensor<1x8x16xf32>
}
