// RUN: kiln-opt %s --split-input-file --kiln-raise-gelu | FileCheck %s

// GPT-2's NewGELU as an fp16 trace stores it: the constants rounded to
// half, pow(x, 3), the factor sqrt(2/pi) outside the sum.
// CHECK-LABEL: func.func @new_gelu_f16(
//  CHECK-NEXT:   %[[Y:.+]] = kiln.gelu %arg0 approximate = tanh : tensor<4x8xf16>
//  CHECK-NEXT:   return %[[Y]]
func.func @new_gelu_f16(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %half = kiln.constant dense<5.000000e-01> : tensor<f16>
  %h = kiln.mul %x, %half : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
  %three = kiln.constant dense<3.000000e+00> : tensor<f16>
  %c = kiln.pow %x, %three : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
  %kappa = kiln.constant dense<4.470830e-02> : tensor<f16>
  %k = kiln.mul %c, %kappa : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
  %s = kiln.add %x, %k : tensor<4x8xf16>
  %root = kiln.constant dense<7.978520e-01> : tensor<f16>
  %u = kiln.mul %s, %root : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
  %t = kiln.tanh %u : tensor<4x8xf16>
  %one = kiln.constant dense<1.000000e+00> : tensor<f16>
  %g = kiln.add %t, %one : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
  %y = kiln.mul %h, %g : tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

// -----

// FastGELU: x * c * (1 + k * x * x), the operands in the other order, the
// constants as [1, 1] tensors, in bf16's rounding.
// CHECK-LABEL: func.func @fast_gelu_bf16(
//  CHECK-NEXT:   %[[Y:.+]] = kiln.gelu %arg0 approximate = tanh : tensor<4x8xbf16>
//  CHECK-NEXT:   return %[[Y]]
func.func @fast_gelu_bf16(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %half = kiln.constant dense<5.000000e-01> : tensor<1x1xbf16>
  %h = kiln.mul %half, %x : tensor<1x1xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  %root = kiln.constant dense<7.968750e-01> : tensor<1x1xbf16>
  %xr = kiln.mul %x, %root : tensor<4x8xbf16>, tensor<1x1xbf16> -> tensor<4x8xbf16>
  %kappa = kiln.constant dense<4.467770e-02> : tensor<1x1xbf16>
  %kx = kiln.mul %kappa, %x : tensor<1x1xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  %kxx = kiln.mul %kx, %x : tensor<4x8xbf16>
  %one = kiln.constant dense<1.000000e+00> : tensor<1x1xbf16>
  %p = kiln.add %one, %kxx : tensor<1x1xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  %u = kiln.mul %xr, %p : tensor<4x8xbf16>
  %t = kiln.tanh %u : tensor<4x8xbf16>
  %g = kiln.add %one, %t : tensor<1x1xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  %y = kiln.mul %g, %h : tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

// The erf GELU of older Hugging Face code: x * 0.5 * (1 + erf(x / sqrt(2))).
// CHECK-LABEL: func.func @erf_gelu(
//  CHECK-NEXT:   %[[Y:.+]] = kiln.gelu %arg0 : tensor<2x3xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @erf_gelu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %half = kiln.constant dense<5.000000e-01> : tensor<f32>
  %h = kiln.mul %x, %half : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %root2 = kiln.constant dense<1.41421354> : tensor<f32>
  %d = kiln.div %x, %root2 : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %e = kiln.erf %d : tensor<2x3xf32>
  %one = kiln.constant dense<1.000000e+00> : tensor<f32>
  %g = kiln.add %e, %one : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %y = kiln.mul %h, %g : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// The cube is read elsewhere too: it stays, the rest of the chain goes.
// CHECK-LABEL: func.func @shared_cube(
//       CHECK:   %[[C:.+]] = kiln.pow %arg0
//   CHECK-NOT:   kiln.tanh
//       CHECK:   %[[Y:.+]] = kiln.gelu %arg0 approximate = tanh : tensor<8xf32>
//       CHECK:   return %[[Y]], %[[C]]
func.func @shared_cube(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %half = kiln.constant dense<5.000000e-01> : tensor<f32>
  %h = kiln.mul %x, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %three = kiln.constant dense<3.000000e+00> : tensor<f32>
  %c = kiln.pow %x, %three : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %kappa = kiln.constant dense<4.471500e-02> : tensor<f32>
  %k = kiln.mul %c, %kappa : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %s = kiln.add %x, %k : tensor<8xf32>
  %root = kiln.constant dense<0.797884583> : tensor<f32>
  %u = kiln.mul %s, %root : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %t = kiln.tanh %u : tensor<8xf32>
  %one = kiln.constant dense<1.000000e+00> : tensor<f32>
  %g = kiln.add %t, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %y = kiln.mul %h, %g : tensor<8xf32>
  return %y, %c : tensor<8xf32>, tensor<8xf32>
}

// -----

// Negative cases, all left as they are. A cubic coefficient far from
// 0.044715 (0.05) is some other function.
// CHECK-LABEL: func.func @wrong_kappa(
//   CHECK-NOT:   kiln.gelu
//       CHECK:   kiln.tanh
func.func @wrong_kappa(%x: tensor<8xf32>) -> tensor<8xf32> {
  %half = kiln.constant dense<5.000000e-01> : tensor<f32>
  %h = kiln.mul %x, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %three = kiln.constant dense<3.000000e+00> : tensor<f32>
  %c = kiln.pow %x, %three : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %kappa = kiln.constant dense<5.000000e-02> : tensor<f32>
  %k = kiln.mul %c, %kappa : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %s = kiln.add %x, %k : tensor<8xf32>
  %root = kiln.constant dense<0.797884583> : tensor<f32>
  %u = kiln.mul %s, %root : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %t = kiln.tanh %u : tensor<8xf32>
  %one = kiln.constant dense<1.000000e+00> : tensor<f32>
  %g = kiln.add %t, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %y = kiln.mul %h, %g : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// tanh's argument reads a second tensor: not a function of x alone.
// CHECK-LABEL: func.func @two_inputs(
//   CHECK-NOT:   kiln.gelu
//       CHECK:   kiln.tanh
func.func @two_inputs(%x: tensor<8xf32>, %z: tensor<8xf32>) -> tensor<8xf32> {
  %half = kiln.constant dense<5.000000e-01> : tensor<f32>
  %h = kiln.mul %x, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %root = kiln.constant dense<0.797884583> : tensor<f32>
  %u = kiln.mul %z, %root : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %t = kiln.tanh %u : tensor<8xf32>
  %one = kiln.constant dense<1.000000e+00> : tensor<f32>
  %g = kiln.add %t, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %y = kiln.mul %h, %g : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// An outer factor of 1 instead of 0.5, and a constant that is a vector
// rather than a scalar: neither is a GELU.
// CHECK-LABEL: func.func @not_half(
//   CHECK-NOT:   kiln.gelu
// CHECK-LABEL: func.func @vector_constant(
//   CHECK-NOT:   kiln.gelu
func.func @not_half(%x: tensor<8xf32>) -> tensor<8xf32> {
  %root2 = kiln.constant dense<1.41421354> : tensor<f32>
  %d = kiln.div %x, %root2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %e = kiln.erf %d : tensor<8xf32>
  %one = kiln.constant dense<1.000000e+00> : tensor<f32>
  %g = kiln.add %e, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %y = kiln.mul %x, %g : tensor<8xf32>
  return %y : tensor<8xf32>
}
func.func @vector_constant(%x: tensor<8xf32>) -> tensor<8xf32> {
  %half = kiln.constant dense<5.000000e-01> : tensor<f32>
  %h = kiln.mul %x, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %root2 = kiln.constant dense<1.41421354> : tensor<8xf32>
  %d = kiln.div %x, %root2 : tensor<8xf32>
  %e = kiln.erf %d : tensor<8xf32>
  %one = kiln.constant dense<1.000000e+00> : tensor<f32>
  %g = kiln.add %e, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %y = kiln.mul %h, %g : tensor<8xf32>
  return %y : tensor<8xf32>
}
