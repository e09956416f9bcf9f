// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{conv-wgmma=false}))" | FileCheck %s --check-prefix=SM90
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{targets=sm_80}))" | FileCheck %s --check-prefix=SM80
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=HCONV
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{targets=sm_80 conv-wgmma=true}))" | FileCheck %s --check-prefix=SM80

// The policy, for the primary target (sm_90a: 132 multiprocessors with
// wgmma and clusters; sm_80: 108, mma.sync, no clusters):
// - a GEMM whose 128 x 256 tiles fill under a quarter of the GPU (and, with
//   wgmma, whose 128 x 64 tiles fill under half, or under a quarter for one
//   to three row tiles of a [N, K] B without a batch) takes 64 x
//   64 tiles with K split across a cluster (2, 4 or 8 ways: the most that
//   keeps the blocks within two per multiprocessor and each split's K at
//   128 or more); without clusters, no split;
// - a larger GEMM takes wgmma where there is wgmma (persistent, a block per
//   multiprocessor at most), else mma.sync 128 x 128;
// - a convolution whose 128 x 128 tiles do not fill the GPU once splits K;
//   a depthwise one runs grid-stride; attention on tensor cores for fp16
//   head size 64 (wgmma where there is wgmma), SIMT for fp32.

// BERT's output projection at batch 1: 3 tiles of 128 x 256; 24 tiles of
// 64 x 64, split 4 (8 would leave 96 of K per block).
// SM90-LABEL: func.func @batch1_projection(
//       SM90:   kiln.kernel = #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64], stages = 3, split_k = 4>
// SM80-LABEL: func.func @batch1_projection(
//       SM80:   kiln.kernel = #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64], stages = 3>
func.func @batch1_projection(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>, %b: tensor<768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<128x768xf16>, tensor<768x768xf16>, tensor<768xf16>) -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>, %bb: tensor<768xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<128x768xf16>, tensor<768x768xf16>, tensor<768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// BERT's FFN up-projection at batch 32: 768 ping-pong tiles of 128 x 128
// (6 a block, one warpgroup's epilogue beside the other's main loop) finish
// before 384 cooperative tiles of 128 x 256 (3 a block, each epilogue with
// the tensor cores idle).
// SM90-LABEL: func.func @batch32_qkv(
//       SM90:   kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 132, schedule = pingpong>
// SM80-LABEL: func.func @batch32_qkv(
//       SM80:   kiln.kernel = #kiln.kernel<variant = gemm_mma, tile = [128, 128, 32]>
func.func @batch32_qkv(%x: tensor<4096x768xf16>, %w: tensor<3072x768xf16>) -> tensor<4096x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<3072x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16>
    kiln.yield %l : tensor<4096x3072xf16>
  }
  return %0 : tensor<4096x3072xf16>
}

// -----

// BERT's output projection at batch 32 (N = 768): 96 tiles of 128 x 256
// would leave 36 of 132 multiprocessors idle; 128 tiles of 128 x 192 fill
// one wave, with the ring of 4 stages that fits beside them.
// SM90-LABEL: func.func @batch32_out_projection(
//       SM90:   kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 128>
func.func @batch32_out_projection(%x: tensor<4096x768xf16>, %w: tensor<768x768xf16>) -> tensor<4096x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<768x768xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<768x768xf16>) -> tensor<4096x768xf16>
    kiln.yield %l : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}

// -----

// BERT's FFN down-projection at batch 32 (K = 3072): a tile's main loop is
// 48 k-steps against an epilogue's few, so hiding the epilogue gains little
// and one wave of 128 cooperative tiles of 128 x 192 beats 384 ping-pong
// tiles of 128 x 64.
// SM90-LABEL: func.func @batch32_down_projection(
//       SM90:   kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 128>
func.func @batch32_down_projection(%x: tensor<4096x3072xf16>, %w: tensor<768x3072xf16>) -> tensor<4096x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x3072xf16>, tensor<768x3072xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x3072xf16>, %bw: tensor<768x3072xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x3072xf16>, tensor<768x3072xf16>) -> tensor<4096x768xf16>
    kiln.yield %l : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}

// -----

// A 1x1 convolution runs on the GEMM main loop with the 1x1 convolutions'
// rules: ResNet-50's 1024 -> 512 at 14 x 14 takes one wave of 192 x 128
// tiles (select-kernels-tall-tiles.mlir).
// SM90-LABEL: func.func @conv1x1_batch32(
//       SM90:   kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], stages = 4, grid_limit = 132>
func.func @conv1x1_batch32(%x: tensor<32x14x14x1024xf16>, %w: tensor<512x1x1x1024xf16>, %b: tensor<512xf16>) -> tensor<32x14x14x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<32x14x14x1024xf16>, tensor<512x1x1x1024xf16>, tensor<512xf16>) -> tensor<32x14x14x512xf16> {
  ^bb0(%ax: tensor<32x14x14x1024xf16>, %aw: tensor<512x1x1x1024xf16>, %ab: tensor<512xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x14x14x1024xf16>, tensor<512x1x1x1024xf16>, tensor<512xf16>) -> tensor<32x14x14x512xf16>
    kiln.yield %y : tensor<32x14x14x512xf16>
  }
  return %0 : tensor<32x14x14x512xf16>
}

// -----

// fp32 GEMMs not marked kiln.tf32 run on the SIMT kernel everywhere.
// SM90-LABEL: func.func @fp32_gemm(
//       SM90:   kiln.kernel = #kiln.kernel<variant = gemm_simt, tile = [64, 64, 16]>
// SM80-LABEL: func.func @fp32_gemm(
//       SM80:   kiln.kernel = #kiln.kernel<variant = gemm_simt, tile = [64, 64, 16]>
func.func @fp32_gemm(%x: tensor<4096x768xf32>, %w: tensor<3072x768xf32>) -> tensor<4096x3072xf32> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf32>, tensor<3072x768xf32>) -> tensor<4096x3072xf32> {
  ^bb0(%a: tensor<4096x768xf32>, %bw: tensor<3072x768xf32>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf32>, tensor<3072x768xf32>) -> tensor<4096x3072xf32>
    kiln.yield %l : tensor<4096x3072xf32>
  }
  return %0 : tensor<4096x3072xf32>
}

// -----

// A depthwise 3x3 convolution (MobileNet): grid-stride, 16 blocks per
// multiprocessor at most. At batch 1 a thread per element (8 channels a
// thread would leave 25088 threads); at batch 32, 8 channels a thread.
// SM90-LABEL: func.func @depthwise(
//       SM90:   kiln.kernel = #kiln.kernel<variant = conv_depthwise, grid_limit = 2112>
//       SM90:   kiln.kernel = #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 2112, blocks_per_sm = 8>
// SM80-LABEL: func.func @depthwise(
//       SM80:   kiln.kernel = #kiln.kernel<variant = conv_depthwise, grid_limit = 1728>
//       SM80:   kiln.kernel = #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 1728, blocks_per_sm = 8>
func.func @depthwise(%x: tensor<1x56x56x64xf16>, %w: tensor<64x3x3x1xf16>, %b: tensor<64xf16>) -> tensor<1x56x56x64xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<1x56x56x64xf16>, tensor<64x3x3x1xf16>, tensor<64xf16>) -> tensor<1x56x56x64xf16> {
  ^bb0(%ax: tensor<1x56x56x64xf16>, %aw: tensor<64x3x3x1xf16>, %ab: tensor<64xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 64 : (tensor<1x56x56x64xf16>, tensor<64x3x3x1xf16>, tensor<64xf16>) -> tensor<1x56x56x64xf16>
    kiln.yield %y : tensor<1x56x56x64xf16>
  }
  return %0 : tensor<1x56x56x64xf16>
}
func.func @depthwise_batch32(%x: tensor<32x56x56x64xf16>, %w: tensor<64x3x3x1xf16>) -> tensor<32x56x56x64xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<32x56x56x64xf16>, tensor<64x3x3x1xf16>) -> tensor<32x56x56x64xf16> {
  ^bb0(%ax: tensor<32x56x56x64xf16>, %aw: tensor<64x3x3x1xf16>):
    %y = kiln.conv2d %ax, %aw strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 64 : (tensor<32x56x56x64xf16>, tensor<64x3x3x1xf16>) -> tensor<32x56x56x64xf16>
    kiln.yield %y : tensor<32x56x56x64xf16>
  }
  return %0 : tensor<32x56x56x64xf16>
}

// -----

// ResNet-50's 3x3 convolutions: at batch 32 (layer 1, 784 tiles of
// 128 x 128) on sm_90a TMA + wgmma (conv-wgmma=false: mma.sync) over
// boxes of 2 x 8 x 8 output pixels (784 of them cover 32 x 56 x
// 56 exactly) and 64-wide tiles for 64 output channels. At batch 1 (layer
// 4, 4 tiles) K split 8 ways on sm_90a (8 tiles of 64 x 64, 4608 of K).
// SM90-LABEL: func.func @conv3x3_batch32(
//       SM90:   kiln.kernel = #kiln.kernel<variant = conv_mma, tile = [128, 128, 32]>
// HCONV-LABEL: func.func @conv3x3_batch32(
//       HCONV:   kiln.kernel = #kiln.kernel<variant = conv_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, pixel_tile = [2, 8, 8], schedule = pingpong>
// HCONV-LABEL: func.func @conv3x3_batch1(
//       HCONV:   kiln.kernel = #kiln.kernel<variant = conv_split_k, tile = [64, 64, 64], stages = 3, split_k = 8>
// SM90-LABEL: func.func @conv3x3_batch1(
//       SM90:   kiln.kernel = #kiln.kernel<variant = conv_split_k, tile = [64, 64, 64], stages = 3, split_k = 8>
// SM80-LABEL: func.func @conv3x3_batch32(
//       SM80:   kiln.kernel = #kiln.kernel<variant = conv_mma, tile = [128, 128, 32]>
// SM80-LABEL: func.func @conv3x3_batch1(
//       SM80:   kiln.kernel = #kiln.kernel<variant = conv_split_k, tile = [64, 64, 64], stages = 3>
func.func @conv3x3_batch32(%x: tensor<32x56x56x64xf16>, %w: tensor<64x3x3x64xf16>, %b: tensor<64xf16>) -> tensor<32x56x56x64xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<32x56x56x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>) -> tensor<32x56x56x64xf16> {
  ^bb0(%ax: tensor<32x56x56x64xf16>, %aw: tensor<64x3x3x64xf16>, %ab: tensor<64xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x56x56x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>) -> tensor<32x56x56x64xf16>
    kiln.yield %y : tensor<32x56x56x64xf16>
  }
  return %0 : tensor<32x56x56x64xf16>
}
func.func @conv3x3_batch1(%x: tensor<1x7x7x512xf16>, %w: tensor<512x3x3x512xf16>, %b: tensor<512xf16>) -> tensor<1x7x7x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<1x7x7x512xf16>, tensor<512x3x3x512xf16>, tensor<512xf16>) -> tensor<1x7x7x512xf16> {
  ^bb0(%ax: tensor<1x7x7x512xf16>, %aw: tensor<512x3x3x512xf16>, %ab: tensor<512xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<1x7x7x512xf16>, tensor<512x3x3x512xf16>, tensor<512xf16>) -> tensor<1x7x7x512xf16>
    kiln.yield %y : tensor<1x7x7x512xf16>
  }
  return %0 : tensor<1x7x7x512xf16>
}

// -----

// conv_wgmma's pixel boxes at batch 32: 14 x 14 in boxes of 32 images x 2
// x 2 (49 boxes, every row used; 98 tiles 128 wide make one wave); 7 x 7
// would take 14 boxes (16 x 1 x 7), a quarter of the GPU's tiles, so K is
// split instead; the stride-2 1x1 downsampling reads every second input
// pixel (a box of 8 x 4 x 4 outputs spans 8 x 8 inputs). The NCHW stem
// (C = 3) cannot be TMA boxes: it is a conv_stem (128 output columns of one
// row per tile, 64 channels, its 7 filter rows of 21 each padded to 32: K
// = 224; two blocks per multiprocessor) on every target. A grouped convolution keeps mma.sync.
// With conv-wgmma=false: K split where 128 x 128 tiles do not fill the GPU,
// mma.sync elsewhere.
// SM90-LABEL: func.func @boxes(
//       SM90:   #kiln.kernel<variant = conv_split_k, tile = [64, 64, 64], stages = 3>
//       SM90:   #kiln.kernel<variant = conv_split_k, tile = [64, 64, 64], stages = 3, split_k = 4>
//       SM90:   #kiln.kernel<variant = conv_mma, tile = [128, 128, 32]>
//       SM90:   #kiln.kernel<variant = conv_stem, tile = [128, 64, 224], grid_limit = 264, blocks_per_sm = 2>
//       SM90:   #kiln.kernel<variant = conv_mma, tile = [128, 128, 32]>
// HCONV-LABEL: func.func @boxes(
//       HCONV:   #kiln.kernel<variant = conv_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 98, pixel_tile = [32, 2, 2]>
//       HCONV:   #kiln.kernel<variant = conv_split_k, tile = [64, 64, 64], stages = 3, split_k = 4>
//       HCONV:   #kiln.kernel<variant = conv_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 132, pixel_tile = [8, 4, 4], schedule = pingpong>
//       HCONV:   #kiln.kernel<variant = conv_stem, tile = [128, 64, 224], grid_limit = 264, blocks_per_sm = 2>
//       HCONV:   #kiln.kernel<variant = conv_mma, tile = [128, 128, 32]>
// SM80-LABEL: func.func @boxes(
//   SM80-NOT:   conv_wgmma
//       SM80:   #kiln.kernel<variant = conv_stem, tile = [128, 64, 224], grid_limit = 216, blocks_per_sm = 2>
//   SM80-NOT:   conv_wgmma
func.func @boxes(%a: tensor<32x14x14x256xf16>, %wa: tensor<256x3x3x256xf16>,
                 %b: tensor<32x7x7x512xf16>, %wb: tensor<128x3x3x512xf16>,
                 %c: tensor<32x56x56x256xf16>, %wc: tensor<512x1x1x256xf16>,
                 %d: tensor<32x3x224x224xf16>, %wd: tensor<64x7x7x3xf16>,
                 %e: tensor<32x28x28x256xf16>, %we: tensor<256x3x3x8xf16>)
    -> (tensor<32x14x14x256xf16>, tensor<32x7x7x128xf16>, tensor<32x28x28x512xf16>, tensor<32x112x112x64xf16>, tensor<32x28x28x256xf16>) {
  %0 = kiln.fusion conv_epilogue ins(%a, %wa : tensor<32x14x14x256xf16>, tensor<256x3x3x256xf16>) -> tensor<32x14x14x256xf16> {
  ^bb0(%x: tensor<32x14x14x256xf16>, %w: tensor<256x3x3x256xf16>):
    %y = kiln.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x14x14x256xf16>, tensor<256x3x3x256xf16>) -> tensor<32x14x14x256xf16>
    kiln.yield %y : tensor<32x14x14x256xf16>
  }
  %1 = kiln.fusion conv_epilogue ins(%b, %wb : tensor<32x7x7x512xf16>, tensor<128x3x3x512xf16>) -> tensor<32x7x7x128xf16> {
  ^bb0(%x: tensor<32x7x7x512xf16>, %w: tensor<128x3x3x512xf16>):
    %y = kiln.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x7x7x512xf16>, tensor<128x3x3x512xf16>) -> tensor<32x7x7x128xf16>
    kiln.yield %y : tensor<32x7x7x128xf16>
  }
  %2 = kiln.fusion conv_epilogue ins(%c, %wc : tensor<32x56x56x256xf16>, tensor<512x1x1x256xf16>) -> tensor<32x28x28x512xf16> {
  ^bb0(%x: tensor<32x56x56x256xf16>, %w: tensor<512x1x1x256xf16>):
    %y = kiln.conv2d %x, %w strides = [2, 2] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x256xf16>, tensor<512x1x1x256xf16>) -> tensor<32x28x28x512xf16>
    kiln.yield %y : tensor<32x28x28x512xf16>
  }
  %3 = kiln.fusion conv_epilogue ins(%d, %wd : tensor<32x3x224x224xf16>, tensor<64x7x7x3xf16>) -> tensor<32x112x112x64xf16> {
  ^bb0(%x: tensor<32x3x224x224xf16>, %w: tensor<64x7x7x3xf16>):
    %p = kiln.permute %x [0, 2, 3, 1] : tensor<32x3x224x224xf16> -> tensor<32x224x224x3xf16>
    %y = kiln.conv2d %p, %w strides = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] groups = 1 : (tensor<32x224x224x3xf16>, tensor<64x7x7x3xf16>) -> tensor<32x112x112x64xf16>
    kiln.yield %y : tensor<32x112x112x64xf16>
  }
  %4 = kiln.fusion conv_epilogue ins(%e, %we : tensor<32x28x28x256xf16>, tensor<256x3x3x8xf16>) -> tensor<32x28x28x256xf16> {
  ^bb0(%x: tensor<32x28x28x256xf16>, %w: tensor<256x3x3x8xf16>):
    %y = kiln.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 32 : (tensor<32x28x28x256xf16>, tensor<256x3x3x8xf16>) -> tensor<32x28x28x256xf16>
    kiln.yield %y : tensor<32x28x28x256xf16>
  }
  return %0, %1, %2, %3, %4 : tensor<32x14x14x256xf16>, tensor<32x7x7x128xf16>, tensor<32x28x28x512xf16>, tensor<32x112x112x64xf16>, tensor<32x28x28x256xf16>
}

// -----

// conv_stem only where few channels make every im2col element a gather and
// the weight fits beside the tile: MobileNetV3's 3 -> 16 stem at batch 32
// is one, on input rows (3 filter rows of 9 each padded to 16: K = 48;
// four blocks per multiprocessor, the most up to 32 outputs); 3
// -> 256 outputs are past its 128, and 8 input channels load as 16-byte
// vectors (conv_wgmma, or mma.sync without it). At stride 1 over 3
// channels the rows' 4-byte A fragments would not be aligned: an im2col
// tile (K = 27 padded to 32).
// HCONV-LABEL: func.func @stems(
//       HCONV:   #kiln.kernel<variant = conv_stem, tile = [128, 16, 48], grid_limit = 528, blocks_per_sm = 4>
//       HCONV:   #kiln.kernel<variant = conv_mma, tile = [128, 128, 32]>
//       HCONV:   #kiln.kernel<variant = conv_wgmma,
//       HCONV:   #kiln.kernel<variant = conv_stem, tile = [64, 32, 32], grid_limit = 528>
// SM90-LABEL: func.func @stems(
//       SM90:   #kiln.kernel<variant = conv_stem, tile = [128, 16, 48], grid_limit = 528, blocks_per_sm = 4>
//       SM90:   #kiln.kernel<variant = conv_mma, tile = [128, 128, 32]>
//       SM90:   #kiln.kernel<variant = conv_mma, tile = [128, 128, 32]>
//       SM90:   #kiln.kernel<variant = conv_stem, tile = [64, 32, 32], grid_limit = 528>
func.func @stems(%a: tensor<32x224x224x3xf16>, %wa: tensor<16x3x3x3xf16>,
                 %b: tensor<32x56x56x3xf16>, %wb: tensor<256x3x3x3xf16>,
                 %c: tensor<32x56x56x8xf16>, %wc: tensor<64x3x3x8xf16>,
                 %d: tensor<8x32x32x3xf16>, %wd: tensor<32x3x3x3xf16>)
    -> (tensor<32x112x112x16xf16>, tensor<32x56x56x256xf16>, tensor<32x56x56x64xf16>, tensor<8x32x32x32xf16>) {
  %0 = kiln.fusion conv_epilogue ins(%a, %wa : tensor<32x224x224x3xf16>, tensor<16x3x3x3xf16>) -> tensor<32x112x112x16xf16> {
  ^bb0(%x: tensor<32x224x224x3xf16>, %w: tensor<16x3x3x3xf16>):
    %y = kiln.conv2d %x, %w strides = [2, 2] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x224x224x3xf16>, tensor<16x3x3x3xf16>) -> tensor<32x112x112x16xf16>
    kiln.yield %y : tensor<32x112x112x16xf16>
  }
  %1 = kiln.fusion conv_epilogue ins(%b, %wb : tensor<32x56x56x3xf16>, tensor<256x3x3x3xf16>) -> tensor<32x56x56x256xf16> {
  ^bb0(%x: tensor<32x56x56x3xf16>, %w: tensor<256x3x3x3xf16>):
    %y = kiln.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x56x56x3xf16>, tensor<256x3x3x3xf16>) -> tensor<32x56x56x256xf16>
    kiln.yield %y : tensor<32x56x56x256xf16>
  }
  %2 = kiln.fusion conv_epilogue ins(%c, %wc : tensor<32x56x56x8xf16>, tensor<64x3x3x8xf16>) -> tensor<32x56x56x64xf16> {
  ^bb0(%x: tensor<32x56x56x8xf16>, %w: tensor<64x3x3x8xf16>):
    %y = kiln.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x56x56x8xf16>, tensor<64x3x3x8xf16>) -> tensor<32x56x56x64xf16>
    kiln.yield %y : tensor<32x56x56x64xf16>
  }
  %3 = kiln.fusion conv_epilogue ins(%d, %wd : tensor<8x32x32x3xf16>, tensor<32x3x3x3xf16>) -> tensor<8x32x32x32xf16> {
  ^bb0(%x: tensor<8x32x32x3xf16>, %w: tensor<32x3x3x3xf16>):
    %y = kiln.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<8x32x32x3xf16>, tensor<32x3x3x3xf16>) -> tensor<8x32x32x32xf16>
    kiln.yield %y : tensor<8x32x32x32xf16>
  }
  return %0, %1, %2, %3 : tensor<32x112x112x16xf16>, tensor<32x56x56x256xf16>, tensor<32x56x56x64xf16>, tensor<8x32x32x32xf16>
}

// -----

// ResNet-50's 1x1 64 -> 256 at batch 32, alone and with the residual add:
// one k-step a tile, so the epilogue is most of the kernel and ping-pong
// overlaps one warpgroup's with the other's. With the residual, cooperative
// 192 x 128 tiles carry it through the ring (at most 96 accumulators a
// thread, which keep the epilogue's loads in flight together).
// HCONV-LABEL: func.func @residual_width(
//       HCONV:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 132, schedule = pingpong>
//       HCONV:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], stages = 4, grid_limit = 132, residual_ring = true>
func.func @residual_width(%x: tensor<32x56x56x64xf16>, %w: tensor<256x1x1x64xf16>, %r: tensor<32x56x56x256xf16>)
    -> (tensor<32x56x56x256xf16>, tensor<32x56x56x256xf16>) {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<32x56x56x64xf16>, tensor<256x1x1x64xf16>) -> tensor<32x56x56x256xf16> {
  ^bb0(%a: tensor<32x56x56x64xf16>, %aw: tensor<256x1x1x64xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x64xf16>, tensor<256x1x1x64xf16>) -> tensor<32x56x56x256xf16>
    kiln.yield %y : tensor<32x56x56x256xf16>
  }
  %1 = kiln.fusion conv_epilogue ins(%x, %w, %r : tensor<32x56x56x64xf16>, tensor<256x1x1x64xf16>, tensor<32x56x56x256xf16>) -> tensor<32x56x56x256xf16> {
  ^bb0(%a: tensor<32x56x56x64xf16>, %aw: tensor<256x1x1x64xf16>, %ar: tensor<32x56x56x256xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x64xf16>, tensor<256x1x1x64xf16>) -> tensor<32x56x56x256xf16>
    %t = kiln.add %y, %ar : tensor<32x56x56x256xf16>
    kiln.yield %t : tensor<32x56x56x256xf16>
  }
  return %0, %1 : tensor<32x56x56x256xf16>, tensor<32x56x56x256xf16>
}

// -----

// The same rule for GEMMs (and 1x1 convolutions as GEMMs): ResNet-50's
// 1x1 2048 -> 512 at 7 x 7, batch 32, is 13 row tiles; 26 tiles 256 wide
// fill under a quarter of the GPU, 104 tiles 64 wide more than half, so
// wgmma. MobileNetV3's 960 -> 160 at 7 x 7 is 39 tiles 64 wide, under
// half: K split as before. Without wgmma (sm_80) both split K. A GEMM of
// one row tile (batch 1) takes wgmma where its 128 x 64 tiles fill a
// quarter of the GPU (wgmma-few-rows; 128 x 6144 x 2048: 96 of them;
// select-kernels-few-rows.mlir has the rest).
// SM90-LABEL: func.func @narrow_gemm_tiles(
//       SM90:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 104>
//       SM90:   #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64]
//       SM90:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 96>
// SM80-LABEL: func.func @narrow_gemm_tiles(
//       SM80:   #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64]
//       SM80:   #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64]
func.func @narrow_gemm_tiles(%x: tensor<32x7x7x2048xf16>, %w: tensor<512x1x1x2048xf16>,
                             %y: tensor<32x7x7x960xf16>, %v: tensor<160x1x1x960xf16>,
                             %r: tensor<128x2048xf16>, %u: tensor<6144x2048xf16>)
    -> (tensor<32x7x7x512xf16>, tensor<32x7x7x160xf16>, tensor<128x6144xf16>) {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<32x7x7x2048xf16>, tensor<512x1x1x2048xf16>) -> tensor<32x7x7x512xf16> {
  ^bb0(%a: tensor<32x7x7x2048xf16>, %aw: tensor<512x1x1x2048xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x7x7x2048xf16>, tensor<512x1x1x2048xf16>) -> tensor<32x7x7x512xf16>
    kiln.yield %c : tensor<32x7x7x512xf16>
  }
  %1 = kiln.fusion conv_epilogue ins(%y, %v : tensor<32x7x7x960xf16>, tensor<160x1x1x960xf16>) -> tensor<32x7x7x160xf16> {
  ^bb0(%a: tensor<32x7x7x960xf16>, %av: tensor<160x1x1x960xf16>):
    %c = kiln.conv2d %a, %av strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x7x7x960xf16>, tensor<160x1x1x960xf16>) -> tensor<32x7x7x160xf16>
    kiln.yield %c : tensor<32x7x7x160xf16>
  }
  %2 = kiln.fusion gemm_epilogue ins(%r, %u : tensor<128x2048xf16>, tensor<6144x2048xf16>) -> tensor<128x6144xf16> {
  ^bb0(%a: tensor<128x2048xf16>, %au: tensor<6144x2048xf16>):
    %l = kiln.linear %a, %au : (tensor<128x2048xf16>, tensor<6144x2048xf16>) -> tensor<128x6144xf16>
    kiln.yield %l : tensor<128x6144xf16>
  }
  return %0, %1, %2 : tensor<32x7x7x512xf16>, tensor<32x7x7x160xf16>, tensor<128x6144xf16>
}

// -----

// ResNet-50's last 3x3 convolution at batch 32: 14 boxes of 18 x 1 x 7
// pixels; 28 tiles 256 wide fill under a quarter of the GPU, but 112 tiles
// 64 wide fill more than half, so wgmma runs it rather than mma.sync with K
// split.
// HCONV-LABEL: func.func @narrow_tiles(
//       HCONV:   #kiln.kernel<variant = conv_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 112, pixel_tile = [18, 1, 7]>
// SM90-LABEL: func.func @narrow_tiles(
//       SM90:   #kiln.kernel<variant = conv_split_k,
func.func @narrow_tiles(%x: tensor<32x7x7x512xf16>, %w: tensor<512x3x3x512xf16>) -> tensor<32x7x7x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<32x7x7x512xf16>, tensor<512x3x3x512xf16>) -> tensor<32x7x7x512xf16> {
  ^bb0(%a: tensor<32x7x7x512xf16>, %aw: tensor<512x3x3x512xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x7x7x512xf16>, tensor<512x3x3x512xf16>) -> tensor<32x7x7x512xf16>
    kiln.yield %y : tensor<32x7x7x512xf16>
  }
  return %0 : tensor<32x7x7x512xf16>
}

// -----

// Attention: fp16 with head size 64 on tensor cores (on Hopper a
// persistent grid of three blocks a multiprocessor), fp32 on SIMT.
// SM90-LABEL: func.func @attention(
//       SM90:   kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], grid_limit = 396, schedule = overlapped>
//       SM90:   kiln.kernel = #kiln.kernel<variant = attention_simt>
// SM80-LABEL: func.func @attention(
//       SM80:   kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [64, 64, 64]>
//       SM80:   kiln.kernel = #kiln.kernel<variant = attention_simt>
func.func @attention(%q: tensor<1x12x128x64xf16>, %q32: tensor<1x12x128x64xf32>) -> (tensor<1x12x128x64xf16>, tensor<1x12x128x64xf32>) {
  %0 = kiln.fusion attention ins(%q, %q, %q : tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16> {
  ^bb0(%a: tensor<1x12x128x64xf16>, %b: tensor<1x12x128x64xf16>, %c: tensor<1x12x128x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16>
    kiln.yield %o : tensor<1x12x128x64xf16>
  }
  %1 = kiln.fusion attention ins(%q32, %q32, %q32 : tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32> {
  ^bb0(%a: tensor<1x12x128x64xf32>, %b: tensor<1x12x128x64xf32>, %c: tensor<1x12x128x64xf32>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32>
    kiln.yield %o : tensor<1x12x128x64xf32>
  }
  return %0, %1 : tensor<1x12x128x64xf16>, tensor<1x12x128x64xf32>
}

// -----

// A configuration written in the input is kept (a test or a tuner forcing
// a variant), even where the policy would choose another.
// SM90-LABEL: func.func @forced(
//       SM90:   kiln.kernel = #kiln.kernel<variant = gemm_mma, tile = [128, 128, 32]>
//   SM90-NOT:   gemm_split_k
// SM80-LABEL: func.func @forced(
//       SM80:   kiln.kernel = #kiln.kernel<variant = gemm_mma, tile = [128, 128, 32]>
func.func @forced(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_mma, tile = [128, 128, 32]>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// Layer norm rows of 768 run a row to a warp, in registers; softmax rows of
// 2000 (past the 1024 a warp holds) a row to a block, and so does a single
// row (ConvNeXt's final norm at batch 1).
// SM90-LABEL: func.func @rows(
//       SM90:   kiln.kernel = #kiln.kernel<variant = normalization_warp>
//       SM90:   kiln.kernel = #kiln.kernel<variant = normalization>
//       SM90:   kiln.kernel = #kiln.kernel<variant = normalization>
func.func @rows(%x: tensor<4096x768xf16>, %g: tensor<768xf16>, %y: tensor<3x2000xf32>, %z: tensor<1x768xf16>) -> (tensor<4096x768xf16>, tensor<3x2000xf32>, tensor<1x768xf16>) {
  %0 = kiln.fusion normalization ins(%x, %g : tensor<4096x768xf16>, tensor<768xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %w: tensor<768xf16>):
    %n = kiln.layer_norm %a weight %w axis = 1 eps = 1.0e-05 : (tensor<4096x768xf16>, tensor<768xf16>) -> tensor<4096x768xf16>
    kiln.yield %n : tensor<4096x768xf16>
  }
  %1 = kiln.fusion normalization ins(%y : tensor<3x2000xf32>) -> tensor<3x2000xf32> {
  ^bb0(%a: tensor<3x2000xf32>):
    %s = kiln.softmax %a dim = 1 : tensor<3x2000xf32>
    kiln.yield %s : tensor<3x2000xf32>
  }
  %2 = kiln.fusion normalization ins(%z, %g : tensor<1x768xf16>, tensor<768xf16>) -> tensor<1x768xf16> {
  ^bb0(%a: tensor<1x768xf16>, %w: tensor<768xf16>):
    %n = kiln.layer_norm %a weight %w axis = 1 eps = 1.0e-05 : (tensor<1x768xf16>, tensor<768xf16>) -> tensor<1x768xf16>
    kiln.yield %n : tensor<1x768xf16>
  }
  return %0, %1, %2 : tensor<4096x768xf16>, tensor<3x2000xf32>, tensor<1x768xf16>
}

// -----

// Squeeze-and-excitation's pooling at batch 32: a mean straight from the
// group's input over H and W with 96 channels kept innermost. The blocks of
// an image split the 3136 pixels as a cluster of 8 (two blocks per
// multiprocessor); without clusters, none.
// SM90-LABEL: func.func @se_pool(
//       SM90:   kiln.kernel = #kiln.kernel<variant = reduction, split_k = 8, grid_limit = 2112>
// SM80-LABEL: func.func @se_pool(
//       SM80:   kiln.kernel = #kiln.kernel<variant = reduction, grid_limit = 1728>
func.func @se_pool(%x: tensor<32x56x56x96xf16>) -> tensor<32x1x1x96xf16> {
  %0 = kiln.fusion reduction ins(%x : tensor<32x56x56x96xf16>) -> tensor<32x1x1x96xf16> {
  ^bb0(%a: tensor<32x56x56x96xf16>):
    %r = kiln.reduce_mean %a dims = [1, 2] keepdim : tensor<32x56x56x96xf16> -> tensor<32x1x1x96xf16>
    kiln.yield %r : tensor<32x1x1x96xf16>
  }
  return %0 : tensor<32x1x1x96xf16>
}

// -----

// Not split: a prologue computed in the group (the kernel reads the input
// raw), 20 channels (not a whole number of 16-byte vectors), and a
// reduction over the last dimension (the row layout).
// SM90-LABEL: func.func @no_split(
//       SM90:   kiln.kernel = #kiln.kernel<variant = reduction, grid_limit = 2112>
//       SM90:   kiln.kernel = #kiln.kernel<variant = reduction, grid_limit = 2112>
//       SM90:   kiln.kernel = #kiln.kernel<variant = reduction, grid_limit = 2112>
func.func @no_split(%x: tensor<32x56x56x96xf16>, %y: tensor<32x56x56x20xf16>) -> (tensor<32x1x1x96xf16>, tensor<32x1x1x20xf16>, tensor<32x56x56x1xf16>) {
  %0 = kiln.fusion reduction ins(%x : tensor<32x56x56x96xf16>) -> tensor<32x1x1x96xf16> {
  ^bb0(%a: tensor<32x56x56x96xf16>):
    %s = kiln.sigmoid %a : tensor<32x56x56x96xf16>
    %r = kiln.reduce_mean %s dims = [1, 2] keepdim : tensor<32x56x56x96xf16> -> tensor<32x1x1x96xf16>
    kiln.yield %r : tensor<32x1x1x96xf16>
  }
  %1 = kiln.fusion reduction ins(%y : tensor<32x56x56x20xf16>) -> tensor<32x1x1x20xf16> {
  ^bb0(%a: tensor<32x56x56x20xf16>):
    %r = kiln.reduce_mean %a dims = [1, 2] keepdim : tensor<32x56x56x20xf16> -> tensor<32x1x1x20xf16>
    kiln.yield %r : tensor<32x1x1x20xf16>
  }
  %2 = kiln.fusion reduction ins(%x : tensor<32x56x56x96xf16>) -> tensor<32x56x56x1xf16> {
  ^bb0(%a: tensor<32x56x56x96xf16>):
    %r = kiln.reduce_sum %a dims = [3] keepdim : tensor<32x56x56x96xf16> -> tensor<32x56x56x1xf16>
    kiln.yield %r : tensor<32x56x56x1xf16>
  }
  return %0, %1, %2 : tensor<32x1x1x96xf16>, tensor<32x1x1x20xf16>, tensor<32x56x56x1xf16>
}

// -----

// Ping-pong's overhead factor: 1.15 for implicit GEMMs (as for GEMMs),
// 1.3 for 1x1 convolutions run as GEMMs. ResNet-50's 3x3 128 -> 128 at 28 x
// 28 takes 64-wide ping-pong tiles; EfficientNet-B0's 1x1 320 -> 1280 at 7
// x 7 stays on cooperative 128-wide tiles (ping-pong 64 wide at 1.15).
// HCONV-LABEL: func.func @ping_pong_factor(
//       HCONV:   #kiln.kernel<variant = conv_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, pixel_tile = [8, 4, 4], schedule = pingpong>
//       HCONV:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 130>
func.func @ping_pong_factor(%a: tensor<32x28x28x128xf16>, %wa: tensor<128x3x3x128xf16>,
                            %b: tensor<32x7x7x320xf16>, %wb: tensor<1280x1x1x320xf16>)
    -> (tensor<32x28x28x128xf16>, tensor<32x7x7x1280xf16>) {
  %0 = kiln.fusion conv_epilogue ins(%a, %wa : tensor<32x28x28x128xf16>, tensor<128x3x3x128xf16>) -> tensor<32x28x28x128xf16> {
  ^bb0(%x: tensor<32x28x28x128xf16>, %w: tensor<128x3x3x128xf16>):
    %y = kiln.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x28x28x128xf16>, tensor<128x3x3x128xf16>) -> tensor<32x28x28x128xf16>
    %r = kiln.relu %y : tensor<32x28x28x128xf16>
    kiln.yield %r : tensor<32x28x28x128xf16>
  }
  %1 = kiln.fusion conv_epilogue ins(%b, %wb : tensor<32x7x7x320xf16>, tensor<1280x1x1x320xf16>) -> tensor<32x7x7x1280xf16> {
  ^bb0(%x: tensor<32x7x7x320xf16>, %w: tensor<1280x1x1x320xf16>):
    %y = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x7x7x320xf16>, tensor<1280x1x1x320xf16>) -> tensor<32x7x7x1280xf16>
    %s = kiln.silu %y : tensor<32x7x7x1280xf16>
    kiln.yield %s : tensor<32x7x7x1280xf16>
  }
  return %0, %1 : tensor<32x28x28x128xf16>, tensor<32x7x7x1280xf16>
}
