// RUN: kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s

// One kernel per pooling group (kiln_pool.cuh's window per output).

// Max pooling on fp16 with a relu after it: one thread per output element,
// channels fastest; the pooled value rounds to fp16 before the relu.
// CHECK-LABEL: // === kernel maxp_k0 grid(1, 1, 1) block(256) shared(0) inputs(1) outputs(1)
//       CHECK: #include "kiln_pool.cuh"
//       CHECK:   static constexpr bool kMax = true;
//       CHECK:     const float pooled = kiln::pool::pool_window<{{kiln_[0-9A-F]+}}_window>(in0, idx);
//       CHECK:     = kiln::relu(kiln::to_float(kiln::from_float<__half>(pooled)));
func.func @maxp(%x: tensor<2x9x9x5xf16>) -> tensor<2x5x5x5xf16> {
  %0 = kiln.fusion pooling ins(%x : tensor<2x9x9x5xf16>) -> tensor<2x5x5x5xf16> {
  ^bb0(%a: tensor<2x9x9x5xf16>):
    %p = kiln.pool2d %a max kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] : tensor<2x9x9x5xf16> -> tensor<2x5x5x5xf16>
    %u = kiln.relu %p : tensor<2x5x5x5xf16>
    kiln.yield %u : tensor<2x5x5x5xf16>
  }
  return %0 : tensor<2x5x5x5xf16>
}

// -----

// Average pooling, asymmetric padding, ceil mode, count_include_pad: the
// trailing paddings PB/PR bound the divisor's window.
// CHECK-LABEL: // === kernel avgp_k0 grid(3, 1, 1) block(256) shared(0) inputs(1) outputs(1)
//       CHECK:   static constexpr int PB = 0;
//       CHECK:   static constexpr int PR = 1;
//       CHECK:   static constexpr bool kMax = false;
//       CHECK:   static constexpr bool kCountIncludePad = true;
func.func @avgp(%x: tensor<2x8x7x17xf32>) -> tensor<2x4x4x17xf32> {
  %0 = kiln.fusion pooling ins(%x : tensor<2x8x7x17xf32>) -> tensor<2x4x4x17xf32> {
  ^bb0(%a: tensor<2x8x7x17xf32>):
    %p = kiln.pool2d %a avg kernel = [3, 3] strides = [2, 2] padding = [1, 0, 0, 1] ceil_mode count_include_pad : tensor<2x8x7x17xf32> -> tensor<2x4x4x17xf32>
    kiln.yield %p : tensor<2x4x4x17xf32>
  }
  return %0 : tensor<2x4x4x17xf32>
}

// -----

// Eight channels a thread (tile [1, 8, 1]): one 16-byte load per window
// position; the relu still runs per element, at idx = pixelChannels * 8 + j.
// CHECK-LABEL: // === kernel maxp8_k0 grid(1, 1, 1) block(256) shared(0) inputs(1) outputs(1)
//       CHECK: static_assert(kiln::pool::vectorized<{{kiln_[0-9A-F]+}}_window, __half>()
//       CHECK:   for (long long pixelChannels = (long long)blockIdx.x * 256 + threadIdx.x; pixelChannels < 100LL;
//       CHECK:     kiln::pool::pool_window8<{{kiln_[0-9A-F]+}}_window>(in0, pixelChannels * 8, pooled8);
//       CHECK:       const long long idx = pixelChannels * 8 + j;
//       CHECK:       = kiln::relu(kiln::to_float(kiln::from_float<__half>(pooled)));
func.func @maxp8(%x: tensor<2x9x9x16xf16>) -> tensor<2x5x5x16xf16> {
  %0 = kiln.fusion pooling ins(%x : tensor<2x9x9x16xf16>) {kiln.kernel = #kiln.kernel<variant = pooling, tile = [1, 8, 1], grid_limit = 2112>} -> tensor<2x5x5x16xf16> {
  ^bb0(%a: tensor<2x9x9x16xf16>):
    %p = kiln.pool2d %a max kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] : tensor<2x9x9x16xf16> -> tensor<2x5x5x16xf16>
    %u = kiln.relu %p : tensor<2x5x5x16xf16>
    kiln.yield %u : tensor<2x5x5x16xf16>
  }
  return %0 : tensor<2x5x5x16xf16>
}
