// RUN: not kiln-translate --kiln-to-cuda %s --split-input-file 2>&1 | FileCheck %s

// What the code generator cannot lower yet fails with an error at the op,
// never with wrong code.

// CHECK: error: 'kiln.permute' op needs a kernel but is in no fusion group
func.func @standalone_permute(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = kiln.permute %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// CHECK: error: 'kiln.softmax' op softmax over a dimension other than the last is not supported by the code generator yet
func.func @softmax_dim0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kiln.fusion normalization ins(%x : tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %s = kiln.softmax %a dim = 0 : tensor<4x8xf32>
    kiln.yield %s : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

// -----

// Integer add, multiply, casts and selects are exact (transformer-elementwise);
// an integer division is not generated yet.
// CHECK: error: 'kiln.div' op on 'i64' tensors in a fused kernel is not supported by kiln's code generator yet
func.func @integer_div(%x: tensor<4xi64>) -> tensor<4xi64> {
  %0 = kiln.fusion elementwise ins(%x : tensor<4xi64>) -> tensor<4xi64> {
  ^bb0(%a: tensor<4xi64>):
    %s = kiln.div %a, %a : tensor<4xi64>
    kiln.yield %s : tensor<4xi64>
  }
  return %0 : tensor<4xi64>
}

// -----

// CHECK: error: 'kiln.reduce_sum' op needs a kernel but is in no fusion group
func.func @reduction(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = kiln.reduce_sum %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK: error: 'kiln.conv2d' op the convolution's input and weight must be inputs of the group (or the input's NCHW -> NHWC permute)
func.func @conv_computed_weight(%x: tensor<1x6x6x4xf32>, %w: tensor<8x3x3x4xf32>) -> tensor<1x4x4x8xf32> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x6x6x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x4x4x8xf32> {
  ^bb0(%a: tensor<1x6x6x4xf32>, %k: tensor<8x3x3x4xf32>):
    %n = kiln.neg %k : tensor<8x3x3x4xf32>
    %c = kiln.conv2d %a, %n strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x6x6x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x4x4x8xf32>
    kiln.yield %c : tensor<1x4x4x8xf32>
  }
  return %0 : tensor<1x4x4x8xf32>
}

// -----

// CHECK: error: 'kiln.pool2d' op the pooled tensor must be an input of the group
func.func @pool_of_computed_value(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32> {
  %0 = kiln.fusion pooling ins(%x : tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32> {
  ^bb0(%a: tensor<1x4x4x2xf32>):
    %r = kiln.relu %a : tensor<1x4x4x2xf32>
    %p = kiln.pool2d %r max kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] : tensor<1x4x4x2xf32> -> tensor<1x2x2x2xf32>
    kiln.yield %p : tensor<1x2x2x2xf32>
  }
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// CHECK: error: 'kiln.reduce_max' op a reduction kernel holds one reduction; a second one is not supported by the code generator yet
func.func @two_reductions(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0:2 = kiln.fusion reduction ins(%x : tensor<4x8xf32>) -> tensor<4xf32>, tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %s = kiln.reduce_sum %a dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
    %m = kiln.reduce_max %a dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
    kiln.yield %s, %m : tensor<4xf32>, tensor<4xf32>
  }
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK: error: 'kiln.permute' op in a fused kernel must produce the kernel's iteration shape (2-D, 4x8)
func.func @broadcast_permute(%x: tensor<8x1xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kiln.fusion elementwise ins(%x, %y : tensor<8x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<8x1xf32>, %b: tensor<4x8xf32>):
    %p = kiln.permute %a [1, 0] : tensor<8x1xf32> -> tensor<1x8xf32>
    %s = kiln.add %b, %p : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
    kiln.yield %s : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

// -----

// Nothing elementwise after the statistics in their kernel.
// CHECK: error: 'kiln.fusion' op a row_moments group yields the statistics and its prologue's values only
func.func @moments_epilogue(%x: tensor<8x64xf16>) -> tensor<8x1xf32> {
  %0 = kiln.fusion normalization ins(%x : tensor<8x64xf16>) -> tensor<8x1xf32> {
  ^bb0(%a: tensor<8x64xf16>):
    %mean, %rstd = kiln.row_moments %a eps = 1.0e-05 : tensor<8x64xf16> -> tensor<8x1xf32>
    %p = kiln.mul %mean, %rstd : tensor<8x1xf32>
    kiln.yield %p : tensor<8x1xf32>
  }
  return %0 : tensor<8x1xf32>
}

// -----

// A channel concat whose part has 4 channels: TMA's strides are 16 bytes.
// CHECK: error: 'kiln.fusion' op cannot run as conv_wgmma: each part of a channel concat needs C % 8 == 0 (16-byte strides)
func.func @shortcut_part_channels(%h: tensor<1x4x4x4xf16>, %x: tensor<1x4x4x12xf16>, %w: tensor<8x1x1x16xf16>) -> tensor<1x4x4x8xf16> {
  %0 = kiln.fusion conv_epilogue ins(%h, %x, %w : tensor<1x4x4x4xf16>, tensor<1x4x4x12xf16>, tensor<8x1x1x16xf16>) {kiln.kernel = #kiln.kernel<variant = conv_wgmma, tile = [128, 64, 64], stages = 4, grid_limit = 1, pixel_tile = [1, 4, 4]>} -> tensor<1x4x4x8xf16> {
  ^bb0(%ah: tensor<1x4x4x4xf16>, %ax: tensor<1x4x4x12xf16>, %aw: tensor<8x1x1x16xf16>):
    %j = kiln.concat %ah, %ax dim = 3 : (tensor<1x4x4x4xf16>, tensor<1x4x4x12xf16>) -> tensor<1x4x4x16xf16>
    %y = kiln.conv2d %j, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x16xf16>, tensor<8x1x1x16xf16>) -> tensor<1x4x4x8xf16>
    kiln.yield %y : tensor<1x4x4x8xf16>
  }
  return %0 : tensor<1x4x4x8xf16>
}
