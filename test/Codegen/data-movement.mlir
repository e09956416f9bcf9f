// RUN: kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s

// Data movement in elementwise kernels: a permute, slice or concat of group
// inputs loads each output element from where it comes from.

// A standalone NCHW -> NHWC permute: output coordinates (n, h, w, c) read
// the input at n * CHW + c * HW + h * W + w.
// CHECK-LABEL: // === kernel perm_k0 grid(1, 1, 1) block(256) shared(0) inputs(1) outputs(1)
//       CHECK:     const float v4 = kiln::to_float(in0[(c0_0) * 105LL + (c3_3) * 35LL + (c1_1) * 7LL + (c2_2)]);
//       CHECK:     out0[idx] = kiln::from_float<__half>(v4);
func.func @perm(%x: tensor<2x3x5x7xf16>) -> tensor<2x5x7x3xf16> {
  %0 = kiln.fusion elementwise ins(%x : tensor<2x3x5x7xf16>) -> tensor<2x5x7x3xf16> {
  ^bb0(%a: tensor<2x3x5x7xf16>):
    %p = kiln.permute %a [0, 2, 3, 1] : tensor<2x3x5x7xf16> -> tensor<2x5x7x3xf16>
    kiln.yield %p : tensor<2x5x7x3xf16>
  }
  return %0 : tensor<2x5x7x3xf16>
}

// -----

// A strided slice (offset + coordinate * stride per dimension) added to a
// concat (the coordinate along dim 1 picks the input; only that one loads).
// CHECK-LABEL: // === kernel slicecat_k0 grid(1, 1, 1) block(256) shared(0) inputs(3) outputs(1)
//       CHECK:     = kiln::to_float(in0[(1LL + c0_0) * 10LL + (2LL + c1_1 * 2LL)]);
//       CHECK:     = ((c1_1 < 3LL) ? kiln::to_float(in1[(c0_0) * 3LL + (c1_1 - 0LL)]) : kiln::to_float(in2[(c0_0)]));
func.func @slicecat(%x: tensor<6x10xf32>, %y: tensor<4x3xf32>, %z: tensor<4x1xf32>) -> tensor<4x4xf32> {
  %0 = kiln.fusion elementwise ins(%x, %y, %z : tensor<6x10xf32>, tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<6x10xf32>, %b: tensor<4x3xf32>, %c: tensor<4x1xf32>):
    %s = kiln.slice %a offsets = [1, 2] strides = [1, 2] : tensor<6x10xf32> -> tensor<4x4xf32>
    %k = kiln.concat %b, %c dim = 1 : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x4xf32>
    %t = kiln.add %s, %k : tensor<4x4xf32>
    kiln.yield %t : tensor<4x4xf32>
  }
  return %0 : tensor<4x4xf32>
}
