// RUN: kiln-opt %s --split-input-file --kiln-fuse-elementwise | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-fuse-elementwise="fuse-multi-use=false" | FileCheck %s --check-prefix=SINGLE-USE
// RUN: kiln-opt %s --split-input-file --kiln-fuse-elementwise="wrap-single-ops=false" | FileCheck %s --check-prefix=NO-WRAP

// Elementwise ops over one index space merge into one kiln.fusion group,
// visiting consumers in program order; operands of other shapes enter as
// broadcast inputs; values used outside become extra results; a merge that
// would cycle through an outside op is refused.

// A chain of elementwise ops becomes one group; the broadcast operand is an input.
// CHECK-LABEL: func.func @fuse_add_relu(
//  CHECK-SAME:     %[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8xf32>
//       CHECK:   %[[G:.+]] = kiln.fusion elementwise ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
//       CHECK:     kiln.add
//       CHECK:     kiln.relu
//       CHECK:     kiln.yield
//   CHECK-NOT:   kiln.fusion
//       CHECK:   return %[[G]]
func.func @fuse_add_relu(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = kiln.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %1 = kiln.relu %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// A tree (two chains meeting in a mul, with a cast at the end) is one group.
// CHECK-LABEL: func.func @fuse_tree(
//       CHECK:   kiln.fusion elementwise ins(%{{.+}}, %{{.+}} : tensor<16xf32>, tensor<16xf32>) -> tensor<16xf16>
//       CHECK:     kiln.sigmoid
//       CHECK:     kiln.tanh
//       CHECK:     kiln.mul
//       CHECK:     kiln.cast
//   CHECK-NOT:   kiln.fusion
func.func @fuse_tree(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf16> {
  %0 = kiln.sigmoid %x : tensor<16xf32>
  %1 = kiln.tanh %y : tensor<16xf32>
  %2 = kiln.mul %0, %1 : tensor<16xf32>
  %3 = kiln.cast %2 : tensor<16xf32> to tensor<16xf16>
  return %3 : tensor<16xf16>
}

// -----

// A producer used outside the group joins it as an extra result: computed
// once, written once. With fuse-multi-use=false it ends its group instead.
// CHECK-LABEL: func.func @multi_use_producer(
//       CHECK:   %[[G:.+]]:2 = kiln.fusion elementwise ins(%{{.+}} : tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>
//       CHECK:     %[[E:.+]] = kiln.exp
//       CHECK:     %[[N:.+]] = kiln.neg %[[E]]
//       CHECK:     kiln.yield %[[E]], %[[N]]
//       CHECK:   %[[R:.+]] = kiln.reduce_sum %[[G]]#0
//       CHECK:   return %[[G]]#1, %[[R]]
// SINGLE-USE-LABEL: func.func @multi_use_producer(
//       SINGLE-USE:   %[[E:.+]] = kiln.fusion elementwise
//       SINGLE-USE:     kiln.exp
//       SINGLE-USE:   kiln.fusion elementwise ins(%[[E]]
//       SINGLE-USE:     kiln.neg
func.func @multi_use_producer(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %0 = kiln.exp %x : tensor<4xf32>
  %1 = kiln.neg %0 : tensor<4xf32>
  %2 = kiln.reduce_sum %0 dims = [0] : tensor<4xf32> -> tensor<f32>
  return %1, %2 : tensor<4xf32>, tensor<f32>
}

// -----

// An outside user of the extra result that came before the group in program
// order is moved after it.
// CHECK-LABEL: func.func @outside_user_between_members(
//       CHECK:   %[[G:.+]]:2 = kiln.fusion elementwise
//       CHECK:   kiln.reduce_max %[[G]]#0
//       CHECK:   return
func.func @outside_user_between_members(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %0 = kiln.exp %x : tensor<4xf32>
  %1 = kiln.reduce_max %0 dims = [0] : tensor<4xf32> -> tensor<f32>
  %2 = kiln.neg %0 : tensor<4xf32>
  return %2, %1 : tensor<4xf32>, tensor<f32>
}

// -----

// A smaller producer that is broadcast into its consumer is not fused (it
// would be recomputed per output element); it enters as an input.
// CHECK-LABEL: func.func @no_fuse_broadcast_producer(
//       CHECK:   %[[S:.+]] = kiln.fusion elementwise ins(%{{.+}} : tensor<8xf32>) -> tensor<8xf32>
//       CHECK:     kiln.exp
//       CHECK:   kiln.fusion elementwise ins(%{{.+}}, %[[S]] : tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
//       CHECK:     kiln.add
func.func @no_fuse_broadcast_producer(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = kiln.exp %b : tensor<8xf32>
  %1 = kiln.add %a, %0 : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// exp -> softmax -> add, and exp -> add: grouping exp with add would need the
// softmax both after and before the group. The merge is refused.
// CHECK-LABEL: func.func @no_fuse_through_outside_op(
//       CHECK:   %[[E:.+]] = kiln.fusion elementwise
//       CHECK:     kiln.exp
//       CHECK:   %[[S:.+]] = kiln.softmax %[[E]]
//       CHECK:   kiln.fusion elementwise ins(%[[E]], %[[S]]
//       CHECK:     kiln.add
func.func @no_fuse_through_outside_op(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kiln.exp %x : tensor<4x8xf32>
  %1 = kiln.softmax %0 dim = 1 : tensor<4x8xf32>
  %2 = kiln.add %0, %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Scalar and splat constants are cloned into the body; other constants
// (weights) stay outside and enter as inputs.
// CHECK-LABEL: func.func @constants(
//       CHECK:   %[[W:.+]] = kiln.constant dense<[1.000000e+00, 2.000000e+00]>
//       CHECK:   kiln.fusion elementwise ins(%{{.+}}, %[[W]] :
//       CHECK:     kiln.constant dense<5.000000e-01> : tensor<f32>
//       CHECK:     kiln.mul
//       CHECK:     kiln.add
func.func @constants(%x: tensor<2xf32>) -> tensor<2xf32> {
  %half = kiln.constant dense<0.5> : tensor<f32>
  %w = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = kiln.mul %x, %half : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
  %1 = kiln.add %0, %w : tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// Non-elementwise ops stay outside; an op marked kiln.no_fuse joins no group
// (the test hook that separates mechanics from policy).
// CHECK-LABEL: func.func @barriers(
//       CHECK:   kiln.matmul
//       CHECK:   kiln.fusion elementwise
//       CHECK:     kiln.relu
//       CHECK:   kiln.tanh %{{.+}} {kiln.no_fuse}
//       CHECK:   kiln.fusion elementwise
//       CHECK:     kiln.neg
func.func @barriers(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = kiln.matmul %a, %a : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = kiln.relu %0 : tensor<4x4xf32>
  %2 = kiln.tanh %1 {kiln.no_fuse} : tensor<4x4xf32>
  %3 = kiln.neg %2 : tensor<4x4xf32>
  return %3 : tensor<4x4xf32>
}

// -----

// A lone elementwise op still becomes a group (every kernel is a group),
// unless wrap-single-ops=false.
// CHECK-LABEL: func.func @single_op(
//       CHECK:   kiln.fusion elementwise
//       CHECK:     kiln.sqrt
// NO-WRAP-LABEL: func.func @single_op(
//   NO-WRAP-NOT:   kiln.fusion
//       NO-WRAP:   kiln.sqrt
func.func @single_op(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = kiln.sqrt %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// A permute of an input feeds a cast of its shape (another element type):
// one kernel loads at the permuted index and converts.
// CHECK-LABEL: func.func @permute_then_cast(
//       CHECK:   kiln.fusion elementwise ins(%arg0 : tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf16>
//       CHECK:     kiln.permute
//       CHECK:     kiln.cast
//   CHECK-NOT:   kiln.fusion
// SINGLE-USE-LABEL: func.func @permute_then_cast(
// NO-WRAP-LABEL: func.func @permute_then_cast(
func.func @permute_then_cast(%x: tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf16> {
  %0 = kiln.permute %x [0, 2, 3, 1] : tensor<1x3x4x5xf32> -> tensor<1x4x5x3xf32>
  %1 = kiln.cast %0 : tensor<1x4x5x3xf32> to tensor<1x4x5x3xf16>
  return %1 : tensor<1x4x5x3xf16>
}
