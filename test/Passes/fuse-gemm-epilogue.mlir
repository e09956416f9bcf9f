// RUN: kiln-opt %s --split-input-file --kiln-fuse-gemm-epilogue | FileCheck %s

// Each contraction anchors a gemm_epilogue group that takes its elementwise
// consumers over the GEMM's result shape (bias is part of kiln.linear).

// Activation, residual add, scale and cast: one chain, one group.
// CHECK-LABEL: func.func @epilogue_chain(
//  CHECK-SAME:     %[[X:.+]]: tensor<8x16xf16>, %[[W:.+]]: tensor<32x16xf16>, %[[B:.+]]: tensor<32xf16>, %[[R:.+]]: tensor<8x32xf16>
//       CHECK:   %[[G:.+]] = kiln.fusion gemm_epilogue ins(%[[X]], %[[W]], %[[B]], %[[R]] : {{.*}}) -> tensor<8x32xf32>
//       CHECK:     kiln.linear
//       CHECK:     kiln.gelu
//       CHECK:     kiln.add
//       CHECK:     kiln.mul
//       CHECK:     kiln.cast
//       CHECK:     kiln.yield
//   CHECK-NOT:   kiln.fusion
//       CHECK:   return %[[G]]
func.func @epilogue_chain(%x: tensor<8x16xf16>, %w: tensor<32x16xf16>, %b: tensor<32xf16>, %r: tensor<8x32xf16>) -> tensor<8x32xf32> {
  %scale = kiln.constant dense<0.5> : tensor<f16>
  %0 = kiln.linear %x, %w, %b : (tensor<8x16xf16>, tensor<32x16xf16>, tensor<32xf16>) -> tensor<8x32xf16>
  %1 = kiln.gelu %0 : tensor<8x32xf16>
  %2 = kiln.add %1, %r : tensor<8x32xf16>
  %3 = kiln.mul %2, %scale : tensor<8x32xf16>, tensor<f16> -> tensor<8x32xf16>
  %4 = kiln.cast %3 : tensor<8x32xf16> to tensor<8x32xf32>
  return %4 : tensor<8x32xf32>
}

// -----

// A GEMM result used after the epilogue too is an extra result of the group.
// CHECK-LABEL: func.func @gemm_result_escapes(
//       CHECK:   %[[G:.+]]:2 = kiln.fusion gemm_epilogue
//       CHECK:     %[[M:.+]] = kiln.matmul
//       CHECK:     %[[T:.+]] = kiln.tanh %[[M]]
//       CHECK:     kiln.yield %[[M]], %[[T]]
//       CHECK:   kiln.reduce_sum %[[G]]#0
func.func @gemm_result_escapes(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>) {
  %0 = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = kiln.tanh %0 : tensor<4x4xf32>
  %2 = kiln.reduce_sum %0 dims = [1] : tensor<4x4xf32> -> tensor<4xf32>
  return %1, %2 : tensor<4x4xf32>, tensor<4xf32>
}

// -----

// Elementwise producers of the GEMM's inputs stay out (no GEMM prologue),
// and so does a consumer over another shape (a broadcast to a larger one).
// CHECK-LABEL: func.func @no_prologue_no_reshape(
//       CHECK:   %[[P:.+]] = kiln.relu
//       CHECK:   %[[G:.+]] = kiln.fusion gemm_epilogue ins(%[[P]],
//       CHECK:     kiln.linear
//       CHECK-NEXT:     kiln.yield
//       CHECK:   kiln.add %[[G]], %{{.+}} : tensor<4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
func.func @no_prologue_no_reshape(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %y: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = kiln.relu %x : tensor<4x8xf32>
  %1 = kiln.linear %0, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = kiln.add %1, %y : tensor<4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %2 : tensor<2x4x8xf32>
}

// -----

// Two GEMMs in a row are two groups; the second's input is the first group.
// An op marked kiln.no_fuse ends the epilogue (the test hook).
// CHECK-LABEL: func.func @two_gemms(
//       CHECK:   %[[G1:.+]] = kiln.fusion gemm_epilogue
//       CHECK:     kiln.linear
//   CHECK-NOT:     kiln.sigmoid
//       CHECK:   %[[S:.+]] = kiln.sigmoid %[[G1]] {kiln.no_fuse}
//       CHECK:   kiln.fusion gemm_epilogue ins(%[[S]],
//       CHECK:     kiln.linear
//       CHECK:     kiln.relu
func.func @two_gemms(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = kiln.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = kiln.sigmoid %0 {kiln.no_fuse} : tensor<4x8xf32>
  %2 = kiln.linear %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = kiln.relu %2 : tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// exp(gemm) feeding a softmax that feeds an add with the gemm: taking the
// add would close a cycle through the softmax, so the epilogue stops at exp.
// CHECK-LABEL: func.func @no_cycle(
//       CHECK:   %[[G:.+]]:2 = kiln.fusion gemm_epilogue
//       CHECK:     kiln.exp
//   CHECK-NOT:     kiln.add
//       CHECK:   %[[S:.+]] = kiln.softmax %[[G]]#1
//       CHECK:   kiln.add %[[G]]#0, %[[S]]
func.func @no_cycle(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = kiln.matmul %a, %a : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = kiln.exp %0 : tensor<4x4xf32>
  %2 = kiln.softmax %1 dim = 1 : tensor<4x4xf32>
  %3 = kiln.add %0, %2 : tensor<4x4xf32>
  return %3 : tensor<4x4xf32>
}

// -----

// An outer product of a row's and a column's values that only the epilogue
// reads (a folded layer norm's mean x its weights' sums) joins the group:
// recomputed per element, never stored in full.
// CHECK-LABEL: func.func @outer_product(
//  CHECK-SAME:     %[[X:.+]]: tensor<8x16xf16>, %[[W:.+]]: tensor<32x16xf16>, %[[M:.+]]: tensor<8x1xf32>, %[[C:.+]]: tensor<32xf32>
//   CHECK-NOT:   kiln.mul
//       CHECK:   kiln.fusion gemm_epilogue ins(%[[X]], %[[W]], %[[M]], %[[C]] :
//       CHECK:     kiln.linear
//       CHECK:     kiln.mul %{{.+}}, %{{.+}} : tensor<8x1xf32>, tensor<32xf32> -> tensor<8x32xf32>
//       CHECK:     kiln.sub
//   CHECK-NOT:   kiln.fusion
func.func @outer_product(%x: tensor<8x16xf16>, %w: tensor<32x16xf16>, %m: tensor<8x1xf32>, %c: tensor<32xf32>) -> tensor<8x32xf16> {
  %0 = kiln.linear %x, %w : (tensor<8x16xf16>, tensor<32x16xf16>) -> tensor<8x32xf32>
  %1 = kiln.mul %m, %c : tensor<8x1xf32>, tensor<32xf32> -> tensor<8x32xf32>
  %2 = kiln.sub %0, %1 : tensor<8x32xf32>
  %3 = kiln.cast %2 : tensor<8x32xf32> to tensor<8x32xf16>
  return %3 : tensor<8x32xf16>
}

// -----

// One that something else reads too is computed once, outside: the group
// reads it whole.
// CHECK-LABEL: func.func @outer_product_used_twice(
//       CHECK:   %[[P:.+]] = kiln.mul %{{.+}}, %{{.+}} : tensor<8x1xf32>, tensor<32xf32> -> tensor<8x32xf32>
//       CHECK:   kiln.fusion gemm_epilogue ins(%{{.+}}, %{{.+}}, %[[P]] :
func.func @outer_product_used_twice(%x: tensor<8x16xf16>, %w: tensor<32x16xf16>, %m: tensor<8x1xf32>, %c: tensor<32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>) {
  %0 = kiln.linear %x, %w : (tensor<8x16xf16>, tensor<32x16xf16>) -> tensor<8x32xf32>
  %1 = kiln.mul %m, %c : tensor<8x1xf32>, tensor<32xf32> -> tensor<8x32xf32>
  %2 = kiln.sub %0, %1 : tensor<8x32xf32>
  return %2, %1 : tensor<8x32xf32>, tensor<8x32xf32>
}
