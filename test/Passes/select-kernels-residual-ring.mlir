// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-residual-ring=false}))" | FileCheck %s --check-prefix=OFF

// BERT's FFN down-projection at batch 32 (4096 x 768 x 3072) into its
// residual add: cooperative 128 x 192 tiles. The residual comes through
// the ring (residual_ring), the staging keeps its results' half alone, and
// the ring takes a fifth stage; ViT's (6304 rows, 192-row tiles) 4 stages.
// Two residuals, an fp32 result or a bias alone keep their rings of 4.
// With wgmma-residual-ring=false the residual is copied by rows: 4 and 3
// stages.
// CHECK-LABEL: func.func @down_projections(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 128, residual_ring = true>
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 4, grid_limit = 132, residual_ring = true>
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 128>
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 128>
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 128>
// OFF-LABEL: func.func @down_projections(
//       OFF:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 128>
//       OFF:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 132>
//       OFF:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 128>
//       OFF:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 128>
//       OFF:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 128>
func.func @down_projections(%x: tensor<4096x3072xf16>, %w: tensor<768x3072xf16>, %b: tensor<768xf16>, %r: tensor<4096x768xf16>, %q: tensor<4096x768xf16>,
                            %vx: tensor<6304x3072xf16>, %vr: tensor<6304x768xf16>)
    -> (tensor<4096x768xf16>, tensor<6304x768xf16>, tensor<4096x768xf16>, tensor<4096x768xf32>, tensor<4096x768xf16>) {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b, %r : tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>, tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x3072xf16>, %aw: tensor<768x3072xf16>, %ab: tensor<768xf16>, %ar: tensor<4096x768xf16>):
    %l = kiln.linear %a, %aw, %ab : (tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<4096x768xf16>
    %t = kiln.add %l, %ar : tensor<4096x768xf16>
    kiln.yield %t : tensor<4096x768xf16>
  }
  %1 = kiln.fusion gemm_epilogue ins(%vx, %w, %b, %vr : tensor<6304x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>, tensor<6304x768xf16>) -> tensor<6304x768xf16> {
  ^bb0(%a: tensor<6304x3072xf16>, %aw: tensor<768x3072xf16>, %ab: tensor<768xf16>, %ar: tensor<6304x768xf16>):
    %l = kiln.linear %a, %aw, %ab : (tensor<6304x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<6304x768xf16>
    %t = kiln.add %l, %ar : tensor<6304x768xf16>
    kiln.yield %t : tensor<6304x768xf16>
  }
  %2 = kiln.fusion gemm_epilogue ins(%x, %w, %b, %r, %q : tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>, tensor<4096x768xf16>, tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x3072xf16>, %aw: tensor<768x3072xf16>, %ab: tensor<768xf16>, %ar: tensor<4096x768xf16>, %aq: tensor<4096x768xf16>):
    %l = kiln.linear %a, %aw, %ab : (tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<4096x768xf16>
    %t = kiln.add %l, %ar : tensor<4096x768xf16>
    %u = kiln.add %t, %aq : tensor<4096x768xf16>
    kiln.yield %u : tensor<4096x768xf16>
  }
  %3 = kiln.fusion gemm_epilogue ins(%x, %w, %b, %r : tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>, tensor<4096x768xf16>) -> tensor<4096x768xf32> {
  ^bb0(%a: tensor<4096x3072xf16>, %aw: tensor<768x3072xf16>, %ab: tensor<768xf16>, %ar: tensor<4096x768xf16>):
    %l = kiln.linear %a, %aw, %ab : (tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<4096x768xf16>
    %t = kiln.add %l, %ar : tensor<4096x768xf16>
    %f = kiln.cast %t : tensor<4096x768xf16> to tensor<4096x768xf32>
    kiln.yield %f : tensor<4096x768xf32>
  }
  %4 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x3072xf16>, %aw: tensor<768x3072xf16>, %ab: tensor<768xf16>):
    %l = kiln.linear %a, %aw, %ab : (tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<4096x768xf16>
    kiln.yield %l : tensor<4096x768xf16>
  }
  return %0, %1, %2, %3, %4 : tensor<4096x768xf16>, tensor<6304x768xf16>, tensor<4096x768xf16>, tensor<4096x768xf32>, tensor<4096x768xf16>
}

// -----

// ResNet-50's expands into the block's residual at batch 32. With the
// residual through the ring, 192-row cooperative tiles where the busiest
// block's outputs, weighted by the tile's cost a column, are fewer than
// those of the 128-row choice (128 x 64 ping-pong, 1.3 a column), fewest
// waves first: 64 -> 256 (8 waves of 192 x 128 at 1.05 against 24 tiles of
// 128 x 64), 256 -> 1024 (2 waves of 192 x 128 against 6 tiles; 192 x 192
// as many waves with more padding). 512 -> 2048 takes 128 x 256, past the
// residual's limit of accumulators but in one wave (104 tiles), where the
// busiest block computes fewer outputs than in 192 x 192 (99 tiles). With
// the ring off, 64-wide ping-pong tiles of
// 6 stages copy the residual by rows (through a ping-pong tile's ring the
// results moved from launch to launch: the dialect refuses it).
// CHECK-LABEL: func.func @expands(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], stages = 4, grid_limit = 132, residual_ring = true>
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], stages = 4, grid_limit = 132, residual_ring = true>
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 4, grid_limit = 104, residual_ring = true>
// OFF-LABEL: func.func @expands(
//       OFF:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, schedule = pingpong>
//       OFF:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, schedule = pingpong>
//       OFF:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, schedule = pingpong>
func.func @expands(%x0: tensor<32x56x56x64xf16>, %w0: tensor<256x1x1x64xf16>, %r0: tensor<32x56x56x256xf16>,
                   %x1: tensor<32x14x14x256xf16>, %w1: tensor<1024x1x1x256xf16>, %r1: tensor<32x14x14x1024xf16>,
                   %x2: tensor<32x7x7x512xf16>, %w2: tensor<2048x1x1x512xf16>, %r2: tensor<32x7x7x2048xf16>)
    -> (tensor<32x56x56x256xf16>, tensor<32x14x14x1024xf16>, tensor<32x7x7x2048xf16>) {
  %0 = kiln.fusion conv_epilogue ins(%x0, %w0, %r0 : tensor<32x56x56x64xf16>, tensor<256x1x1x64xf16>, tensor<32x56x56x256xf16>) -> tensor<32x56x56x256xf16> {
  ^bb0(%a: tensor<32x56x56x64xf16>, %aw: tensor<256x1x1x64xf16>, %ar: tensor<32x56x56x256xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x64xf16>, tensor<256x1x1x64xf16>) -> tensor<32x56x56x256xf16>
    %t = kiln.add %y, %ar : tensor<32x56x56x256xf16>
    %u = kiln.relu %t : tensor<32x56x56x256xf16>
    kiln.yield %u : tensor<32x56x56x256xf16>
  }
  %1 = kiln.fusion conv_epilogue ins(%x1, %w1, %r1 : tensor<32x14x14x256xf16>, tensor<1024x1x1x256xf16>, tensor<32x14x14x1024xf16>) -> tensor<32x14x14x1024xf16> {
  ^bb0(%a: tensor<32x14x14x256xf16>, %aw: tensor<1024x1x1x256xf16>, %ar: tensor<32x14x14x1024xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x14x14x256xf16>, tensor<1024x1x1x256xf16>) -> tensor<32x14x14x1024xf16>
    %t = kiln.add %y, %ar : tensor<32x14x14x1024xf16>
    %u = kiln.relu %t : tensor<32x14x14x1024xf16>
    kiln.yield %u : tensor<32x14x14x1024xf16>
  }
  %2 = kiln.fusion conv_epilogue ins(%x2, %w2, %r2 : tensor<32x7x7x512xf16>, tensor<2048x1x1x512xf16>, tensor<32x7x7x2048xf16>) -> tensor<32x7x7x2048xf16> {
  ^bb0(%a: tensor<32x7x7x512xf16>, %aw: tensor<2048x1x1x512xf16>, %ar: tensor<32x7x7x2048xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x7x7x512xf16>, tensor<2048x1x1x512xf16>) -> tensor<32x7x7x2048xf16>
    %t = kiln.add %y, %ar : tensor<32x7x7x2048xf16>
    %u = kiln.relu %t : tensor<32x7x7x2048xf16>
    kiln.yield %u : tensor<32x7x7x2048xf16>
  }
  return %0, %1, %2 : tensor<32x56x56x256xf16>, tensor<32x14x14x1024xf16>, tensor<32x7x7x2048xf16>
}

// -----

// Not 192 rows where both fill one wave: MobileNetV3's 672 -> 112 +
// residual at 14 x 14 (66 tiles of 192 x 64 on 132 multiprocessors, a
// block's 12288 outputs at 1.25 a column) keeps 98 tiles of 128 x 64 (8192
// at 1.3), the residual through the ring.
// CHECK-LABEL: func.func @half_empty_wave(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], {{.*}}grid_limit = 98, residual_ring = true>
func.func @half_empty_wave(%x: tensor<32x14x14x672xf16>, %w: tensor<112x1x1x672xf16>, %r: tensor<32x14x14x112xf16>) -> tensor<32x14x14x112xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %r : tensor<32x14x14x672xf16>, tensor<112x1x1x672xf16>, tensor<32x14x14x112xf16>) -> tensor<32x14x14x112xf16> {
  ^bb0(%a: tensor<32x14x14x672xf16>, %aw: tensor<112x1x1x672xf16>, %ar: tensor<32x14x14x112xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x14x14x672xf16>, tensor<112x1x1x672xf16>) -> tensor<32x14x14x112xf16>
    %t = kiln.add %y, %ar : tensor<32x14x14x112xf16>
    kiln.yield %t : tensor<32x14x14x112xf16>
  }
  return %0 : tensor<32x14x14x112xf16>
}
