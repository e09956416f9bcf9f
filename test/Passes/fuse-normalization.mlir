// RUN: kiln-opt %s --split-input-file --kiln-fuse-normalization | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-fuse-normalization="prologue=false" | FileCheck %s --check-prefix=NO-PROLOGUE

// Layer norm and softmax anchor normalization groups with their elementwise
// producers (prologue) and consumers (epilogue) over the same shape.

// The pre-norm residual: h = x + y feeds the norm and is used again later
// (by a reduction), so it joins as an extra result; the GELU after the norm
// joins as epilogue, and so does the mul that reads both.
// CHECK-LABEL: func.func @residual_norm(
//       CHECK:   %[[G:.+]]:2 = kiln.fusion normalization ins(
//       CHECK:     %[[H:.+]] = kiln.add
//       CHECK:     %[[N:.+]] = kiln.layer_norm %[[H]]
//       CHECK:     %[[E:.+]] = kiln.gelu %[[N]]
//       CHECK:     %[[M:.+]] = kiln.mul %[[H]], %[[E]]
//       CHECK:     kiln.yield %[[H]], %[[M]]
//       CHECK:   kiln.reduce_sum %[[G]]#0
// NO-PROLOGUE-LABEL: func.func @residual_norm(
//       NO-PROLOGUE:   %[[H:.+]] = kiln.add
//       NO-PROLOGUE:   kiln.fusion normalization ins(%[[H]],
func.func @residual_norm(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %g: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %h = kiln.add %x, %y : tensor<4x8xf32>
  %n = kiln.layer_norm %h weight %g axis = 1 eps = 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %e = kiln.gelu %n : tensor<4x8xf32>
  %o = kiln.mul %h, %e : tensor<4x8xf32>
  %s = kiln.reduce_sum %h dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %o, %s : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// A scaled softmax: the scale is a prologue, the cast an epilogue.
// CHECK-LABEL: func.func @scaled_softmax(
//       CHECK:   kiln.fusion normalization
//       CHECK:     kiln.mul
//       CHECK:     kiln.softmax
//       CHECK:     kiln.cast
//   CHECK-NOT:   kiln.fusion
func.func @scaled_softmax(%s: tensor<2x16xf32>) -> tensor<2x16xf16> {
  %c = kiln.constant dense<0.125> : tensor<f32>
  %0 = kiln.mul %s, %c : tensor<2x16xf32>, tensor<f32> -> tensor<2x16xf32>
  %1 = kiln.softmax %0 dim = 1 : tensor<2x16xf32>
  %2 = kiln.cast %1 : tensor<2x16xf32> to tensor<2x16xf16>
  return %2 : tensor<2x16xf16>
}

// -----

// A producer of another shape (the broadcast bias) stays outside.
// CHECK-LABEL: func.func @broadcast_producer_stays_out(
//       CHECK:   %[[B:.+]] = kiln.exp %{{.+}} : tensor<8xf32>
//       CHECK:   kiln.fusion normalization ins(%{{.+}}, %[[B]]
func.func @broadcast_producer_stays_out(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = kiln.exp %b : tensor<8xf32>
  %1 = kiln.add %x, %0 : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %2 = kiln.layer_norm %1 axis = 1 eps = 1.0e-05 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Row moments take the residual add that computes their rows (stored too:
// the folded linear reads it) and nothing after them: they store two
// values a row.
// CHECK-LABEL: func.func @row_moments_prologue(
//       CHECK:   %[[G:.+]]:3 = kiln.fusion normalization ins(%arg0, %arg1 : {{.*}}) -> tensor<16x64xf16>, tensor<16x1xf32>, tensor<16x1xf32>
//       CHECK:     kiln.add
//       CHECK:     kiln.row_moments
//       CHECK:     kiln.yield
//       CHECK:   kiln.mul %[[G]]#1, %[[G]]#2
// NO-PROLOGUE-LABEL: func.func @row_moments_prologue(
//       NO-PROLOGUE:   kiln.add %arg0, %arg1
//       NO-PROLOGUE:   kiln.fusion normalization
func.func @row_moments_prologue(%x: tensor<16x64xf16>, %r: tensor<16x64xf16>) -> (tensor<16x64xf16>, tensor<16x1xf32>) {
  %0 = kiln.add %x, %r : tensor<16x64xf16>
  %mean, %rstd = kiln.row_moments %0 eps = 1.0e-05 : tensor<16x64xf16> -> tensor<16x1xf32>
  %1 = kiln.mul %mean, %rstd : tensor<16x1xf32>
  return %0, %1 : tensor<16x64xf16>, tensor<16x1xf32>
}
