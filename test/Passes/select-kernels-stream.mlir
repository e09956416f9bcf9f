// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{gemm-stream-intensity=0}))" | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{gemm-stream-blocks=3}))" | FileCheck %s --check-prefix=THREE
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{gemm-stream-intensity=200}))" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{gemm-stream-blocks=5}))" 2>&1 | FileCheck %s --check-prefix=BADBLOCKS

// gemm_stream: 1x1 convolutions that move more bytes than they compute (K N
// / (K + N) at most 32 FLOPs a byte), K not a multiple of 64, 128-row tiles
// for every multiprocessor: EfficientNet's 24 -> 144 at 56 x 56, batch 32
// (K padded to 32, four stages of A, two blocks a multiprocessor), and
// MobileNetV3's 72 -> 24 with its residual (two stages of A and residual
// tiles: three would not let two blocks share a multiprocessor).
// CHECK-LABEL: func.func @streamed(
//       CHECK:   #kiln.kernel<variant = gemm_stream, tile = [128, 64, 32], stages = 4, grid_limit = 264, blocks_per_sm = 2>
//       CHECK:   #kiln.kernel<variant = gemm_stream, tile = [128, 64, 80], stages = 2, grid_limit = 264, blocks_per_sm = 2>
// OFF-LABEL: func.func @streamed(
//   OFF-NOT:   gemm_stream
// THREE-LABEL: func.func @streamed(
//       THREE:   #kiln.kernel<variant = gemm_stream, tile = [128, 64, 32], stages = 2, grid_limit = 396, blocks_per_sm = 3>
//       THREE:   #kiln.kernel<variant = gemm_stream, tile = [128, 64, 80], stages = 2, grid_limit = 264, blocks_per_sm = 2>
// BAD: error: --gemm-stream-intensity must be 0 (never) to 128 (every GEMM of K and N up to 256), got 200
// BADBLOCKS: error: --gemm-stream-blocks must be 2, 3 or 4, got 5
func.func @streamed(%s0_x: tensor<32x56x56x24xf16>, %s0_w: tensor<144x1x1x24xf16>, %s1_x: tensor<32x56x56x72xf16>, %s1_w: tensor<24x1x1x72xf16>, %s1_r: tensor<32x56x56x24xf16>)
    -> (tensor<32x56x56x144xf16>, tensor<32x56x56x24xf16>) {
  %s0 = kiln.fusion conv_epilogue ins(%s0_x, %s0_w : tensor<32x56x56x24xf16>, tensor<144x1x1x24xf16>) -> tensor<32x56x56x144xf16> {
  ^bb0(%a: tensor<32x56x56x24xf16>, %aw: tensor<144x1x1x24xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x24xf16>, tensor<144x1x1x24xf16>) -> tensor<32x56x56x144xf16>
    %t = kiln.relu %c : tensor<32x56x56x144xf16>
    kiln.yield %t : tensor<32x56x56x144xf16>
  }
  %s1 = kiln.fusion conv_epilogue ins(%s1_x, %s1_w, %s1_r : tensor<32x56x56x72xf16>, tensor<24x1x1x72xf16>, tensor<32x56x56x24xf16>) -> tensor<32x56x56x24xf16> {
  ^bb0(%a: tensor<32x56x56x72xf16>, %aw: tensor<24x1x1x72xf16>, %ar: tensor<32x56x56x24xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x72xf16>, tensor<24x1x1x72xf16>) -> tensor<32x56x56x24xf16>
    %t = kiln.add %c, %ar : tensor<32x56x56x24xf16>
    kiln.yield %t : tensor<32x56x56x24xf16>
  }
  return %s0, %s1 : tensor<32x56x56x144xf16>, tensor<32x56x56x24xf16>
}

// -----

// Not streamed: K a multiple of 64 (ResNet-50's 64 -> 64 at 56 x 56: the
// wgmma GEMM uses its k-step whole), 40 -> 240 (34 FLOPs a byte), 14 x 14
// at batch 32 (49 tiles of 128 rows for 132 multiprocessors), 20 columns
// (not a multiple of 8), and 144 -> 24 with a residual (two stages of A
// and residual tiles do not let two blocks share a multiprocessor).
// CHECK-LABEL: func.func @not_streamed(
//   CHECK-NOT:   gemm_stream
// THREE-LABEL: func.func @not_streamed(
//   THREE-NOT:   gemm_stream
func.func @not_streamed(%n0_x: tensor<32x56x56x64xf16>, %n0_w: tensor<64x1x1x64xf16>, %n1_x: tensor<32x56x56x40xf16>, %n1_w: tensor<240x1x1x40xf16>, %n2_x: tensor<32x14x14x24xf16>, %n2_w: tensor<72x1x1x24xf16>, %n3_x: tensor<32x56x56x40xf16>, %n3_w: tensor<20x1x1x40xf16>, %n4_x: tensor<32x56x56x144xf16>, %n4_w: tensor<24x1x1x144xf16>, %n4_r: tensor<32x56x56x24xf16>)
    -> (tensor<32x56x56x64xf16>, tensor<32x56x56x240xf16>, tensor<32x14x14x72xf16>, tensor<32x56x56x20xf16>, tensor<32x56x56x24xf16>) {
  %n0 = kiln.fusion conv_epilogue ins(%n0_x, %n0_w : tensor<32x56x56x64xf16>, tensor<64x1x1x64xf16>) -> tensor<32x56x56x64xf16> {
  ^bb0(%a: tensor<32x56x56x64xf16>, %aw: tensor<64x1x1x64xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x64xf16>, tensor<64x1x1x64xf16>) -> tensor<32x56x56x64xf16>
    %t = kiln.relu %c : tensor<32x56x56x64xf16>
    kiln.yield %t : tensor<32x56x56x64xf16>
  }
  %n1 = kiln.fusion conv_epilogue ins(%n1_x, %n1_w : tensor<32x56x56x40xf16>, tensor<240x1x1x40xf16>) -> tensor<32x56x56x240xf16> {
  ^bb0(%a: tensor<32x56x56x40xf16>, %aw: tensor<240x1x1x40xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x40xf16>, tensor<240x1x1x40xf16>) -> tensor<32x56x56x240xf16>
    %t = kiln.relu %c : tensor<32x56x56x240xf16>
    kiln.yield %t : tensor<32x56x56x240xf16>
  }
  %n2 = kiln.fusion conv_epilogue ins(%n2_x, %n2_w : tensor<32x14x14x24xf16>, tensor<72x1x1x24xf16>) -> tensor<32x14x14x72xf16> {
  ^bb0(%a: tensor<32x14x14x24xf16>, %aw: tensor<72x1x1x24xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x14x14x24xf16>, tensor<72x1x1x24xf16>) -> tensor<32x14x14x72xf16>
    %t = kiln.relu %c : tensor<32x14x14x72xf16>
    kiln.yield %t : tensor<32x14x14x72xf16>
  }
  %n3 = kiln.fusion conv_epilogue ins(%n3_x, %n3_w : tensor<32x56x56x40xf16>, tensor<20x1x1x40xf16>) -> tensor<32x56x56x20xf16> {
  ^bb0(%a: tensor<32x56x56x40xf16>, %aw: tensor<20x1x1x40xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x40xf16>, tensor<20x1x1x40xf16>) -> tensor<32x56x56x20xf16>
    %t = kiln.relu %c : tensor<32x56x56x20xf16>
    kiln.yield %t : tensor<32x56x56x20xf16>
  }
  %n4 = kiln.fusion conv_epilogue ins(%n4_x, %n4_w, %n4_r : tensor<32x56x56x144xf16>, tensor<24x1x1x144xf16>, tensor<32x56x56x24xf16>) -> tensor<32x56x56x24xf16> {
  ^bb0(%a: tensor<32x56x56x144xf16>, %aw: tensor<24x1x1x144xf16>, %ar: tensor<32x56x56x24xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x144xf16>, tensor<24x1x1x144xf16>) -> tensor<32x56x56x24xf16>
    %t = kiln.add %c, %ar : tensor<32x56x56x24xf16>
    kiln.yield %t : tensor<32x56x56x24xf16>
  }
  return %n0, %n1, %n2, %n3, %n4 : tensor<32x56x56x64xf16>, tensor<32x56x56x240xf16>, tensor<32x14x14x72xf16>, tensor<32x56x56x20xf16>, tensor<32x56x56x24xf16>
}
