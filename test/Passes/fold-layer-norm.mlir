// RUN: kiln-opt %s --split-input-file --kiln-fold-layer-norm="min-bytes=0" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-fold-layer-norm | FileCheck %s --check-prefix=DEFAULT

// LN(x) W^T + b = rstd (x W'^T - mean c) + d: W' = W diag(gamma) in the
// weight's type, c its row sums, d = W beta + b, in fp32. Here gamma = [1,
// 2, 0.5, -1], beta = [0.5, 0, -0.25, 1]: W' = [[1, 1, -1, -4], [0.25, 2,
// 0.5, 1]], c = [-3, 3.75], d = [6, -3.125].
// CHECK-LABEL: func.func @pre_norm(
//  CHECK-SAME:     %[[X:.+]]: tensor<2x3x4xf16>
//   CHECK-NOT:   kiln.layer_norm
//       CHECK:   %[[MEAN:.+]], %[[RSTD:.+]] = kiln.row_moments %[[X]] eps = 1.000000e-05 : tensor<2x3x4xf16> -> tensor<2x3x1xf32>
//   CHECK-DAG:   %[[W:.+]] = kiln.constant dense_resource<[[WN:ln_folded_weight.*]]> : tensor<2x4xf16>
//   CHECK-DAG:   %[[C:.+]] = kiln.constant dense_resource<[[CN:ln_folded_sums.*]]> : tensor<2xf32>
//   CHECK-DAG:   %[[D:.+]] = kiln.constant dense_resource<[[DN:ln_folded_bias.*]]> : tensor<2xf32>
//       CHECK:   %[[ACC:.+]] = kiln.linear %[[X]], %[[W]] : (tensor<2x3x4xf16>, tensor<2x4xf16>) -> tensor<2x3x2xf32>
//       CHECK:   %[[P:.+]] = kiln.mul %[[MEAN]], %[[C]] : tensor<2x3x1xf32>, tensor<2xf32> -> tensor<2x3x2xf32>
//       CHECK:   %[[Q:.+]] = kiln.sub %[[ACC]], %[[P]] : tensor<2x3x2xf32>
//       CHECK:   %[[R:.+]] = kiln.mul %[[Q]], %[[RSTD]] : tensor<2x3x2xf32>, tensor<2x3x1xf32> -> tensor<2x3x2xf32>
//       CHECK:   %[[S:.+]] = kiln.add %[[R]], %[[D]] : tensor<2x3x2xf32>, tensor<2xf32> -> tensor<2x3x2xf32>
//       CHECK:   %[[Y:.+]] = kiln.cast %[[S]] : tensor<2x3x2xf32> to tensor<2x3x2xf16>
//       CHECK:   kiln.gelu %[[Y]]
//       CHECK: [[WN]]: "0x40000000003C003C00BC00C4003400400038003C"
//       CHECK: [[CN]]: "0x40000000000040C000007040"
//       CHECK: [[DN]]: "0x400000000000C040000048C0"
// The policy's least size: 48 bytes of norm stay a norm.
// DEFAULT-LABEL: func.func @pre_norm(
//       DEFAULT:   kiln.layer_norm
//   DEFAULT-NOT:   kiln.row_moments
func.func @pre_norm(%x: tensor<2x3x4xf16>) -> tensor<2x3x2xf16> {
  %g = kiln.constant dense<[1.0, 2.0, 0.5, -1.0]> : tensor<4xf16>
  %b = kiln.constant dense<[0.5, 0.0, -0.25, 1.0]> : tensor<4xf16>
  %w = kiln.constant dense<[[1.0, 0.5, -2.0, 4.0], [0.25, 1.0, 1.0, -1.0]]> : tensor<2x4xf16>
  %bias = kiln.constant dense<[1.0, -2.0]> : tensor<2xf16>
  %y = kiln.layer_norm %x weight %g bias %b axis = 2 eps = 1.0e-05 : (tensor<2x3x4xf16>, tensor<4xf16>, tensor<4xf16>) -> tensor<2x3x4xf16>
  %z = kiln.linear %y, %w, %bias : (tensor<2x3x4xf16>, tensor<2x4xf16>, tensor<2xf16>) -> tensor<2x3x2xf16>
  %r = kiln.gelu %z : tensor<2x3x2xf16>
  return %r : tensor<2x3x2xf16>
}

// -----

// Without gamma, beta and a bias: W' = W, c = [-0.25, 0], and d = 0 is
// not added.
// CHECK-LABEL: func.func @bare_norm(
//       CHECK:   kiln.row_moments
//       CHECK:   kiln.linear %arg0, %{{.+}} : (tensor<8x4xbf16>, tensor<2x4xbf16>) -> tensor<8x2xf32>
//       CHECK:   %[[R:.+]] = kiln.mul %{{.+}}, %{{.+}} : tensor<8x2xf32>, tensor<8x1xf32>
//  CHECK-NEXT:   kiln.cast %[[R]] : tensor<8x2xf32> to tensor<8x2xbf16>
//       CHECK: ln_folded_weight: "0x40000000803F003F00C0803E0000000000000000"
//       CHECK: ln_folded_sums: "0x40000000000080BE00000000"
//   CHECK-NOT: ln_folded_bias
func.func @bare_norm(%x: tensor<8x4xbf16>) -> tensor<8x2xbf16> {
  %w = kiln.constant dense<[[1.0, 0.5, -2.0, 0.25], [0.0, 0.0, 0.0, 0.0]]> : tensor<2x4xbf16>
  %y = kiln.layer_norm %x axis = 1 eps = 1.0e-06 : (tensor<8x4xbf16>) -> tensor<8x4xbf16>
  %z = kiln.linear %y, %w : (tensor<8x4xbf16>, tensor<2x4xbf16>) -> tensor<8x2xbf16>
  return %z : tensor<8x2xbf16>
}

// -----

// Two linears on one norm (a gated MLP's gate and up-projection): both
// fold onto one row_moments.
// CHECK-LABEL: func.func @gate_and_up(
//   CHECK-NOT:   kiln.layer_norm
//       CHECK:   %[[MEAN:.+]], %[[RSTD:.+]] = kiln.row_moments %arg0
//   CHECK-NOT:   kiln.row_moments
//       CHECK:   kiln.linear %arg0, %{{.+}} : (tensor<8x4xf16>, tensor<2x4xf16>) -> tensor<8x2xf32>
//       CHECK:   kiln.mul %[[MEAN]]
//       CHECK:   kiln.linear %arg0, %{{.+}} : (tensor<8x4xf16>, tensor<3x4xf16>) -> tensor<8x3xf32>
//       CHECK:   kiln.mul %[[MEAN]]
func.func @gate_and_up(%x: tensor<8x4xf16>) -> (tensor<8x2xf16>, tensor<8x3xf16>) {
  %w = kiln.constant dense<0.5> : tensor<2x4xf16>
  %v = kiln.constant dense<0.25> : tensor<3x4xf16>
  %y = kiln.layer_norm %x axis = 1 eps = 1.0e-05 : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %gate = kiln.linear %y, %w : (tensor<8x4xf16>, tensor<2x4xf16>) -> tensor<8x2xf16>
  %up = kiln.linear %y, %v : (tensor<8x4xf16>, tensor<3x4xf16>) -> tensor<8x3xf16>
  return %gate, %up : tensor<8x2xf16>, tensor<8x3xf16>
}

// -----

// One foldable linear and one whose weight is not a constant: neither.
// CHECK-LABEL: func.func @one_of_two(
//       CHECK:   kiln.layer_norm
//   CHECK-NOT:   kiln.row_moments
func.func @one_of_two(%x: tensor<8x4xf16>, %v: tensor<3x4xf16>) -> (tensor<8x2xf16>, tensor<8x3xf16>) {
  %w = kiln.constant dense<0.5> : tensor<2x4xf16>
  %y = kiln.layer_norm %x axis = 1 eps = 1.0e-05 : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %a = kiln.linear %y, %w : (tensor<8x4xf16>, tensor<2x4xf16>) -> tensor<8x2xf16>
  %b = kiln.linear %y, %v : (tensor<8x4xf16>, tensor<3x4xf16>) -> tensor<8x3xf16>
  return %a, %b : tensor<8x2xf16>, tensor<8x3xf16>
}

// -----

// A norm read by anything besides its linear (a post-norm block's, which
// is also the next residual) is stored anyway: nothing to gain.
// CHECK-LABEL: func.func @two_users(
//       CHECK:   kiln.layer_norm
//   CHECK-NOT:   kiln.row_moments
func.func @two_users(%x: tensor<8x4xf16>) -> (tensor<8x2xf16>, tensor<8x4xf16>) {
  %w = kiln.constant dense<0.5> : tensor<2x4xf16>
  %y = kiln.layer_norm %x axis = 1 eps = 1.0e-05 : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %z = kiln.linear %y, %w : (tensor<8x4xf16>, tensor<2x4xf16>) -> tensor<8x2xf16>
  return %z, %y : tensor<8x2xf16>, tensor<8x4xf16>
}

// -----

// fp32 (its tolerance has no room for the cancellation), a norm over two
// dimensions and weights that are not constants stay.
// CHECK-LABEL: func.func @kept(
//   CHECK-NOT:   kiln.row_moments
//   CHECK-COUNT-3:   kiln.layer_norm
//   CHECK-NOT:   kiln.row_moments
func.func @kept(%x: tensor<8x4xf32>, %h: tensor<8x4xf16>, %t: tensor<2x3x4xf16>, %wa: tensor<2x4xf16>) -> (tensor<8x2xf32>, tensor<2x3x2xf16>, tensor<8x2xf16>) {
  %w32 = kiln.constant dense<0.5> : tensor<2x4xf32>
  %w16 = kiln.constant dense<0.5> : tensor<2x4xf16>
  %g2 = kiln.constant dense<1.0> : tensor<3x4xf16>
  %a = kiln.layer_norm %x axis = 1 eps = 1.0e-05 : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %la = kiln.linear %a, %w32 : (tensor<8x4xf32>, tensor<2x4xf32>) -> tensor<8x2xf32>
  %c = kiln.layer_norm %t weight %g2 axis = 1 eps = 1.0e-05 : (tensor<2x3x4xf16>, tensor<3x4xf16>) -> tensor<2x3x4xf16>
  %lc = kiln.linear %c, %w16 : (tensor<2x3x4xf16>, tensor<2x4xf16>) -> tensor<2x3x2xf16>
  %d = kiln.layer_norm %h axis = 1 eps = 1.0e-05 : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %ld = kiln.linear %d, %wa : (tensor<8x4xf16>, tensor<2x4xf16>) -> tensor<8x2xf16>
  return %la, %lc, %ld : tensor<8x2xf32>, tensor<2x3x2xf16>, tensor<8x2xf16>
}

// -----

// RMSNorm: gamma into the weights, no mean subtracted, the bias as it was.
// gamma = [2, 0.5, 1, -1]: W' = [[2, 0.25, -2, -4]].
// CHECK-LABEL: func.func @rms_norm(
//       CHECK:   %[[MEAN:.+]], %[[RSTD:.+]] = kiln.row_moments %arg0 eps = {{.+}} rms
//       CHECK:   %[[ACC:.+]] = kiln.linear %arg0, %{{.+}} : (tensor<8x4xbf16>, tensor<1x4xbf16>) -> tensor<8x1xf32>
//   CHECK-NOT:   kiln.sub
//       CHECK:   %[[R:.+]] = kiln.mul %[[ACC]], %[[RSTD]]
//       CHECK:   kiln.add %[[R]]
//       CHECK: ln_folded_weight: "0x400000000040803E00C080C0"
//       CHECK: ln_folded_bias: "0x4000000000000040"
func.func @rms_norm(%x: tensor<8x4xbf16>) -> tensor<8x1xbf16> {
  %g = kiln.constant dense<[2.0, 0.5, 1.0, -1.0]> : tensor<4xbf16>
  %w = kiln.constant dense<[[1.0, 0.5, -2.0, 4.0]]> : tensor<1x4xbf16>
  %bias = kiln.constant dense<[2.0]> : tensor<1xbf16>
  %y = kiln.layer_norm %x weight %g axis = 1 eps = 1.0e-06 rms : (tensor<8x4xbf16>, tensor<4xbf16>) -> tensor<8x4xbf16>
  %z = kiln.linear %y, %w, %bias : (tensor<8x4xbf16>, tensor<1x4xbf16>, tensor<1xbf16>) -> tensor<8x1xbf16>
  return %z : tensor<8x1xbf16>
}

// -----

// Hugging Face's RMSNorm scales by its weight after the norm, apart: that
// multiply is gamma, and both of a gated MLP's projections fold onto one
// row_moments. gamma = [2, 0.5, 1, -1]: W' = [[2, 0.25, -2, -4]] and
// [[1, 1, 1, -1]]; no bias, nothing added.
// CHECK-LABEL: func.func @scaled_rms_norm(
//   CHECK-NOT:   kiln.layer_norm
//       CHECK:   %[[MEAN:.+]], %[[RSTD:.+]] = kiln.row_moments %arg0 eps = {{.+}} rms
//   CHECK-NOT:   kiln.add
//       CHECK:   kiln.linear %arg0, %{{.+}} : (tensor<8x4xf16>, tensor<1x4xf16>) -> tensor<8x1xf32>
//       CHECK:   kiln.mul %{{.+}}, %[[RSTD]]
//       CHECK:   kiln.linear %arg0, %{{.+}} : (tensor<8x4xf16>, tensor<1x4xf16>) -> tensor<8x1xf32>
//       CHECK:   kiln.mul %{{.+}}, %[[RSTD]]
//   CHECK-NOT:   kiln.add
//   CHECK-DAG: ln_folded_weight{{.*}}: "0x400000000040003400C000C4"
//   CHECK-DAG: ln_folded_weight{{.*}}: "0x40000000003C003C003C00BC"
func.func @scaled_rms_norm(%x: tensor<8x4xf16>) -> (tensor<8x1xf16>, tensor<8x1xf16>) {
  %g = kiln.constant dense<[2.0, 0.5, 1.0, -1.0]> : tensor<4xf16>
  %w = kiln.constant dense<[[1.0, 0.5, -2.0, 4.0]]> : tensor<1x4xf16>
  %v = kiln.constant dense<[[0.5, 2.0, 1.0, 1.0]]> : tensor<1x4xf16>
  %y = kiln.layer_norm %x axis = 1 eps = 1.0e-06 rms : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %s = kiln.mul %g, %y : tensor<4xf16>, tensor<8x4xf16> -> tensor<8x4xf16>
  %gate = kiln.linear %s, %w : (tensor<8x4xf16>, tensor<1x4xf16>) -> tensor<8x1xf16>
  %up = kiln.linear %s, %v : (tensor<8x4xf16>, tensor<1x4xf16>) -> tensor<8x1xf16>
  return %gate, %up : tensor<8x1xf16>, tensor<8x1xf16>
}
