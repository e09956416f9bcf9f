// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-stream-k=true wgmma-rows=128}))" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-stream-k=true explain=true wgmma-rows=128}))" 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-rows=128}))" | FileCheck %s --check-prefix=OFF

// Stream-K in the Hopper GEMM (--wgmma-stream-k): ViT-B/16's FFN
// down-projection at batch 32 is 200 tiles of 128 x 192 on 132
// multiprocessors, 1.5 waves. With stream-K the grid is a block per
// multiprocessor and the last 132 + 68 tiles are shared by k-iterations.
// CHECK-LABEL: func.func @vit_down(
//         WHY: remark: {{.*}}stream_k: 200 tiles on 132 blocks leave 24% of the waves idle; the last 200 shared by k-iterations
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 132, stream_k = true>
// OFF-LABEL: func.func @vit_down(
//       OFF:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 132>
func.func @vit_down(%x: tensor<6304x3072xf16>, %w: tensor<768x3072xf16>, %r: tensor<6304x768xf16>) -> tensor<6304x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<6304x3072xf16>, tensor<768x3072xf16>, tensor<6304x768xf16>) -> tensor<6304x768xf16> {
  ^bb0(%a: tensor<6304x3072xf16>, %bw: tensor<768x3072xf16>, %ar: tensor<6304x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<6304x3072xf16>, tensor<768x3072xf16>) -> tensor<6304x768xf16>
    %s = kiln.add %l, %ar : tensor<6304x768xf16>
    kiln.yield %s : tensor<6304x768xf16>
  }
  return %0 : tensor<6304x768xf16>
}

// -----

// Not where one wave is nearly full: BERT's down-projection (128 tiles of
// 128 x 192) keeps a block per tile.
// CHECK-LABEL: func.func @bert_down(
//         WHY: remark: {{.*}}not stream_k: 128 tiles on 132 blocks leave 3% of the waves idle
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 128, residual_ring = true>
func.func @bert_down(%x: tensor<4096x3072xf16>, %w: tensor<768x3072xf16>, %r: tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x3072xf16>, %bw: tensor<768x3072xf16>, %ar: tensor<4096x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x3072xf16>, tensor<768x3072xf16>) -> tensor<4096x768xf16>
    %s = kiln.add %l, %ar : tensor<4096x768xf16>
    kiln.yield %s : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}

// -----

// Nor on a ping-pong tile (the cost model's choice for the up-projection):
// stream-K is written for the cooperative schedule.
// CHECK-LABEL: func.func @ffn_up(
//         WHY: remark: {{.*}}not stream_k: it takes one cooperative block a multiprocessor, no cluster, batch 1
//       CHECK:   schedule = pingpong>
func.func @ffn_up(%x: tensor<6304x768xf16>, %w: tensor<3072x768xf16>) -> tensor<6304x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<6304x768xf16>, tensor<3072x768xf16>) -> tensor<6304x3072xf16> {
  ^bb0(%a: tensor<6304x768xf16>, %bw: tensor<3072x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<6304x768xf16>, tensor<3072x768xf16>) -> tensor<6304x3072xf16>
    kiln.yield %l : tensor<6304x3072xf16>
  }
  return %0 : tensor<6304x3072xf16>
}

// -----

// Nor where the last wave is nearly full: BERT's QKV projection, 384 tiles
// of 128 x 192 on 132 blocks, 3% idle.
// CHECK-LABEL: func.func @bert_qkv(
//         WHY: remark: {{.*}}not stream_k: 384 tiles on 132 blocks leave 3% of the waves idle
//   CHECK-NOT:   stream_k = true
func.func @bert_qkv(%x: tensor<4096x768xf16>, %w: tensor<2304x768xf16>) -> tensor<4096x2304xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<2304x768xf16>) -> tensor<4096x2304xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<2304x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<2304x768xf16>) -> tensor<4096x2304xf16>
    kiln.yield %l : tensor<4096x2304xf16>
  }
  return %0 : tensor<4096x2304xf16>
}

// -----

// Convolutions: ResNet-50's 3 x 3 convolution at 14 x 14 and batch 32 is 98
// tiles of 128 x 128 (pixel boxes of 32 images x 2 x 2): one wave that
// leaves 34 of 132 blocks idle. Streamed, all 98 tiles' 36 k-steps are
// shared by the 132 blocks.
// CHECK-LABEL: func.func @resnet_3x3(
//         WHY: remark: {{.*}}stream_k: 98 tiles on 132 blocks leave 26% of the waves idle; all shared by k-iterations
//       CHECK:   #kiln.kernel<variant = conv_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 132, pixel_tile = [32, 2, 2], stream_k = true>
// OFF-LABEL: func.func @resnet_3x3(
//       OFF:   #kiln.kernel<variant = conv_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 98, pixel_tile = [32, 2, 2]>
func.func @resnet_3x3(%a: tensor<32x14x14x256xf16>, %wa: tensor<256x3x3x256xf16>) -> tensor<32x14x14x256xf16> {
  %0 = kiln.fusion conv_epilogue ins(%a, %wa : tensor<32x14x14x256xf16>, tensor<256x3x3x256xf16>) -> tensor<32x14x14x256xf16> {
  ^bb0(%x: tensor<32x14x14x256xf16>, %w: tensor<256x3x3x256xf16>):
    %y = kiln.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x14x14x256xf16>, tensor<256x3x3x256xf16>) -> tensor<32x14x14x256xf16>
    kiln.yield %y : tensor<32x14x14x256xf16>
  }
  return %0 : tensor<32x14x14x256xf16>
}

// -----

// With a residual, a 192-wide tile (384 channels here) leaves no registers
// for stream-K's state: the kernel would spill.
// CHECK-LABEL: func.func @residual_192(
//         WHY: remark: {{.*}}not stream_k: a convolution's 192-wide tile with a residual has no registers to spare
//       CHECK:   #kiln.kernel<variant = conv_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 98, pixel_tile = [32, 2, 2]>
func.func @residual_192(%a: tensor<32x14x14x256xf16>, %wa: tensor<384x3x3x256xf16>, %r: tensor<32x14x14x384xf16>) -> tensor<32x14x14x384xf16> {
  %0 = kiln.fusion conv_epilogue ins(%a, %wa, %r : tensor<32x14x14x256xf16>, tensor<384x3x3x256xf16>, tensor<32x14x14x384xf16>) -> tensor<32x14x14x384xf16> {
  ^bb0(%x: tensor<32x14x14x256xf16>, %w: tensor<384x3x3x256xf16>, %res: tensor<32x14x14x384xf16>):
    %y = kiln.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x14x14x256xf16>, tensor<384x3x3x256xf16>) -> tensor<32x14x14x384xf16>
    %s = kiln.add %y, %res : tensor<32x14x14x384xf16>
    kiln.yield %s : tensor<32x14x14x384xf16>
  }
  return %0 : tensor<32x14x14x384xf16>
}
