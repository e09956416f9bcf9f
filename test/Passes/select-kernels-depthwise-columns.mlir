// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=ONE
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{depthwise-columns=4}))" | FileCheck %s --check-prefix=FOUR
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{depthwise-columns=3}))" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{depthwise-patches=true}))" | FileCheck %s --check-prefix=PATCHES

// EfficientNet-B0's dw3x3 144 at 56 x 56, batch 32: one output column a
// thread by default, four with depthwise-columns=4 (451584 threads of 8
// channels, a quarter as many still fill the GPU). At 28 x 28, batch 4
// (56448 threads) a quarter would not: one column either way. At 7 x 7,
// batch 1, a thread per element. One column a thread takes eight blocks a
// multiprocessor (32 registers a thread); several columns, ptxas's count.
// ONE-LABEL: func.func @depthwise(
//       ONE:   #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 2112, blocks_per_sm = 8>
//       ONE:   #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 2112, blocks_per_sm = 8>
//       ONE:   #kiln.kernel<variant = conv_depthwise, grid_limit = 2112>
// FOUR-LABEL: func.func @depthwise(
//       FOUR:   #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 4], grid_limit = 2112>
//       FOUR:   #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 2112, blocks_per_sm = 8>
//       FOUR:   #kiln.kernel<variant = conv_depthwise, grid_limit = 2112>
// BAD: error: --depthwise-columns must be 1, 2 or 4, got 3
// With depthwise-patches, one column a thread over 4 x 8 patches of outputs
// (a 6 x 10 input window of 72 channels and the filters: 9936 bytes), four
// blocks a multiprocessor; the thread-per-element kernel as before.
// PATCHES-LABEL: func.func @depthwise(
//       PATCHES:   #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 2112, pixel_tile = [1, 4, 8], blocks_per_sm = 4>
//       PATCHES:   #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 2112, pixel_tile = [1, 4, 8], blocks_per_sm = 4>
//       PATCHES:   #kiln.kernel<variant = conv_depthwise, grid_limit = 2112>
// A 7 x 7 stride-2 window over 128 channels: no patch's window fits 24 KiB
// (1 x 8 outputs read 7 x 21 input pixels, 50176 bytes with the filters), so
// one column a thread as without the option.
// PATCHES-LABEL: func.func @depthwise_wide_window(
//       PATCHES:   #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 2112, blocks_per_sm = 8>
func.func @depthwise(%x: tensor<32x56x56x144xf16>, %w: tensor<144x3x3x1xf16>,
                     %z: tensor<4x28x28x144xf16>, %y: tensor<1x7x7x144xf16>)
    -> (tensor<32x56x56x144xf16>, tensor<4x28x28x144xf16>, tensor<1x7x7x144xf16>) {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<32x56x56x144xf16>, tensor<144x3x3x1xf16>) -> tensor<32x56x56x144xf16> {
  ^bb0(%a: tensor<32x56x56x144xf16>, %aw: tensor<144x3x3x1xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 144 : (tensor<32x56x56x144xf16>, tensor<144x3x3x1xf16>) -> tensor<32x56x56x144xf16>
    kiln.yield %c : tensor<32x56x56x144xf16>
  }
  %1 = kiln.fusion conv_epilogue ins(%z, %w : tensor<4x28x28x144xf16>, tensor<144x3x3x1xf16>) -> tensor<4x28x28x144xf16> {
  ^bb0(%a: tensor<4x28x28x144xf16>, %aw: tensor<144x3x3x1xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 144 : (tensor<4x28x28x144xf16>, tensor<144x3x3x1xf16>) -> tensor<4x28x28x144xf16>
    kiln.yield %c : tensor<4x28x28x144xf16>
  }
  %2 = kiln.fusion conv_epilogue ins(%y, %w : tensor<1x7x7x144xf16>, tensor<144x3x3x1xf16>) -> tensor<1x7x7x144xf16> {
  ^bb0(%a: tensor<1x7x7x144xf16>, %aw: tensor<144x3x3x1xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 144 : (tensor<1x7x7x144xf16>, tensor<144x3x3x1xf16>) -> tensor<1x7x7x144xf16>
    kiln.yield %c : tensor<1x7x7x144xf16>
  }
  return %0, %1, %2 : tensor<32x56x56x144xf16>, tensor<4x28x28x144xf16>, tensor<1x7x7x144xf16>
}

func.func @depthwise_wide_window(%x: tensor<32x56x56x128xf16>, %w: tensor<128x7x7x1xf16>)
    -> tensor<32x28x28x128xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<32x56x56x128xf16>, tensor<128x7x7x1xf16>) -> tensor<32x28x28x128xf16> {
  ^bb0(%a: tensor<32x56x56x128xf16>, %aw: tensor<128x7x7x1xf16>):
    %c = kiln.conv2d %a, %aw strides = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] groups = 128 : (tensor<32x56x56x128xf16>, tensor<128x7x7x1xf16>) -> tensor<32x28x28x128xf16>
    kiln.yield %c : tensor<32x28x28x128xf16>
  }
  return %0 : tensor<32x28x28x128xf16>
}
