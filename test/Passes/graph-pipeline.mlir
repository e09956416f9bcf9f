// RUN: kiln-opt %s --kiln-graph-pipeline | FileCheck %s
// RUN: kiln-opt %s --kiln-graph-pipeline="fuse=false" | FileCheck %s --check-prefix=NO-FUSE

// The graph pipeline on a transformer FFN as imported: the view round trip
// folds, GEMMs take their epilogues, the norm its residual, and nothing is
// left outside a group.
// CHECK-LABEL: func.func @ffn(
//   CHECK-NOT:   kiln.reshape
//       CHECK:   kiln.fusion gemm_epilogue
//       CHECK:     kiln.linear
//       CHECK:     kiln.gelu
//       CHECK:   kiln.fusion gemm_epilogue
//       CHECK:     kiln.linear
//       CHECK:     kiln.add
//       CHECK:   kiln.fusion normalization
//       CHECK:     kiln.layer_norm
//   CHECK-NOT:   kiln.fusion
//       CHECK:   return
// NO-FUSE-LABEL: func.func @ffn(
//   NO-FUSE-NOT:   kiln.fusion
//   NO-FUSE-NOT:   kiln.reshape
func.func @ffn(%x: tensor<8x16xf32>, %w1: tensor<32x16xf32>, %b1: tensor<32xf32>, %w2: tensor<16x32xf32>, %b2: tensor<16xf32>) -> tensor<8x16xf32> {
  %h = kiln.linear %x, %w1, %b1 : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %g = kiln.gelu %h : tensor<8x32xf32>
  %f = kiln.reshape %g : tensor<8x32xf32> -> tensor<256xf32>
  %v = kiln.reshape %f : tensor<256xf32> -> tensor<8x32xf32>
  %o = kiln.linear %v, %w2, %b2 : (tensor<8x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %r = kiln.add %o, %x : tensor<8x16xf32>
  %n = kiln.layer_norm %r axis = 1 eps = 1.0e-05 : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %n : tensor<8x16xf32>
}
