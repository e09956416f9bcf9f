// RUN: kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s
// RUN: kiln-translate --kiln-to-sm90a-ptx %s --split-input-file | FileCheck %s --check-prefix=PTX

// Every forced variant compiles with NVRTC for sm_90a.
// PTX: // === ptx mma_k0
// PTX: // === ptx split_k0
// PTX: // === ptx wgmma_k0
// PTX: wgmma.mma_async
// PTX: // === ptx pingpong_k0
// PTX: bar.sync
// PTX: wgmma.mma_async
// PTX: bar.arrive
// PTX: // === ptx multicast_k0
// PTX: barrier.cluster.arrive
// PTX: wgmma.mma_async.sync.aligned.m64n256k16
// PTX: mapa.shared::cluster
// PTX: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
// PTX: // === ptx multicast_a_k0
// PTX: barrier.cluster.arrive
// PTX: mapa.shared::cluster
// PTX: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
// PTX: // === ptx multicast_a_tall_k0
// PTX: wgmma.mma_async.sync.aligned.m64n192k16
// PTX: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
// PTX: // === ptx two_blocks_k0
// PTX: .minnctapersm 2
// PTX: wgmma.mma_async.sync.aligned.m64n64k16
// PTX: // === ptx simt_attention_k0
// PTX: // === ptx wide_attention_k0
// PTX: .maxntid 256
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: // === ptx conv_split_k0
// PTX: // === ptx tf32_k0
// PTX: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// PTX: // === ptx narrow_k0
// PTX: ld.global.nc.v4
// PTX: ld.shared.v4.f32
// PTX: // === ptx gemv_k0
// PTX: ld.global.nc.v4
// PTX: shfl.sync.bfly
// PTX: // === ptx gemv_odd_k0
// PTX: ld.global.nc.u16
// PTX: shfl.sync.bfly
// PTX: // === ptx stream_k_k0
// PTX: st.release.gpu.global.b32
// PTX: ld.acquire.gpu.global.b32
// PTX: // === ptx stream_k_conv_k0
// PTX: st.release.gpu.global.b32
// PTX: ld.acquire.gpu.global.b32
// PTX: // === ptx streamed_k0
// PTX: .minnctapersm 2
// PTX: cp.async.cg.shared.global
// PTX: ldmatrix.sync.aligned
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: st.global.v4
// PTX: // === ptx prefetched_residual_k0
// PTX: cp.async.cg.shared.global
// PTX: wgmma.mma_async
// PTX: cp.async.wait_group 2

// Each kernel variant forced by a written `kiln.kernel` on a shape where
// kiln-select-kernels would take another (it takes gemm_split_k, split 4,
// for this batch-1 projection): the code generator emits what it is told.

// mma.sync 128 x 128 tiles: 6 x 1 blocks of 256 threads, no shared memory
// beyond the kernel's static arrays.
// CHECK-LABEL: // === kernel mma_k0 grid(6, 1, 1) block(256) shared(0) inputs(2) outputs(1)
//   CHECK-NOT: wgmma
//       CHECK:   kiln::mma_gemm<__half, true>(in0 + aOffset, in1 + bOffset, 128, 768, 768, epilogue);
func.func @mma(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_mma, tile = [128, 128, 32]>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// Split-K with a cluster of 2, 32-wide k tiles 4 deep: 12 x 2 columns of
// blocks, the shared memory the pipeline needs checked at compile time.
// CHECK-LABEL: // === kernel split_k0 grid(24, 2, 1) block(128)
//       CHECK: #define KILN_SPLIT_CLUSTER __cluster_dims__(2, 1, 1)
//       CHECK: static_assert(kiln::splitk_shared_bytes<__half, true, 32, 4>() ==
//       CHECK:   kiln::splitk_gemm<__half, true, 2, 32, 4>(in0 + aOffset, in1 + bOffset, 128, 768, 768, epilogue);
func.func @split(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 32], stages = 4, split_k = 2>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// TMA + wgmma on a persistent grid capped by grid_limit (2 blocks walk the
// 3 tiles of 128 x 256).
// CHECK-LABEL: // === kernel wgmma_k0 grid(2, 1, 1) block(384) shared(185344)
//       CHECK:   kiln::sm90::wgmma_gemm<__half, 256, 3, kiln::sm90::Schedule::cooperative, 1, 1>(map0, map1, 128, 768, 768, epilogue);
func.func @wgmma(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 2>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// The ping-pong schedule: each consumer warpgroup multiplies all 128 rows of
// its own tile (m64n128k16 twice a k-step) and waits its turn on a named
// barrier; the launch is the cooperative tile's.
// CHECK-LABEL: // === kernel pingpong_k0 grid(2, 1, 1) block(384) shared(201728)
//       CHECK: static_assert(kiln::sm90::shared_bytes(128, 5) == 201728,
//       CHECK:   kiln::sm90::wgmma_gemm<__half, 128, 5, kiln::sm90::Schedule::pingpong, 1, 1>(map0, map1, 200, 600, 768, epilogue);
func.func @pingpong(%x: tensor<200x768xf16>, %w: tensor<600x768xf16>) -> tensor<200x600xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<200x768xf16>, tensor<600x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 2, schedule = pingpong>} -> tensor<200x600xf16> {
  ^bb0(%a: tensor<200x768xf16>, %bw: tensor<600x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<200x768xf16>, tensor<600x768xf16>) -> tensor<200x600xf16>
    kiln.yield %l : tensor<200x600xf16>
  }
  return %0 : tensor<200x600xf16>
}

// -----

// Clusters of two blocks that take neighbouring row tiles of the same
// columns and multicast B: each loads a 64 x 128 half of the 256-wide B tile
// (the tensor map's box), the grid whole clusters (3 row tiles make 2 pairs
// of 2 column tiles: 8 blocks, capped at 6 by grid_limit).
// CHECK-LABEL: // === kernel multicast_k0 grid(6, 1, 1) block(384) shared(185344) inputs(2) outputs(1) cluster(2, 1, 1)
//       CHECK: // tensor map of in1: dims [768, 500] box [64, 128]
//       CHECK: #define KILN_SPLIT_CLUSTER __cluster_dims__(2, 1, 1)
//       CHECK: KILN_SPLIT_CLUSTER __launch_bounds__(384, 1)
//       CHECK:   kiln::sm90::wgmma_gemm<__half, 256, 3, kiln::sm90::Schedule::cooperative, 2, 1>(map0, map1, 300, 500, 768, epilogue);
func.func @multicast(%x: tensor<300x768xf16>, %w: tensor<500x768xf16>) -> tensor<300x500xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<300x768xf16>, tensor<500x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 7, multicast = 2>} -> tensor<300x500xf16> {
  ^bb0(%a: tensor<300x768xf16>, %bw: tensor<500x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x768xf16>, tensor<500x768xf16>) -> tensor<300x500xf16>
    kiln.yield %l : tensor<300x500xf16>
  }
  return %0 : tensor<300x500xf16>
}

// -----

// Pairs that take neighbouring column tiles of the same rows and share A:
// each loads a 64-row half of the 128-row A tile (the tensor map's box)
// and its whole B tile; 3 row tiles by 2 pairs of 128-wide column tiles
// (the last one past N = 500 computed, not stored) make 12 blocks.
// CHECK-LABEL: // === kernel multicast_a_k0 grid(12, 1, 1) block(384)
//  CHECK-SAME: cluster(2, 1, 1)
//       CHECK: // tensor map of in0: dims [768, 300] box [64, 64]
//       CHECK: // tensor map of in1: dims [768, 500] box [64, 128]
//       CHECK:   kiln::sm90::wgmma_gemm<__half, 128, 4, kiln::sm90::Schedule::cooperative, 2, 1, false, 128, false, 1, true>(map0, map1, 300, 500, 768, epilogue);
func.func @multicast_a(%x: tensor<300x768xf16>, %w: tensor<500x768xf16>) -> tensor<300x500xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<300x768xf16>, tensor<500x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 4, grid_limit = 132, multicast = 2, multicast_a = true>} -> tensor<300x500xf16> {
  ^bb0(%a: tensor<300x768xf16>, %bw: tensor<500x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x768xf16>, tensor<500x768xf16>) -> tensor<300x500xf16>
    kiln.yield %l : tensor<300x500xf16>
  }
  return %0 : tensor<300x500xf16>
}

// -----

// 192-row tiles share A too (ViT's shapes): a 96-row half each; 3 row
// tiles (the last of 10 rows) by 2 pairs of column tiles, 12 blocks.
// CHECK-LABEL: // === kernel multicast_a_tall_k0 grid(12, 1, 1) block(512)
//  CHECK-SAME: cluster(2, 1, 1)
//       CHECK: // tensor map of in0: dims [768, 394] box [64, 96]
//       CHECK: // tensor map of in1: dims [768, 768] box [64, 192]
//       CHECK:   kiln::sm90::wgmma_gemm<__half, 192, 3, kiln::sm90::Schedule::cooperative, 2, 1, false, 192, false, 1, true>(map0, map1, 394, 768, 768, epilogue);
func.func @multicast_a_tall(%x: tensor<394x768xf16>, %w: tensor<768x768xf16>) -> tensor<394x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<394x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 132, multicast = 2, multicast_a = true>} -> tensor<394x768xf16> {
  ^bb0(%a: tensor<394x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<394x768xf16>, tensor<768x768xf16>) -> tensor<394x768xf16>
    kiln.yield %l : tensor<394x768xf16>
  }
  return %0 : tensor<394x768xf16>
}

// -----

// K split over clusters of two blocks: both take the same 128 x 128 tile (3
// row tiles x 4 column tiles: 12 pairs, capped at 10 by grid_limit = 20),
// each half of its 12 k-steps, and receive the peer's partial of the 64
// rows they keep beside the ring (32 KiB).
// CHECK-LABEL: // === kernel split_pairs_k0 grid(20, 1, 1) block(384) shared(201728) inputs(3) outputs(1) cluster(2, 1, 1)
//       CHECK: // tensor map of in1: dims [768, 500] box [64, 128]
//       CHECK: static_assert(kiln::sm90::shared_bytes(128, 4, false, 128, false, false, 2) == 201728
//       CHECK: #define KILN_SPLIT_CLUSTER __cluster_dims__(2, 1, 1)
//       CHECK: KILN_SPLIT_CLUSTER __launch_bounds__(384, 1)
//       CHECK:   kiln::sm90::wgmma_gemm<__half, 128, 4, kiln::sm90::Schedule::cooperative, 1, 1, false, 128, false, 2>(map0, map1, 300, 500, 768, epilogue);
func.func @split_pairs(%x: tensor<300x768xf16>, %w: tensor<500x768xf16>, %b: tensor<500xf16>) -> tensor<300x500xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<300x768xf16>, tensor<500x768xf16>, tensor<500xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 4, split_k = 2, grid_limit = 20>} -> tensor<300x500xf16> {
  ^bb0(%a: tensor<300x768xf16>, %bw: tensor<500x768xf16>, %bb: tensor<500xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<300x768xf16>, tensor<500x768xf16>, tensor<500xf16>) -> tensor<300x500xf16>
    %g = kiln.gelu %l : tensor<300x500xf16>
    kiln.yield %g : tensor<300x500xf16>
  }
  return %0 : tensor<300x500xf16>
}

// -----

// Two blocks a multiprocessor: the sm_90a image's launch bounds ask for two
// (the other images' mma.sync loop keeps one), and the grid holds two a
// multiprocessor's worth of tiles.
// CHECK-LABEL: // === kernel two_blocks_k0 grid(5, 1, 1) block(384) shared(111616) inputs(2) outputs(1)
//       CHECK: #define KILN_WGMMA_BLOCKS_PER_SM 2
//       CHECK: #define KILN_WGMMA_BLOCKS_PER_SM 1
//       CHECK: __launch_bounds__(384, KILN_WGMMA_BLOCKS_PER_SM)
//       CHECK:   kiln::sm90::wgmma_gemm<__half, 64, 3, kiln::sm90::Schedule::cooperative, 1, 2>(map0, map1, 300, 500, 768, epilogue);
func.func @two_blocks(%x: tensor<300x768xf16>, %w: tensor<500x768xf16>) -> tensor<300x500xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<300x768xf16>, tensor<500x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 3, grid_limit = 5, blocks_per_sm = 2>} -> tensor<300x500xf16> {
  ^bb0(%a: tensor<300x768xf16>, %bw: tensor<500x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x768xf16>, tensor<500x768xf16>) -> tensor<300x500xf16>
    kiln.yield %l : tensor<300x500xf16>
  }
  return %0 : tensor<300x500xf16>
}

// -----

// fp16 attention with head size 64 forced onto the SIMT kernel (16 query
// rows per block).
// CHECK-LABEL: // === kernel simt_attention_k0 grid(8, 12, 1) block(128) shared(0)
//       CHECK:   kiln::simt_attention<__half, 64,
func.func @simt_attention(%q: tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16> {
  %0 = kiln.fusion attention ins(%q, %q, %q : tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>) {kiln.kernel = #kiln.kernel<variant = attention_simt>} -> tensor<1x12x128x64xf16> {
  ^bb0(%a: tensor<1x12x128x64xf16>, %b: tensor<1x12x128x64xf16>, %c: tensor<1x12x128x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16>
    kiln.yield %o : tensor<1x12x128x64xf16>
  }
  return %0 : tensor<1x12x128x64xf16>
}

// -----

// Tensor-core attention with 128 queries a block: 8 warps, Q's 128 rows
// beside two buffers each of 64 rows of K and V ((128 + 256) x 72 halves).
// CHECK-LABEL: // === kernel wide_attention_k0 grid(1, 12, 1) block(256) shared(55296)
//       CHECK:   static_assert(kiln::attention_shared_bytes(64, 8) == 55296,
//       CHECK:   kiln::flash_attention<__half, 64, false, 8>(
func.func @wide_attention(%q: tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16> {
  %0 = kiln.fusion attention ins(%q, %q, %q : tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>) {kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [128, 64, 64]>} -> tensor<1x12x128x64xf16> {
  ^bb0(%a: tensor<1x12x128x64xf16>, %b: tensor<1x12x128x64xf16>, %c: tensor<1x12x128x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16>
    kiln.yield %o : tensor<1x12x128x64xf16>
  }
  return %0 : tensor<1x12x128x64xf16>
}

// -----

// A 3x3 convolution that fills the GPU, forced to split K 2 ways.
// CHECK-LABEL: // === kernel conv_split_k0 grid(2, 1568, 1) block(128)
//       CHECK:   kiln::conv::conv_splitk<{{kiln_[0-9A-F]+}}_shape, __half, 2, 64, 3>(
func.func @conv_split(%x: tensor<32x56x56x64xf16>, %w: tensor<64x3x3x64xf16>, %b: tensor<64xf16>) -> tensor<32x56x56x64xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<32x56x56x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>) {kiln.kernel = #kiln.kernel<variant = conv_split_k, tile = [64, 64, 64], stages = 3, split_k = 2>} -> tensor<32x56x56x64xf16> {
  ^bb0(%ax: tensor<32x56x56x64xf16>, %aw: tensor<64x3x3x64xf16>, %ab: tensor<64xf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x56x56x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>) -> tensor<32x56x56x64xf16>
    kiln.yield %y : tensor<32x56x56x64xf16>
  }
  return %0 : tensor<32x56x56x64xf16>
}

// -----

// A 192-wide tile with a ring of 4 stages (forced): wgmma m64n192k16, the
// B operand's box 64 x 192, and the shared memory of 4 stages.
// CHECK-LABEL: // === kernel wgmma192_k0 grid(4, 1, 1) block(384) shared(201728)
//       CHECK: static_assert(kiln::sm90::shared_bytes(192, 4) == 201728,
//       CHECK:   kiln::sm90::wgmma_gemm<__half, 192, 4, kiln::sm90::Schedule::cooperative, 1, 1>(map0, map1, 128, 768, 768, epilogue);
func.func @wgmma192(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 132>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// tf32 tensor cores on an fp32 GEMM marked kiln.tf32, with a [K, N] B: 128 x
// 128 tiles of 256 threads, the operands rounded as they reach shared memory.
// CHECK-LABEL: // === kernel tf32_k0 grid(1, 2, 1) block(256) shared(0)
//       CHECK:   kiln::tf32_gemm<false>(in0 + aOffset, in1 + bOffset, 130, 100, 70, epilogue);
func.func @tf32(%x: tensor<130x70xf32>, %w: tensor<70x100xf32>) -> tensor<130x100xf32> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<130x70xf32>, tensor<70x100xf32>) {kiln.kernel = #kiln.kernel<variant = gemm_tf32, tile = [128, 128, 16]>} -> tensor<130x100xf32> {
  ^bb0(%a: tensor<130x70xf32>, %b: tensor<70x100xf32>):
    %l = kiln.matmul %a, %b {kiln.tf32} : (tensor<130x70xf32>, tensor<70x100xf32>) -> tensor<130x100xf32>
    kiln.yield %l : tensor<130x100xf32>
  }
  return %0 : tensor<130x100xf32>
}

// -----

// A thread per row on CUDA cores (gemm_narrow): 1x1 24 -> 16 over 3 x 13 x
// 11 pixels with a residual, blocks of 128 threads up to the grid limit,
// the weight in shared memory.
// CHECK-LABEL: // === kernel narrow_k0 grid(4, 1, 1) block(128) shared(0) inputs(4) outputs(1)
//       CHECK: #include "kiln_gemm_narrow.cuh"
//       CHECK:   kiln::narrow_gemm<__half, 16, 24>(in0 + aOffset, in1 + bOffset, 429, epilogue);
func.func @narrow(%x: tensor<3x13x11x24xf16>, %w: tensor<16x1x1x24xf16>, %b: tensor<16xf16>, %r: tensor<3x13x11x16xf16>) -> tensor<3x13x11x16xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<3x13x11x24xf16>, tensor<16x1x1x24xf16>, tensor<16xf16>, tensor<3x13x11x16xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_narrow, grid_limit = 7>} -> tensor<3x13x11x16xf16> {
  ^bb0(%a: tensor<3x13x11x24xf16>, %aw: tensor<16x1x1x24xf16>, %ab: tensor<16xf16>, %ar: tensor<3x13x11x16xf16>):
    %y = kiln.conv2d %a, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<3x13x11x24xf16>, tensor<16x1x1x24xf16>, tensor<16xf16>) -> tensor<3x13x11x16xf16>
    %t = kiln.add %y, %ar : tensor<3x13x11x16xf16>
    kiln.yield %t : tensor<3x13x11x16xf16>
  }
  return %0 : tensor<3x13x11x16xf16>
}

// -----

// A block per output column, a warp per 8 rows (gemm_gemv): a
// squeeze-and-excitation 1x1 convolution at batch 20, 240 -> 10 with
// SiLU: 10 blocks of 3 warps.
// CHECK-LABEL: // === kernel gemv_k0 grid(10, 1, 1) block(96) shared(0) inputs(3) outputs(1)
//       CHECK: #include "kiln_gemm_gemv.cuh"
//       CHECK: static_assert(kiln::gemv::threads(20) == 96,
//       CHECK:   kiln::gemv_gemm<__half, 20, 240>(in0 + aOffset, in1 + bOffset, epilogue);
func.func @gemv(%x: tensor<20x1x1x240xf16>, %w: tensor<10x1x1x240xf16>, %b: tensor<10xf16>) -> tensor<20x1x1x10xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<20x1x1x240xf16>, tensor<10x1x1x240xf16>, tensor<10xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_gemv>} -> tensor<20x1x1x10xf16> {
  ^bb0(%a: tensor<20x1x1x240xf16>, %aw: tensor<10x1x1x240xf16>, %ab: tensor<10xf16>):
    %y = kiln.conv2d %a, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<20x1x1x240xf16>, tensor<10x1x1x240xf16>, tensor<10xf16>) -> tensor<20x1x1x10xf16>
    %s = kiln.silu %y : tensor<20x1x1x10xf16>
    kiln.yield %s : tensor<20x1x1x10xf16>
  }
  return %0 : tensor<20x1x1x10xf16>
}

// -----

// K = 10 (rows not on 16-byte boundaries: an element a lane), one row.
// CHECK-LABEL: // === kernel gemv_odd_k0 grid(240, 1, 1) block(32) shared(0) inputs(2) outputs(1)
//       CHECK:   kiln::gemv_gemm<__nv_bfloat16, 1, 10>(in0 + aOffset, in1 + bOffset, epilogue);
func.func @gemv_odd(%x: tensor<1x10xbf16>, %w: tensor<240x10xbf16>) -> tensor<1x240xbf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<1x10xbf16>, tensor<240x10xbf16>) {kiln.kernel = #kiln.kernel<variant = gemm_gemv>} -> tensor<1x240xbf16> {
  ^bb0(%a: tensor<1x10xbf16>, %aw: tensor<240x10xbf16>):
    %l = kiln.linear %a, %aw : (tensor<1x10xbf16>, tensor<240x10xbf16>) -> tensor<1x240xbf16>
    %s = kiln.sigmoid %l : tensor<1x240xbf16>
    kiln.yield %s : tensor<1x240xbf16>
  }
  return %0 : tensor<1x240xbf16>
}

// -----

// Stream-K: ViT's down-projection shape, 200 tiles of 128 x 192 on 132
// blocks. The kernel takes a workspace (1024 flags, then a 128 x 192 fp32
// tile a block: 4096 + 132 * 98304 bytes) as its last parameter; without a
// memory plan it is the whole arena. Flags are raised with a release and
// read with an acquire at GPU scope.
// CHECK-LABEL: // === kernel stream_k_k0 grid(132, 1, 1) block(384) shared({{[0-9]+}}) inputs(2) outputs(1) workspace(0, 12980224)
//       CHECK: __half *__restrict__ out0, float *__restrict__ workspace)
//       CHECK:   kiln::sm90::wgmma_gemm<__half, 192, 4, kiln::sm90::Schedule::cooperative, 1, 1, true>(map0, map1, 6304, 768, 3072, epilogue, workspace);
func.func @stream_k(%x: tensor<6304x3072xf16>, %w: tensor<768x3072xf16>) -> tensor<6304x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<6304x3072xf16>, tensor<768x3072xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 132, stream_k = true>} -> tensor<6304x768xf16> {
  ^bb0(%a: tensor<6304x3072xf16>, %bw: tensor<768x3072xf16>):
    %l = kiln.linear %a, %bw : (tensor<6304x3072xf16>, tensor<768x3072xf16>) -> tensor<6304x768xf16>
    kiln.yield %l : tensor<6304x768xf16>
  }
  return %0 : tensor<6304x768xf16>
}


// -----

// A stream-K implicit-GEMM convolution (ResNet-50's 3 x 3 at 14 x 14, batch
// 32: 98 tiles on 132 blocks): the workspace is its last parameter too.
// CHECK-LABEL: // === kernel stream_k_conv_k0 grid(132, 1, 1) block(384) shared({{[0-9]+}}) inputs(2) outputs(1) workspace(0, 8654848)
//       CHECK: __half *__restrict__ out0, float *__restrict__ workspace)
//       CHECK:   kiln::conv::conv_wgmma<{{.*}}_shape, __half, 128, 5, kiln::sm90::Schedule::cooperative, 1, 1, 32, 2, 2, true>(map0, map1, epilogue, workspace);
func.func @stream_k_conv(%a: tensor<32x14x14x256xf16>, %wa: tensor<256x3x3x256xf16>) -> tensor<32x14x14x256xf16> {
  %0 = kiln.fusion conv_epilogue ins(%a, %wa : tensor<32x14x14x256xf16>, tensor<256x3x3x256xf16>) {kiln.kernel = #kiln.kernel<variant = conv_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 132, pixel_tile = [32, 2, 2], stream_k = true>} -> tensor<32x14x14x256xf16> {
  ^bb0(%x: tensor<32x14x14x256xf16>, %w: tensor<256x3x3x256xf16>):
    %y = kiln.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<32x14x14x256xf16>, tensor<256x3x3x256xf16>) -> tensor<32x14x14x256xf16>
    kiln.yield %y : tensor<32x14x14x256xf16>
  }
  return %0 : tensor<32x14x14x256xf16>
}

// -----

// A streaming GEMM (gemm_stream): MobileNetV3's 1x1 72 -> 24 with a
// residual, over 3 x 13 x 11 pixels: two blocks of 256 threads on a
// grid-stride loop of 128-row tiles (four here), the residual staged with A
// in each of the two stages, 16-byte stores.
// CHECK-LABEL: // === kernel streamed_k0 grid(2, 1, 1) block(256) shared(91648) inputs(4) outputs(1)
//       CHECK: #include "kiln_gemm_stream.cuh"
//       CHECK: static_assert(kiln::stream::kThreads == 256 && kiln::stream::shared_bytes(24, 72, 2, true) == 91648
//       CHECK: __launch_bounds__(256, 2)
//       CHECK:   kiln::stream_gemm<__half, 24, 72, 2, true>(in0 + aOffset, in1 + bOffset, 429, epilogue);
func.func @streamed(%x: tensor<3x13x11x72xf16>, %w: tensor<24x1x1x72xf16>, %b: tensor<24xf16>, %r: tensor<3x13x11x24xf16>) -> tensor<3x13x11x24xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<3x13x11x72xf16>, tensor<24x1x1x72xf16>, tensor<24xf16>, tensor<3x13x11x24xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_stream, tile = [128, 64, 80], stages = 2, grid_limit = 2, blocks_per_sm = 2>} -> tensor<3x13x11x24xf16> {
  ^bb0(%a: tensor<3x13x11x72xf16>, %aw: tensor<24x1x1x72xf16>, %ab: tensor<24xf16>, %ar: tensor<3x13x11x24xf16>):
    %y = kiln.conv2d %a, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<3x13x11x72xf16>, tensor<24x1x1x72xf16>, tensor<24xf16>) -> tensor<3x13x11x24xf16>
    %t = kiln.add %y, %ar : tensor<3x13x11x24xf16>
    kiln.yield %t : tensor<3x13x11x24xf16>
  }
  return %0 : tensor<3x13x11x24xf16>
}

// -----

// Ping-pong 64-wide tiles with a residual in a ring of 5 stages: room for
// the next tile's residual slices as well (three a consumer warp), which
// each warpgroup copies at the start of its previous tile.
// CHECK-LABEL: // === kernel prefetched_residual_k0 grid(3, 1, 1) block(384) shared(216064) inputs(3) outputs(1)
//       CHECK: static_assert(kiln::sm90::shared_bytes(64, 5, false, 128, true, true) == 216064
//       CHECK:   kiln::sm90::wgmma_gemm<__half, 64, 5, kiln::sm90::Schedule::pingpong, 1, 1, false, 128, true>(map0, map1, 1000, 504, 256, epilogue);
func.func @prefetched_residual(%x: tensor<1000x256xf16>, %w: tensor<504x256xf16>, %r: tensor<1000x504xf16>) -> tensor<1000x504xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<1000x256xf16>, tensor<504x256xf16>, tensor<1000x504xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 5, grid_limit = 3, schedule = pingpong>} -> tensor<1000x504xf16> {
  ^bb0(%a: tensor<1000x256xf16>, %bw: tensor<504x256xf16>, %br: tensor<1000x504xf16>):
    %l = kiln.linear %a, %bw : (tensor<1000x256xf16>, tensor<504x256xf16>) -> tensor<1000x504xf16>
    %t = kiln.add %l, %br : tensor<1000x504xf16>
    %y = kiln.relu %t : tensor<1000x504xf16>
    kiln.yield %y : tensor<1000x504xf16>
  }
  return %0 : tensor<1000x504xf16>
}


// -----

// matmul's [K, N] B on the Hopper GEMM: boxes of 64 columns x 64 k-rows
// (128-byte rows), read by wgmma as an MN-major operand (trans-b).
// CHECK-LABEL: // === kernel matmul_wgmma_k0 grid(4, 1, 1) block(384)
//       CHECK: // tensor map of in0: dims [712, 300] box [64, 128]
//       CHECK: // tensor map of in1: dims [504, 712] box [64, 64]
//       CHECK:   kiln::sm90::wgmma_matmul<__half, 128, 5, kiln::sm90::Schedule::pingpong, 1, false, 128, false, true, false>(map0, map1, 300, 504, 712, 1, false, false, epilogue);
//       CHECK: #else
//       CHECK:   kiln::mma_gemm_persistent<__half, false>(in0 + aOffset, in1 + bOffset, 300, 504, 712, epilogue);
// PTX: // === ptx matmul_wgmma_k0
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, 1, 1, 1, 0, 1;
func.func @matmul_wgmma(%x: tensor<300x712xf16>, %w: tensor<712x504xf16>) -> tensor<300x504xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<300x712xf16>, tensor<712x504xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 4, schedule = pingpong>} -> tensor<300x504xf16> {
  ^bb0(%a: tensor<300x712xf16>, %bw: tensor<712x504xf16>):
    %l = kiln.matmul %a, %bw : (tensor<300x712xf16>, tensor<712x504xf16>) -> tensor<300x504xf16>
    %g = kiln.gelu %l : tensor<300x504xf16>
    kiln.yield %g : tensor<300x504xf16>
  }
  return %0 : tensor<300x504xf16>
}

// -----

// A batch of both operands: 3-D maps (the batch outermost, a matrix a box),
// and one persistent grid (a single plane: the batch base is 0) whose
// blocks walk every batch's tiles, the epilogue indexing the flattened
// result; the fallback walks the same grid's tiles with each batch's
// offsets.
// CHECK-LABEL: // === kernel bmm_wgmma_k0 grid(3, 1, 1) block(384)
//       CHECK: // tensor map of in0: dims [136, 200, 6] box [64, 128, 1]
//       CHECK: // tensor map of in1: dims [72, 136, 6] box [64, 64, 1]
//       CHECK:   epilogue{in0, in1, out0, (long long)blockIdx.z * 14400LL};
//       CHECK:   kiln::sm90::wgmma_matmul<__nv_bfloat16, 64, 4, kiln::sm90::Schedule::cooperative, 1, false, 128, false, true, true>(map0, map1, 200, 72, 136, 6, true, true, epilogue);
//       CHECK: #else
//  CHECK-NEXT:   kiln::mma_gemm_persistent_batched<__nv_bfloat16, false>(in0, in1, 200, 72, 136, 6,
//  CHECK-NEXT:       [](long long z, long long &aOffset, long long &bOffset) {
//  CHECK-NEXT:         aOffset = 0LL + (z / 3 % 2) * 81600LL + (z / 1 % 3) * 27200LL;
//  CHECK-NEXT:         bOffset = 0LL + (z / 3 % 2) * 29376LL + (z / 1 % 3) * 9792LL;
// PTX: // === ptx bmm_wgmma_k0
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, 1, 1, 1, 0, 1;
// PTX: cp.async.bulk.tensor.3d
func.func @bmm_wgmma(%x: tensor<2x3x200x136xbf16>, %w: tensor<2x3x136x72xbf16>) -> tensor<2x3x200x72xbf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<2x3x200x136xbf16>, tensor<2x3x136x72xbf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 4, grid_limit = 3>} -> tensor<2x3x200x72xbf16> {
  ^bb0(%a: tensor<2x3x200x136xbf16>, %bw: tensor<2x3x136x72xbf16>):
    %l = kiln.batch_matmul %a, %bw : (tensor<2x3x200x136xbf16>, tensor<2x3x136x72xbf16>) -> tensor<2x3x200x72xbf16>
    kiln.yield %l : tensor<2x3x200x72xbf16>
  }
  return %0 : tensor<2x3x200x72xbf16>
}

// -----

// One A for a batch of Bs: A's map keeps a batch of 1, read at z = 0. The
// grid: 4 batches x 2 row tiles x 2 column tiles.
// CHECK-LABEL: // === kernel shared_lhs_k0 grid(16, 1, 1) block(384)
//       CHECK: // tensor map of in0: dims [64, 130, 1] box [64, 128, 1]
//       CHECK: // tensor map of in1: dims [200, 64, 4] box [64, 64, 1]
//       CHECK:   kiln::sm90::wgmma_matmul<__half, 192, 3, kiln::sm90::Schedule::cooperative, 1, false, 128, false, true, true>(map0, map1, 130, 200, 64, 4, false, true, epilogue);
//       CHECK:         aOffset = 0LL;
//  CHECK-NEXT:         bOffset = 0LL + (z / 1 % 4) * 12800LL;
func.func @shared_lhs(%x: tensor<130x64xf16>, %w: tensor<4x64x200xf16>) -> tensor<4x130x200xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<130x64xf16>, tensor<4x64x200xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 3, grid_limit = 132>} -> tensor<4x130x200xf16> {
  ^bb0(%a: tensor<130x64xf16>, %bw: tensor<4x64x200xf16>):
    %l = kiln.batch_matmul %a, %bw : (tensor<130x64xf16>, tensor<4x64x200xf16>) -> tensor<4x130x200xf16>
    kiln.yield %l : tensor<4x130x200xf16>
  }
  return %0 : tensor<4x130x200xf16>
}

// -----

// The few-row GEMM with the weight's rows as wgmma's M side
// (gemm_wgmma_swap): GPT-2's down-projection at batch 1, 8 token tiles of
// 16 by 12 weight tiles of 64, clusters of 4 token tiles whose blocks each
// load 16 rows of the weight tile, multicast into all four; other images
// sum on CUDA cores over the same grid.
// CHECK-LABEL: // === kernel swapped_k0 grid(8, 12, 1) block(288) shared(128256) inputs(4) outputs(1) cluster(4, 1, 1)
//       CHECK: // tensor map of in0: dims [3072, 128] box [64, 16]
//       CHECK: // tensor map of in1: dims [3072, 768] box [64, 16]
//       CHECK: #include "kiln_gemm_swap_sm90.cuh"
//       CHECK: static_assert(kiln::swap::shared_bytes(16, 12) == 128256
//       CHECK: static_assert(kiln::swap::kThreads == 288
//       CHECK: #define KILN_SPLIT_CLUSTER __cluster_dims__(4, 1, 1)
//       CHECK: __launch_bounds__(288, 1)
//       CHECK:   kiln::sm90::swap_gemm<__half, 16, 12, 4>(map0, map1, 128, 768, 3072, epilogue);
//       CHECK:   kiln::swap_gemm_fallback<__half, 16>(in0 + aOffset, in1 + bOffset, 128, 768, 3072, epilogue);
// PTX: // === ptx swapped_k0
// PTX: barrier.cluster.arrive
// PTX: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
// PTX: wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16
// PTX: mapa.shared::cluster
func.func @swapped(%x: tensor<128x3072xf16>, %w: tensor<768x3072xf16>, %b: tensor<768xf16>, %r: tensor<128x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b, %r : tensor<128x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>, tensor<128x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 16, 64], stages = 12, multicast = 4>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x3072xf16>, %bw: tensor<768x3072xf16>, %bb: tensor<768xf16>, %br: tensor<128x768xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<128x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<128x768xf16>
    %s = kiln.add %l, %br : tensor<128x768xf16>
    kiln.yield %s : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// 197 tokens in tiles of 32: 7, rounded up to a whole cluster of 8 (the
// last block's tile is past the tokens: it loads the last one in bounds and
// stores nothing); the weight tile in boxes of 8 rows, one a block.
// CHECK-LABEL: // === kernel swapped_ragged_k0 grid(8, 12, 1) block(288)
//       CHECK: // tensor map of in1: dims [768, 768] box [64, 8]
//       CHECK:   kiln::sm90::swap_gemm<__nv_bfloat16, 32, 4, 8>(map0, map1, 197, 768, 768, epilogue);
// PTX: // === ptx swapped_ragged_k0
// PTX: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
func.func @swapped_ragged(%x: tensor<197x768xbf16>, %w: tensor<768x768xbf16>) -> tensor<197x768xbf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<197x768xbf16>, tensor<768x768xbf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 32, 64], stages = 4, multicast = 8>} -> tensor<197x768xbf16> {
  ^bb0(%a: tensor<197x768xbf16>, %bw: tensor<768x768xbf16>):
    %l = kiln.linear %a, %bw : (tensor<197x768xbf16>, tensor<768x768xbf16>) -> tensor<197x768xbf16>
    kiln.yield %l : tensor<197x768xbf16>
  }
  return %0 : tensor<197x768xbf16>
}

// -----

// A 1x1 convolution that ends in its global average pool (ResNet-50's last
// expand, 5 images of 7 x 7): row tiles of two whole images (98 of 128
// rows), 3 of them by 2 column tiles of 256; the residual through the ring
// at rows of the image pairs; the epilogue adds each element into the
// tile's sums (static shared memory) and stores the means; the mma.sync
// image sums each (image, column) on CUDA cores.
// CHECK-LABEL: // === kernel pooled_k0 grid(6, 1, 1) block(384)
//       CHECK: // tensor map of in0: dims [64, 245] box [64, 128]
//       CHECK: // tensor map of in3: dims [512, 245] box [64, 128]
//       CHECK:   static constexpr int kPoolImages = 2, kPoolPixels = 49, kPoolWidth = 256;
//       CHECK:     __shared__ float sums[512];
//       CHECK:     out0[(long long)image * 512 + n] = kiln::from_float<__half>(sum / 49.0f);
//       CHECK:   kiln::sm90::wgmma_gemm_pooled<__half, 256, 3, 98>(map0, map1, 245, 512, 64, epilogue);
//       CHECK:   kiln::pooled_gemm_fallback<__half>(in0 + aOffset, in1 + bOffset, 245, 512, 64, epilogue);
// PTX-LABEL: // === ptx pooled_k0
//       PTX: wgmma.mma_async
//       PTX: {{(red|atom)}}.shared{{.*}}.add.f32
func.func @pooled(%x: tensor<5x7x7x64xf16>, %w: tensor<512x1x1x64xf16>, %b: tensor<512xf16>, %r: tensor<5x7x7x512xf16>) -> tensor<5x1x1x512xf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b, %r : tensor<5x7x7x64xf16>, tensor<512x1x1x64xf16>, tensor<512xf16>, tensor<5x7x7x512xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 132, residual_ring = true>} -> tensor<5x1x1x512xf16> {
  ^bb0(%a: tensor<5x7x7x64xf16>, %aw: tensor<512x1x1x64xf16>, %ab: tensor<512xf16>, %ar: tensor<5x7x7x512xf16>):
    %y = kiln.conv2d %a, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<5x7x7x64xf16>, tensor<512x1x1x64xf16>, tensor<512xf16>) -> tensor<5x7x7x512xf16>
    %s = kiln.add %y, %ar : tensor<5x7x7x512xf16>
    %u = kiln.relu %s : tensor<5x7x7x512xf16>
    %m = kiln.reduce_mean %u dims = [1, 2] keepdim : tensor<5x7x7x512xf16> -> tensor<5x1x1x512xf16>
    kiln.yield %m : tensor<5x1x1x512xf16>
  }
  return %0 : tensor<5x1x1x512xf16>
}

// -----

// Eight 4 x 4 images a row tile (128 rows), 200 channels (the last of two
// 128-wide column tiles ragged), bf16, pooled to [N, C], no residual.
// CHECK-LABEL: // === kernel pooled_small_k0 grid(4, 1, 1) block(384)
//       CHECK:   static constexpr int kPoolImages = 8, kPoolPixels = 16, kPoolWidth = 128;
//       CHECK:   kiln::sm90::wgmma_gemm_pooled<__nv_bfloat16, 128, 4, 128>(map0, map1, 144, 200, 40, epilogue);
func.func @pooled_small(%x: tensor<9x4x4x40xbf16>, %w: tensor<200x1x1x40xbf16>) -> tensor<9x200xbf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<9x4x4x40xbf16>, tensor<200x1x1x40xbf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 4, grid_limit = 132>} -> tensor<9x200xbf16> {
  ^bb0(%a: tensor<9x4x4x40xbf16>, %aw: tensor<200x1x1x40xbf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<9x4x4x40xbf16>, tensor<200x1x1x40xbf16>) -> tensor<9x4x4x200xbf16>
    %u = kiln.silu %y : tensor<9x4x4x200xbf16>
    %m = kiln.reduce_mean %u dims = [1, 2] : tensor<9x4x4x200xbf16> -> tensor<9x200xbf16>
    kiln.yield %m : tensor<9x200xbf16>
  }
  return %0 : tensor<9x200xbf16>
}

// -----

// The narrow tile: 128 x 56 (wgmma m64n56k16), B's boxes 56 rows; 3 row
// tiles by 9 column tiles of 56 (the last one ragged) on 27 blocks. Its
// epilogue's one staged slice stores the tile's own 56 columns: the
// bound is the tile's end. With a bias (staged pairs) and with a residual
// copied by rows (fragments).
// CHECK-LABEL: // === kernel narrow_tile_k0 grid(27, 1, 1) block(384)
//       CHECK: // tensor map of in1: dims [768, 500] box [64, 56]
//       CHECK:   kiln::sm90::wgmma_gemm<__half, 56, 6, kiln::sm90::Schedule::cooperative, 1, 1>(map0, map1, 300, 500, 768, epilogue);
// CHECK-LABEL: // === kernel narrow_tile_k1 grid(27, 1, 1) block(384)
//       CHECK:   kiln::sm90::wgmma_gemm<__nv_bfloat16, 56, 6, kiln::sm90::Schedule::cooperative, 1, 1>(map0, map1, 300, 504, 712, epilogue);
// PTX-LABEL: // === ptx narrow_tile_k0
//       PTX: wgmma.mma_async.sync.aligned.m64n56k16.f32.f16.f16
// PTX-LABEL: // === ptx narrow_tile_k1
//       PTX: wgmma.mma_async.sync.aligned.m64n56k16.f32.bf16.bf16
func.func @narrow_tile(%x: tensor<300x768xf16>, %w: tensor<500x768xf16>, %b: tensor<500xf16>, %x2: tensor<300x712xbf16>, %w2: tensor<504x712xbf16>, %r: tensor<300x504xbf16>) -> (tensor<300x500xf16>, tensor<300x504xbf16>) {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<300x768xf16>, tensor<500x768xf16>, tensor<500xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 56, 64], stages = 6, grid_limit = 132>} -> tensor<300x500xf16> {
  ^bb0(%a: tensor<300x768xf16>, %bw: tensor<500x768xf16>, %bb: tensor<500xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<300x768xf16>, tensor<500x768xf16>, tensor<500xf16>) -> tensor<300x500xf16>
    %u = kiln.relu %l : tensor<300x500xf16>
    kiln.yield %u : tensor<300x500xf16>
  }
  %1 = kiln.fusion gemm_epilogue ins(%x2, %w2, %r : tensor<300x712xbf16>, tensor<504x712xbf16>, tensor<300x504xbf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 56, 64], stages = 6, grid_limit = 132>} -> tensor<300x504xbf16> {
  ^bb0(%a: tensor<300x712xbf16>, %bw: tensor<504x712xbf16>, %ar: tensor<300x504xbf16>):
    %l = kiln.linear %a, %bw : (tensor<300x712xbf16>, tensor<504x712xbf16>) -> tensor<300x504xbf16>
    %s = kiln.add %l, %ar : tensor<300x504xbf16>
    kiln.yield %s : tensor<300x504xbf16>
  }
  return %0, %1 : tensor<300x500xf16>, tensor<300x504xbf16>
}
