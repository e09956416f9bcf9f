// RUN: kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s

// A folded layer norm's two kernels: the rows' statistics, and the linear
// whose fp32 accumulators its epilogue corrects.

// Row moments over rows in 16-byte vectors: the residual add of the
// prologue is stored, its rounded value is what the statistics are of (the
// GEMM reads it back rounded), and one lane stores a row's two values.
// CHECK: === kernel moments_k0
// CHECK:   row[t] = kiln::to_float(kiln::from_float<__half>(v2));
// CHECK:   result0.v[e] = kiln::from_float<__half>(v2);
// CHECK:   const float mean = kiln::warp_sum(sum) / L;
// CHECK:   const float rstd = rsqrtf(kiln::warp_sum(squares) / L + 1.000000000e-05f);
// CHECK:   if (lane == 0) {
// CHECK-NEXT:     out1[r] = mean;
// CHECK-NEXT:     out2[r] = rstd;
// CHECK-NEXT:   }
func.func @moments(%x: tensor<64x768xf16>, %y: tensor<64x768xf16>) -> (tensor<64x768xf16>, tensor<64x1xf32>, tensor<64x1xf32>) {
  %0:3 = kiln.fusion normalization ins(%x, %y : tensor<64x768xf16>, tensor<64x768xf16>) -> tensor<64x768xf16>, tensor<64x1xf32>, tensor<64x1xf32> {
  ^bb0(%a: tensor<64x768xf16>, %b: tensor<64x768xf16>):
    %s = kiln.add %a, %b : tensor<64x768xf16>
    %mean, %rstd = kiln.row_moments %s eps = 1.0e-05 : tensor<64x768xf16> -> tensor<64x1xf32>
    kiln.yield %s, %mean, %rstd : tensor<64x768xf16>, tensor<64x1xf32>, tensor<64x1xf32>
  }
  return %0#0, %0#1, %0#2 : tensor<64x768xf16>, tensor<64x1xf32>, tensor<64x1xf32>
}

// -----

// Rows past what a warp holds: a block a row, thread 0 stores; an input
// read as it is needs no second rounding.
// CHECK: === kernel wide_k0
// CHECK:   row[j] = v0;
// CHECK:   if (threadIdx.x == 0) {
// CHECK-NEXT:     out0[r] = mean;
// CHECK-NEXT:     out1[r] = rstd;
func.func @wide(%x: tensor<5x1536xbf16>) -> (tensor<5x1xf32>, tensor<5x1xf32>) {
  %0:2 = kiln.fusion normalization ins(%x : tensor<5x1536xbf16>) -> tensor<5x1xf32>, tensor<5x1xf32> {
  ^bb0(%a: tensor<5x1536xbf16>):
    %mean, %rstd = kiln.row_moments %a eps = 1.0e-05 : tensor<5x1536xbf16> -> tensor<5x1xf32>
    kiln.yield %mean, %rstd : tensor<5x1xf32>, tensor<5x1xf32>
  }
  return %0#0, %0#1 : tensor<5x1xf32>, tensor<5x1xf32>
}

// -----

// The corrected linear: its row statistics read at the functor's m and its
// column vectors at n (no index arithmetic, loaded once a row), the
// accumulator unrounded, and one rounding where the GELU's half2 steps
// start (packed_base returns the float before the cast).
// CHECK: === kernel folded_k0
// CHECK:   __device__ __forceinline__ Values element(int m, int n, float acc) const {
// CHECK:     const float v0 = kiln::to_float(in2[m]);
// CHECK:     const float v1 = kiln::to_float(in3[n]);
// CHECK:     const float v3 = (kiln::accumulator_value(acc) - v2);
// CHECK:     const float v4 = kiln::to_float(in4[m]);
// CHECK:     const float v6 = kiln::to_float(in5[n]);
// CHECK:     const float v7 = (v5 + v6);
// CHECK:   __device__ __forceinline__ float packed_base(int m, int n, float acc) const {
// CHECK:     return v7;
// CHECK:     packed = kiln::approx::gelu_erf_half2(packed);
func.func @folded(%x: tensor<3x197x768xf16>, %w: tensor<3072x768xf16>, %mean: tensor<3x197x1xf32>, %c: tensor<3072xf32>, %rstd: tensor<3x197x1xf32>, %d: tensor<3072xf32>) -> tensor<3x197x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %mean, %c, %rstd, %d : tensor<3x197x768xf16>, tensor<3072x768xf16>, tensor<3x197x1xf32>, tensor<3072xf32>, tensor<3x197x1xf32>, tensor<3072xf32>) -> tensor<3x197x3072xf16> {
  ^bb0(%a: tensor<3x197x768xf16>, %bw: tensor<3072x768xf16>, %bm: tensor<3x197x1xf32>, %bc: tensor<3072xf32>, %br: tensor<3x197x1xf32>, %bd: tensor<3072xf32>):
    %l = kiln.linear %a, %bw : (tensor<3x197x768xf16>, tensor<3072x768xf16>) -> tensor<3x197x3072xf32>
    %p = kiln.mul %bm, %bc : tensor<3x197x1xf32>, tensor<3072xf32> -> tensor<3x197x3072xf32>
    %q = kiln.sub %l, %p : tensor<3x197x3072xf32>
    %r = kiln.mul %q, %br : tensor<3x197x3072xf32>, tensor<3x197x1xf32> -> tensor<3x197x3072xf32>
    %s = kiln.add %r, %bd : tensor<3x197x3072xf32>, tensor<3072xf32> -> tensor<3x197x3072xf32>
    %t = kiln.cast %s : tensor<3x197x3072xf32> to tensor<3x197x3072xf16>
    %g = kiln.gelu %t : tensor<3x197x3072xf16>
    kiln.yield %g : tensor<3x197x3072xf16>
  }
  return %0 : tensor<3x197x3072xf16>
}

// -----

// RMSNorm's statistics: the squares about zero.
// CHECK: === kernel rms_k0
// CHECK:   const float d = row[t];
// CHECK:   const float rstd = rsqrtf(kiln::warp_sum(squares) / L + 1.000000000e-06f);
func.func @rms(%x: tensor<16x256xbf16>) -> (tensor<16x1xf32>, tensor<16x1xf32>) {
  %0:2 = kiln.fusion normalization ins(%x : tensor<16x256xbf16>) -> tensor<16x1xf32>, tensor<16x1xf32> {
  ^bb0(%a: tensor<16x256xbf16>):
    %mean, %rstd = kiln.row_moments %a eps = 1.0e-06 rms : tensor<16x256xbf16> -> tensor<16x1xf32>
    kiln.yield %mean, %rstd : tensor<16x1xf32>, tensor<16x1xf32>
  }
  return %0#0, %0#1 : tensor<16x1xf32>, tensor<16x1xf32>
}
