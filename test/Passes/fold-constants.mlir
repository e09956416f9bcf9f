// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-fold-constants))" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-fold-constants{max-elements=2}))" | FileCheck %s --check-prefix=SMALL

// Hugging Face's padding-mask indices: arange constants compared, shifted,
// selected, scaled and added, with broadcasting, then cast to a mask. Every
// op folds into one constant; the gather that reads the mask stays.
// CHECK-LABEL: func.func @mask_indices(
//       CHECK:   %[[IDX:.+]] = kiln.constant dense<{{\[\[}}0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>
//   CHECK-NOT:   kiln.add
//   CHECK-NOT:   kiln.where
//       CHECK:   kiln.gather %arg0, %[[IDX]]
// The same result is 8 elements, past max-elements=2: nothing folds.
// SMALL-LABEL: func.func @mask_indices(
//       SMALL:   kiln.where
func.func @mask_indices(%mask: tensor<8xi1>) -> tensor<2x4xi1> {
  %cols = kiln.constant dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>
  %rows = kiln.constant dense<[[0], [1]]> : tensor<2x1xi64>
  %zero = kiln.constant dense<0> : tensor<i64>
  %len = kiln.constant dense<4> : tensor<i64>
  %neg = kiln.lt %cols, %zero : tensor<1x4xi64>, tensor<i64> -> tensor<1x4xi1>
  %wrapped = kiln.add %cols, %len : tensor<1x4xi64>, tensor<i64> -> tensor<1x4xi64>
  %c = kiln.where %neg, %wrapped, %cols : tensor<1x4xi1>, tensor<1x4xi64>, tensor<1x4xi64> -> tensor<1x4xi64>
  %r = kiln.mul %rows, %len : tensor<2x1xi64>, tensor<i64> -> tensor<2x1xi64>
  %idx = kiln.add %c, %r : tensor<1x4xi64>, tensor<2x1xi64> -> tensor<2x4xi64>
  %g = kiln.gather %mask, %idx : (tensor<8xi1>, tensor<2x4xi64>) -> tensor<2x4xi1>
  return %g : tensor<2x4xi1>
}

// -----

// Integers wrap at their width, as PyTorch's do; casts to bool test for
// non-zero; a float comparison of constants folds to booleans.
// CHECK-LABEL: func.func @wrap_cast_compare(
//       CHECK:   kiln.constant dense<-2147483648> : tensor<2xi32>
//       CHECK:   kiln.constant dense<[false, true, true]> : tensor<3xi1>
//       CHECK:   kiln.constant dense<[true, false]> : tensor<2xi1>
func.func @wrap_cast_compare() -> (tensor<2xi32>, tensor<3xi1>, tensor<2xi1>) {
  %max = kiln.constant dense<2147483647> : tensor<2xi32>
  %one = kiln.constant dense<1> : tensor<i32>
  %wrapped = kiln.add %max, %one : tensor<2xi32>, tensor<i32> -> tensor<2xi32>
  %v = kiln.constant dense<[0, -3, 5]> : tensor<3xi64>
  %b = kiln.cast %v : tensor<3xi64> to tensor<3xi1>
  %f = kiln.constant dense<[0.5, 2.5]> : tensor<2xf32>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %lt = kiln.lt %f, %two : tensor<2xf32>, tensor<f32> -> tensor<2xi1>
  return %wrapped, %b, %lt : tensor<2xi32>, tensor<3xi1>, tensor<2xi1>
}

// -----

// Not folded: an operand that is not a constant, and a float result (its
// rounding is the kernel's).
// CHECK-LABEL: func.func @left_alone(
//       CHECK:   kiln.add %arg0
//       CHECK:   kiln.mul
func.func @left_alone(%x: tensor<4xi64>) -> (tensor<4xi64>, tensor<2xf32>) {
  %c = kiln.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %s = kiln.add %x, %c : tensor<4xi64>
  %f = kiln.constant dense<[0.1, 0.2]> : tensor<2xf32>
  %m = kiln.mul %f, %f : tensor<2xf32>
  return %s, %m : tensor<4xi64>, tensor<2xf32>
}
