// RUN: kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s

// One kernel per reduction group: prologue ops on each loaded element,
// fp32 accumulation, epilogue ops on the rounded result.

// NHWC global average pooling (mean over [1, 2], C kept innermost): the
// column layout. Lanes take 32 consecutive outputs (channels), the 8 warps
// split the 49 spatial positions (offset r * C) and combine in shared
// memory; the relu prologue runs per loaded element, the sigmoid epilogue
// on the fp16-rounded mean.
// CHECK-LABEL: // === kernel gap_k0 grid(4, 1, 1) block(256) shared(0) inputs(1) outputs(1)
//       CHECK:   __shared__ float partial[8][33];
//       CHECK:     for (long long r = warp; r < 49LL; r += 8) {
//       CHECK:       const long long idx = (p / 64LL) * 3136LL + (p % 64LL) + r * 64LL;
//       CHECK:       const float v1 = kiln::relu(v0);
//       CHECK:       acc = (acc + v1);
//       CHECK:         acc = (acc + partial[j][lane]);
//       CHECK:     = kiln::approx::sigmoid(kiln::to_float(kiln::from_float<__half>((acc / 4.900000000e+01f))));
func.func @gap(%x: tensor<2x7x7x64xf16>) -> tensor<2x1x1x64xf16> {
  %0 = kiln.fusion reduction ins(%x : tensor<2x7x7x64xf16>) -> tensor<2x1x1x64xf16> {
  ^bb0(%a: tensor<2x7x7x64xf16>):
    %e = kiln.relu %a : tensor<2x7x7x64xf16>
    %r = kiln.reduce_mean %e dims = [1, 2] keepdim : tensor<2x7x7x64xf16> -> tensor<2x1x1x64xf16>
    %s = kiln.sigmoid %r : tensor<2x1x1x64xf16>
    kiln.yield %s : tensor<2x1x1x64xf16>
  }
  return %0 : tensor<2x1x1x64xf16>
}

// -----

// A trailing-dimension sum: the row layout, one warp per output, lanes
// over the row, shuffles.
// CHECK-LABEL: // === kernel rowsum_k0 grid(1, 1, 1) block(256) shared(0) inputs(1) outputs(1)
//       CHECK:     for (long long r = lane; r < 300LL; r += 32) {
//       CHECK:       const long long idx = p * 300LL + r;
//       CHECK:       acc = (acc + __shfl_xor_sync(0xffffffffu, acc, offset));
func.func @rowsum(%x: tensor<6x300xf32>) -> tensor<6xf32> {
  %0 = kiln.fusion reduction ins(%x : tensor<6x300xf32>) -> tensor<6xf32> {
  ^bb0(%a: tensor<6x300xf32>):
    %e = kiln.relu %a : tensor<6x300xf32>
    %r = kiln.reduce_sum %e dims = [1] : tensor<6x300xf32> -> tensor<6xf32>
    %s = kiln.sigmoid %r : tensor<6xf32>
    kiln.yield %s : tensor<6xf32>
  }
  return %0 : tensor<6xf32>
}

// -----

// A max over [0, 2] (NaN-propagating): kept dimension 1 in the middle.
// CHECK-LABEL: // === kernel rowmax_k0 grid(1, 1, 1) block(256) shared(0) inputs(1) outputs(1)
//       CHECK:     float acc = -INFINITY;
//       CHECK:       const long long idx = p * 33LL + (r / 33LL) * 99LL + (r % 33LL);
//       CHECK:       acc = kiln::nan_max(acc, v{{[0-9]+}});
func.func @rowmax(%x: tensor<4x3x33xbf16>) -> tensor<1x3x1xbf16> {
  %0 = kiln.fusion reduction ins(%x : tensor<4x3x33xbf16>) -> tensor<1x3x1xbf16> {
  ^bb0(%a: tensor<4x3x33xbf16>):
    %e = kiln.relu %a : tensor<4x3x33xbf16>
    %r = kiln.reduce_max %e dims = [0, 2] keepdim : tensor<4x3x33xbf16> -> tensor<1x3x1xbf16>
    %s = kiln.sigmoid %r : tensor<1x3x1xbf16>
    kiln.yield %s : tensor<1x3x1xbf16>
  }
  return %0 : tensor<1x3x1xbf16>
}

// -----

// Squeeze-and-excitation's pooling straight from the group's input
// (kiln_reduce.cuh): 96 channels are 12 vectors of 16 bytes, 21 threads per
// vector walk the 3136 pixels (a block of 252), and the selection stage's
// split of 8 makes a cluster of 8 blocks per image on sm_90a (32 x 8
// blocks); the epilogue runs per output on the fp32 total.
// CHECK-LABEL: // === kernel se_k0 grid(256, 1, 1) block(252) shared(0) inputs(1) outputs(1)
//       CHECK: #include "kiln_reduce.cuh"
//       CHECK: #define KILN_SPLIT_CLUSTER __cluster_dims__(8, 1, 1)
//       CHECK: KILN_SPLIT_CLUSTER __launch_bounds__(252, 1) {{kiln_[0-9A-F]+}}(
//       CHECK:   auto epilogue = [&](long long p, float acc) {
//       CHECK:     const float v0 = kiln::approx::sigmoid(kiln::to_float(kiln::from_float<__half>((acc / 3.136000000e+03f))));
//       CHECK:     out0[idx] = kiln::from_float<__half>(v0);
//       CHECK:   kiln::reduce::over_middle<__half, 96, 21, 8, false>(in0, 3136LL, epilogue);
func.func @se(%x: tensor<32x56x56x96xf16>) -> tensor<32x1x1x96xf16> {
  %0 = kiln.fusion reduction ins(%x : tensor<32x56x56x96xf16>) {kiln.kernel = #kiln.kernel<variant = reduction, split_k = 8, grid_limit = 2112>} -> tensor<32x1x1x96xf16> {
  ^bb0(%a: tensor<32x56x56x96xf16>):
    %r = kiln.reduce_mean %a dims = [1, 2] keepdim : tensor<32x56x56x96xf16> -> tensor<32x1x1x96xf16>
    %s = kiln.sigmoid %r : tensor<32x1x1x96xf16>
    kiln.yield %s : tensor<32x1x1x96xf16>
  }
  return %0 : tensor<32x1x1x96xf16>
}
