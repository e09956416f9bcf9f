// RUN: not kiln-translate --kiln-to-cuda %s --split-input-file 2>&1 | FileCheck %s

// A forced variant the group cannot run as is refused, naming the variant
// and what it needs; nothing is emitted for it.

// TMA needs 16-byte strides: a matmul's [K, N] B with N % 8 != 0 cannot
// take wgmma.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: TMA + wgmma needs fp16/bf16 operands, K % 8 == 0 and, for a [K, N] B, N % 8 == 0
func.func @wgmma_on_ragged_matmul(%x: tensor<4096x768xf16>, %w: tensor<768x3070xf16>) -> tensor<4096x3070xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<768x3070xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 132>} -> tensor<4096x3070xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x3070xf16>):
    %l = kiln.matmul %a, %bw : (tensor<4096x768xf16>, tensor<768x3070xf16>) -> tensor<4096x3070xf16>
    kiln.yield %l : tensor<4096x3070xf16>
  }
  return %0 : tensor<4096x3070xf16>
}

// -----

// A batch walked by 3-D tensor maps: each operand batched whole or shared
// by every batch, not broadcast along one dimension of two.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: its batch needs each operand batched whole or not at all (one tensor map dimension)
func.func @wgmma_partial_broadcast(%x: tensor<2x1x64x64xf16>, %w: tensor<2x3x64x64xf16>) -> tensor<2x3x64x64xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<2x1x64x64xf16>, tensor<2x3x64x64xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 3, grid_limit = 132>} -> tensor<2x3x64x64xf16> {
  ^bb0(%a: tensor<2x1x64x64xf16>, %bw: tensor<2x3x64x64xf16>):
    %l = kiln.batch_matmul %a, %bw : (tensor<2x1x64x64xf16>, tensor<2x3x64x64xf16>) -> tensor<2x3x64x64xf16>
    kiln.yield %l : tensor<2x3x64x64xf16>
  }
  return %0 : tensor<2x3x64x64xf16>
}

// -----

// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: pairs sharing A take column tiles of one matrix and a [N, K] B: no batch, no [K, N] B
func.func @wgmma_matmul_multicast_a(%x: tensor<4096x768xf16>, %w: tensor<768x3072xf16>) -> tensor<4096x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<768x3072xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 132, multicast = 2, multicast_a = true>} -> tensor<4096x3072xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x3072xf16>):
    %l = kiln.matmul %a, %bw : (tensor<4096x768xf16>, tensor<768x3072xf16>) -> tensor<4096x3072xf16>
    kiln.yield %l : tensor<4096x3072xf16>
  }
  return %0 : tensor<4096x3072xf16>
}

// -----

// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: multicast shares a [N, K] B between row tiles of one matrix: no batch, no [K, N] B
func.func @wgmma_matmul_multicast(%x: tensor<4096x768xf16>, %w: tensor<768x3072xf16>) -> tensor<4096x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<768x3072xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 132, multicast = 2>} -> tensor<4096x3072xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x3072xf16>):
    %l = kiln.matmul %a, %bw : (tensor<4096x768xf16>, tensor<768x3072xf16>) -> tensor<4096x3072xf16>
    kiln.yield %l : tensor<4096x3072xf16>
  }
  return %0 : tensor<4096x3072xf16>
}

// -----

// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: two blocks a multiprocessor take a [N, K] B without a batch
func.func @wgmma_matmul_two_blocks(%x: tensor<4096x768xf16>, %w: tensor<768x3072xf16>) -> tensor<4096x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<768x3072xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 2, grid_limit = 264, blocks_per_sm = 2>} -> tensor<4096x3072xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x3072xf16>):
    %l = kiln.matmul %a, %bw : (tensor<4096x768xf16>, tensor<768x3072xf16>) -> tensor<4096x3072xf16>
    kiln.yield %l : tensor<4096x3072xf16>
  }
  return %0 : tensor<4096x3072xf16>
}

// -----

// The mma.sync template's tile is fixed.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_mma: its template implements the tile [128, 128, 32] only
func.func @mma_tile(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_mma, tile = [64, 64, 32]>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// The Hopper template takes 128, 192 or 256 columns...
// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: its template implements tiles [128 | 192, 56 | 64 | 128 | 192 | 256, 64] only
func.func @wgmma_tile(%x: tensor<4096x768xf16>, %w: tensor<768x768xf16>) -> tensor<4096x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 160, 64], stages = 3, grid_limit = 132>} -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<768x768xf16>) -> tensor<4096x768xf16>
    kiln.yield %l : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}

// -----

// ...and 192 rows only as cooperative tiles at most 192 wide (three
// consumer warpgroups, 96 accumulators a thread).
// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: a 192-row tile is at most 192 wide and cooperative, with no multicast of B, one block a multiprocessor and no stream_k
func.func @wgmma_tall_wide(%x: tensor<4096x768xf16>, %w: tensor<768x768xf16>) -> tensor<4096x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [192, 256, 64], stages = 3, grid_limit = 132>} -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<768x768xf16>) -> tensor<4096x768xf16>
    kiln.yield %l : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}

// -----

// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: a 192-row tile is at most 192 wide and cooperative, with no multicast of B, one block a multiprocessor and no stream_k
func.func @wgmma_tall_pingpong(%x: tensor<4096x768xf16>, %w: tensor<768x768xf16>) -> tensor<4096x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], stages = 3, grid_limit = 132, schedule = pingpong>} -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<768x768xf16>) -> tensor<4096x768xf16>
    kiln.yield %l : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}

// -----

// A row per warp holds at most 1024 elements.
// CHECK: error: 'kiln.fusion' op cannot run as normalization_warp: rows of 2000 elements exceed the 1024 a warp holds in registers
func.func @warp_rows(%x: tensor<3x2000xf32>) -> tensor<3x2000xf32> {
  %0 = kiln.fusion normalization ins(%x : tensor<3x2000xf32>) {kiln.kernel = #kiln.kernel<variant = normalization_warp>} -> tensor<3x2000xf32> {
  ^bb0(%a: tensor<3x2000xf32>):
    %s = kiln.softmax %a dim = 1 : tensor<3x2000xf32>
    kiln.yield %s : tensor<3x2000xf32>
  }
  return %0 : tensor<3x2000xf32>
}

// -----

// A variant of another family.
// CHECK: error: 'kiln.fusion' op of kind 'elementwise' cannot run as gemm_split_k
func.func @family(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kiln.fusion elementwise ins(%a : tensor<4x8xf32>) {kiln.kernel = #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64], stages = 3, split_k = 4>} -> tensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>):
    %1 = kiln.relu %x : tensor<4x8xf32>
    kiln.yield %1 : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

// -----

// Tensor-core attention on fp32.
// CHECK: error: 'kiln.fusion' op cannot run as attention_mma: it needs fp16/bf16, equal head sizes that are multiples of 16, 16-byte aligned q, k and v rows and the tile [64 or 128, 64, head size]
func.func @attention_mma_fp32(%q: tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32> {
  %0 = kiln.fusion attention ins(%q, %q, %q : tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) {kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [64, 64, 64]>} -> tensor<1x12x128x64xf32> {
  ^bb0(%a: tensor<1x12x128x64xf32>, %b: tensor<1x12x128x64xf32>, %c: tensor<1x12x128x64xf32>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32>
    kiln.yield %o : tensor<1x12x128x64xf32>
  }
  return %0 : tensor<1x12x128x64xf32>
}

// -----

// A query tile other than 64 or 128 (16 queries a warp, 4 or 8 warps).
// CHECK: error: 'kiln.fusion' op cannot run as attention_mma: it needs fp16/bf16, equal head sizes that are multiples of 16, 16-byte aligned q, k and v rows and the tile [64 or 128, 64, head size]
func.func @attention_mma_rows(%q: tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16> {
  %0 = kiln.fusion attention ins(%q, %q, %q : tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>) {kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [96, 64, 64]>} -> tensor<1x12x128x64xf16> {
  ^bb0(%a: tensor<1x12x128x64xf16>, %b: tensor<1x12x128x64xf16>, %c: tensor<1x12x128x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16>
    kiln.yield %o : tensor<1x12x128x64xf16>
  }
  return %0 : tensor<1x12x128x64xf16>
}

// -----

// The Hopper attention takes head sizes of 64 and 128 only, and items of
// 64 queries, or 128 at a head size of 64.
// CHECK: error: 'kiln.fusion' op cannot run as attention_wgmma: it needs fp16/bf16, equal head sizes of 64 or 128, the tile [64, 64, head size] or [128, 64, 64], and q, k and v that are 16-byte aligned rows of a matrix a tensor map can read
func.func @attention_wgmma_head32(%q: tensor<1x12x128x32xf16>) -> tensor<1x12x128x32xf16> {
  %0 = kiln.fusion attention ins(%q, %q, %q : tensor<1x12x128x32xf16>, tensor<1x12x128x32xf16>, tensor<1x12x128x32xf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 32]>} -> tensor<1x12x128x32xf16> {
  ^bb0(%a: tensor<1x12x128x32xf16>, %b: tensor<1x12x128x32xf16>, %c: tensor<1x12x128x32xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.17677669529663687 : (tensor<1x12x128x32xf16>, tensor<1x12x128x32xf16>, tensor<1x12x128x32xf16>) -> tensor<1x12x128x32xf16>
    kiln.yield %o : tensor<1x12x128x32xf16>
  }
  return %0 : tensor<1x12x128x32xf16>
}

// -----

// CHECK: error: 'kiln.fusion' op cannot run as attention_wgmma: it needs fp16/bf16, equal head sizes of 64 or 128, the tile [64, 64, head size] or [128, 64, 64]
func.func @attention_wgmma_192_queries(%q: tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16> {
  %0 = kiln.fusion attention ins(%q, %q, %q : tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [192, 64, 64]>} -> tensor<1x12x128x64xf16> {
  ^bb0(%a: tensor<1x12x128x64xf16>, %b: tensor<1x12x128x64xf16>, %c: tensor<1x12x128x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16>
    kiln.yield %o : tensor<1x12x128x64xf16>
  }
  return %0 : tensor<1x12x128x64xf16>
}

// -----

// The overlapped Hopper attention with a float mask per score spills (the
// selection stage keeps such groups cooperative); forced, it is refused
// before NVRTC. With a padding mask it is accepted (attention-wgmma.mlir).
// CHECK: error: 'kiln.fusion' op cannot run as attention_wgmma with the overlapped schedule: with a float mask per score it spills (take the cooperative schedule)
func.func @attention_overlapped_position_bias(%q: tensor<1x12x197x64xf16>, %m: tensor<197x197xf16>) -> tensor<1x12x197x64xf16> {
  %0 = kiln.fusion attention ins(%q, %q, %q, %m : tensor<1x12x197x64xf16>, tensor<1x12x197x64xf16>, tensor<1x12x197x64xf16>, tensor<197x197xf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], schedule = overlapped>} -> tensor<1x12x197x64xf16> {
  ^bb0(%a: tensor<1x12x197x64xf16>, %b: tensor<1x12x197x64xf16>, %c: tensor<1x12x197x64xf16>, %d: tensor<197x197xf16>):
    %o = kiln.attention %a, %b, %c mask %d scale = 0.125 : (tensor<1x12x197x64xf16>, tensor<1x12x197x64xf16>, tensor<1x12x197x64xf16>, tensor<197x197xf16>) -> tensor<1x12x197x64xf16>
    kiln.yield %o : tensor<1x12x197x64xf16>
  }
  return %0 : tensor<1x12x197x64xf16>
}

// -----

// A 3x3 convolution is not depthwise.
// CHECK: error: 'kiln.fusion' op cannot run as conv_depthwise: conv_depthwise needs one filter per channel
func.func @not_depthwise(%x: tensor<1x7x7x512xf16>, %w: tensor<512x3x3x512xf16>, %b: tensor<512xf16>) -> tensor<1x7x7x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<1x7x7x512xf16>, tensor<512x3x3x512xf16>, tensor<512xf16>) {kiln.kernel = #kiln.kernel<variant = conv_depthwise, grid_limit = 2112>} -> tensor<1x7x7x512xf16> {
  ^bb0(%ax: tensor<1x7x7x512xf16>, %aw: tensor<512x3x3x512xf16>, %ab: tensor<512xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<1x7x7x512xf16>, tensor<512x3x3x512xf16>, tensor<512xf16>) -> tensor<1x7x7x512xf16>
    kiln.yield %y : tensor<1x7x7x512xf16>
  }
  return %0 : tensor<1x7x7x512xf16>
}

// -----

// The attribute's own verifier: a cluster of 3 blocks.
// CHECK: error: split_k must be 1, 2, 4 or 8, got 3
func.func @split3(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64], stages = 3, split_k = 3>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// conv_stem holds the whole weight in static shared memory: 200 output
// channels are past its 128.
// CHECK: error: 'kiln.fusion' op cannot run as conv_stem: conv_stem needs fp16 or bf16 operands, one group and at most 128 output channels
func.func @stem_wide(%x: tensor<1x16x16x3xf16>, %w: tensor<200x3x3x3xf16>) -> tensor<1x16x16x200xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x16x16x3xf16>, tensor<200x3x3x3xf16>) {kiln.kernel = #kiln.kernel<variant = conv_stem, tile = [64, 208, 32], grid_limit = 528>} -> tensor<1x16x16x200xf16> {
  ^bb0(%a: tensor<1x16x16x3xf16>, %aw: tensor<200x3x3x3xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<1x16x16x3xf16>, tensor<200x3x3x3xf16>) -> tensor<1x16x16x200xf16>
    kiln.yield %y : tensor<1x16x16x200xf16>
  }
  return %0 : tensor<1x16x16x200xf16>
}

// -----

// A forced conv_stem tile names the K its path runs: ResNet's 7x7 stem reads
// 7 input rows, 21 of K each padded to 32, not 147 padded to 160.
// CHECK: error: 'kiln.fusion' op cannot run as conv_stem: conv_stem's tile is [128, 64, 224] here (output positions, output channels and K rounded up to 16 a filter row)
func.func @stem_tile(%x: tensor<1x64x64x3xf16>, %w: tensor<64x7x7x3xf16>) -> tensor<1x32x32x64xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x64x64x3xf16>, tensor<64x7x7x3xf16>) {kiln.kernel = #kiln.kernel<variant = conv_stem, tile = [64, 64, 160], grid_limit = 528>} -> tensor<1x32x32x64xf16> {
  ^bb0(%a: tensor<1x64x64x3xf16>, %aw: tensor<64x7x7x3xf16>):
    %y = kiln.conv2d %a, %aw strides = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] groups = 1 : (tensor<1x64x64x3xf16>, tensor<64x7x7x3xf16>) -> tensor<1x32x32x64xf16>
    kiln.yield %y : tensor<1x32x32x64xf16>
  }
  return %0 : tensor<1x32x32x64xf16>
}

// -----

// The stem on input rows: as many blocks a multiprocessor as its shared
// memory allows (ResNet's stem takes 70528 bytes: three).
// CHECK: error: 'kiln.fusion' op cannot run as conv_stem: its shared memory (70528 bytes) allows at most 3 blocks a multiprocessor, not 4
func.func @stem_blocks(%x: tensor<1x64x64x3xf16>, %w: tensor<64x7x7x3xf16>) -> tensor<1x32x32x64xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x64x64x3xf16>, tensor<64x7x7x3xf16>) {kiln.kernel = #kiln.kernel<variant = conv_stem, tile = [128, 64, 224], grid_limit = 528, blocks_per_sm = 4>} -> tensor<1x32x32x64xf16> {
  ^bb0(%a: tensor<1x64x64x3xf16>, %aw: tensor<64x7x7x3xf16>):
    %y = kiln.conv2d %a, %aw strides = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] groups = 1 : (tensor<1x64x64x3xf16>, tensor<64x7x7x3xf16>) -> tensor<1x32x32x64xf16>
    kiln.yield %y : tensor<1x32x32x64xf16>
  }
  return %0 : tensor<1x32x32x64xf16>
}

// -----

// Over an im2col tile the stem's blocks a multiprocessor follow from its
// output channels, not from the configuration.
// CHECK: error: 'kiln.fusion' op cannot run as conv_stem: over an im2col tile its blocks a multiprocessor follow from O: blocks_per_sm = 1
func.func @stem_im2col_blocks(%x: tensor<8x9x9x3xf16>, %w: tensor<16x3x3x3xf16>) -> tensor<8x9x9x16xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<8x9x9x3xf16>, tensor<16x3x3x3xf16>) {kiln.kernel = #kiln.kernel<variant = conv_stem, tile = [64, 16, 32], grid_limit = 528, blocks_per_sm = 2>} -> tensor<8x9x9x16xf16> {
  ^bb0(%a: tensor<8x9x9x3xf16>, %aw: tensor<16x3x3x3xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<8x9x9x3xf16>, tensor<16x3x3x3xf16>) -> tensor<8x9x9x16xf16>
    kiln.yield %y : tensor<8x9x9x16xf16>
  }
  return %0 : tensor<8x9x9x16xf16>
}

// -----

// Over 5 channels at stride 1 the stem gathers im2col rows (a window
// starts 10 bytes after its neighbour): K = 245 padded to 256, and the
// weight with 64 rows of im2col no longer fit in 48 KiB of static shared
// memory.
// CHECK: error: 'kiln.fusion' op cannot run as conv_stem: its weight and im2col tile do not fit in 48 KiB of shared memory
func.func @stem_deep(%x: tensor<1x16x16x5xf16>, %w: tensor<128x7x7x5xf16>) -> tensor<1x16x16x128xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x16x16x5xf16>, tensor<128x7x7x5xf16>) {kiln.kernel = #kiln.kernel<variant = conv_stem, tile = [64, 128, 256], grid_limit = 528>} -> tensor<1x16x16x128xf16> {
  ^bb0(%a: tensor<1x16x16x5xf16>, %aw: tensor<128x7x7x5xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [3, 3, 3, 3] dilation = [1, 1] groups = 1 : (tensor<1x16x16x5xf16>, tensor<128x7x7x5xf16>) -> tensor<1x16x16x128xf16>
    kiln.yield %y : tensor<1x16x16x128xf16>
  }
  return %0 : tensor<1x16x16x128xf16>
}

// -----

// On rows of 6 channels an 11x11 filter's weight alone (128 x 888 halves)
// is past the 227 KiB a block may have.
// CHECK: error: 'kiln.fusion' op cannot run as conv_stem: its weight, input rows and results do not fit in 227 KiB of shared memory
func.func @stem_wide_rows(%x: tensor<1x32x32x6xf16>, %w: tensor<128x11x11x6xf16>) -> tensor<1x32x32x128xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x32x32x6xf16>, tensor<128x11x11x6xf16>) {kiln.kernel = #kiln.kernel<variant = conv_stem, tile = [128, 128, 880], grid_limit = 264>} -> tensor<1x32x32x128xf16> {
  ^bb0(%a: tensor<1x32x32x6xf16>, %aw: tensor<128x11x11x6xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [5, 5, 5, 5] dilation = [1, 1] groups = 1 : (tensor<1x32x32x6xf16>, tensor<128x11x11x6xf16>) -> tensor<1x32x32x128xf16>
    kiln.yield %y : tensor<1x32x32x128xf16>
  }
  return %0 : tensor<1x32x32x128xf16>
}

// -----

// Eight channels a thread need C % 8 == 0.
// CHECK: error: 'kiln.fusion' op cannot run as conv_depthwise: 8 channels a thread need fp16 or bf16, one filter per channel, C % 8 == 0 and an NHWC input
func.func @dw_vector_odd(%x: tensor<1x8x8x12xf16>, %w: tensor<12x3x3x1xf16>) -> tensor<1x8x8x12xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x8x8x12xf16>, tensor<12x3x3x1xf16>) {kiln.kernel = #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 2112>} -> tensor<1x8x8x12xf16> {
  ^bb0(%a: tensor<1x8x8x12xf16>, %aw: tensor<12x3x3x1xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 12 : (tensor<1x8x8x12xf16>, tensor<12x3x3x1xf16>) -> tensor<1x8x8x12xf16>
    kiln.yield %y : tensor<1x8x8x12xf16>
  }
  return %0 : tensor<1x8x8x12xf16>
}

// -----

// A patch of outputs takes one column a thread.
// CHECK: error: 'kiln.fusion' op cannot run as conv_depthwise: a pixel tile takes 8 channels of one output column a thread (tile [1, 8, 1]) and patches of one image ([1, rows, columns])
func.func @dw_patch_columns(%x: tensor<1x8x8x16xf16>, %w: tensor<16x3x3x1xf16>) -> tensor<1x8x8x16xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x8x8x16xf16>, tensor<16x3x3x1xf16>) {kiln.kernel = #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 2], grid_limit = 2112, pixel_tile = [1, 4, 8]>} -> tensor<1x8x8x16xf16> {
  ^bb0(%a: tensor<1x8x8x16xf16>, %aw: tensor<16x3x3x1xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 16 : (tensor<1x8x8x16xf16>, tensor<16x3x3x1xf16>) -> tensor<1x8x8x16xf16>
    kiln.yield %y : tensor<1x8x8x16xf16>
  }
  return %0 : tensor<1x8x8x16xf16>
}

// -----

// A patch whose input window and filters pass the static shared memory:
// 8 x 16 outputs of a 7 x 7 stride-2 window read 21 x 37 pixels of 128
// channels.
// CHECK: error: 'kiln.fusion' op cannot run as conv_depthwise: a patch of 8 x 16 outputs: its input window and filters take 211456 bytes of shared memory, past the 49152 a kernel has statically
func.func @dw_patch_large(%x: tensor<1x56x56x128xf16>, %w: tensor<128x7x7x1xf16>) -> tensor<1x28x28x128xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x56x56x128xf16>, tensor<128x7x7x1xf16>) {kiln.kernel = #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 2112, pixel_tile = [1, 8, 16]>} -> tensor<1x28x28x128xf16> {
  ^bb0(%a: tensor<1x56x56x128xf16>, %aw: tensor<128x7x7x1xf16>):
    %y = kiln.conv2d %a, %aw strides = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] groups = 128 : (tensor<1x56x56x128xf16>, tensor<128x7x7x1xf16>) -> tensor<1x28x28x128xf16>
    kiln.yield %y : tensor<1x28x28x128xf16>
  }
  return %0 : tensor<1x28x28x128xf16>
}

// -----

// A reduction split over a cluster reads the group's input raw.
// CHECK: error: 'kiln.fusion' op cannot run as a reduction split over 8 blocks: it needs a group input reduced over a middle run of dimensions whose inner size is a whole number of 16-byte vectors (at most 256)
func.func @split_with_prologue(%x: tensor<32x56x56x96xf16>) -> tensor<32x1x1x96xf16> {
  %0 = kiln.fusion reduction ins(%x : tensor<32x56x56x96xf16>) {kiln.kernel = #kiln.kernel<variant = reduction, split_k = 8, grid_limit = 2112>} -> tensor<32x1x1x96xf16> {
  ^bb0(%a: tensor<32x56x56x96xf16>):
    %s = kiln.sigmoid %a : tensor<32x56x56x96xf16>
    %r = kiln.reduce_mean %s dims = [1, 2] keepdim : tensor<32x56x56x96xf16> -> tensor<32x1x1x96xf16>
    kiln.yield %r : tensor<32x1x1x96xf16>
  }
  return %0 : tensor<32x1x1x96xf16>
}

// -----

// tf32 rounds the operands: only a GEMM that allows it (kiln.tf32, from
// --precision tf32) may run as gemm_tf32.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_tf32: the GEMM's operands may not be rounded to tf32 (its op lacks kiln.tf32: compile with --precision tf32)
func.func @tf32_unmarked(%x: tensor<64x32xf32>, %w: tensor<16x32xf32>) -> tensor<64x16xf32> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<64x32xf32>, tensor<16x32xf32>) {kiln.kernel = #kiln.kernel<variant = gemm_tf32, tile = [128, 128, 16]>} -> tensor<64x16xf32> {
  ^bb0(%a: tensor<64x32xf32>, %bw: tensor<16x32xf32>):
    %l = kiln.linear %a, %bw : (tensor<64x32xf32>, tensor<16x32xf32>) -> tensor<64x16xf32>
    kiln.yield %l : tensor<64x16xf32>
  }
  return %0 : tensor<64x16xf32>
}

// -----

// ... and on fp32 data: half-precision operands take mma.sync, not tf32.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_tf32: the tf32 GEMM reads fp32 operands
func.func @tf32_on_half(%x: tensor<64x32xf16>, %w: tensor<16x32xf16>) -> tensor<64x16xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<64x32xf16>, tensor<16x32xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_tf32, tile = [128, 128, 16]>} -> tensor<64x16xf16> {
  ^bb0(%a: tensor<64x32xf16>, %bw: tensor<16x32xf16>):
    %l = kiln.linear %a, %bw {kiln.tf32} : (tensor<64x32xf16>, tensor<16x32xf16>) -> tensor<64x16xf16>
    kiln.yield %l : tensor<64x16xf16>
  }
  return %0 : tensor<64x16xf16>
}

// -----

// A ping-pong warpgroup holds a whole tile's accumulators: 128 wide at most.
// CHECK: error: a ping-pong tile is 64 or 128 wide, got 256
func.func @pingpong_wide(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 2, schedule = pingpong>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// Only the Hopper main loop has consumer warpgroups to schedule.
// CHECK: error: only gemm_wgmma and conv_wgmma have a ping-pong schedule
func.func @pingpong_mma(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_mma, tile = [128, 128, 32], schedule = pingpong>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// attention_wgmma's ring: 3 stages only at a head size of 64 (two blocks
// a multiprocessor at 128 hold 2).
// CHECK: error: attention_wgmma's ring takes 2 stages, or 3 at a head size of 64, got 3
func.func @attention_three_stages_head_128(%q: tensor<1x2x100x128xf16>) -> tensor<1x2x100x128xf16> {
  %0 = kiln.fusion attention ins(%q, %q, %q : tensor<1x2x100x128xf16>, tensor<1x2x100x128xf16>, tensor<1x2x100x128xf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 128], stages = 3>} -> tensor<1x2x100x128xf16> {
  ^bb0(%a: tensor<1x2x100x128xf16>, %b: tensor<1x2x100x128xf16>, %c: tensor<1x2x100x128xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.088 : (tensor<1x2x100x128xf16>, tensor<1x2x100x128xf16>, tensor<1x2x100x128xf16>) -> tensor<1x2x100x128xf16>
    kiln.yield %o : tensor<1x2x100x128xf16>
  }
  return %0 : tensor<1x2x100x128xf16>
}

// -----

// The overlapped schedule is attention_wgmma's (softmax beside P V).
// CHECK: error: only attention_wgmma has an overlapped schedule
func.func @overlapped_gemm(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], schedule = overlapped>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// The epilogue warpgroups: a GEMM's schedule, 128 rows by 64 or 128 (five
// warpgroups share the register file), one block a multiprocessor and no
// pairs; 4 stages of 128-wide tiles beside the handoff overflow shared
// memory.
// CHECK: error: only gemm_wgmma has an epilogue_warpgroups schedule
func.func @epilogue_warpgroups_attention(%q: tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16> {
  %0 = kiln.fusion attention ins(%q, %q, %q : tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], schedule = epilogue_warpgroups>} -> tensor<1x12x128x64xf16> {
  ^bb0(%a: tensor<1x12x128x64xf16>, %b: tensor<1x12x128x64xf16>, %c: tensor<1x12x128x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16>
    kiln.yield %o : tensor<1x12x128x64xf16>
  }
  return %0 : tensor<1x12x128x64xf16>
}

// -----

// CHECK: error: an epilogue_warpgroups tile is 64 or 128 wide, got 256
func.func @epilogue_warpgroups_wide(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 2, grid_limit = 2, schedule = epilogue_warpgroups>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// CHECK: error: an epilogue_warpgroups tile has 128 rows, got 192
func.func @epilogue_warpgroups_tall_narrow(%x: tensor<300x768xf16>, %w: tensor<768x768xf16>) -> tensor<300x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<300x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [192, 64, 64], stages = 3, grid_limit = 4, schedule = epilogue_warpgroups>} -> tensor<300x768xf16> {
  ^bb0(%a: tensor<300x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x768xf16>, tensor<768x768xf16>) -> tensor<300x768xf16>
    %g = kiln.gelu %l : tensor<300x768xf16>
    kiln.yield %g : tensor<300x768xf16>
  }
  return %0 : tensor<300x768xf16>
}

// -----

// CHECK: error: the epilogue_warpgroups schedule takes no multicast, one block a multiprocessor and no stream_k
func.func @epilogue_warpgroups_pairs(%x: tensor<300x768xf16>, %w: tensor<768x768xf16>) -> tensor<300x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<300x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 3, grid_limit = 4, schedule = epilogue_warpgroups, multicast = 2>} -> tensor<300x768xf16> {
  ^bb0(%a: tensor<300x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x768xf16>, tensor<768x768xf16>) -> tensor<300x768xf16>
    kiln.yield %l : tensor<300x768xf16>
  }
  return %0 : tensor<300x768xf16>
}

// -----

// CHECK: error: 'kiln.fusion' op needs 234496 bytes of dynamic shared memory in its sm_90a image, which grants a block at most 232448
func.func @epilogue_warpgroups_deep(%x: tensor<300x768xf16>, %w: tensor<768x768xf16>) -> tensor<300x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<300x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 4, grid_limit = 4, schedule = epilogue_warpgroups>} -> tensor<300x768xf16> {
  ^bb0(%a: tensor<300x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x768xf16>, tensor<768x768xf16>) -> tensor<300x768xf16>
    kiln.yield %l : tensor<300x768xf16>
  }
  return %0 : tensor<300x768xf16>
}

// -----

// Two blocks a multiprocessor compile within 80 registers a thread: a
// 128-wide tile's accumulators do not fit.
// CHECK: error: two blocks a multiprocessor take cooperative 64-wide tiles
func.func @two_blocks_wide(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 2, grid_limit = 2, blocks_per_sm = 2>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// A multicast pair launches whole clusters: a grid of one block would have
// none.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: the persistent grid needs a grid_limit (blocks at most) of one cluster or more
func.func @pair_in_one_block(%x: tensor<300x768xf16>, %w: tensor<768x768xf16>) -> tensor<300x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<300x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 1, multicast = 2>} -> tensor<300x768xf16> {
  ^bb0(%a: tensor<300x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x768xf16>, tensor<768x768xf16>) -> tensor<300x768xf16>
    kiln.yield %l : tensor<300x768xf16>
  }
  return %0 : tensor<300x768xf16>
}

// -----

// Pooling takes no tile or [1, 8, 1].
// CHECK: error: 'kiln.fusion' op cannot run as pooling: it takes no tile (a thread per element) or [1, 8, 1] (8 channels a thread)
func.func @pool_tile(%x: tensor<2x9x9x16xf16>) -> tensor<2x5x5x16xf16> {
  %0 = kiln.fusion pooling ins(%x : tensor<2x9x9x16xf16>) {kiln.kernel = #kiln.kernel<variant = pooling, tile = [1, 4, 1], grid_limit = 2112>} -> tensor<2x5x5x16xf16> {
  ^bb0(%a: tensor<2x9x9x16xf16>):
    %p = kiln.pool2d %a max kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] : tensor<2x9x9x16xf16> -> tensor<2x5x5x16xf16>
    kiln.yield %p : tensor<2x5x5x16xf16>
  }
  return %0 : tensor<2x5x5x16xf16>
}

// -----

// Eight channels a thread need 2-byte elements and whole 16-byte vectors.
// CHECK: error: 'kiln.fusion' op cannot run as pooling: 8 channels a thread need fp16 or bf16 and C % 8 == 0
func.func @pool_f32(%x: tensor<2x9x9x16xf32>) -> tensor<2x5x5x16xf32> {
  %0 = kiln.fusion pooling ins(%x : tensor<2x9x9x16xf32>) {kiln.kernel = #kiln.kernel<variant = pooling, tile = [1, 8, 1], grid_limit = 2112>} -> tensor<2x5x5x16xf32> {
  ^bb0(%a: tensor<2x9x9x16xf32>):
    %p = kiln.pool2d %a max kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] : tensor<2x9x9x16xf32> -> tensor<2x5x5x16xf32>
    kiln.yield %p : tensor<2x5x5x16xf32>
  }
  return %0 : tensor<2x5x5x16xf32>
}

// -----

// CHECK: error: 'kiln.fusion' op cannot run as pooling: 8 channels a thread need fp16 or bf16 and C % 8 == 0
func.func @pool_c12(%x: tensor<2x9x9x12xf16>) -> tensor<2x5x5x12xf16> {
  %0 = kiln.fusion pooling ins(%x : tensor<2x9x9x12xf16>) {kiln.kernel = #kiln.kernel<variant = pooling, tile = [1, 8, 1], grid_limit = 2112>} -> tensor<2x5x5x12xf16> {
  ^bb0(%a: tensor<2x9x9x12xf16>):
    %p = kiln.pool2d %a max kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] : tensor<2x9x9x12xf16> -> tensor<2x5x5x12xf16>
    kiln.yield %p : tensor<2x5x5x12xf16>
  }
  return %0 : tensor<2x5x5x12xf16>
}

// -----

// gemm_narrow keeps the weight in shared memory as fp32: at most 24 KiB,
// beside its staging tiles (256 x 64 is 64 KiB).
// CHECK: error: 'kiln.fusion' op cannot run as gemm_narrow: a thread per row takes fp16/bf16 operands, a [N, K] B, K % 8 == 0, K <= 128, N % 4 == 0 and a K x N fp32 weight within 24 KiB
func.func @narrow_wide(%x: tensor<300x64xf16>, %w: tensor<256x64xf16>) -> tensor<300x256xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<300x64xf16>, tensor<256x64xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_narrow, grid_limit = 4>} -> tensor<300x256xf16> {
  ^bb0(%a: tensor<300x64xf16>, %bw: tensor<256x64xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x64xf16>, tensor<256x64xf16>) -> tensor<300x256xf16>
    kiln.yield %l : tensor<300x256xf16>
  }
  return %0 : tensor<300x256xf16>
}

// -----

// CHECK: error: 'kiln.fusion' op cannot run as gemm_narrow: it takes no tile (a thread per row)
func.func @narrow_tile(%x: tensor<300x64xf16>, %w: tensor<16x64xf16>) -> tensor<300x16xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<300x64xf16>, tensor<16x64xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_narrow, tile = [128, 16, 64], grid_limit = 4>} -> tensor<300x16xf16> {
  ^bb0(%a: tensor<300x64xf16>, %bw: tensor<16x64xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x64xf16>, tensor<16x64xf16>) -> tensor<300x16xf16>
    kiln.yield %l : tensor<300x16xf16>
  }
  return %0 : tensor<300x16xf16>
}

// -----

// CHECK: error: 'kiln.fusion' op cannot run as gemm_narrow: its grid-stride loop needs a grid_limit (blocks at most)
func.func @narrow_unbounded(%x: tensor<300x64xf16>, %w: tensor<16x64xf16>) -> tensor<300x16xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<300x64xf16>, tensor<16x64xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_narrow>} -> tensor<300x16xf16> {
  ^bb0(%a: tensor<300x64xf16>, %bw: tensor<16x64xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x64xf16>, tensor<16x64xf16>) -> tensor<300x16xf16>
    kiln.yield %l : tensor<300x16xf16>
  }
  return %0 : tensor<300x16xf16>
}

// -----

// gemm_gemv keeps its rows' partial sums in a warp per 8 rows, four warps
// at most.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_gemv: a block per column takes fp16/bf16 operands, a [N, K] B and at most 32 rows
func.func @gemv_rows(%x: tensor<33x64xf16>, %w: tensor<16x64xf16>) -> tensor<33x16xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<33x64xf16>, tensor<16x64xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_gemv>} -> tensor<33x16xf16> {
  ^bb0(%a: tensor<33x64xf16>, %bw: tensor<16x64xf16>):
    %l = kiln.linear %a, %bw : (tensor<33x64xf16>, tensor<16x64xf16>) -> tensor<33x16xf16>
    kiln.yield %l : tensor<33x16xf16>
  }
  return %0 : tensor<33x16xf16>
}

// -----

// CHECK: error: 'kiln.fusion' op cannot run as gemm_gemv: it takes no tile (a block per column)
func.func @gemv_tile(%x: tensor<8x64xf16>, %w: tensor<16x64xf16>) -> tensor<8x16xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<8x64xf16>, tensor<16x64xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_gemv, tile = [64, 64, 64]>} -> tensor<8x16xf16> {
  ^bb0(%a: tensor<8x64xf16>, %bw: tensor<16x64xf16>):
    %l = kiln.linear %a, %bw : (tensor<8x64xf16>, tensor<16x64xf16>) -> tensor<8x16xf16>
    kiln.yield %l : tensor<8x16xf16>
  }
  return %0 : tensor<8x16xf16>
}

// -----

// Three output columns a thread is not a tile the kernel implements.
// CHECK: error: 'kiln.fusion' op cannot run as conv_depthwise: conv_depthwise takes no tile (a thread per element) or [1, 8, P] (8 channels of P = 1, 2 or 4 adjacent output columns a thread)
func.func @depthwise_three_columns(%x: tensor<1x8x8x16xf16>, %w: tensor<16x3x3x1xf16>) -> tensor<1x8x8x16xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x8x8x16xf16>, tensor<16x3x3x1xf16>) {kiln.kernel = #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 3], grid_limit = 2112>} -> tensor<1x8x8x16xf16> {
  ^bb0(%a: tensor<1x8x8x16xf16>, %aw: tensor<16x3x3x1xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 16 : (tensor<1x8x8x16xf16>, tensor<16x3x3x1xf16>) -> tensor<1x8x8x16xf16>
    kiln.yield %y : tensor<1x8x8x16xf16>
  }
  return %0 : tensor<1x8x8x16xf16>
}

// -----

// An elementwise kernel takes 2, 4 or 8 elements a thread a step.
// CHECK: error: 'kiln.fusion' op cannot run as elementwise: it takes no tile (an element a thread a step) or [1, U, 1], U = 2, 4 or 8 elements a thread a step
func.func @elementwise_three(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %0 = kiln.fusion elementwise ins(%x : tensor<8x16xf16>) {kiln.kernel = #kiln.kernel<variant = elementwise, tile = [1, 3, 1], grid_limit = 4>} -> tensor<8x16xf16> {
  ^bb0(%a: tensor<8x16xf16>):
    %r = kiln.relu %a : tensor<8x16xf16>
    kiln.yield %r : tensor<8x16xf16>
  }
  return %0 : tensor<8x16xf16>
}

// -----

// Stream-K is written for the cooperative schedule on one block a
// multiprocessor without clusters: a ping-pong tile is refused.
// CHECK: error: stream_k takes gemm_wgmma or conv_wgmma with the cooperative schedule, no multicast and one block a multiprocessor
func.func @stream_k_pingpong(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 2, grid_limit = 2, schedule = pingpong, stream_k = true>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// Its workspace opens with 1024 flags, one a block.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: stream_k takes a grid_limit of at most 1024 (its workspace's flags)
func.func @stream_k_grid(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 2, grid_limit = 2000, stream_k = true>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// The streaming GEMM stores rows in 16-byte vectors: N % 8 == 0.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_stream: streaming A past a resident weight takes fp16/bf16 operands, a [N, K] B, K % 8 == 0 and N % 8 == 0, both at most 256, and no batch
func.func @stream_columns(%x: tensor<1000x24xf16>, %w: tensor<20x24xf16>) -> tensor<1000x20xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<1000x24xf16>, tensor<20x24xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_stream, tile = [128, 64, 32], stages = 2, grid_limit = 8, blocks_per_sm = 2>} -> tensor<1000x20xf16> {
  ^bb0(%a: tensor<1000x24xf16>, %bw: tensor<20x24xf16>):
    %l = kiln.linear %a, %bw : (tensor<1000x24xf16>, tensor<20x24xf16>) -> tensor<1000x20xf16>
    kiln.yield %l : tensor<1000x20xf16>
  }
  return %0 : tensor<1000x20xf16>
}

// -----

// Its tile's k is K padded to 16 (24 -> 32).
// CHECK: error: 'kiln.fusion' op cannot run as gemm_stream: its template implements the tile [128, 64, 32] only
func.func @stream_tile_k(%x: tensor<1000x24xf16>, %w: tensor<24x24xf16>) -> tensor<1000x24xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<1000x24xf16>, tensor<24x24xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_stream, tile = [128, 64, 64], stages = 2, grid_limit = 8, blocks_per_sm = 2>} -> tensor<1000x24xf16> {
  ^bb0(%a: tensor<1000x24xf16>, %bw: tensor<24x24xf16>):
    %l = kiln.linear %a, %bw : (tensor<1000x24xf16>, tensor<24x24xf16>) -> tensor<1000x24xf16>
    kiln.yield %l : tensor<1000x24xf16>
  }
  return %0 : tensor<1000x24xf16>
}

// -----

// Two blocks of the whole 256 x 256 weight and two stages do not fit a
// multiprocessor's shared memory.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_stream: 2 blocks of 307200 bytes of shared memory do not fit a multiprocessor
func.func @stream_shared(%x: tensor<1000x256xf16>, %w: tensor<256x256xf16>) -> tensor<1000x256xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<1000x256xf16>, tensor<256x256xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_stream, tile = [128, 64, 256], stages = 2, grid_limit = 8, blocks_per_sm = 2>} -> tensor<1000x256xf16> {
  ^bb0(%a: tensor<1000x256xf16>, %bw: tensor<256x256xf16>):
    %l = kiln.linear %a, %bw : (tensor<1000x256xf16>, tensor<256x256xf16>) -> tensor<1000x256xf16>
    kiln.yield %l : tensor<1000x256xf16>
  }
  return %0 : tensor<1000x256xf16>
}

// -----

// Its grid-stride loop needs a grid_limit.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_stream: its grid-stride loop needs a grid_limit (blocks at most)
func.func @stream_grid(%x: tensor<1000x24xf16>, %w: tensor<24x24xf16>) -> tensor<1000x24xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<1000x24xf16>, tensor<24x24xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_stream, tile = [128, 64, 32], stages = 2, blocks_per_sm = 2>} -> tensor<1000x24xf16> {
  ^bb0(%a: tensor<1000x24xf16>, %bw: tensor<24x24xf16>):
    %l = kiln.linear %a, %bw : (tensor<1000x24xf16>, tensor<24x24xf16>) -> tensor<1000x24xf16>
    kiln.yield %l : tensor<1000x24xf16>
  }
  return %0 : tensor<1000x24xf16>
}

// -----

// Sizes at run time cannot hold an epilogue that indexes an input by the
// result's shape: a per-sequence column scale (a row's or a column's value
// is read at the functor's m or n, which name no size).
// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: sizes at run time: its epilogue indexes an input by the result's shape (a broadcast or a data movement), which would name the sizes
func.func @runtime_sizes_broadcast(%x: tensor<2x2048x1024xf16>, %w: tensor<4096x1024xf16>, %s: tensor<2x1x4096xf16>) -> tensor<2x2048x4096xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %s : tensor<2x2048x1024xf16>, tensor<4096x1024xf16>, tensor<2x1x4096xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 132, runtime_sizes = true>} -> tensor<2x2048x4096xf16> {
  ^bb0(%a: tensor<2x2048x1024xf16>, %bw: tensor<4096x1024xf16>, %bs: tensor<2x1x4096xf16>):
    %l = kiln.linear %a, %bw : (tensor<2x2048x1024xf16>, tensor<4096x1024xf16>) -> tensor<2x2048x4096xf16>
    %m = kiln.mul %l, %bs : tensor<2x2048x4096xf16>, tensor<2x1x4096xf16> -> tensor<2x2048x4096xf16>
    kiln.yield %m : tensor<2x2048x4096xf16>
  }
  return %0 : tensor<2x2048x4096xf16>
}

// -----

// Nor an N that is not a multiple of 8 (the epilogue would check it).
// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: sizes at run time take gemm_wgmma or gemm_split_k, no batch and N % 8 == 0
func.func @runtime_sizes_odd_n(%x: tensor<4096x1024xf16>, %w: tensor<1001x1024xf16>) -> tensor<4096x1001xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x1024xf16>, tensor<1001x1024xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 132, runtime_sizes = true>} -> tensor<4096x1001xf16> {
  ^bb0(%a: tensor<4096x1024xf16>, %bw: tensor<1001x1024xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x1024xf16>, tensor<1001x1024xf16>) -> tensor<4096x1001xf16>
    kiln.yield %l : tensor<4096x1001xf16>
  }
  return %0 : tensor<4096x1001xf16>
}

// -----

// A normalization's rows at launch cannot hold an input indexed by the row.
// CHECK: error: 'kiln.fusion' op cannot run as normalization_warp with its rows given at launch: an input is indexed by the row (a broadcast or a data movement), which would name the row count
func.func @runtime_rows_broadcast(%x: tensor<64x256xf16>, %s: tensor<64x1xf16>) -> tensor<64x256xf16> {
  %0 = kiln.fusion normalization ins(%x, %s : tensor<64x256xf16>, tensor<64x1xf16>) {kiln.kernel = #kiln.kernel<variant = normalization_warp, runtime_sizes = true>} -> tensor<64x256xf16> {
  ^bb0(%a: tensor<64x256xf16>, %as: tensor<64x1xf16>):
    %y = kiln.layer_norm %a axis = 1 eps = 1.0e-05 : (tensor<64x256xf16>) -> tensor<64x256xf16>
    %z = kiln.mul %y, %as : tensor<64x256xf16>, tensor<64x1xf16> -> tensor<64x256xf16>
    kiln.yield %z : tensor<64x256xf16>
  }
  return %0 : tensor<64x256xf16>
}

// -----

// K split over a cluster takes the cooperative schedule (each block keeps
// one consumer's 64 rows): a ping-pong tile is refused.
// CHECK: error: gemm_wgmma and conv_wgmma split K over clusters of two blocks: cooperative 128-row tiles at most 128 wide, no multicast, one block a multiprocessor, no stream_k and sizes in the source
func.func @split_k_pingpong(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 2, split_k = 2, grid_limit = 12, schedule = pingpong>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// At most 128 wide: beside the split's own registers, a 192-wide tile's 96
// accumulators spilled a residual epilogue.
// CHECK: error: gemm_wgmma and conv_wgmma split K over clusters of two blocks: cooperative 128-row tiles at most 128 wide
func.func @split_k_wide(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 2, split_k = 2, grid_limit = 6>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// A pair is one cluster: a grid_limit of one block would launch none.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: the persistent grid needs a grid_limit (blocks at most) of one cluster or more
func.func @split_k_one_block(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 2, split_k = 2, grid_limit = 1>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// matmul's [K, N] B takes the batched path, which splits no K.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: the Hopper loop splits K for a [N, K] B without a batch only
func.func @split_k_matmul(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 2, split_k = 2, grid_limit = 12>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.matmul %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// The residual through the ring spilled with half the registers (two
// 64-wide blocks a multiprocessor) and beside a 128-wide ping-pong tile's
// accumulators, and through 64-wide ping-pong tiles its results moved from
// launch to launch: refused for all three.
// CHECK: error: residual_ring takes gemm_wgmma with the cooperative schedule, one block a multiprocessor, no stream_k or split_k and sizes in the source
func.func @residual_ring_two_blocks(%x: tensor<129x72xbf16>, %w: tensor<200x72xbf16>, %r: tensor<129x200xbf16>) -> tensor<129x200xbf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<129x72xbf16>, tensor<200x72xbf16>, tensor<129x200xbf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 2, grid_limit = 5, blocks_per_sm = 2, residual_ring = true>} -> tensor<129x200xbf16> {
  ^bb0(%a: tensor<129x72xbf16>, %bw: tensor<200x72xbf16>, %br: tensor<129x200xbf16>):
    %l = kiln.linear %a, %bw : (tensor<129x72xbf16>, tensor<200x72xbf16>) -> tensor<129x200xbf16>
    %o = kiln.add %l, %br : tensor<129x200xbf16>
    kiln.yield %o : tensor<129x200xbf16>
  }
  return %0 : tensor<129x200xbf16>
}

// -----

// CHECK: error: residual_ring takes gemm_wgmma with the cooperative schedule,
func.func @residual_ring_wide_pingpong(%x: tensor<300x64xf16>, %w: tensor<256x64xf16>, %r: tensor<300x256xf16>) -> tensor<300x256xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<300x64xf16>, tensor<256x64xf16>, tensor<300x256xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 4, schedule = pingpong, residual_ring = true>} -> tensor<300x256xf16> {
  ^bb0(%a: tensor<300x64xf16>, %bw: tensor<256x64xf16>, %br: tensor<300x256xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x64xf16>, tensor<256x64xf16>) -> tensor<300x256xf16>
    %s = kiln.add %l, %br : tensor<300x256xf16>
    kiln.yield %s : tensor<300x256xf16>
  }
  return %0 : tensor<300x256xf16>
}

// -----

// CHECK: error: residual_ring takes gemm_wgmma with the cooperative schedule,
func.func @residual_ring_narrow_pingpong(%x: tensor<300x64xf16>, %w: tensor<256x64xf16>, %r: tensor<300x256xf16>) -> tensor<300x256xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<300x64xf16>, tensor<256x64xf16>, tensor<300x256xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 4, schedule = pingpong, residual_ring = true>} -> tensor<300x256xf16> {
  ^bb0(%a: tensor<300x64xf16>, %bw: tensor<256x64xf16>, %br: tensor<300x256xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x64xf16>, tensor<256x64xf16>) -> tensor<300x256xf16>
    %s = kiln.add %l, %br : tensor<300x256xf16>
    kiln.yield %s : tensor<300x256xf16>
  }
  return %0 : tensor<300x256xf16>
}

// -----

// Four attention blocks a multiprocessor hold 96 registers a thread: the
// overlapped schedule spilled there, so only the cooperative one takes it.
// CHECK: error: attention_wgmma takes blocks_per_sm = 4 with the cooperative schedule, 2 stages, 64 queries and a head size of 64, got 4
func.func @attention_wgmma_four_overlapped(%q: tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16> {
  %0 = kiln.fusion attention ins(%q, %q, %q : tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], schedule = overlapped, blocks_per_sm = 4>} -> tensor<1x12x128x64xf16> {
  ^bb0(%a: tensor<1x12x128x64xf16>, %b: tensor<1x12x128x64xf16>, %c: tensor<1x12x128x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16>
    kiln.yield %o : tensor<1x12x128x64xf16>
  }
  return %0 : tensor<1x12x128x64xf16>
}

// -----

// With a mask, four attention blocks a multiprocessor spill (28 bytes with
// BERT's padding mask, NVRTC): refused before NVRTC.
// CHECK: error: 'kiln.fusion' op cannot run as attention_wgmma four blocks a multiprocessor: with a mask it spills within 96 registers a thread
func.func @attention_wgmma_four_masked(%q: tensor<2x12x128x64xf16>, %m: tensor<2x1x1x128xf16>) -> tensor<2x12x128x64xf16> {
  %0 = kiln.fusion attention ins(%q, %q, %q, %m : tensor<2x12x128x64xf16>, tensor<2x12x128x64xf16>, tensor<2x12x128x64xf16>, tensor<2x1x1x128xf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], blocks_per_sm = 4>} -> tensor<2x12x128x64xf16> {
  ^bb0(%a: tensor<2x12x128x64xf16>, %b: tensor<2x12x128x64xf16>, %c: tensor<2x12x128x64xf16>, %d: tensor<2x1x1x128xf16>):
    %o = kiln.attention %a, %b, %c mask %d scale = 0.125 : (tensor<2x12x128x64xf16>, tensor<2x12x128x64xf16>, tensor<2x12x128x64xf16>, tensor<2x1x1x128xf16>) -> tensor<2x12x128x64xf16>
    kiln.yield %o : tensor<2x12x128x64xf16>
  }
  return %0 : tensor<2x12x128x64xf16>
}

// -----

// The swapped few-row GEMM loads the weight in 64-row tiles: N % 64 == 0.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma_swap: the weight as wgmma's M side takes fp16/bf16 operands, a [N, K] B, no batch, K % 8 == 0 and N % 64 == 0
func.func @swap_ragged_weight(%x: tensor<128x256xf16>, %w: tensor<1000x256xf16>) -> tensor<128x1000xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x256xf16>, tensor<1000x256xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 16, 64], stages = 4, multicast = 4>} -> tensor<128x1000xf16> {
  ^bb0(%a: tensor<128x256xf16>, %bw: tensor<1000x256xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x256xf16>, tensor<1000x256xf16>) -> tensor<128x1000xf16>
    kiln.yield %l : tensor<128x1000xf16>
  }
  return %0 : tensor<128x1000xf16>
}

// -----

// Nor a [K, N] B (matmul).
// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma_swap: the weight as wgmma's M side takes fp16/bf16 operands, a [N, K] B, no batch, K % 8 == 0 and N % 64 == 0
func.func @swap_matmul(%x: tensor<128x256xf16>, %w: tensor<256x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x256xf16>, tensor<256x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 16, 64], stages = 4, multicast = 4>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x256xf16>, %bw: tensor<256x768xf16>):
    %l = kiln.matmul %a, %bw : (tensor<128x256xf16>, tensor<256x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// Its ring must fit a block's shared memory: 30 stages of 32 tokens do not.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma_swap: 30 stages of 32 tokens do not fit a block's shared memory
func.func @swap_stages(%x: tensor<128x4096xf16>, %w: tensor<768x4096xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x4096xf16>, tensor<768x4096xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 32, 64], stages = 30, multicast = 4>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x4096xf16>, %bw: tensor<768x4096xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x4096xf16>, tensor<768x4096xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// A global average pool is summed by the pooled Hopper GEMM alone: on
// cooperative 128-row tiles of one block, not ping-pong, and not on
// mma.sync.
// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: a pooled epilogue takes cooperative 128-row tiles of one block a multiprocessor: no cluster, stream_k, split or sizes at run time
// CHECK: error: 'kiln.fusion' op cannot run as gemm_mma: a global average pool is summed in the epilogue of a 1x1 convolution run as gemm_wgmma only
func.func @pooled_pingpong(%x: tensor<5x7x7x64xf16>, %w: tensor<512x1x1x64xf16>) -> tensor<5x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<5x7x7x64xf16>, tensor<512x1x1x64xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 4, grid_limit = 132, schedule = pingpong>} -> tensor<5x512xf16> {
  ^bb0(%a: tensor<5x7x7x64xf16>, %aw: tensor<512x1x1x64xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<5x7x7x64xf16>, tensor<512x1x1x64xf16>) -> tensor<5x7x7x512xf16>
    %m = kiln.reduce_mean %y dims = [1, 2] : tensor<5x7x7x512xf16> -> tensor<5x512xf16>
    kiln.yield %m : tensor<5x512xf16>
  }
  return %0 : tensor<5x512xf16>
}

// -----

func.func @pooled_mma(%x: tensor<5x7x7x64xf16>, %w: tensor<512x1x1x64xf16>) -> tensor<5x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<5x7x7x64xf16>, tensor<512x1x1x64xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_mma, tile = [128, 128, 32]>} -> tensor<5x512xf16> {
  ^bb0(%a: tensor<5x7x7x64xf16>, %aw: tensor<512x1x1x64xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<5x7x7x64xf16>, tensor<512x1x1x64xf16>) -> tensor<5x7x7x512xf16>
    %m = kiln.reduce_mean %y dims = [1, 2] : tensor<5x7x7x512xf16> -> tensor<5x512xf16>
    kiln.yield %m : tensor<5x512xf16>
  }
  return %0 : tensor<5x512xf16>
}

// -----

// The narrow tile is cooperative on 128 rows of one block, and a GEMM's:
// not stream-K, not a matmul's [K, N] B, not conv_wgmma's pixel boxes
// (the dialect's verifier refuses it ping-pong).
// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: a 56-wide tile is cooperative on 128 rows, one block a multiprocessor, with no cluster, split, stream_k or residual_ring
func.func @narrow_stream_k(%x: tensor<300x768xf16>, %w: tensor<500x768xf16>) -> tensor<300x500xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<300x768xf16>, tensor<500x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 56, 64], stages = 6, grid_limit = 132, stream_k = true>} -> tensor<300x500xf16> {
  ^bb0(%a: tensor<300x768xf16>, %bw: tensor<500x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x768xf16>, tensor<500x768xf16>) -> tensor<300x500xf16>
    kiln.yield %l : tensor<300x500xf16>
  }
  return %0 : tensor<300x500xf16>
}

// -----

// CHECK: error: 'kiln.fusion' op cannot run as gemm_wgmma: a 56-wide tile takes a [N, K] B without a batch (a [K, N] B comes in 64-wide boxes)
func.func @narrow_matmul(%x: tensor<300x768xf16>, %w: tensor<768x504xf16>) -> tensor<300x504xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<300x768xf16>, tensor<768x504xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 56, 64], stages = 6, grid_limit = 132>} -> tensor<300x504xf16> {
  ^bb0(%a: tensor<300x768xf16>, %bw: tensor<768x504xf16>):
    %l = kiln.matmul %a, %bw : (tensor<300x768xf16>, tensor<768x504xf16>) -> tensor<300x504xf16>
    kiln.yield %l : tensor<300x504xf16>
  }
  return %0 : tensor<300x504xf16>
}

// -----

// CHECK: error: 'kiln.fusion' op cannot run as conv_wgmma: its tiles are 64 wide or more (a 56-wide tile is a GEMM's)
func.func @narrow_conv(%x: tensor<2x14x14x64xf16>, %w: tensor<112x3x3x64xf16>) -> tensor<2x14x14x112xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<2x14x14x64xf16>, tensor<112x3x3x64xf16>) {kiln.kernel = #kiln.kernel<variant = conv_wgmma, tile = [128, 56, 64], stages = 4, grid_limit = 132, pixel_tile = [1, 8, 14]>} -> tensor<2x14x14x112xf16> {
  ^bb0(%a: tensor<2x14x14x64xf16>, %aw: tensor<112x3x3x64xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<2x14x14x64xf16>, tensor<112x3x3x64xf16>) -> tensor<2x14x14x112xf16>
    kiln.yield %y : tensor<2x14x14x112xf16>
  }
  return %0 : tensor<2x14x14x112xf16>
}
