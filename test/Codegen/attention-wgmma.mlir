// RUN: kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s

// attention_wgmma: a producer warp and a consumer warpgroup (160 threads),
// 64 queries an item, Q and two stages of K and V in 128-byte rows (41 KiB
// at a head size of 64, three blocks a multiprocessor in the sm_90a
// image); q, k and v reach the kernel as tensor maps of their
// roots seen as [rows, row stride] matrices. Its blocks walk the items (4
// query blocks x 6 heads; without a grid_limit, a block an item), and the
// functor gives each (batch, head) bh its row and column in each map, its
// mask and its epilogue. The other images run flash_attention's 4 warps (the
// producer warp idle) on the grid of a block an item, blockIdx.y the
// (batch, head), with their own shared memory.
// CHECK-LABEL: // === kernel packed_k0 grid(24, 1, 1) block(160) shared(42112) inputs(3) outputs(1)
//  CHECK-NEXT: // tensor map of in0: dims [64, 1182] box [64, 64] strides [1, 1]
//  CHECK-NEXT: // tensor map of in1: dims [64, 1182] box [64, 64] strides [1, 1]
//  CHECK-NEXT: // tensor map of in2: dims [64, 1182] box [64, 64] strides [1, 1]
//       CHECK: #include "kiln_attention_sm90.cuh"
//       CHECK: static_assert(kiln::sm90::attention_wgmma_shared_bytes(64) == 42112 && kiln::attention_shared_bytes(64, 4) == 46080 && kiln::sm90::attention_wgmma_threads(64) == 160,
//       CHECK: #define KILN_WGMMA_BLOCKS_PER_SM 3
//       CHECK: __launch_bounds__(160, KILN_WGMMA_BLOCKS_PER_SM) [[NAME:[a-z0-9_A-Z]+]](const __grid_constant__ kiln::sm90::TensorMap map0, const __grid_constant__ kiln::sm90::TensorMap map1, const __grid_constant__ kiln::sm90::TensorMap map2,
//       CHECK: #if defined(__CUDA_ARCH_FEAT_SM90_ALL)
//  CHECK-NEXT:   kiln::sm90::flash_attention_wgmma<__half, 64, false>(map0, map1, map2, 6, 197, 197, 1.250000000e-01f,
//  CHECK-NEXT:       [&](unsigned bh) {
//  CHECK-NEXT:         return kiln::sm90::AttentionItem<kiln::NoMask, [[NAME]]_epilogue>{kiln::NoMask{}, [[NAME]]_epilogue{in0, in1, in2, out0, (0LL + (long long)bh * 12608LL), 0LL},
//  CHECK-NEXT:             (int)((0LL + (long long)bh * 12608LL) / 64LL), (int)((0LL + (long long)bh * 12608LL) % 64LL),
//  CHECK-NEXT:       });
//  CHECK-NEXT: #else
//  CHECK-NEXT:   const [[NAME]]_epilogue epilogue{in0, in1, in2, out0, (0LL + (long long)blockIdx.y * 12608LL), 0LL};
//  CHECK-NEXT:   const kiln::NoMask mask{};
//  CHECK-NEXT:   // Other GPUs: the mma.sync kernel, without the producer warp.
//  CHECK-NEXT:   if (threadIdx.x < 128)
//  CHECK-NEXT:   kiln::flash_attention<__half, 64, false, 4>(in0 + (0LL + (long long)blockIdx.y * 12608LL), in1 + (0LL + (long long)blockIdx.y * 12608LL), in2 + (0LL + (long long)blockIdx.y * 12608LL), 64LL, 64LL, 64LL, 197, 197, 1.250000000e-01f, mask, epilogue);
//  CHECK-NEXT: #endif
func.func @packed(%q: tensor<2x3x197x64xf16>, %k: tensor<2x3x197x64xf16>, %v: tensor<2x3x197x64xf16>) -> tensor<2x3x197x64xf16> {
  %0 = kiln.fusion attention ins(%q, %k, %v : tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64]>} -> tensor<2x3x197x64xf16> {
  ^bb0(%a: tensor<2x3x197x64xf16>, %b: tensor<2x3x197x64xf16>, %c: tensor<2x3x197x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>) -> tensor<2x3x197x64xf16>
    kiln.yield %o : tensor<2x3x197x64xf16>
  }
  return %0 : tensor<2x3x197x64xf16>
}

// -----

// Heads sliced from one QKV projection [2, 77, 768] (row stride 768, the
// value's columns from 512 on), causal, head size 128 (81 KiB: two blocks a
// multiprocessor), a persistent grid of 3 blocks over its 8 items.
// CHECK-LABEL: // === kernel qkv_k0 grid(3, 1, 1) block(160) shared(83072) inputs(1) outputs(1)
//  CHECK-NEXT: // tensor map of in0: dims [768, 154] box [64, 64] strides [1, 1]
//       CHECK: #define KILN_WGMMA_BLOCKS_PER_SM 2
//       CHECK: kiln::sm90::flash_attention_wgmma<__nv_bfloat16, 128, true>(map0, map1, map2, 4, 77, 77,
//       CHECK: (int)((512LL + (long long)(bh % 2u) * 128LL + (long long)(bh / 2u) * 59136LL) % 768LL)};
func.func @qkv(%x: tensor<2x77x768xbf16>) -> tensor<2x2x77x128xbf16> {
  %0 = kiln.fusion attention ins(%x : tensor<2x77x768xbf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 128], grid_limit = 3>} -> tensor<2x2x77x128xbf16> {
  ^bb0(%a: tensor<2x77x768xbf16>):
    %s0 = kiln.slice %a offsets = [0, 0, 0] strides = [1, 1, 1] : tensor<2x77x768xbf16> -> tensor<2x77x256xbf16>
    %r0 = kiln.reshape %s0 : tensor<2x77x256xbf16> -> tensor<2x77x2x128xbf16>
    %p0 = kiln.permute %r0 [0, 2, 1, 3] : tensor<2x77x2x128xbf16> -> tensor<2x2x77x128xbf16>
    %s1 = kiln.slice %a offsets = [0, 0, 256] strides = [1, 1, 1] : tensor<2x77x768xbf16> -> tensor<2x77x256xbf16>
    %r1 = kiln.reshape %s1 : tensor<2x77x256xbf16> -> tensor<2x77x2x128xbf16>
    %p1 = kiln.permute %r1 [0, 2, 1, 3] : tensor<2x77x2x128xbf16> -> tensor<2x2x77x128xbf16>
    %s2 = kiln.slice %a offsets = [0, 0, 512] strides = [1, 1, 1] : tensor<2x77x768xbf16> -> tensor<2x77x256xbf16>
    %r2 = kiln.reshape %s2 : tensor<2x77x256xbf16> -> tensor<2x77x2x128xbf16>
    %p2 = kiln.permute %r2 [0, 2, 1, 3] : tensor<2x77x2x128xbf16> -> tensor<2x2x77x128xbf16>
    %o = kiln.attention %p0, %p1, %p2 scale = 0.08838834764831845 causal : (tensor<2x2x77x128xbf16>, tensor<2x2x77x128xbf16>, tensor<2x2x77x128xbf16>) -> tensor<2x2x77x128xbf16>
    kiln.yield %o : tensor<2x2x77x128xbf16>
  }
  return %0 : tensor<2x2x77x128xbf16>
}

// -----

// The overlapped schedule: the same kernel with its fourth template
// argument (K and V on barriers of their own, in the same shared memory).
// CHECK-LABEL: // === kernel overlapped_k0 grid(24, 1, 1) block(160) shared(42112) inputs(3) outputs(1)
//       CHECK: static_assert(kiln::sm90::attention_wgmma_shared_bytes(64) == 42112 && kiln::attention_shared_bytes(64, 4) == 46080 && kiln::sm90::attention_wgmma_threads(64) == 160,
//       CHECK: #define KILN_WGMMA_BLOCKS_PER_SM 3
//       CHECK:   kiln::sm90::flash_attention_wgmma<__half, 64, false, true>(map0, map1, map2,
//       CHECK:   kiln::flash_attention<__half, 64, false, 4>(
func.func @overlapped(%q: tensor<2x3x197x64xf16>, %k: tensor<2x3x197x64xf16>, %v: tensor<2x3x197x64xf16>) -> tensor<2x3x197x64xf16> {
  %0 = kiln.fusion attention ins(%q, %k, %v : tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], schedule = overlapped>} -> tensor<2x3x197x64xf16> {
  ^bb0(%a: tensor<2x3x197x64xf16>, %b: tensor<2x3x197x64xf16>, %c: tensor<2x3x197x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>) -> tensor<2x3x197x64xf16>
    kiln.yield %o : tensor<2x3x197x64xf16>
  }
  return %0 : tensor<2x3x197x64xf16>
}

// -----

// Three K/V stages (57 KiB, still three blocks a multiprocessor at a head
// size of 64): the stage count as the kernel's fifth template argument.
// CHECK-LABEL: // === kernel three_stages_k0 grid(24, 1, 1) block(160) shared(58496) inputs(3) outputs(1)
//       CHECK: static_assert(kiln::sm90::attention_wgmma_shared_bytes(64, 3) == 58496 && kiln::attention_shared_bytes(64, 4) == 46080 && kiln::sm90::attention_wgmma_threads(64) == 160,
//       CHECK: #define KILN_WGMMA_BLOCKS_PER_SM 3
//       CHECK:   kiln::sm90::flash_attention_wgmma<__half, 64, false, true, 3>(map0, map1, map2,
func.func @three_stages(%q: tensor<2x3x197x64xf16>, %k: tensor<2x3x197x64xf16>, %v: tensor<2x3x197x64xf16>) -> tensor<2x3x197x64xf16> {
  %0 = kiln.fusion attention ins(%q, %k, %v : tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], stages = 3, schedule = overlapped>} -> tensor<2x3x197x64xf16> {
  ^bb0(%a: tensor<2x3x197x64xf16>, %b: tensor<2x3x197x64xf16>, %c: tensor<2x3x197x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>) -> tensor<2x3x197x64xf16>
    kiln.yield %o : tensor<2x3x197x64xf16>
  }
  return %0 : tensor<2x3x197x64xf16>
}

// -----

// With a float padding mask (broadcast over the queries) the overlapped
// schedule is kept; a float mask per score is refused
// (forced-variants-invalid.mlir).
// CHECK-LABEL: // === kernel overlapped_padding_k0
//       CHECK:   kiln::sm90::flash_attention_wgmma<__half, 64, false, true>(map0, map1, map2,
func.func @overlapped_padding(%q: tensor<2x3x197x64xf16>, %m: tensor<2x1x1x197xf16>) -> tensor<2x3x197x64xf16> {
  %0 = kiln.fusion attention ins(%q, %q, %q, %m : tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x1x1x197xf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], schedule = overlapped>} -> tensor<2x3x197x64xf16> {
  ^bb0(%a: tensor<2x3x197x64xf16>, %b: tensor<2x3x197x64xf16>, %c: tensor<2x3x197x64xf16>, %d: tensor<2x1x1x197xf16>):
    %o = kiln.attention %a, %b, %c mask %d scale = 0.125 : (tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x1x1x197xf16>) -> tensor<2x3x197x64xf16>
    kiln.yield %o : tensor<2x3x197x64xf16>
  }
  return %0 : tensor<2x3x197x64xf16>
}

// -----

// 128 queries an item (the tile's first size): two consumer warpgroups and
// the producer warp (288 threads), Q's two halves beside two stages (49
// KiB), one block a multiprocessor (no KILN_WGMMA_BLOCKS_PER_SM); 2 items of
// 197 queries a head, 12 in all, on the grid_limit's 5 blocks. The other
// images keep flash_attention's 4 warps a 64 queries on their own grid.
// CHECK-LABEL: // === kernel two_consumers_k0 grid(5, 1, 1) block(288) shared(50304) inputs(3) outputs(1)
//       CHECK: static_assert(kiln::sm90::attention_wgmma_shared_bytes(64, 2, 128) == 50304 && kiln::attention_shared_bytes(64, 4) == 46080 && kiln::sm90::attention_wgmma_threads(128) == 288,
//   CHECK-NOT: #define KILN_WGMMA_BLOCKS_PER_SM
//       CHECK: __launch_bounds__(288, 1)
//       CHECK: kiln::sm90::flash_attention_wgmma<__half, 64, false, true, 2, 128>(map0, map1, map2, 6, 197, 197, 1.250000000e-01f,
//       CHECK: if (threadIdx.x < 128)
//  CHECK-NEXT: kiln::flash_attention<__half, 64, false, 4>(
func.func @two_consumers(%q: tensor<2x3x197x64xf16>, %k: tensor<2x3x197x64xf16>, %v: tensor<2x3x197x64xf16>) -> tensor<2x3x197x64xf16> {
  %0 = kiln.fusion attention ins(%q, %k, %v : tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [128, 64, 64], grid_limit = 5, schedule = overlapped>} -> tensor<2x3x197x64xf16> {
  ^bb0(%a: tensor<2x3x197x64xf16>, %b: tensor<2x3x197x64xf16>, %c: tensor<2x3x197x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>) -> tensor<2x3x197x64xf16>
    kiln.yield %o : tensor<2x3x197x64xf16>
  }
  return %0 : tensor<2x3x197x64xf16>
}

// -----

// Four blocks a multiprocessor (blocks_per_sm = 4, the cooperative schedule
// at a head size of 64): the launch bounds ask for four, within 96
// registers a thread; a grid_limit of 28 over the 24 items leaves 24 blocks.
// CHECK-LABEL: // === kernel four_blocks_k0 grid(24, 1, 1) block(160) shared(42112) inputs(3) outputs(1)
//       CHECK: #define KILN_WGMMA_BLOCKS_PER_SM 4
//       CHECK: __launch_bounds__(160, KILN_WGMMA_BLOCKS_PER_SM)
//       CHECK: kiln::sm90::flash_attention_wgmma<__half, 64, false>(map0, map1, map2, 6, 197, 197,
func.func @four_blocks(%q: tensor<2x3x197x64xf16>, %k: tensor<2x3x197x64xf16>, %v: tensor<2x3x197x64xf16>) -> tensor<2x3x197x64xf16> {
  %0 = kiln.fusion attention ins(%q, %k, %v : tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], grid_limit = 28, blocks_per_sm = 4>} -> tensor<2x3x197x64xf16> {
  ^bb0(%a: tensor<2x3x197x64xf16>, %b: tensor<2x3x197x64xf16>, %c: tensor<2x3x197x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>) -> tensor<2x3x197x64xf16>
    kiln.yield %o : tensor<2x3x197x64xf16>
  }
  return %0 : tensor<2x3x197x64xf16>
}
