// RUN: kiln-opt %s --split-input-file --kiln-patchify | FileCheck %s

// ViT's patch embedding: 16 x 16 patches at stride 16 over a 3-channel
// image. The im2col is a reshape and a permute of the input; the
// convolution a linear layer with the weight seen as [O, 16 * 16 * 3].
// CHECK-LABEL: func.func @patch_embedding(
//       CHECK:   %[[W:.+]] = kiln.constant dense<{{.+}}> : tensor<8x48xf32>
//       CHECK:   %[[S:.+]] = kiln.reshape %arg0 : tensor<2x8x8x3xf32> -> tensor<2x2x4x2x4x3xf32>
//       CHECK:   %[[P:.+]] = kiln.permute %[[S]] [0, 1, 3, 2, 4, 5] : tensor<2x2x4x2x4x3xf32> -> tensor<2x2x2x4x4x3xf32>
//       CHECK:   %[[R:.+]] = kiln.reshape %[[P]] : tensor<2x2x2x4x4x3xf32> -> tensor<2x2x2x48xf32>
//       CHECK:   %[[L:.+]] = kiln.linear %[[R]], %[[W]], %arg1 : (tensor<2x2x2x48xf32>, tensor<8x48xf32>, tensor<8xf32>) -> tensor<2x2x2x8xf32>
//       CHECK:   return %[[L]]
func.func @patch_embedding(%x: tensor<2x8x8x3xf32>, %b: tensor<8xf32>) -> tensor<2x2x2x8xf32> {
  %w = kiln.constant dense<0.5> : tensor<8x4x4x3xf32>
  %y = kiln.conv2d %x, %w, %b strides = [4, 4] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<2x8x8x3xf32>, tensor<8x4x4x3xf32>, tensor<8xf32>) -> tensor<2x2x2x8xf32>
  return %y : tensor<2x2x2x8xf32>
}

// -----

// Overlapping windows, padding, a remainder the windows skip, groups, and a
// weight that is not a constant all stay convolutions.
// CHECK-LABEL: func.func @not_patches(
//   CHECK-COUNT-5:   kiln.conv2d
//   CHECK-NOT:   kiln.linear
func.func @not_patches(%x: tensor<1x9x8x4xf32>, %x8: tensor<1x8x8x4xf32>, %wv: tensor<4x2x2x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %w = kiln.constant dense<0.5> : tensor<4x2x2x4xf32>
  %wg = kiln.constant dense<0.5> : tensor<4x2x2x2xf32>
  %overlap = kiln.conv2d %x8, %w strides = [2, 2] padding = [0, 0, 1, 1] dilation = [1, 1] groups = 1 : (tensor<1x8x8x4xf32>, tensor<4x2x2x4xf32>) -> tensor<1x4x4x4xf32>
  %remainder = kiln.conv2d %x, %w strides = [2, 2] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x9x8x4xf32>, tensor<4x2x2x4xf32>) -> tensor<1x4x4x4xf32>
  %grouped = kiln.conv2d %x8, %wg strides = [2, 2] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 2 : (tensor<1x8x8x4xf32>, tensor<4x2x2x2xf32>) -> tensor<1x4x4x4xf32>
  %variable = kiln.conv2d %x8, %wv strides = [2, 2] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x8x8x4xf32>, tensor<4x2x2x4xf32>) -> tensor<1x4x4x4xf32>
  %w3 = kiln.constant dense<0.5> : tensor<4x3x3x4xf32>
  %stride2 = kiln.conv2d %x8, %w3 strides = [2, 2] padding = [1, 1, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x8x8x4xf32>, tensor<4x3x3x4xf32>) -> tensor<1x4x4x4xf32>
  return %overlap, %remainder, %grouped, %variable, %stride2 : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}
