// RUN: kiln-opt %s --split-input-file --kiln-set-precision="precision=fp16" | FileCheck %s --check-prefix=FP16
// RUN: kiln-opt %s --split-input-file --kiln-set-precision="precision=bf16" | FileCheck %s --check-prefix=BF16
// RUN: kiln-opt %s --split-input-file --kiln-set-precision="precision=tf32" | FileCheck %s --check-prefix=TF32
// RUN: kiln-opt %s --split-input-file --kiln-set-precision="precision=fp32" | FileCheck %s --check-prefix=FP32
// RUN: not kiln-opt %s --split-input-file --kiln-set-precision="precision=fp8" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: kiln-opt %s --split-input-file --kiln-set-precision="precision=fp16 io-dtype=f16" | FileCheck %s --check-prefix=IO16
// RUN: not kiln-opt %s --split-input-file --kiln-set-precision="precision=bf16 io-dtype=f16" 2>&1 | FileCheck %s --check-prefix=IOBAD

// io-dtype=f16: the float argument and result take the compute type
// instead of casts at the ends; the signature changes.
// IO16-LABEL: func.func @linear_gelu(
//  IO16-SAME:     %[[X:.+]]: tensor<2x4xf16>) -> tensor<2x3xf16>
//   IO16-NOT:   kiln.cast
//       IO16:   %[[L:.+]] = kiln.linear %[[X]], {{.*}} -> tensor<2x3xf16>
//       IO16:   %[[G:.+]] = kiln.gelu %[[L]] : tensor<2x3xf16>
//       IO16:   return %[[G]] : tensor<2x3xf16>
// A compute type other than the inputs' is refused.
// IOBAD: error: io-dtype 'f16' needs the matching precision (f16 with fp16, bf16 with bf16; 'declared' keeps the model's types), not 'bf16'

// fp16/bf16: arguments are cast on entry, every float tensor inside takes the
// target type, weights are converted at compile time, and results are cast
// back, so the signature stays. tf32 only marks the GEMMs.

// FP16-LABEL: func.func @linear_gelu(
//  FP16-SAME:     %[[X:.+]]: tensor<2x4xf32>) -> tensor<2x3xf32>
//       FP16:   %[[XH:.+]] = kiln.cast %[[X]] : tensor<2x4xf32> to tensor<2x4xf16>
//       FP16:   %[[W:.+]] = kiln.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], {{.*}}> : tensor<3x4xf16>
//       FP16:   %[[B:.+]] = kiln.constant dense_resource<bias{{.*}}> : tensor<3xf16>
//       FP16:   %[[L:.+]] = kiln.linear %[[XH]], %[[W]], %[[B]] : (tensor<2x4xf16>, tensor<3x4xf16>, tensor<3xf16>) -> tensor<2x3xf16>
//       FP16:   %[[G:.+]] = kiln.gelu %[[L]] : tensor<2x3xf16>
//       FP16:   %[[R:.+]] = kiln.cast %[[G]] : tensor<2x3xf16> to tensor<2x3xf32>
//       FP16:   return %[[R]]
// The bias blob is rewritten in fp16: 0.5, 1.0, -2.0.
//       FP16:   bias{{.*}}: "0x400000000038003C00C0"
// BF16-LABEL: func.func @linear_gelu(
//       BF16:   kiln.linear {{.*}} -> tensor<2x3xbf16>
// The function records its precision, typed, for later stages (--verify's
// tolerance).
// TF32-LABEL: func.func @linear_gelu(
//  TF32-SAME:   attributes {kiln.precision = #kiln.precision<tf32>}
//   TF32-NOT:   kiln.cast
//       TF32:   kiln.linear {{.*}} {kiln.tf32} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// FP32-LABEL: func.func @linear_gelu(
//  FP32-SAME:   attributes {kiln.precision = #kiln.precision<fp32>}
//   FP32-NOT:   kiln.cast
//   FP32-NOT:   kiln.tf32
// BAD: for the --precision option: Cannot find option named 'fp8'!
func.func @linear_gelu(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = kiln.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]> : tensor<3x4xf32>
  %b = kiln.constant dense_resource<bias> : tensor<3xf32>
  %0 = kiln.linear %x, %w, %b : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = kiln.gelu %0 : tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
{-#
  dialect_resources: {
    builtin: {
      bias: "0x040000000000003F0000803F000000C0"
    }
  }
#-}

// -----

// Integer tensors keep their type; their casts to float now target fp16.
// FP16-LABEL: func.func @integers(
//       FP16:   kiln.cast %{{.+}} : tensor<4xi64> to tensor<4xf16>
//       FP16:   kiln.mul {{.*}} : tensor<4xf16>
//       FP16:   kiln.reduce_sum %{{.+}} dims = [0] : tensor<4xi64> -> tensor<i64>
// TF32-LABEL: func.func @integers(
// FP32-LABEL: func.func @integers(
func.func @integers(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<i64>) {
  %0 = kiln.cast %i : tensor<4xi64> to tensor<4xf32>
  %1 = kiln.mul %x, %0 : tensor<4xf32>
  %2 = kiln.reduce_sum %i dims = [0] : tensor<4xi64> -> tensor<i64>
  return %1, %2 : tensor<4xf32>, tensor<i64>
}

// -----

// F.normalize's epsilon: a positive lower bound that fp16 would round to 0
// becomes fp16's smallest positive value (2^-24), so a zero vector still
// divides to 0, not 0 / 0; bf16 holds 1e-12 as is, and a bound fp16 can
// hold (0.5) or a zero one (relu) stays.
// FP16-LABEL: func.func @normalize_eps(
//       FP16:   kiln.clamp %{{.+}} min = 5.9604644775390625E-8 : tensor<4x1xf16>
//       FP16:   kiln.clamp %{{.+}} min = 5.000000e-01 : tensor<4x1xf16>
//       FP16:   kiln.clamp %{{.+}} min = 0.000000e+00 : tensor<4x1xf16>
// BF16-LABEL: func.func @normalize_eps(
//       BF16:   kiln.clamp %{{.+}} min = 9.9999999999999998E-13 : tensor<4x1xbf16>
func.func @normalize_eps(%x: tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %0 = kiln.clamp %x min = 1.0e-12 : tensor<4x1xf32>
  %1 = kiln.clamp %x min = 0.5 : tensor<4x1xf32>
  %2 = kiln.clamp %x min = 0.0 : tensor<4x1xf32>
  return %0, %1, %2 : tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}
