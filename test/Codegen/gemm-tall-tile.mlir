// RUN: kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s
// RUN: kiln-translate --kiln-to-sm90a-ptx %s --split-input-file | FileCheck %s --check-prefix=PTX

// A 192 x 192 cooperative tile: four warpgroups (the producer and three
// consumers of 64 rows each) in the sm_90a image, three in the others,
// whose mma.sync loop keeps its registers; A's TMA box is 192 rows; 3
// stages of 48 KiB beside 54 KiB of staging (twelve consumer warps). The
// consumers claim 160 registers a thread of the 128 that 512 threads
// start with (the producer gives back 104; at 152 a GELU and residual
// epilogue spilled). ViT's FFN down-projection at batch 32: 33 x 4 = 132
// tiles, one wave.
// CHECK-LABEL: // === kernel vit_down_k0 grid(132, 1, 1) block(512) shared(203776)
//       CHECK: // tensor map of in0: dims [3072, 6304] box [64, 192]
//       CHECK: // tensor map of in1: dims [3072, 768] box [64, 192]
//       CHECK: static_assert(kiln::sm90::shared_bytes(192, 3, false, 192) == 203776
//       CHECK: #define KILN_WGMMA_THREADS 512
//       CHECK: #define KILN_WGMMA_THREADS 384
//       CHECK: __launch_bounds__(KILN_WGMMA_THREADS, 1)
//       CHECK: kiln::sm90::wgmma_gemm<__half, 192, 3, kiln::sm90::Schedule::cooperative, 1, 1, false, 192>
//       CHECK: kiln::mma_gemm_persistent<__half, true>
// PTX-LABEL: // === ptx vit_down_k0
//       PTX: .maxntid 512, 1, 1
//   PTX-DAG: setmaxnreg.inc.sync.aligned.u32 160
//   PTX-DAG: setmaxnreg.dec.sync.aligned.u32 24
//       PTX: wgmma.mma_async.sync.aligned.m64n192k16.f32.f16.f16
func.func @vit_down(%x: tensor<6304x3072xf16>, %w: tensor<768x3072xf16>, %r: tensor<6304x768xf16>) -> tensor<6304x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<6304x3072xf16>, tensor<768x3072xf16>, tensor<6304x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 132>} -> tensor<6304x768xf16> {
  ^bb0(%a: tensor<6304x3072xf16>, %bw: tensor<768x3072xf16>, %res: tensor<6304x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<6304x3072xf16>, tensor<768x3072xf16>) -> tensor<6304x768xf16>
    %s = kiln.add %l, %res : tensor<6304x768xf16>
    kiln.yield %s : tensor<6304x768xf16>
  }
  return %0 : tensor<6304x768xf16>
}

// -----

// The 128-row tiles beside it keep three warpgroups and no thread macro.
// CHECK-LABEL: // === kernel wide_k0 grid(132, 1, 1) block(384)
//   CHECK-NOT: KILN_WGMMA_THREADS
//       CHECK: __launch_bounds__(384, 1)
//       CHECK: kiln::sm90::wgmma_gemm<__half, 192, 4, kiln::sm90::Schedule::cooperative, 1, 1>(
func.func @wide(%x: tensor<6304x3072xf16>, %w: tensor<768x3072xf16>) -> tensor<6304x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<6304x3072xf16>, tensor<768x3072xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 4, grid_limit = 132>} -> tensor<6304x768xf16> {
  ^bb0(%a: tensor<6304x3072xf16>, %bw: tensor<768x3072xf16>):
    %l = kiln.linear %a, %bw : (tensor<6304x3072xf16>, tensor<768x3072xf16>) -> tensor<6304x768xf16>
    kiln.yield %l : tensor<6304x768xf16>
  }
  return %0 : tensor<6304x768xf16>
}
