// RUN: kiln-opt %s --kiln-graph-pipeline="precision=fp16 fold-layer-norm-bytes=0" | FileCheck %s
// RUN: kiln-opt %s --kiln-graph-pipeline="precision=fp16" | FileCheck %s --check-prefix=DEFAULT

// A pre-norm block's norm in the graph pipeline: with the fold, a row
// moments kernel that takes the residual add before it, and the linear's
// group with the correction, its bias and its GELU in the epilogue; by
// default (a norm of 4 KiB, launch-bound: under the 4 MiB the fold takes)
// the norm's own kernel.
// CHECK-LABEL: func.func @pre_norm(
//   CHECK-NOT:   kiln.layer_norm
//       CHECK:   %[[S:.+]]:3 = kiln.fusion normalization
//       CHECK:     kiln.add
//       CHECK:     kiln.row_moments
//       CHECK:   kiln.fusion gemm_epilogue ins(%[[S]]#0, %{{.+}}, %[[S]]#1, %{{.+}}, %[[S]]#2, %{{.+}} :
//       CHECK:     kiln.linear {{.*}} -> tensor<64x96xf32>
//       CHECK:     kiln.mul
//       CHECK:     kiln.sub
//       CHECK:     kiln.mul
//       CHECK:     kiln.add
//       CHECK:     kiln.cast
//       CHECK:     kiln.gelu
//   CHECK-NOT:   kiln.fusion
//       CHECK:   return
// DEFAULT-LABEL: func.func @pre_norm(
//       DEFAULT:   kiln.layer_norm
//   DEFAULT-NOT:   kiln.row_moments
func.func @pre_norm(%x: tensor<64x32xf32>, %r: tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<64x96xf32>) {
  %g = kiln.constant dense<[1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 0.5, -1.0]> : tensor<32xf32>
  %b = kiln.constant dense<0.25> : tensor<32xf32>
  %w = kiln.constant dense<0.125> : tensor<96x32xf32>
  %bias = kiln.constant dense<1.0> : tensor<96xf32>
  %h = kiln.add %x, %r : tensor<64x32xf32>
  %n = kiln.layer_norm %h weight %g bias %b axis = 1 eps = 1.0e-05 : (tensor<64x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<64x32xf32>
  %l = kiln.linear %n, %w, %bias : (tensor<64x32xf32>, tensor<96x32xf32>, tensor<96xf32>) -> tensor<64x96xf32>
  %y = kiln.gelu %l : tensor<64x96xf32>
  return %h, %y : tensor<64x32xf32>, tensor<64x96xf32>
}
