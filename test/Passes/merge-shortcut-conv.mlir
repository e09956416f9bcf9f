// RUN: kiln-opt %s --split-input-file --kiln-merge-shortcut-conv=min-bytes=0 | FileCheck %s

// A strided projection shortcut: its input enters as the slice it reads,
// after the other convolution's input; the weights join per output channel
// (1.0 then 2.0: 0x3C00 x 8, 0x4000 x 8 a row), the biases add (0.5 + 0.25
// = 0.75: 0x3A00), and the relu reads the merged convolution. The concat is
// marked for the fusion pass: its kernel reads it in place.
// CHECK-LABEL: func.func @strided(
//       CHECK:   %[[S:.+]] = kiln.slice %arg1 offsets = [0, 0, 0, 0] strides = [1, 2, 2, 1] : tensor<1x8x8x8xf16> -> tensor<1x4x4x8xf16>
//       CHECK:   %[[C:.+]] = kiln.concat %arg0, %[[S]] dim = 3 {kiln.read_in_place} : (tensor<1x4x4x8xf16>, tensor<1x4x4x8xf16>) -> tensor<1x4x4x16xf16>
//       CHECK:   %[[W:.+]] = kiln.constant dense_resource<shortcut_weight> : tensor<2x1x1x16xf16>
//       CHECK:   %[[B:.+]] = kiln.constant dense_resource<shortcut_bias> : tensor<2xf16>
//       CHECK:   %[[Y:.+]] = kiln.conv2d %[[C]], %[[W]], %[[B]] strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1
//   CHECK-NOT:   kiln.add
//       CHECK:   kiln.relu %[[Y]]
//       CHECK: shortcut_weight: "0x40000000003C003C003C003C003C003C003C003C00400040004000400040004000400040003C003C003C003C003C003C003C003C00400040004000400040004000400040"
//       CHECK: shortcut_bias: "0x40000000003A003A"
func.func @strided(%h: tensor<1x4x4x8xf16>, %x: tensor<1x8x8x8xf16>) -> tensor<1x4x4x2xf16> {
  %wc = kiln.constant dense<1.0> : tensor<2x1x1x8xf16>
  %bc = kiln.constant dense<0.5> : tensor<2xf16>
  %wd = kiln.constant dense<2.0> : tensor<2x1x1x8xf16>
  %bd = kiln.constant dense<0.25> : tensor<2xf16>
  %c = kiln.conv2d %h, %wc, %bc strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x8xf16>, tensor<2x1x1x8xf16>, tensor<2xf16>) -> tensor<1x4x4x2xf16>
  %d = kiln.conv2d %x, %wd, %bd strides = [2, 2] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x8x8x8xf16>, tensor<2x1x1x8xf16>, tensor<2xf16>) -> tensor<1x4x4x2xf16>
  %s = kiln.add %c, %d : tensor<1x4x4x2xf16>
  %r = kiln.relu %s : tensor<1x4x4x2xf16>
  return %r : tensor<1x4x4x2xf16>
}

// -----

// Both at stride 1 (ResNet-50's first stage), bf16, the shortcut on the
// add's left and without a bias: the inputs join in the add's order, and the
// bias is the other's.
// CHECK-LABEL: func.func @unstrided(
//   CHECK-NOT:   kiln.slice
//       CHECK:   %[[C:.+]] = kiln.concat %arg1, %arg0 dim = 3 {kiln.read_in_place} : (tensor<2x3x3x16xbf16>, tensor<2x3x3x8xbf16>) -> tensor<2x3x3x24xbf16>
//       CHECK:   kiln.conv2d %[[C]], %{{.+}}, %{{.+}} strides = [1, 1]
//  CHECK-SAME:     (tensor<2x3x3x24xbf16>, tensor<8x1x1x24xbf16>, tensor<8xbf16>) -> tensor<2x3x3x8xbf16>
//   CHECK-NOT:   kiln.add
func.func @unstrided(%h: tensor<2x3x3x8xbf16>, %x: tensor<2x3x3x16xbf16>) -> tensor<2x3x3x8xbf16> {
  %wc = kiln.constant dense<1.0> : tensor<8x1x1x8xbf16>
  %bc = kiln.constant dense<0.5> : tensor<8xbf16>
  %wd = kiln.constant dense<2.0> : tensor<8x1x1x16xbf16>
  %c = kiln.conv2d %h, %wc, %bc strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<2x3x3x8xbf16>, tensor<8x1x1x8xbf16>, tensor<8xbf16>) -> tensor<2x3x3x8xbf16>
  %d = kiln.conv2d %x, %wd strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<2x3x3x16xbf16>, tensor<8x1x1x16xbf16>) -> tensor<2x3x3x8xbf16>
  %s = kiln.add %d, %c : tensor<2x3x3x8xbf16>
  return %s : tensor<2x3x3x8xbf16>
}

// -----

// Negative: a 3x3 convolution (a basic block's), an fp32 pair, a result
// read twice, a weight that is not a constant, and channels off 8 (TMA's
// 16-byte strides) all keep their add.
// CHECK-LABEL: func.func @kept(
//   CHECK-NOT:   kiln.concat
//   CHECK-COUNT-5:   kiln.add
//   CHECK-NOT:   kiln.concat
func.func @kept(%h: tensor<1x4x4x8xf16>, %h32: tensor<1x4x4x8xf32>, %h4: tensor<1x4x4x4xf16>, %wv: tensor<8x1x1x8xf16>) -> (tensor<1x4x4x8xf16>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf16>, tensor<1x4x4x8xf16>, tensor<1x4x4x8xf16>, tensor<1x4x4x8xf16>) {
  %w1 = kiln.constant dense<1.0> : tensor<8x1x1x8xf16>
  %w3 = kiln.constant dense<1.0> : tensor<8x3x3x8xf16>
  %w32 = kiln.constant dense<1.0> : tensor<8x1x1x8xf32>
  %w4 = kiln.constant dense<1.0> : tensor<8x1x1x4xf16>
  %a = kiln.conv2d %h, %w3 strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<1x4x4x8xf16>, tensor<8x3x3x8xf16>) -> tensor<1x4x4x8xf16>
  %b = kiln.conv2d %h, %w1 strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x8xf16>, tensor<8x1x1x8xf16>) -> tensor<1x4x4x8xf16>
  %0 = kiln.add %a, %b : tensor<1x4x4x8xf16>
  %c = kiln.conv2d %h32, %w32 strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x8xf32>, tensor<8x1x1x8xf32>) -> tensor<1x4x4x8xf32>
  %d = kiln.conv2d %h32, %w32 strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x8xf32>, tensor<8x1x1x8xf32>) -> tensor<1x4x4x8xf32>
  %1 = kiln.add %c, %d : tensor<1x4x4x8xf32>
  %e = kiln.conv2d %h, %w1 strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x8xf16>, tensor<8x1x1x8xf16>) -> tensor<1x4x4x8xf16>
  %f = kiln.conv2d %h, %w1 strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x8xf16>, tensor<8x1x1x8xf16>) -> tensor<1x4x4x8xf16>
  %2 = kiln.add %e, %f : tensor<1x4x4x8xf16>
  %g = kiln.conv2d %h, %wv strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x8xf16>, tensor<8x1x1x8xf16>) -> tensor<1x4x4x8xf16>
  %i = kiln.conv2d %h, %w1 strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x8xf16>, tensor<8x1x1x8xf16>) -> tensor<1x4x4x8xf16>
  %3 = kiln.add %g, %i : tensor<1x4x4x8xf16>
  %j = kiln.conv2d %h4, %w4 strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x4xf16>, tensor<8x1x1x4xf16>) -> tensor<1x4x4x8xf16>
  %k = kiln.conv2d %h, %w1 strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x8xf16>, tensor<8x1x1x8xf16>) -> tensor<1x4x4x8xf16>
  %4 = kiln.add %j, %k : tensor<1x4x4x8xf16>
  return %0, %1, %2, %e, %3, %4 : tensor<1x4x4x8xf16>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf16>, tensor<1x4x4x8xf16>, tensor<1x4x4x8xf16>, tensor<1x4x4x8xf16>
}
