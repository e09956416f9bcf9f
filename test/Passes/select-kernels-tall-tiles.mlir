// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-rows=128}))" | FileCheck %s --check-prefix=SHORT
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=MODEL
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-rows=192}))" | FileCheck %s --check-prefix=TALL
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-residual-ring=false}))" | FileCheck %s --check-prefix=COPIED
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-rows=96}))" 2>&1 | FileCheck %s --check-prefix=BADROWS
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-rows=192 wgmma-schedule=pingpong}))" 2>&1 | FileCheck %s --check-prefix=BADTALL

// 192-row tiles where the cost model finds them faster (wgmma-rows=0, the
// default):
// ViT's FFN down-projection at batch 32 (6304 rows) in 33 x 4 = 132 tiles
// of 192 x 192, one wave, where 128 x 192 tiles make 200 (two waves, the
// second half empty); 3 stages of 48 KiB fit beside the staging, 4 beside
// its results' half with the residual through the ring.
// SHORT-LABEL: func.func @vit_down(
//       SHORT:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 132>
// MODEL-LABEL: func.func @vit_down(
//       MODEL:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 4, grid_limit = 132, residual_ring = true>
// TALL-LABEL: func.func @vit_down(
//       TALL:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 4, grid_limit = 132, residual_ring = true>
// BADROWS: error: --wgmma-rows must be 0 (the cost model's choice), 128 or 192, got 96
// BADTALL: error: --wgmma-rows=192 takes the cooperative schedule, one block a multiprocessor and no multicast
func.func @vit_down(%x: tensor<6304x3072xf16>, %w: tensor<768x3072xf16>, %r: tensor<6304x768xf16>) -> tensor<6304x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<6304x3072xf16>, tensor<768x3072xf16>, tensor<6304x768xf16>) -> tensor<6304x768xf16> {
  ^bb0(%a: tensor<6304x3072xf16>, %bw: tensor<768x3072xf16>, %res: tensor<6304x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<6304x3072xf16>, tensor<768x3072xf16>) -> tensor<6304x768xf16>
    %s = kiln.add %l, %res : tensor<6304x768xf16>
    kiln.yield %s : tensor<6304x768xf16>
  }
  return %0 : tensor<6304x768xf16>
}

// -----

// BERT's (4096 rows): 22 row tiles of 192 make 88 tiles, two thirds of the
// multiprocessors, where 128 x 192 tiles make 128: the model keeps 128
// rows; forced, 192 rows 128 wide (132 tiles).
// MODEL-LABEL: func.func @bert_down(
//       MODEL:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 128, residual_ring = true>
// TALL-LABEL: func.func @bert_down(
//       TALL:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], stages = 4, grid_limit = 132, residual_ring = true>
func.func @bert_down(%x: tensor<4096x3072xf16>, %w: tensor<768x3072xf16>, %r: tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x3072xf16>, %bw: tensor<768x3072xf16>, %res: tensor<4096x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x3072xf16>, tensor<768x3072xf16>) -> tensor<4096x768xf16>
    %s = kiln.add %l, %res : tensor<4096x768xf16>
    kiln.yield %s : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}

// -----

// The FFN's down-projection (4096 x 1024 x 4096, a residual through the
// ring): one wave of 128 x 256 tiles, not 132 of 192 x 192 (slower on the
// H200) nor two of 128 x 128 on most blocks (slower on the H100). BERT's
// QKV (4096 x 2304 x 768): the cost model's factors call two 192 x 192
// tiles a block cheaper than three of 128 x 192, but the busiest block
// would compute as many outputs: 128 rows.
// MODEL-LABEL: func.func @ffn_down(
//       MODEL:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 4, grid_limit = 128, residual_ring = true>
// MODEL-LABEL: func.func @bert_qkv(
//       MODEL:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 132>
func.func @ffn_down(%x: tensor<4096x4096xf16>, %w: tensor<1024x4096xf16>, %r: tensor<4096x1024xf16>) -> tensor<4096x1024xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<4096x4096xf16>, tensor<1024x4096xf16>, tensor<4096x1024xf16>) -> tensor<4096x1024xf16> {
  ^bb0(%a: tensor<4096x4096xf16>, %bw: tensor<1024x4096xf16>, %res: tensor<4096x1024xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x4096xf16>, tensor<1024x4096xf16>) -> tensor<4096x1024xf16>
    %s = kiln.add %l, %res : tensor<4096x1024xf16>
    kiln.yield %s : tensor<4096x1024xf16>
  }
  return %0 : tensor<4096x1024xf16>
}
func.func @bert_qkv(%x: tensor<4096x768xf16>, %w: tensor<2304x768xf16>) -> tensor<4096x2304xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<2304x768xf16>) -> tensor<4096x2304xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<2304x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<2304x768xf16>) -> tensor<4096x2304xf16>
    kiln.yield %l : tensor<4096x2304xf16>
  }
  return %0 : tensor<4096x2304xf16>
}

// -----

// 1x1 convolutions at batch 32 take 192 rows where the 128-row choice is
// 64 wide (or under a wave) and 192-row tiles fill the GPU in one or two
// waves: ResNet-50's 512 -> 128 at 28 x 28 (131 tiles of 192 x 128, where
// 128 rows give 392 ping-pong tiles 64 wide); MobileNetV3's 120 -> 40 +
// residual at 28 x 28 (131 of 192 x 64: with a residual, 64 wide only).
// MODEL-LABEL: func.func @pointwise_one_wave(
//       MODEL:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], stages = 4, grid_limit = 131>
// SHORT-LABEL: func.func @pointwise_one_wave(
//       SHORT:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, schedule = pingpong>
// MODEL-LABEL: func.func @pointwise_residual(
//       MODEL:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 64, 64], stages = 6, grid_limit = 131, residual_ring = true>
func.func @pointwise_one_wave(%x: tensor<32x28x28x512xf16>, %w: tensor<128x1x1x512xf16>) -> tensor<32x28x28x128xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<32x28x28x512xf16>, tensor<128x1x1x512xf16>) -> tensor<32x28x28x128xf16> {
  ^bb0(%a: tensor<32x28x28x512xf16>, %aw: tensor<128x1x1x512xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x28x28x512xf16>, tensor<128x1x1x512xf16>) -> tensor<32x28x28x128xf16>
    %r = kiln.relu %c : tensor<32x28x28x128xf16>
    kiln.yield %r : tensor<32x28x28x128xf16>
  }
  return %0 : tensor<32x28x28x128xf16>
}
func.func @pointwise_residual(%x: tensor<32x28x28x120xf16>, %w: tensor<40x1x1x120xf16>, %r: tensor<32x28x28x40xf16>) -> tensor<32x28x28x40xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %r : tensor<32x28x28x120xf16>, tensor<40x1x1x120xf16>, tensor<32x28x28x40xf16>) -> tensor<32x28x28x40xf16> {
  ^bb0(%a: tensor<32x28x28x120xf16>, %aw: tensor<40x1x1x120xf16>, %ar: tensor<32x28x28x40xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x28x28x120xf16>, tensor<40x1x1x120xf16>) -> tensor<32x28x28x40xf16>
    %s = kiln.add %c, %ar : tensor<32x28x28x40xf16>
    kiln.yield %s : tensor<32x28x28x40xf16>
  }
  return %0 : tensor<32x28x28x40xf16>
}

// -----

// Not 192 rows: ResNet-50's 2048 -> 512 at 7 x 7 (72 tiles of 192 x 64,
// under a wave), its 512 -> 256 at 28 x 28 (the 128-row choice is 128
// wide), and, with the residual copied by rows (wgmma-residual-ring=false),
// its 64 -> 256 + residual at 56 x 56 (four waves) and its 256 -> 1024 +
// residual at 14 x 14 (192 x 128 with a residual). With the residual
// through the ring (the default) the last two take 192 x 128 tiles
// (select-kernels-residual-ring.mlir says why). Forced, each takes them.
// MODEL-LABEL: func.func @pointwise_under_a_wave(
//       MODEL:   #kiln.kernel<variant = gemm_wgmma, tile = [128,
// MODEL-LABEL: func.func @pointwise_four_waves(
//       MODEL:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], {{.*}}residual_ring = true
// MODEL-LABEL: func.func @pointwise_wide(
//       MODEL:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 128,
// MODEL-LABEL: func.func @pointwise_wide_residual(
//       MODEL:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], {{.*}}residual_ring = true
// COPIED-LABEL: func.func @pointwise_four_waves(
//       COPIED:   #kiln.kernel<variant = gemm_wgmma, tile = [128,
// COPIED-LABEL: func.func @pointwise_wide_residual(
//       COPIED:   #kiln.kernel<variant = gemm_wgmma, tile = [128,
// TALL-LABEL: func.func @pointwise_under_a_wave(
//       TALL:   #kiln.kernel<variant = gemm_wgmma, tile = [192,
// TALL-LABEL: func.func @pointwise_four_waves(
//       TALL:   #kiln.kernel<variant = gemm_wgmma, tile = [192,
// TALL-LABEL: func.func @pointwise_wide(
//       TALL:   #kiln.kernel<variant = gemm_wgmma, tile = [192,
// TALL-LABEL: func.func @pointwise_wide_residual(
//       TALL:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 128,
func.func @pointwise_under_a_wave(%x: tensor<32x7x7x2048xf16>, %w: tensor<512x1x1x2048xf16>) -> tensor<32x7x7x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<32x7x7x2048xf16>, tensor<512x1x1x2048xf16>) -> tensor<32x7x7x512xf16> {
  ^bb0(%a: tensor<32x7x7x2048xf16>, %aw: tensor<512x1x1x2048xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x7x7x2048xf16>, tensor<512x1x1x2048xf16>) -> tensor<32x7x7x512xf16>
    %r = kiln.relu %c : tensor<32x7x7x512xf16>
    kiln.yield %r : tensor<32x7x7x512xf16>
  }
  return %0 : tensor<32x7x7x512xf16>
}
func.func @pointwise_four_waves(%x: tensor<32x56x56x64xf16>, %w: tensor<256x1x1x64xf16>, %r: tensor<32x56x56x256xf16>) -> tensor<32x56x56x256xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %r : tensor<32x56x56x64xf16>, tensor<256x1x1x64xf16>, tensor<32x56x56x256xf16>) -> tensor<32x56x56x256xf16> {
  ^bb0(%a: tensor<32x56x56x64xf16>, %aw: tensor<256x1x1x64xf16>, %ar: tensor<32x56x56x256xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x64xf16>, tensor<256x1x1x64xf16>) -> tensor<32x56x56x256xf16>
    %s = kiln.add %c, %ar : tensor<32x56x56x256xf16>
    kiln.yield %s : tensor<32x56x56x256xf16>
  }
  return %0 : tensor<32x56x56x256xf16>
}
func.func @pointwise_wide(%x: tensor<32x28x28x512xf16>, %w: tensor<256x1x1x512xf16>) -> tensor<32x28x28x256xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<32x28x28x512xf16>, tensor<256x1x1x512xf16>) -> tensor<32x28x28x256xf16> {
  ^bb0(%a: tensor<32x28x28x512xf16>, %aw: tensor<256x1x1x512xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x28x28x512xf16>, tensor<256x1x1x512xf16>) -> tensor<32x28x28x256xf16>
    %r = kiln.relu %c : tensor<32x28x28x256xf16>
    kiln.yield %r : tensor<32x28x28x256xf16>
  }
  return %0 : tensor<32x28x28x256xf16>
}
func.func @pointwise_wide_residual(%x: tensor<32x14x14x256xf16>, %w: tensor<1024x1x1x256xf16>, %r: tensor<32x14x14x1024xf16>) -> tensor<32x14x14x1024xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %r : tensor<32x14x14x256xf16>, tensor<1024x1x1x256xf16>, tensor<32x14x14x1024xf16>) -> tensor<32x14x14x1024xf16> {
  ^bb0(%a: tensor<32x14x14x256xf16>, %aw: tensor<1024x1x1x256xf16>, %ar: tensor<32x14x14x1024xf16>):
    %c = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x14x14x256xf16>, tensor<1024x1x1x256xf16>) -> tensor<32x14x14x1024xf16>
    %s = kiln.add %c, %ar : tensor<32x14x14x1024xf16>
    kiln.yield %s : tensor<32x14x14x1024xf16>
  }
  return %0 : tensor<32x14x14x1024xf16>
}
