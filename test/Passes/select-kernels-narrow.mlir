// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{gemm-narrow-fmas=6144 gemm-stream-intensity=0}))" | FileCheck %s --check-prefix=ON
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=DEFAULT
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{gemm-narrow-fmas=0}))" | FileCheck %s --check-prefix=OFF
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{gemm-narrow-fmas=7000}))" 2>&1 | FileCheck %s --check-prefix=BAD

// gemm_narrow, a thread per row on CUDA cores, up to gemm-narrow-fmas FMAs
// a row (K x N, 256 by default), where gemm_stream does not take the GEMM:
// MobileNetV3's 1x1 16 -> 16 at 112 x 112, batch 32 (256), and its 24 -> 72
// at 56 x 56 (1728: three passes over the row) stream past their weights
// by default; without gemm_stream (gemm-stream-intensity=0) and with a
// higher bound, both go narrow. With gemm-narrow-fmas=0, neither.
// ON-LABEL: func.func @few_channels(
//       ON:   #kiln.kernel<variant = gemm_narrow, grid_limit = 2112>
//       ON:   #kiln.kernel<variant = gemm_narrow, grid_limit = 2112>
// DEFAULT-LABEL: func.func @few_channels(
//       DEFAULT:   #kiln.kernel<variant = gemm_stream
//       DEFAULT:   #kiln.kernel<variant = gemm_stream
// OFF-LABEL: func.func @few_channels(
//       OFF:   #kiln.kernel<variant = gemm_stream
//       OFF:   #kiln.kernel<variant = gemm_stream
// BAD: error: --gemm-narrow-fmas must be 0 (never) to 6144 (the largest K x N the kernel's 24 KiB weight holds), got 7000
func.func @few_channels(%x: tensor<32x112x112x16xf16>, %w: tensor<16x1x1x16xf16>, %r: tensor<32x112x112x16xf16>,
                        %y: tensor<32x56x56x24xf16>, %v: tensor<72x1x1x24xf16>)
    -> (tensor<32x112x112x16xf16>, tensor<32x56x56x72xf16>) {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %r : tensor<32x112x112x16xf16>, tensor<16x1x1x16xf16>, tensor<32x112x112x16xf16>) -> tensor<32x112x112x16xf16> {
  ^bb0(%a: tensor<32x112x112x16xf16>, %aw: tensor<16x1x1x16xf16>, %ar: tensor<32x112x112x16xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x112x112x16xf16>, tensor<16x1x1x16xf16>) -> tensor<32x112x112x16xf16>
    %t = kiln.add %c, %ar : tensor<32x112x112x16xf16>
    kiln.yield %t : tensor<32x112x112x16xf16>
  }
  %1 = kiln.fusion conv_epilogue ins(%y, %v : tensor<32x56x56x24xf16>, tensor<72x1x1x24xf16>) -> tensor<32x56x56x72xf16> {
  ^bb0(%a: tensor<32x56x56x24xf16>, %av: tensor<72x1x1x24xf16>):
    %c = kiln.conv2d %a, %av strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x24xf16>, tensor<72x1x1x24xf16>) -> tensor<32x56x56x72xf16>
    kiln.yield %c : tensor<32x56x56x72xf16>
  }
  return %0, %1 : tensor<32x112x112x16xf16>, tensor<32x56x56x72xf16>
}

// -----

// Not narrow: 40 -> 240 (9600 FMAs a row, past 16 x (40 + 480)), K = 144 (past 128), 6 columns (not a
// multiple of 4), 14 x 14 at batch 32 (6272 rows: under a block of 128 on
// each of 132 multiprocessors), and 64 -> 64 (4096 FMAs a row for 192
// elements moved: math, not bytes).
// ON-LABEL: func.func @not_narrow(
//   ON-NOT:   gemm_narrow
// DEFAULT-LABEL: func.func @not_narrow(
// OFF-LABEL: func.func @not_narrow(
func.func @not_narrow(%x: tensor<32x56x56x40xf16>, %w: tensor<240x1x1x40xf16>,
                      %y: tensor<32x56x56x144xf16>, %v: tensor<24x1x1x144xf16>,
                      %z: tensor<32x56x56x24xf16>, %u: tensor<6x1x1x24xf16>,
                      %s: tensor<32x14x14x40xf16>, %t: tensor<16x1x1x40xf16>,
                      %q: tensor<32x56x56x64xf16>, %p: tensor<64x1x1x64xf16>)
    -> (tensor<32x56x56x240xf16>, tensor<32x56x56x24xf16>, tensor<32x56x56x6xf16>, tensor<32x14x14x16xf16>, tensor<32x56x56x64xf16>) {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<32x56x56x40xf16>, tensor<240x1x1x40xf16>) -> tensor<32x56x56x240xf16> {
  ^bb0(%a: tensor<32x56x56x40xf16>, %aw: tensor<240x1x1x40xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x40xf16>, tensor<240x1x1x40xf16>) -> tensor<32x56x56x240xf16>
    kiln.yield %c : tensor<32x56x56x240xf16>
  }
  %1 = kiln.fusion conv_epilogue ins(%y, %v : tensor<32x56x56x144xf16>, tensor<24x1x1x144xf16>) -> tensor<32x56x56x24xf16> {
  ^bb0(%a: tensor<32x56x56x144xf16>, %av: tensor<24x1x1x144xf16>):
    %c = kiln.conv2d %a, %av strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x144xf16>, tensor<24x1x1x144xf16>) -> tensor<32x56x56x24xf16>
    kiln.yield %c : tensor<32x56x56x24xf16>
  }
  %2 = kiln.fusion conv_epilogue ins(%z, %u : tensor<32x56x56x24xf16>, tensor<6x1x1x24xf16>) -> tensor<32x56x56x6xf16> {
  ^bb0(%a: tensor<32x56x56x24xf16>, %au: tensor<6x1x1x24xf16>):
    %c = kiln.conv2d %a, %au strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x24xf16>, tensor<6x1x1x24xf16>) -> tensor<32x56x56x6xf16>
    kiln.yield %c : tensor<32x56x56x6xf16>
  }
  %3 = kiln.fusion conv_epilogue ins(%s, %t : tensor<32x14x14x40xf16>, tensor<16x1x1x40xf16>) -> tensor<32x14x14x16xf16> {
  ^bb0(%a: tensor<32x14x14x40xf16>, %at: tensor<16x1x1x40xf16>):
    %c = kiln.conv2d %a, %at strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x14x14x40xf16>, tensor<16x1x1x40xf16>) -> tensor<32x14x14x16xf16>
    kiln.yield %c : tensor<32x14x14x16xf16>
  }
  %4 = kiln.fusion conv_epilogue ins(%q, %p : tensor<32x56x56x64xf16>, tensor<64x1x1x64xf16>) -> tensor<32x56x56x64xf16> {
  ^bb0(%a: tensor<32x56x56x64xf16>, %ap: tensor<64x1x1x64xf16>):
    %c = kiln.conv2d %a, %ap strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x64xf16>, tensor<64x1x1x64xf16>) -> tensor<32x56x56x64xf16>
    kiln.yield %c : tensor<32x56x56x64xf16>
  }
  return %0, %1, %2, %3, %4 : tensor<32x56x56x240xf16>, tensor<32x56x56x24xf16>, tensor<32x56x56x6xf16>, tensor<32x14x14x16xf16>, tensor<32x56x56x64xf16>
}

// -----

// K a multiple of 64, which gemm_stream leaves to wgmma: a 1x1 64 -> 4 at
// 56 x 56 (256 FMAs a row) goes narrow by default; with
// gemm-narrow-fmas=0, to the Hopper GEMM.
// ON-LABEL: func.func @narrow_by_default(
//       ON:   #kiln.kernel<variant = gemm_narrow, grid_limit = 2112>
// DEFAULT-LABEL: func.func @narrow_by_default(
//       DEFAULT:   #kiln.kernel<variant = gemm_narrow, grid_limit = 2112>
// OFF-LABEL: func.func @narrow_by_default(
//       OFF:   #kiln.kernel<variant = gemm_wgmma
func.func @narrow_by_default(%x: tensor<32x56x56x64xf16>, %w: tensor<4x1x1x64xf16>) -> tensor<32x56x56x4xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<32x56x56x64xf16>, tensor<4x1x1x64xf16>) -> tensor<32x56x56x4xf16> {
  ^bb0(%a: tensor<32x56x56x64xf16>, %aw: tensor<4x1x1x64xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x64xf16>, tensor<4x1x1x64xf16>) -> tensor<32x56x56x4xf16>
    kiln.yield %c : tensor<32x56x56x4xf16>
  }
  return %0 : tensor<32x56x56x4xf16>
}
