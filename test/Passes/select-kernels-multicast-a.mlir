// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-multicast-a=true}))" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-multicast-a=true explain=true}))" 2>&1 | FileCheck %s --check-prefix=WHY
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-multicast-a=true wgmma-multicast=2 explain=true}))" 2>&1 | FileCheck %s --check-prefix=PAIRSB
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-multicast-a=true targets=sm_80}))" | FileCheck %s --check-prefix=SM80

// wgmma-multicast-a keeps the cost model's tile and runs it in pairs of
// column tiles that share A (multicast_a), where the tile count stays the
// same: an even count of column tiles. Off by default; pairs sharing B
// asked for (wgmma-multicast=2) keep B's; sm_80 has no clusters.

// ResNet-50's 1x1 2048 -> 512 at 7 x 7, batch 32: 104 tiles of 128 x 64,
// 8 column tiles a row.
// OFF-LABEL: func.func @last_stage_1x1(
//       OFF:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 104>
// CHECK-LABEL: func.func @last_stage_1x1(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 104, multicast = 2, multicast_a = true>
// WHY: gemm_wgmma: 1568 x 512 x 2048 on sm_90a;{{.*}}; pairs of column tiles sharing A by multicast (wgmma-multicast-a)
// PAIRSB: gemm_wgmma: 1568 x 512 x 2048 on sm_90a;{{.*}}; not pairs sharing A: the tile takes pairs sharing B (wgmma-multicast)
// SM80-LABEL: func.func @last_stage_1x1(
//   SM80-NOT:   multicast_a
//       SM80:   return
func.func @last_stage_1x1(%x: tensor<32x7x7x2048xf16>, %w: tensor<512x1x1x2048xf16>, %b: tensor<512xf16>) -> tensor<32x7x7x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<32x7x7x2048xf16>, tensor<512x1x1x2048xf16>, tensor<512xf16>) -> tensor<32x7x7x512xf16> {
  ^bb0(%a: tensor<32x7x7x2048xf16>, %aw: tensor<512x1x1x2048xf16>, %ab: tensor<512xf16>):
    %y = kiln.conv2d %a, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x7x7x2048xf16>, tensor<512x1x1x2048xf16>, tensor<512xf16>) -> tensor<32x7x7x512xf16>
    %u = kiln.relu %y : tensor<32x7x7x512xf16>
    kiln.yield %u : tensor<32x7x7x512xf16>
  }
  return %0 : tensor<32x7x7x512xf16>
}

// -----

// BERT's FFN down-projection at batch 32: 128 x 192 tiles with the
// residual through the ring, which each block of a pair loads for its own
// columns.
// CHECK-LABEL: func.func @bert_ffn_down(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 128, multicast = 2, residual_ring = true, multicast_a = true>
func.func @bert_ffn_down(%x: tensor<4096x3072xf16>, %w: tensor<768x3072xf16>, %b: tensor<768xf16>, %r: tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b, %r : tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>, tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x3072xf16>, %aw: tensor<768x3072xf16>, %ab: tensor<768xf16>, %ar: tensor<4096x768xf16>):
    %l = kiln.linear %a, %aw, %ab : (tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<4096x768xf16>
    %t = kiln.add %l, %ar : tensor<4096x768xf16>
    kiln.yield %t : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}

// -----

// ViT-B/16's FFN up-projection at batch 32: 192 x 192 tiles, 96 rows of A
// a block.
// CHECK-LABEL: func.func @vit_ffn_up(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 132, multicast = 2, multicast_a = true>
func.func @vit_ffn_up(%x: tensor<6304x768xf16>, %w: tensor<3072x768xf16>, %b: tensor<3072xf16>) -> tensor<6304x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<6304x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<6304x3072xf16> {
  ^bb0(%a: tensor<6304x768xf16>, %aw: tensor<3072x768xf16>, %ab: tensor<3072xf16>):
    %l = kiln.linear %a, %aw, %ab : (tensor<6304x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<6304x3072xf16>
    %g = kiln.gelu %l : tensor<6304x3072xf16>
    kiln.yield %g : tensor<6304x3072xf16>
  }
  return %0 : tensor<6304x3072xf16>
}

// -----

// Three column tiles of 128: a pair would compute a fourth past N in every
// row, so the tiles stay single.
// CHECK-LABEL: func.func @odd_columns(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 96>
// WHY: gemm_wgmma: 4096 x 320 x 768 on sm_90a;{{.*}}; not pairs sharing A: 3 column tiles of 128 (an even count of 2 or more)
func.func @odd_columns(%x: tensor<4096x768xf16>, %w: tensor<320x768xf16>) -> tensor<4096x320xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<320x768xf16>) -> tensor<4096x320xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %aw: tensor<320x768xf16>):
    %l = kiln.linear %a, %aw : (tensor<4096x768xf16>, tensor<320x768xf16>) -> tensor<4096x320xf16>
    kiln.yield %l : tensor<4096x320xf16>
  }
  return %0 : tensor<4096x320xf16>
}
