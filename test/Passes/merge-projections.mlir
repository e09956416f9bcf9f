// RUN: kiln-opt %s --split-input-file --kiln-merge-projections | FileCheck %s

// BERT's q, k and v: three linears of one input whose results only reach
// the attention through split-heads views become one [3 * 32, 16] linear
// and three slices of it.
// CHECK-LABEL: func.func @qkv(
//       CHECK:   %[[W:.+]] = kiln.constant dense_resource<merged_projection_weight{{.*}}> : tensor<96x16xf32>
//       CHECK:   %[[B:.+]] = kiln.constant dense_resource<merged_projection_bias{{.*}}> : tensor<96xf32>
//       CHECK:   %[[L:.+]] = kiln.linear %arg0, %[[W]], %[[B]] : (tensor<2x8x16xf32>, tensor<96x16xf32>, tensor<96xf32>) -> tensor<2x8x96xf32>
//       CHECK:   kiln.slice %[[L]] offsets = [0, 0, 0] strides = [1, 1, 1] : tensor<2x8x96xf32> -> tensor<2x8x32xf32>
//       CHECK:   kiln.slice %[[L]] offsets = [0, 0, 32]
//       CHECK:   kiln.slice %[[L]] offsets = [0, 0, 64]
//   CHECK-NOT:   kiln.linear
//       CHECK:   kiln.attention
func.func @qkv(%x: tensor<2x8x16xf32>) -> tensor<2x4x8x8xf32> {
  %wq = kiln.constant dense<1.0> : tensor<32x16xf32>
  %wk = kiln.constant dense<2.0> : tensor<32x16xf32>
  %wv = kiln.constant dense<3.0> : tensor<32x16xf32>
  %b = kiln.constant dense<0.5> : tensor<32xf32>
  %q0 = kiln.linear %x, %wq, %b : (tensor<2x8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %k0 = kiln.linear %x, %wk, %b : (tensor<2x8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %v0 = kiln.linear %x, %wv, %b : (tensor<2x8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %q1 = kiln.reshape %q0 : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %q = kiln.permute %q1 [0, 2, 1, 3] : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %k1 = kiln.reshape %k0 : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %k = kiln.permute %k1 [0, 2, 1, 3] : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %v1 = kiln.reshape %v0 : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %v = kiln.permute %v1 [0, 2, 1, 3] : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %o = kiln.attention %q, %k, %v scale = 0.35 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  return %o : tensor<2x4x8x8xf32>
}

// -----

// Not merged: the key's projection is also returned (its slice would cost a
// kernel), so only q and v merge; a linear of the same input that feeds the
// attention's mask stays too.
// CHECK-LABEL: func.func @partial(
//       CHECK:   kiln.linear %arg0, %{{.+}} : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
//       CHECK:   %[[K:.+]] = kiln.linear %arg0, %{{.+}} : (tensor<2x8x16xf32>, tensor<32x16xf32>) -> tensor<2x8x32xf32>
//       CHECK:   kiln.linear %arg0, %{{.+}} : (tensor<2x8x16xf32>, tensor<8x16xf32>) -> tensor<2x8x8xf32>
//       CHECK:   return %{{.+}}, %[[K]]
func.func @partial(%x: tensor<2x8x16xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x8x32xf32>) {
  %w = kiln.constant dense<1.0> : tensor<32x16xf32>
  %wm = kiln.constant dense<1.0> : tensor<8x16xf32>
  %q0 = kiln.linear %x, %w : (tensor<2x8x16xf32>, tensor<32x16xf32>) -> tensor<2x8x32xf32>
  %k0 = kiln.linear %x, %w : (tensor<2x8x16xf32>, tensor<32x16xf32>) -> tensor<2x8x32xf32>
  %v0 = kiln.linear %x, %w : (tensor<2x8x16xf32>, tensor<32x16xf32>) -> tensor<2x8x32xf32>
  %m0 = kiln.linear %x, %wm : (tensor<2x8x16xf32>, tensor<8x16xf32>) -> tensor<2x8x8xf32>
  %m = kiln.reshape %m0 : tensor<2x8x8xf32> -> tensor<2x1x8x8xf32>
  %q1 = kiln.reshape %q0 : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %q = kiln.permute %q1 [0, 2, 1, 3] : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %k1 = kiln.reshape %k0 : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %k = kiln.permute %k1 [0, 2, 1, 3] : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %v1 = kiln.reshape %v0 : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %v = kiln.permute %v1 [0, 2, 1, 3] : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %o = kiln.attention %q, %k, %v mask %m scale = 0.35 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  return %o, %k0 : tensor<2x4x8x8xf32>, tensor<2x8x32xf32>
}
