// RUN: kiln-opt %s --split-input-file --kiln-raise-rms-norm | FileCheck %s

// Llama's RMSNorm as traced: pow, mean over the last dimension, + eps,
// rsqrt, times x; then the weight's mul, which stays for the fusion pass.
// CHECK-LABEL: func.func @llama(
//       CHECK:   %[[N:.+]] = kiln.layer_norm %arg0 axis = 2 eps = 9.99999997{{.*}}E-7 rms : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
//       CHECK:   %[[Y:.+]] = kiln.mul %{{.+}}, %[[N]]
//       CHECK:   return %[[Y]]
//   CHECK-NOT:   kiln.rsqrt
func.func @llama(%x: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %p = kiln.pow %x, %two : tensor<2x16x64xf32>, tensor<f32> -> tensor<2x16x64xf32>
  %m = kiln.reduce_mean %p dims = [2] keepdim : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %eps = kiln.constant dense<1.0e-06> : tensor<f32>
  %a = kiln.add %m, %eps : tensor<2x16x1xf32>, tensor<f32> -> tensor<2x16x1xf32>
  %r = kiln.rsqrt %a : tensor<2x16x1xf32>
  %n = kiln.mul %x, %r : tensor<2x16x64xf32>, tensor<2x16x1xf32> -> tensor<2x16x64xf32>
  %w = kiln.constant dense<1.5> : tensor<64xf32>
  %y = kiln.mul %w, %n : tensor<64xf32>, tensor<2x16x64xf32> -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

// Operands of the add and the mul in the other order, two trailing
// dimensions reduced, eps shaped [1, 1, 1].
// CHECK-LABEL: func.func @swapped(
//       CHECK:   %[[N:.+]] = kiln.layer_norm %arg0 axis = 1 eps = 9.99999{{.*}}E-6 rms : (tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
//       CHECK:   return %[[N]]
func.func @swapped(%x: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %p = kiln.pow %x, %two : tensor<4x8x16xf32>, tensor<f32> -> tensor<4x8x16xf32>
  %m = kiln.reduce_mean %p dims = [1, 2] keepdim : tensor<4x8x16xf32> -> tensor<4x1x1xf32>
  %eps = kiln.constant dense<1.0e-05> : tensor<1x1x1xf32>
  %a = kiln.add %eps, %m : tensor<1x1x1xf32>, tensor<4x1x1xf32> -> tensor<4x1x1xf32>
  %r = kiln.rsqrt %a : tensor<4x1x1xf32>
  %n = kiln.mul %r, %x : tensor<4x1x1xf32>, tensor<4x8x16xf32> -> tensor<4x8x16xf32>
  return %n : tensor<4x8x16xf32>
}

// -----

// Not RMSNorm, or not only: a cube, a mean over a leading dimension, an eps
// that is an input, a mean used twice, and x different from the squared
// value all stay as they are.
// CHECK-LABEL: func.func @not_rms(
//   CHECK-NOT:   kiln.layer_norm
//   CHECK-COUNT-5:   kiln.rsqrt
func.func @not_rms(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>, %e: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>) {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %three = kiln.constant dense<3.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-05> : tensor<f32>
  %c = kiln.pow %x, %three : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %cm = kiln.reduce_mean %c dims = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %ca = kiln.add %cm, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %cr = kiln.rsqrt %ca : tensor<4x1xf32>
  %cube = kiln.mul %x, %cr : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %p = kiln.pow %x, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %lm = kiln.reduce_mean %p dims = [0] keepdim : tensor<4x8xf32> -> tensor<1x8xf32>
  %la = kiln.add %lm, %eps : tensor<1x8xf32>, tensor<f32> -> tensor<1x8xf32>
  %lr = kiln.rsqrt %la : tensor<1x8xf32>
  %leading = kiln.mul %x, %lr : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  %p2 = kiln.pow %x, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %im = kiln.reduce_mean %p2 dims = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %ia = kiln.add %im, %e : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %ir = kiln.rsqrt %ia : tensor<4x1xf32>
  %input_eps = kiln.mul %x, %ir : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %p3 = kiln.pow %x, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %tm = kiln.reduce_mean %p3 dims = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %ta = kiln.add %tm, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %tr = kiln.rsqrt %ta : tensor<4x1xf32>
  %twice = kiln.mul %x, %tr : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %p4 = kiln.pow %z, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %om = kiln.reduce_mean %p4 dims = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %oa = kiln.add %om, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %or = kiln.rsqrt %oa : tensor<4x1xf32>
  %other = kiln.mul %x, %or : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  return %cube, %leading, %input_eps, %twice, %other, %tm : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>
}
