// RUN: kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s

// One kernel per conv_epilogue group; the main loop follows the shape.

// A 3x3 stride-2 fp16 convolution with asymmetric padding, bias, residual
// and relu: implicit GEMM on mma.sync (C = 16: im2col rows gathered 8
// channels at a time by cp.async), the convolution described by
// compile-time constants, the accumulator plus bias rounded to fp16 before
// the epilogue reads it at idx = m * O + o. Far too small to fill the GPU
// with 128 x 128 tiles, it takes the split-K kernel's 64 x 64 tiles (K =
// 144: too short to split).
// CHECK-LABEL: // === kernel c3_k0 grid(1, 1, 1) block(128) shared(55296) inputs(4) outputs(1)
//       CHECK: #include "kiln_conv.cuh"
//       CHECK: struct {{kiln_[0-9A-F]+}}_shape {
//       CHECK:   static constexpr int PT = 1;
//       CHECK:   static constexpr int PL = 0;
//       CHECK:   static constexpr int OH = 4;
//       CHECK:   static constexpr int OW = 5;
//       CHECK:   static constexpr bool kNchw = false;
//       CHECK:     const long long idx = (long long)m * 24LL + o;
//       CHECK:     = (kiln::to_float(kiln::from_float<__half>((acc + kiln::to_float(in2[o])))) + v{{[0-9]+}});
//       CHECK:     return Values{v{{[0-9]+}}};
//       CHECK:     out0[idx] = kiln::from_float<__half>(values.r0);
//       CHECK: __launch_bounds__(128, 1) {{kiln_[0-9A-F]+}}(
//       CHECK:   kiln::conv::conv_splitk<{{kiln_[0-9A-F]+}}_shape, __half, 1, 64, 3>(in0, in1, epilogue);
func.func @c3(%x: tensor<2x9x11x16xf16>, %w: tensor<24x3x3x16xf16>, %b: tensor<24xf16>, %r: tensor<2x4x5x24xf16>) -> tensor<2x4x5x24xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<2x9x11x16xf16>, tensor<24x3x3x16xf16>, tensor<24xf16>, tensor<2x4x5x24xf16>) -> tensor<2x4x5x24xf16> {
  ^bb0(%ax: tensor<2x9x11x16xf16>, %aw: tensor<24x3x3x16xf16>, %ab: tensor<24xf16>, %ar: tensor<2x4x5x24xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [2, 2] padding = [1, 0, 0, 1] dilation = [1, 1] groups = 1 : (tensor<2x9x11x16xf16>, tensor<24x3x3x16xf16>, tensor<24xf16>) -> tensor<2x4x5x24xf16>
    %t = kiln.add %y, %ar : tensor<2x4x5x24xf16>
    %u = kiln.relu %t : tensor<2x4x5x24xf16>
    kiln.yield %u : tensor<2x4x5x24xf16>
  }
  return %0 : tensor<2x4x5x24xf16>
}

// -----

// A 1x1, stride-1, unpadded convolution is a GEMM of [N*H*W, C] by [O, C]:
// the GEMM emitter's kernel (TMA + wgmma on sm_90a when its tiles fill the
// GPU, as here: 16384 rows in 128 tiles of 128 x 64, the narrowest, for 32
// output channels), tagged conv_epilogue.
// CHECK-LABEL: // === kernel pw_k0 grid(128, 1, 1) block(384) shared(185344) inputs(4) outputs(1)
//       CHECK: #include "kiln_gemm_sm90.cuh"
//       CHECK:   kiln::sm90::wgmma_gemm<__half, 64, 6, kiln::sm90::Schedule::cooperative, 1, 1>(map0, map1, 16384, 32, 64, epilogue);
//       CHECK:   kiln::mma_gemm_persistent<__half, true>(in0 + aOffset, in1 + bOffset, 16384, 32, 64, epilogue);
func.func @pw(%x: tensor<16x32x32x64xf16>, %w: tensor<32x1x1x64xf16>, %b: tensor<32xf16>, %r: tensor<16x32x32x32xf16>) -> tensor<16x32x32x32xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<16x32x32x64xf16>, tensor<32x1x1x64xf16>, tensor<32xf16>, tensor<16x32x32x32xf16>) -> tensor<16x32x32x32xf16> {
  ^bb0(%ax: tensor<16x32x32x64xf16>, %aw: tensor<32x1x1x64xf16>, %ab: tensor<32xf16>, %ar: tensor<16x32x32x32xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<16x32x32x64xf16>, tensor<32x1x1x64xf16>, tensor<32xf16>) -> tensor<16x32x32x32xf16>
    %t = kiln.add %y, %ar : tensor<16x32x32x32xf16>
    %u = kiln.relu %t : tensor<16x32x32x32xf16>
    kiln.yield %u : tensor<16x32x32x32xf16>
  }
  return %0 : tensor<16x32x32x32xf16>
}

// -----

// fp32 with 5 channels and dilation 2: the SIMT implicit GEMM.
// CHECK-LABEL: // === kernel simt_k0 grid(1, 2, 1) block(256) shared(0) inputs(4) outputs(1)
//       CHECK:   static constexpr int DH = 2;
//       CHECK:   kiln::conv::conv_simt<{{kiln_[0-9A-F]+}}_shape>(in0, in1, epilogue);
func.func @simt(%x: tensor<2x9x9x5xf32>, %w: tensor<17x3x3x5xf32>, %b: tensor<17xf32>, %r: tensor<2x7x7x17xf32>) -> tensor<2x7x7x17xf32> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<2x9x9x5xf32>, tensor<17x3x3x5xf32>, tensor<17xf32>, tensor<2x7x7x17xf32>) -> tensor<2x7x7x17xf32> {
  ^bb0(%ax: tensor<2x9x9x5xf32>, %aw: tensor<17x3x3x5xf32>, %ab: tensor<17xf32>, %ar: tensor<2x7x7x17xf32>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [1, 1, 1, 1] dilation = [2, 2] groups = 1 : (tensor<2x9x9x5xf32>, tensor<17x3x3x5xf32>, tensor<17xf32>) -> tensor<2x7x7x17xf32>
    %t = kiln.add %y, %ar : tensor<2x7x7x17xf32>
    %u = kiln.relu %t : tensor<2x7x7x17xf32>
    kiln.yield %u : tensor<2x7x7x17xf32>
  }
  return %0 : tensor<2x7x7x17xf32>
}

// -----

// Depthwise (groups == C): 50 output positions x 32 channels are too few
// threads to take 8 channels each, so a thread per element on a grid-stride
// loop.
// CHECK-LABEL: // === kernel dw_k0 grid(7, 1, 1) block(256) shared(0) inputs(3) outputs(1)
//       CHECK:   static constexpr int G = 32;
//       CHECK: __launch_bounds__(256) {{kiln_[0-9A-F]+}}(
//       CHECK:   kiln::conv::conv_depthwise<{{kiln_[0-9A-F]+}}_shape>(in0, in1, epilogue);
func.func @dw(%x: tensor<2x9x9x32xf16>, %w: tensor<32x3x3x1xf16>, %b: tensor<32xf16>) -> tensor<2x5x5x32xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<2x9x9x32xf16>, tensor<32x3x3x1xf16>, tensor<32xf16>) -> tensor<2x5x5x32xf16> {
  ^bb0(%ax: tensor<2x9x9x32xf16>, %aw: tensor<32x3x3x1xf16>, %ab: tensor<32xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [2, 2] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 32 : (tensor<2x9x9x32xf16>, tensor<32x3x3x1xf16>, tensor<32xf16>) -> tensor<2x5x5x32xf16>
    %u = kiln.relu %y : tensor<2x5x5x32xf16>
    kiln.yield %u : tensor<2x5x5x32xf16>
  }
  return %0 : tensor<2x5x5x32xf16>
}

// -----

// The same group with 8 channels a thread (tile [1, 8, 1], as the selection
// stage chooses it at batch 32): 4 threads cover 32 channels, so a block of
// 256 takes 64 positions and one block covers all 50.
// CHECK-LABEL: // === kernel dwv_k0 grid(1, 1, 1) block(256) shared(0) inputs(3) outputs(1)
//       CHECK: static_assert(kiln::conv::depthwise::slice<{{kiln_[0-9A-F]+}}_shape>() == 32,
//       CHECK: __launch_bounds__(256, 1) {{kiln_[0-9A-F]+}}(
//       CHECK:   kiln::conv::conv_depthwise<{{kiln_[0-9A-F]+}}_shape, true>(in0, in1, epilogue);
func.func @dwv(%x: tensor<2x9x9x32xf16>, %w: tensor<32x3x3x1xf16>, %b: tensor<32xf16>) -> tensor<2x5x5x32xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<2x9x9x32xf16>, tensor<32x3x3x1xf16>, tensor<32xf16>) {kiln.kernel = #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 2112>} -> tensor<2x5x5x32xf16> {
  ^bb0(%ax: tensor<2x9x9x32xf16>, %aw: tensor<32x3x3x1xf16>, %ab: tensor<32xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [2, 2] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 32 : (tensor<2x9x9x32xf16>, tensor<32x3x3x1xf16>, tensor<32xf16>) -> tensor<2x5x5x32xf16>
    %u = kiln.relu %y : tensor<2x5x5x32xf16>
    kiln.yield %u : tensor<2x5x5x32xf16>
  }
  return %0 : tensor<2x5x5x32xf16>
}

// -----

// 144 channels: two even slices of 72 (grid y), 9 threads a position, so a
// block takes 28 positions and 392 take 14 blocks a slice. Eight blocks a
// multiprocessor are the launch bounds' minimum; the epilogue packs eight
// channels for one 16-byte store.
// CHECK-LABEL: // === kernel dw144_k0 grid(14, 2, 1) block(256) shared(0) inputs(3) outputs(1)
//       CHECK: static_assert(kiln::conv::depthwise::slice<{{kiln_[0-9A-F]+}}_shape>() == 72,
//       CHECK: static constexpr bool kFragments = true;
//       CHECK: void store_chunk(int m, int o, uint4 chunk) const {
//       CHECK: __launch_bounds__(256, 8) {{kiln_[0-9A-F]+}}(
//       CHECK:   kiln::conv::conv_depthwise<{{kiln_[0-9A-F]+}}_shape, true>(in0, in1, epilogue);
func.func @dw144(%x: tensor<2x14x14x144xf16>, %w: tensor<144x3x3x1xf16>, %b: tensor<144xf16>) -> tensor<2x14x14x144xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<2x14x14x144xf16>, tensor<144x3x3x1xf16>, tensor<144xf16>) {kiln.kernel = #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 2112, blocks_per_sm = 8>} -> tensor<2x14x14x144xf16> {
  ^bb0(%ax: tensor<2x14x14x144xf16>, %aw: tensor<144x3x3x1xf16>, %ab: tensor<144xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 144 : (tensor<2x14x14x144xf16>, tensor<144x3x3x1xf16>, tensor<144xf16>) -> tensor<2x14x14x144xf16>
    kiln.yield %y : tensor<2x14x14x144xf16>
  }
  return %0 : tensor<2x14x14x144xf16>
}

// -----

// 2-D patches of 4 x 8 outputs (pixel_tile [1, 4, 8]): 14 x 14 outputs are
// 4 x 2 patches an image, 16 over the batch, a block each, in two slices
// of 72 channels; the window and filters in shared memory.
// CHECK-LABEL: // === kernel dw144p_k0 grid(16, 2, 1) block(256) shared(0) inputs(3) outputs(1)
//       CHECK: __launch_bounds__(256, 4) {{kiln_[0-9A-F]+}}(
//       CHECK:   kiln::conv::conv_depthwise_patches<{{kiln_[0-9A-F]+}}_shape, 4, 8>(in0, in1, epilogue);
func.func @dw144p(%x: tensor<2x14x14x144xf16>, %w: tensor<144x3x3x1xf16>, %b: tensor<144xf16>) -> tensor<2x14x14x144xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<2x14x14x144xf16>, tensor<144x3x3x1xf16>, tensor<144xf16>) {kiln.kernel = #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 2112, pixel_tile = [1, 4, 8], blocks_per_sm = 4>} -> tensor<2x14x14x144xf16> {
  ^bb0(%ax: tensor<2x14x14x144xf16>, %aw: tensor<144x3x3x1xf16>, %ab: tensor<144xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 144 : (tensor<2x14x14x144xf16>, tensor<144x3x3x1xf16>, tensor<144xf16>) -> tensor<2x14x14x144xf16>
    kiln.yield %y : tensor<2x14x14x144xf16>
  }
  return %0 : tensor<2x14x14x144xf16>
}

// -----

// Four adjacent output columns a thread (tile [1, 8, 4]): rows of 14
// outputs are 4 groups (the last of 2), 2 x 14 x 4 = 112 groups of 28 a
// block: 4 blocks a slice.
// CHECK-LABEL: // === kernel dw144x4_k0 grid(4, 2, 1) block(256) shared(0) inputs(3) outputs(1)
//       CHECK: static constexpr bool kFragments = false;
//       CHECK: __launch_bounds__(256, 1) {{kiln_[0-9A-F]+}}(
//       CHECK:   kiln::conv::conv_depthwise<{{kiln_[0-9A-F]+}}_shape, true, 4>(in0, in1, epilogue);
func.func @dw144x4(%x: tensor<2x14x14x144xf16>, %w: tensor<144x3x3x1xf16>, %b: tensor<144xf16>) -> tensor<2x14x14x144xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<2x14x14x144xf16>, tensor<144x3x3x1xf16>, tensor<144xf16>) {kiln.kernel = #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 4], grid_limit = 2112>} -> tensor<2x14x14x144xf16> {
  ^bb0(%ax: tensor<2x14x14x144xf16>, %aw: tensor<144x3x3x1xf16>, %ab: tensor<144xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 144 : (tensor<2x14x14x144xf16>, tensor<144x3x3x1xf16>, tensor<144xf16>) -> tensor<2x14x14x144xf16>
    kiln.yield %y : tensor<2x14x14x144xf16>
  }
  return %0 : tensor<2x14x14x144xf16>
}

// -----

// Two groups of 5 channels in bf16: one grid z per group.
// CHECK-LABEL: // === kernel grp_k0 grid(1, 1, 2) block(256) shared(0) inputs(4) outputs(1)
//       CHECK:   kiln::conv::conv_mma<{{kiln_[0-9A-F]+}}_shape>(in0, in1, epilogue);
func.func @grp(%x: tensor<2x7x7x10xbf16>, %w: tensor<6x3x3x5xbf16>, %b: tensor<6xbf16>, %r: tensor<2x7x7x6xbf16>) -> tensor<2x7x7x6xbf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<2x7x7x10xbf16>, tensor<6x3x3x5xbf16>, tensor<6xbf16>, tensor<2x7x7x6xbf16>) -> tensor<2x7x7x6xbf16> {
  ^bb0(%ax: tensor<2x7x7x10xbf16>, %aw: tensor<6x3x3x5xbf16>, %ab: tensor<6xbf16>, %ar: tensor<2x7x7x6xbf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [0, 1, 2, 1] dilation = [1, 1] groups = 2 : (tensor<2x7x7x10xbf16>, tensor<6x3x3x5xbf16>, tensor<6xbf16>) -> tensor<2x7x7x6xbf16>
    %t = kiln.add %y, %ar : tensor<2x7x7x6xbf16>
    %u = kiln.relu %t : tensor<2x7x7x6xbf16>
    kiln.yield %u : tensor<2x7x7x6xbf16>
  }
  return %0 : tensor<2x7x7x6xbf16>
}

// -----

// The frontend's NCHW -> NHWC permute fused into the stem convolution: the
// loader reads the NCHW input in place. Three input channels make it a
// conv_stem on rows of the input (stride 2 x 3 channels keep A's fragments
// 4-byte aligned): a persistent block per output row of 8 (tiles of 128
// output columns), 3 filter rows of 9 padded to 16 (K = 48), 8 outputs to
// 16; the weight (16 x 56 halves), two patches (3 rows of 784 halves) and
// the results (128 x 24 halves) in dynamic shared memory, asserted.
// CHECK-LABEL: // === kernel nchw_k0 grid(8, 1, 1) block(256) shared(17344) inputs(3) outputs(1)
//       CHECK:   static constexpr int C = 3;
//       CHECK:   static constexpr bool kNchw = true;
//  CHECK-NEXT: };
//  CHECK-NEXT: static_assert(kiln::conv::stem::shared_bytes<{{kiln_[0-9A-F]+}}_shape>() == 17344 && kiln::conv::stem::reduction<{{kiln_[0-9A-F]+}}_shape>() == 48,
//       CHECK:   kiln::conv::conv_stem<{{kiln_[0-9A-F]+}}_shape>(in0, in1, epilogue);
func.func @nchw(%x: tensor<1x3x15x15xf16>, %w: tensor<8x3x3x3xf16>, %b: tensor<8xf16>) -> tensor<1x8x8x8xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<1x3x15x15xf16>, tensor<8x3x3x3xf16>, tensor<8xf16>) -> tensor<1x8x8x8xf16> {
  ^bb0(%ax: tensor<1x3x15x15xf16>, %aw: tensor<8x3x3x3xf16>, %ab: tensor<8xf16>):
    %p = kiln.permute %ax [0, 2, 3, 1] : tensor<1x3x15x15xf16> -> tensor<1x15x15x3xf16>
    %y = kiln.conv2d %p, %aw, %ab strides = [2, 2] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<1x15x15x3xf16>, tensor<8x3x3x3xf16>, tensor<8xf16>) -> tensor<1x8x8x8xf16>
    %u = kiln.relu %y : tensor<1x8x8x8xf16>
    kiln.yield %u : tensor<1x8x8x8xf16>
  }
  return %0 : tensor<1x8x8x8xf16>
}

// -----

// At stride 1 over 3 channels a window starts 6 bytes after its neighbour,
// so the stem gathers im2col rows instead: 64 consecutive output positions
// a tile (ceil(8 * 9 * 9 / 64) = 11 tiles), K = 27 padded to 32.
// CHECK-LABEL: // === kernel im2col_stem_k0 grid(11, 1, 1) block(256) shared(0) inputs(2) outputs(1)
//       CHECK: static_assert(kiln::conv::stem::shared_bytes<{{kiln_[0-9A-F]+}}_shape>() == 8704 && kiln::conv::stem::reduction<{{kiln_[0-9A-F]+}}_shape>() == 32,
//       CHECK:   kiln::conv::conv_stem<{{kiln_[0-9A-F]+}}_shape>(in0, in1, epilogue);
func.func @im2col_stem(%x: tensor<8x9x9x3xf16>, %w: tensor<16x3x3x3xf16>) -> tensor<8x9x9x16xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<8x9x9x3xf16>, tensor<16x3x3x3xf16>) -> tensor<8x9x9x16xf16> {
  ^bb0(%ax: tensor<8x9x9x3xf16>, %aw: tensor<16x3x3x3xf16>):
    %y = kiln.conv2d %ax, %aw strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<8x9x9x3xf16>, tensor<16x3x3x3xf16>) -> tensor<8x9x9x16xf16>
    kiln.yield %y : tensor<8x9x9x16xf16>
  }
  return %0 : tensor<8x9x9x16xf16>
}

// -----

// ResNet-50's last 3x3 convolution at batch 1 (7 x 7 x 512 -> 512): 4 tiles
// of 128 x 128 for 132 multiprocessors, so 64 x 64 tiles with K = 4608
// split 8 ways across a cluster: 1 x 8 x 8 = 64 blocks.
// CHECK-LABEL: // === kernel late_k0 grid(64, 1, 1) block(128) shared(55296) inputs(3) outputs(1)
//       CHECK: #define KILN_SPLIT_CLUSTER __cluster_dims__(8, 1, 1)
//       CHECK: extern "C" __global__ void KILN_SPLIT_CLUSTER __launch_bounds__(128, 1) {{kiln_[0-9A-F]+}}(
//       CHECK:   kiln::conv::conv_splitk<{{kiln_[0-9A-F]+}}_shape, __half, 8, 64, 3>(in0, in1, epilogue);
func.func @late(%x: tensor<1x7x7x512xf16>, %w: tensor<512x3x3x512xf16>, %b: tensor<512xf16>) -> tensor<1x7x7x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<1x7x7x512xf16>, tensor<512x3x3x512xf16>, tensor<512xf16>) -> tensor<1x7x7x512xf16> {
  ^bb0(%ax: tensor<1x7x7x512xf16>, %aw: tensor<512x3x3x512xf16>, %ab: tensor<512xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<1x7x7x512xf16>, tensor<512x3x3x512xf16>, tensor<512xf16>) -> tensor<1x7x7x512xf16>
    %r = kiln.relu %y : tensor<1x7x7x512xf16>
    kiln.yield %r : tensor<1x7x7x512xf16>
  }
  return %0 : tensor<1x7x7x512xf16>
}

// -----

// ResNet-50's first 3x3 convolution at batch 32 on Hopper (conv_wgmma, as
// kiln-select-kernels chooses it):
// 784 boxes of 2 images x 8 x 8 output pixels cover 32 x 56 x 56 exactly;
// 64 output channels take 64-wide tiles. Each k-step is one filter tap:
// the input box is a 4-D TMA copy [C, W, H, N] at the tap's offset (the
// padding reads as zeros), the weight a 3-D copy of [O, 9, C].
// CHECK-LABEL: // === kernel r3_k0 grid(132, 1, 1) block(384) shared(185344) inputs(3) outputs(1)
//  CHECK-NEXT: // tensor map of in0: dims [64, 56, 56, 32] box [64, 8, 8, 2] strides [1, 1, 1, 1]
//  CHECK-NEXT: // tensor map of in1: dims [64, 9, 64] box [64, 1, 64] strides [1, 1, 1]
//       CHECK: #include "kiln_conv_sm90.cuh"
//       CHECK: static_assert(kiln::sm90::shared_bytes(64, 6) == 185344
//       CHECK: __launch_bounds__(384, 1) {{kiln_[0-9A-F]+}}(const __grid_constant__ kiln::sm90::TensorMap map0, const __grid_constant__ kiln::sm90::TensorMap map1,
//       CHECK: #if defined(__CUDA_ARCH_FEAT_SM90_ALL)
//  CHECK-NEXT:   kiln::conv::conv_wgmma<{{kiln_[0-9A-F]+}}_shape, __half, 64, 6, kiln::sm90::Schedule::cooperative, 1, 1, 2, 8, 8>(map0, map1, epilogue);
//  CHECK-NEXT: #else
//  CHECK-NEXT:   kiln::conv::conv_mma_persistent<{{kiln_[0-9A-F]+}}_shape>(in0, in1, epilogue);
func.func @r3(%x: tensor<32x56x56x64xf16>, %w: tensor<64x3x3x64xf16>, %b: tensor<64xf16>) -> tensor<32x56x56x64xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<32x56x56x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>) {kiln.kernel = #kiln.kernel<variant = conv_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, pixel_tile = [2, 8, 8]>} -> tensor<32x56x56x64xf16> {
  ^bb0(%ax: tensor<32x56x56x64xf16>, %aw: tensor<64x3x3x64xf16>, %ab: tensor<64xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x56x56x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>) -> tensor<32x56x56x64xf16>
    %r = kiln.relu %y : tensor<32x56x56x64xf16>
    kiln.yield %r : tensor<32x56x56x64xf16>
  }
  return %0 : tensor<32x56x56x64xf16>
}

// -----

// conv_wgmma forced on a ragged bf16 convolution: stride 2 (the input box
// traverses every second column and row: box 16 x 8 for 8 x 4 pixels),
// C = 40 (the box's channels past 40 read as zeros), 72 output channels in
// 128-wide tiles, 4 x 8 x 9 outputs in boxes of 1 x 4 x 8.
// CHECK-LABEL: // === kernel s2_k0 grid(16, 1, 1) block(384) shared(168960) inputs(4) outputs(1)
//  CHECK-NEXT: // tensor map of in0: dims [40, 17, 15, 4] box [64, 16, 8, 1] strides [1, 2, 2, 1]
//  CHECK-NEXT: // tensor map of in1: dims [40, 9, 72] box [64, 1, 128] strides [1, 1, 1]
//       CHECK:   kiln::conv::conv_wgmma<{{kiln_[0-9A-F]+}}_shape, __nv_bfloat16, 128, 4, kiln::sm90::Schedule::cooperative, 1, 1, 1, 4, 8>(map0, map1, epilogue);
func.func @s2(%x: tensor<4x15x17x40xbf16>, %w: tensor<72x3x3x40xbf16>, %b: tensor<72xbf16>, %r: tensor<4x8x9x72xbf16>) -> tensor<4x8x9x72xbf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<4x15x17x40xbf16>, tensor<72x3x3x40xbf16>, tensor<72xbf16>, tensor<4x8x9x72xbf16>) {kiln.kernel = #kiln.kernel<variant = conv_wgmma, tile = [128, 128, 64], stages = 4, grid_limit = 132, pixel_tile = [1, 4, 8]>} -> tensor<4x8x9x72xbf16> {
  ^bb0(%ax: tensor<4x15x17x40xbf16>, %aw: tensor<72x3x3x40xbf16>, %ab: tensor<72xbf16>, %ar: tensor<4x8x9x72xbf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [2, 2] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<4x15x17x40xbf16>, tensor<72x3x3x40xbf16>, tensor<72xbf16>) -> tensor<4x8x9x72xbf16>
    %t = kiln.add %y, %ar : tensor<4x8x9x72xbf16>
    kiln.yield %t : tensor<4x8x9x72xbf16>
  }
  return %0 : tensor<4x8x9x72xbf16>
}

// -----

// ResNet-50's last 3x3 convolutions at batch 32 with K split over pairs of
// blocks (kiln-select-kernels --wgmma-split-k): 14 boxes of 18 x 1 x 7
// pixels x 4 column tiles, each pair walking 36 of the 72 k-steps, a
// residual read by the block that keeps the rows.
// CHECK-LABEL: // === kernel split_pairs_k0 grid(112, 1, 1) block(384) shared(201728) inputs(4) outputs(1) cluster(2, 1, 1)
//       CHECK: static_assert(kiln::sm90::shared_bytes(128, 4, false, 128, false, false, 2) == 201728
//       CHECK: #define KILN_SPLIT_CLUSTER __cluster_dims__(2, 1, 1)
//       CHECK:   kiln::conv::conv_wgmma<{{kiln_[0-9A-F]+}}_shape, __half, 128, 4, kiln::sm90::Schedule::cooperative, 1, 1, 18, 1, 7, false, 2>(map0, map1, epilogue);
func.func @split_pairs(%x: tensor<32x7x7x512xf16>, %w: tensor<512x3x3x512xf16>, %b: tensor<512xf16>, %r: tensor<32x7x7x512xf16>) -> tensor<32x7x7x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<32x7x7x512xf16>, tensor<512x3x3x512xf16>, tensor<512xf16>, tensor<32x7x7x512xf16>) {kiln.kernel = #kiln.kernel<variant = conv_wgmma, tile = [128, 128, 64], stages = 4, split_k = 2, grid_limit = 112, pixel_tile = [18, 1, 7]>} -> tensor<32x7x7x512xf16> {
  ^bb0(%ax: tensor<32x7x7x512xf16>, %aw: tensor<512x3x3x512xf16>, %ab: tensor<512xf16>, %ar: tensor<32x7x7x512xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x7x7x512xf16>, tensor<512x3x3x512xf16>, tensor<512xf16>) -> tensor<32x7x7x512xf16>
    %s = kiln.add %y, %ar : tensor<32x7x7x512xf16>
    %q = kiln.relu %s : tensor<32x7x7x512xf16>
    kiln.yield %q : tensor<32x7x7x512xf16>
  }
  return %0 : tensor<32x7x7x512xf16>
}

// -----

// A bias-free convolution on Hopper's ping-pong schedule: its epilogue reads
// the accumulator through an add of -0 first (kiln::accumulator_value), as
// a bias-free GEMM's does; converted straight from the accumulator, ptxas
// serialized the kernel's wgmmas and kiln rejected it (compile-sm90a.mlir
// assembles it).
// CHECK-LABEL: // === kernel bias_free_pingpong_k0
//       CHECK:     kiln::from_float<__half>(kiln::accumulator_value(acc))
//       CHECK:   kiln::conv::conv_wgmma<{{kiln_[0-9A-F]+}}_shape, __half, 128, 5, kiln::sm90::Schedule::pingpong
func.func @bias_free_pingpong(%x: tensor<2x14x14x64xf16>, %w: tensor<200x1x1x64xf16>, %r: tensor<2x7x7x200xf16>) -> tensor<2x7x7x200xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %r : tensor<2x14x14x64xf16>, tensor<200x1x1x64xf16>, tensor<2x7x7x200xf16>) {kiln.kernel = #kiln.kernel<variant = conv_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 1, pixel_tile = [2, 7, 7], schedule = pingpong>} -> tensor<2x7x7x200xf16> {
  ^bb0(%ax: tensor<2x14x14x64xf16>, %aw: tensor<200x1x1x64xf16>, %ar: tensor<2x7x7x200xf16>):
    %y = kiln.conv2d %ax, %aw strides = [2, 2] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<2x14x14x64xf16>, tensor<200x1x1x64xf16>) -> tensor<2x7x7x200xf16>
    %s = kiln.add %y, %ar : tensor<2x7x7x200xf16>
    %q = kiln.relu %s : tensor<2x7x7x200xf16>
    kiln.yield %q : tensor<2x7x7x200xf16>
  }
  return %0 : tensor<2x7x7x200xf16>
}

// -----

// A projection shortcut merged into a bottleneck's last convolution: a 1x1
// convolution over the channel concat of h and x's stride-2 slice. Each
// part is a tensor map of its own (x's box traverses every second column
// and row), the weight the third; k-steps walk h's 40 channels (one box,
// its last 24 read as zeros) and then x's 24. Other images gather both
// parts on mma.sync.
// CHECK-LABEL: // === kernel shortcut_k0 grid(5, 1, 1) block(384) shared(136192) inputs(4) outputs(1)
//  CHECK-NEXT: // tensor map of in0: dims [40, 9, 7, 3] box [64, 8, 4, 2] strides [1, 1, 1, 1]
//  CHECK-NEXT: // tensor map of in1: dims [24, 18, 13, 3] box [64, 16, 8, 2] strides [1, 2, 2, 1]
//  CHECK-NEXT: // tensor map of in2: dims [64, 1, 72] box [64, 1, 64] strides [1, 1, 1]
//       CHECK: struct {{kiln_[0-9A-F]+}}_parts {
//  CHECK-NEXT:   static constexpr int C0 = 40;
//  CHECK-NEXT:   static constexpr int H0 = 7;
//  CHECK-NEXT:   static constexpr int W0 = 9;
//  CHECK-NEXT:   static constexpr int SH0 = 1;
//  CHECK-NEXT:   static constexpr int SW0 = 1;
//  CHECK-NEXT:   static constexpr int C1 = 24;
//  CHECK-NEXT:   static constexpr int H1 = 13;
//  CHECK-NEXT:   static constexpr int W1 = 18;
//  CHECK-NEXT:   static constexpr int SH1 = 2;
//  CHECK-NEXT:   static constexpr int SW1 = 2;
//       CHECK: const __grid_constant__ kiln::sm90::TensorMap map0, const __grid_constant__ kiln::sm90::TensorMap map1, const __grid_constant__ kiln::sm90::TensorMap map2,
//       CHECK: #if defined(__CUDA_ARCH_FEAT_SM90_ALL)
//  CHECK-NEXT:   kiln::conv::conv_wgmma_concat<[[S:kiln_[0-9A-F]+]]_shape, [[S]]_parts, __half, 64, 4, kiln::sm90::Schedule::cooperative, 1, 1, 2, 4, 8>(map0, map1, map2, epilogue);
//  CHECK-NEXT: #else
//  CHECK-NEXT:   kiln::conv::conv_mma_concat<[[S]]_shape, [[S]]_parts>(in0, in1, in2, epilogue);
func.func @shortcut(%h: tensor<3x7x9x40xf16>, %x: tensor<3x13x18x24xf16>, %w: tensor<72x1x1x64xf16>, %b: tensor<72xf16>) -> tensor<3x7x9x72xf16> {
  %0 = kiln.fusion conv_epilogue ins(%h, %x, %w, %b : tensor<3x7x9x40xf16>, tensor<3x13x18x24xf16>, tensor<72x1x1x64xf16>, tensor<72xf16>) {kiln.kernel = #kiln.kernel<variant = conv_wgmma, tile = [128, 64, 64], stages = 4, grid_limit = 5, pixel_tile = [2, 4, 8]>} -> tensor<3x7x9x72xf16> {
  ^bb0(%ah: tensor<3x7x9x40xf16>, %ax: tensor<3x13x18x24xf16>, %aw: tensor<72x1x1x64xf16>, %ab: tensor<72xf16>):
    %s = kiln.slice %ax offsets = [0, 0, 0, 0] strides = [1, 2, 2, 1] : tensor<3x13x18x24xf16> -> tensor<3x7x9x24xf16>
    %j = kiln.concat %ah, %s dim = 3 : (tensor<3x7x9x40xf16>, tensor<3x7x9x24xf16>) -> tensor<3x7x9x64xf16>
    %y = kiln.conv2d %j, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<3x7x9x64xf16>, tensor<72x1x1x64xf16>, tensor<72xf16>) -> tensor<3x7x9x72xf16>
    %r = kiln.relu %y : tensor<3x7x9x72xf16>
    kiln.yield %r : tensor<3x7x9x72xf16>
  }
  return %0 : tensor<3x7x9x72xf16>
}
