// RUN: kiln-opt %s --split-input-file --canonicalize | FileCheck %s

// The kiln folders: ops that do nothing disappear, chains of reshapes and
// permutes collapse into one op, and reshaping a dense constant folds.

// CHECK-LABEL: func.func @noop_data_movement(
//  CHECK-SAME:     %[[X:.+]]: tensor<4x8xf32>
//   CHECK-NOT:   kiln.
//       CHECK:   return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @noop_data_movement(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = kiln.reshape %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = kiln.permute %x [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = kiln.cast %x : tensor<4x8xf32> to tensor<4x8xf32>
  %3 = kiln.concat %x dim = 0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = kiln.slice %x offsets = [0, 0] strides = [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0, %1, %2, %3, %4 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_chain(
//  CHECK-SAME:     %[[X:.+]]: tensor<2x3x4xf32>
//       CHECK:   %[[R:.+]] = kiln.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<4x6xf32>
//       CHECK:   return %[[R]]
func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = kiln.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %1 = kiln.reshape %0 : tensor<24xf32> -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// A view round trip cancels entirely.
// CHECK-LABEL: func.func @reshape_round_trip(
//  CHECK-SAME:     %[[X:.+]]: tensor<2x3xf32>
//   CHECK-NOT:   kiln.reshape
//       CHECK:   return %[[X]]
func.func @reshape_round_trip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = kiln.reshape %0 : tensor<6xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_constant(
//       CHECK:   %[[C:.+]] = kiln.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
//       CHECK:   return %[[C]]
func.func @reshape_constant() -> tensor<2x2xf32> {
  %c = kiln.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = kiln.reshape %c : tensor<4xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// permute(permute(x, [1, 2, 0]), [2, 0, 1]) is the identity; a chain that is
// not composes into one permute.
// CHECK-LABEL: func.func @permute_chains(
//  CHECK-SAME:     %[[X:.+]]: tensor<2x3x4xf32>
//       CHECK:   %[[P:.+]] = kiln.permute %[[X]] [2, 1, 0] : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
//       CHECK:   return %[[X]], %[[P]]
func.func @permute_chains(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x3x2xf32>) {
  %0 = kiln.permute %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = kiln.permute %0 [2, 0, 1] : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
  %2 = kiln.permute %x [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %3 = kiln.permute %2 [2, 0, 1] : tensor<3x2x4xf32> -> tensor<4x3x2xf32>
  return %1, %3 : tensor<2x3x4xf32>, tensor<4x3x2xf32>
}

// -----

// Ops that do change the data stay.
// CHECK-LABEL: func.func @no_fold(
//       CHECK:   kiln.reshape
//       CHECK:   kiln.permute
//       CHECK:   kiln.cast
//       CHECK:   kiln.slice
func.func @no_fold(%x: tensor<4x8xf32>) -> (tensor<32xf32>, tensor<8x4xf32>, tensor<4x8xf16>, tensor<4x4xf32>) {
  %0 = kiln.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %1 = kiln.permute %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %2 = kiln.cast %x : tensor<4x8xf32> to tensor<4x8xf16>
  %3 = kiln.slice %x offsets = [0, 1] strides = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0, %1, %2, %3 : tensor<32xf32>, tensor<8x4xf32>, tensor<4x8xf16>, tensor<4x4xf32>
}
