// RUN: kiln-opt %s --split-input-file --kiln-lower-launches="targets=sm_90a,sm_80" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-lower-launches="targets=sm_80" | FileCheck %s --check-prefix=SM80

// Each group becomes a launch with one configuration per image; identical
// groups (the blocks of a layer stack, traced from one source line) share
// one kernel, emitted once at the top of the module.
// CHECK-LABEL: module {
//       CHECK:   kiln.cuda_kernel @[[EW:kiln_[0-9A-F]+]] elementwise source "{{.*}}__global__ void {{.*}}[[EW]](
//   CHECK-NOT:   kiln.cuda_kernel
//       CHECK:   func.func @twice(
//       CHECK:     %[[A:.*]] = kiln.launch elementwise ins(%arg0 : tensor<1000xf32>) images [#kiln.launch<arch = "sm_90a", kernel = @[[EW]], grid = [4, 1, 1], block = 256>, #kiln.launch<arch = "sm_80", kernel = @[[EW]], grid = [4, 1, 1], block = 256>] {kiln.offsets = array<i64: 0>} -> tensor<1000xf32>
//       CHECK:     %[[B:.*]] = kiln.launch elementwise ins(%[[A]] : tensor<1000xf32>) images [#kiln.launch<arch = "sm_90a", kernel = @[[EW]], {{.*}}] {kiln.offsets = array<i64: -1>} -> tensor<1000xf32>
//       CHECK:     return %[[B]]
//   SM80-LABEL: func.func @twice(
//         SM80:   kiln.launch elementwise ins(%arg0 : tensor<1000xf32>) images [#kiln.launch<arch = "sm_80", kernel = @{{kiln_[0-9A-F]+}}, grid = [4, 1, 1], block = 256>] {kiln.offsets
func.func @twice(%x: tensor<1000xf32>) -> tensor<1000xf32> attributes {kiln.arena_bytes = 4096 : i64} {
  %0 = kiln.fusion elementwise ins(%x : tensor<1000xf32>) {kiln.kernel = #kiln.kernel<variant = elementwise>, kiln.offsets = array<i64: 0>} -> tensor<1000xf32> {
  ^bb0(%a: tensor<1000xf32>):
    %r = kiln.relu %a : tensor<1000xf32>
    kiln.yield %r : tensor<1000xf32>
  } loc("model.py":10:0)
  %1 = kiln.fusion elementwise ins(%0 : tensor<1000xf32>) {kiln.kernel = #kiln.kernel<variant = elementwise>, kiln.offsets = array<i64: -1>} -> tensor<1000xf32> {
  ^bb0(%a: tensor<1000xf32>):
    %r = kiln.relu %a : tensor<1000xf32>
    kiln.yield %r : tensor<1000xf32>
  } loc("model.py":10:0)
  return %1 : tensor<1000xf32>
}

// -----

// A Hopper GEMM: its sm_90a image runs the TMA pipeline in ~180 KiB of
// dynamic shared memory; the sm_80 image runs the mma.sync loop of the same
// source on the same grid with none. Both take the tensor maps.
// CHECK-LABEL: func.func @wgmma(
//       CHECK:   kiln.launch gemm_epilogue ins(%arg0, %arg1 : tensor<128x768xf16>, tensor<768x768xf16>) images [#kiln.launch<arch = "sm_90a", kernel = @[[K:kiln_[0-9A-F]+]], grid = [2, 1, 1], block = 384, shared = 185344, tensor_maps = [#kiln.tensor_map<input = 0, dims = [768, 128], box = [64, 128], strides = [1, 1]>, #kiln.tensor_map<input = 1, dims = [768, 768], box = [64, 256], strides = [1, 1]>]>, #kiln.launch<arch = "sm_80", kernel = @[[K]], grid = [2, 1, 1], block = 384, tensor_maps = [#kiln.tensor_map<input = 0, {{.*}}>, #kiln.tensor_map<input = 1, {{.*}}>]>]
func.func @wgmma(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 2>, kiln.offsets = array<i64: -1>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// Split K across a cluster of 2: the cluster exists in the sm_90a image
// only; the split-K pipeline's shared memory is the same in both.
// CHECK-LABEL: func.func @split(
//       CHECK:   kiln.launch gemm_epilogue {{.*}} images [#kiln.launch<arch = "sm_90a", kernel = @[[K:kiln_[0-9A-F]+]], grid = [24, 2, 1], block = 128, shared = [[SHARED:[0-9]+]], cluster = [2, 1, 1]>, #kiln.launch<arch = "sm_80", kernel = @[[K]], grid = [24, 2, 1], block = 128, shared = [[SHARED]]>]
func.func @split(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 32], stages = 4, split_k = 2>, kiln.offsets = array<i64: -1>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// Stream-K launches keep a workspace past the planned buffers: at the
// arena's end rounded to 256 (1000 -> 1024), one for both launches (they
// run one after another), as large as the larger (1024 flags, then a
// 128 x width fp32 tile a block: 4096 + 5 * 65536 and 4096 + 2 * 131072),
// and the arena grows to hold it. The plain GEMM takes none.
// CHECK-LABEL: func.func @stream_k(
//  CHECK-SAME:     kiln.arena_bytes = 332800 : i64
//       CHECK:   kiln.launch gemm_epilogue {{.*}} {kiln.offsets = array<i64: 0>, kiln.workspace = array<i64: 1024, 331776>}
//       CHECK:   kiln.launch gemm_epilogue {{.*}} {kiln.offsets = array<i64: 512>, kiln.workspace = array<i64: 1024, 266240>}
//   CHECK-NOT:   kiln.workspace
//       CHECK:   return
func.func @stream_k(%x: tensor<200x768xf16>, %w: tensor<256x768xf16>) -> tensor<200x256xf16> attributes {kiln.arena_bytes = 1000 : i64} {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<200x768xf16>, tensor<256x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 4, grid_limit = 5, stream_k = true>, kiln.offsets = array<i64: 0>} -> tensor<200x256xf16> {
  ^bb0(%a: tensor<200x768xf16>, %bw: tensor<256x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<200x768xf16>, tensor<256x768xf16>) -> tensor<200x256xf16>
    kiln.yield %l : tensor<200x256xf16>
  }
  %1 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<200x768xf16>, tensor<256x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 2, stream_k = true>, kiln.offsets = array<i64: 512>} -> tensor<200x256xf16> {
  ^bb0(%a: tensor<200x768xf16>, %bw: tensor<256x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<200x768xf16>, tensor<256x768xf16>) -> tensor<200x256xf16>
    kiln.yield %l : tensor<200x256xf16>
  }
  %2 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<200x768xf16>, tensor<256x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 4, grid_limit = 4>, kiln.offsets = array<i64: -1>} -> tensor<200x256xf16> {
  ^bb0(%a: tensor<200x768xf16>, %bw: tensor<256x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<200x768xf16>, tensor<256x768xf16>) -> tensor<200x256xf16>
    kiln.yield %l : tensor<200x256xf16>
  }
  return %2 : tensor<200x256xf16>
}

// -----

// attention_wgmma on a persistent grid: its sm_90a image launches
// grid_limit blocks (5) that walk the 24 items, 4 query blocks of each of 6
// heads; the sm_80 image's mma.sync path takes a block an item, the query
// block on x and the (batch, head) on y.
// CHECK-LABEL: func.func @persistent_attention(
//       CHECK:   kiln.launch attention {{.*}} images [#kiln.launch<arch = "sm_90a", kernel = @[[K:kiln_[0-9A-F]+]], grid = [5, 1, 1], block = 160, shared = 42112, {{.*}}>, #kiln.launch<arch = "sm_80", kernel = @[[K]], grid = [4, 6, 1], block = 160, shared = 46080, {{.*}}>]
func.func @persistent_attention(%q: tensor<2x3x197x64xf16>) -> tensor<2x3x197x64xf16> {
  %0 = kiln.fusion attention ins(%q, %q, %q : tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], grid_limit = 5, schedule = overlapped>, kiln.offsets = array<i64: -1>} -> tensor<2x3x197x64xf16> {
  ^bb0(%a: tensor<2x3x197x64xf16>, %b: tensor<2x3x197x64xf16>, %c: tensor<2x3x197x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>) -> tensor<2x3x197x64xf16>
    kiln.yield %o : tensor<2x3x197x64xf16>
  }
  return %0 : tensor<2x3x197x64xf16>
}
