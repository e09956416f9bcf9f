// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-schedule=cooperative}))" | FileCheck %s --check-prefix=COOP
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-schedule=pingpong wgmma-multicast=2}))" | FileCheck %s --check-prefix=PAIRS
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-schedule=pingpong targets=sm_80}))" | FileCheck %s --check-prefix=SM80
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-schedule=stream-k}))" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-multicast=4}))" 2>&1 | FileCheck %s --check-prefix=BADPAIRS
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-blocks-per-sm=2}))" | FileCheck %s --check-prefix=TWO
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-blocks-per-sm=3}))" 2>&1 | FileCheck %s --check-prefix=BADTWO
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-schedule=epilogue_warpgroups}))" | FileCheck %s --check-prefix=EPI
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-schedule=epilogue_warpgroups wgmma-multicast=2}))" 2>&1 | FileCheck %s --check-prefix=BADEPI
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=AUTO
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-multicast=2}))" | FileCheck %s --check-prefix=CLUSTER
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-multicast=2 wgmma-residual-ring=false}))" | FileCheck %s --check-prefix=CLUSTERCOPIED

// The Hopper main loop's schedule and multicast as the knobs force them
// (the default cost model is select-kernels.mlir's): cooperative alone
// takes 256-wide tiles for BERT's FFN up-projection at batch 32; ping-pong
// alone 128 (a warpgroup holds a whole tile), in clusters of two row tiles
// that share B when asked; sm_80 has neither wgmma nor clusters.
// COOP-LABEL: func.func @ffn_up(
//       COOP:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 132>
// PAIRS-LABEL: func.func @ffn_up(
//       PAIRS:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 132, schedule = pingpong, multicast = 2>
// SM80-LABEL: func.func @ffn_up(
//       SM80:   #kiln.kernel<variant = gemm_mma, tile = [128, 128, 32]>
// Two blocks a multiprocessor: cooperative 64-wide tiles (what 80 registers
// a thread hold), a ring of 3 stages (what fits twice), a block per tile up
// to two per multiprocessor.
// TWO-LABEL: func.func @ffn_up(
//       TWO:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 3, grid_limit = 264, blocks_per_sm = 2>
// BAD: error: --wgmma-schedule must be auto, cooperative, pingpong or epilogue_warpgroups, got 'stream-k'
// BADPAIRS: error: --wgmma-multicast must be 0 (the cost model's choice), 1 or 2, got 4
// BADTWO: error: --wgmma-blocks-per-sm must be 0 (the cost model's choice), 1 or 2, got 3
// Epilogue warpgroups: 128-wide tiles (a consumer thread holds 64
// accumulators), a ring of 3 stages beside the 64 KiB handoff; not with
// pairs.
// EPI-LABEL: func.func @ffn_up(
//       EPI:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 3, grid_limit = 132, schedule = epilogue_warpgroups>
// BADEPI: error: --wgmma-schedule=epilogue_warpgroups takes one block a multiprocessor and no multicast
func.func @ffn_up(%x: tensor<4096x768xf16>, %w: tensor<3072x768xf16>) -> tensor<4096x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<3072x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16>
    kiln.yield %l : tensor<4096x3072xf16>
  }
  return %0 : tensor<4096x3072xf16>
}

// -----

// ViT-B/16's FFN up-projection with its GELU: the cost model's cooperative
// 192-row tiles (4 a block on 132 multiprocessors); asked for the epilogue
// warpgroups, 128-row tiles (theirs alone: two consumers hand them fp32
// accumulators).
// EPI-LABEL: func.func @vit_ffn_up_gelu(
//       EPI:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 3, grid_limit = 132, schedule = epilogue_warpgroups>
// AUTO-LABEL: func.func @vit_ffn_up_gelu(
//       AUTO:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 132>
func.func @vit_ffn_up_gelu(%x: tensor<6304x768xf16>, %w: tensor<3072x768xf16>, %b: tensor<3072xf16>) -> tensor<6304x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<6304x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<6304x3072xf16> {
  ^bb0(%a: tensor<6304x768xf16>, %bw: tensor<3072x768xf16>, %bb: tensor<3072xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<6304x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<6304x3072xf16>
    %g = kiln.gelu %l : tensor<6304x3072xf16>
    kiln.yield %g : tensor<6304x3072xf16>
  }
  return %0 : tensor<6304x3072xf16>
}

// -----

// With a residual, ping-pong's tiles are 64 wide: beside 128 accumulators a
// thread ptxas would issue the residual's loads one at a time. One row tile
// (M = 100) has no neighbour to share B with: no cluster.
// COOP-LABEL: func.func @residual(
//       COOP:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 128, residual_ring = true>
// PAIRS-LABEL: func.func @residual(
//       PAIRS:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, schedule = pingpong, multicast = 2>
// PAIRS-LABEL: func.func @one_row_tile(
//       PAIRS:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, schedule = pingpong>
// With a residual too (64 wide at N = 768: 384 tiles, three a block
// against two of 128, each 1.15x the columns' cost); a convolution asking
// for the epilogue warpgroups takes the cost model's schedule (they are
// the GEMM's alone), here a 1x1 one on the GEMM main loop.
// EPI-LABEL: func.func @residual(
//       EPI:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, schedule = epilogue_warpgroups>
// EPI-LABEL: func.func @pointwise(
//       EPI:   #kiln.kernel<variant = gemm_wgmma, tile = [192, 128, 64], stages = 4, grid_limit = 132>
func.func @residual(%x: tensor<4096x768xf16>, %w: tensor<768x768xf16>, %r: tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<4096x768xf16>, tensor<768x768xf16>, tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x768xf16>, %ar: tensor<4096x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<768x768xf16>) -> tensor<4096x768xf16>
    %s = kiln.add %l, %ar : tensor<4096x768xf16>
    kiln.yield %s : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}
func.func @one_row_tile(%x: tensor<100x768xf16>, %w: tensor<17920x768xf16>) -> tensor<100x17920xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<100x768xf16>, tensor<17920x768xf16>) -> tensor<100x17920xf16> {
  ^bb0(%a: tensor<100x768xf16>, %bw: tensor<17920x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<100x768xf16>, tensor<17920x768xf16>) -> tensor<100x17920xf16>
    kiln.yield %l : tensor<100x17920xf16>
  }
  return %0 : tensor<100x17920xf16>
}
func.func @pointwise(%x: tensor<32x14x14x1024xf16>, %w: tensor<512x1x1x1024xf16>, %b: tensor<512xf16>) -> tensor<32x14x14x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<32x14x14x1024xf16>, tensor<512x1x1x1024xf16>, tensor<512xf16>) -> tensor<32x14x14x512xf16> {
  ^bb0(%ax: tensor<32x14x14x1024xf16>, %aw: tensor<512x1x1x1024xf16>, %ab: tensor<512xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x14x14x1024xf16>, tensor<512x1x1x1024xf16>, tensor<512xf16>) -> tensor<32x14x14x512xf16>
    kiln.yield %y : tensor<32x14x14x512xf16>
  }
  return %0 : tensor<32x14x14x512xf16>
}

// -----

// Pairs sharing B by multicast keep the residual in the ring (each block
// loads its own rows' slices): BERT's FFN down-projection at batch 32, 16
// pairs of 128 x 192 row tiles a column, 5 stages beside the staging's
// results half; copied by rows, 4.
// CLUSTER-LABEL: func.func @bert_down(
//       CLUSTER:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 128, multicast = 2, residual_ring = true>
// CLUSTERCOPIED-LABEL: func.func @bert_down(
//       CLUSTERCOPIED:   #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 128, multicast = 2>
func.func @bert_down(%x: tensor<4096x3072xf16>, %w: tensor<768x3072xf16>, %r: tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<4096x3072xf16>, tensor<768x3072xf16>, tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x3072xf16>, %bw: tensor<768x3072xf16>, %res: tensor<4096x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x3072xf16>, tensor<768x3072xf16>) -> tensor<4096x768xf16>
    %s = kiln.add %l, %res : tensor<4096x768xf16>
    kiln.yield %s : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}
