// RUN: kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s
// RUN: kiln-translate --kiln-to-sm90a-ptx %s --split-input-file | FileCheck %s --check-prefix=PTX
// RUN: not env KILN_EPILOGUE_FRAGMENTS=0 kiln-translate --kiln-to-cuda %s --split-input-file 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: not env KILN_EPILOGUE_PAIRS=0 kiln-translate --kiln-to-cuda %s --split-input-file 2>&1 | FileCheck %s --check-prefix=OFF

// The Hopper GEMM's residual through the main loop's ring (residual_ring,
// kRingInput in kiln_gemm_sm90.cuh).

// A ring deeper than the full staging leaves room for (what the selection
// stage gives BERT's FFN down-projection: 5 stages of 128 x 192) keeps
// only the results' half of the staging. Without the fragments epilogue
// (KILN_EPILOGUE_FRAGMENTS=0 or KILN_EPILOGUE_PAIRS=0, diagnostics) the
// residual is copied by rows, and the ring does not fit beside it.
// OFF: error: 'kiln.fusion' op needs 242688 bytes of dynamic shared memory in its sm_90a image
// CHECK-LABEL: // === kernel deep_ring_k0 grid(5, 1, 1) block(384) shared(224256)
//       CHECK: // tensor map of in2: dims [192, 600] box [64, 128] strides [1, 1]
//       CHECK: static_assert(kiln::sm90::shared_bytes(192, 5, false, 128, false, false, 1, true) == 224256,
//       CHECK:   const kiln::sm90::TensorMap *rowInputMap;
//       CHECK:   static constexpr bool kRowInputRing = true;
//       CHECK:   epilogue{in0, in1, in2, out0, (long long)blockIdx.z * 115200LL, &map2};
func.func @deep_ring(%x: tensor<600x64xf16>, %w: tensor<192x64xf16>, %r: tensor<600x192xf16>) -> tensor<600x192xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<600x64xf16>, tensor<192x64xf16>, tensor<600x192xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 5, residual_ring = true>} -> tensor<600x192xf16> {
  ^bb0(%a: tensor<600x64xf16>, %aw: tensor<192x64xf16>, %ar: tensor<600x192xf16>):
    %l = kiln.linear %a, %aw : (tensor<600x64xf16>, tensor<192x64xf16>) -> tensor<600x192xf16>
    %t = kiln.add %l, %ar : tensor<600x192xf16>
    kiln.yield %t : tensor<600x192xf16>
  }
  return %0 : tensor<600x192xf16>
}

// -----

// A ring as deep as the full staging allows: the residual comes through it
// by TMA, a third tensor map (boxes of 64 columns x the tile's 128 rows)
// that the functor points at; no row copies and no L2 prefetch, and the
// staging whole.
// CHECK-LABEL: // === kernel residual_k0
//       CHECK: static_assert(kiln::sm90::shared_bytes(256, 3) ==
//       CHECK:   const kiln::sm90::TensorMap *rowInputMap;
//       CHECK:     kiln::sm90::tma_load_2d(dst, *rowInputMap, n0, m0, bar);
//       CHECK:   static constexpr bool kRowInputEarly = true;
//       CHECK:   static constexpr bool kRowInputRing = true;
//       CHECK:   const __grid_constant__ kiln::sm90::TensorMap map2,
//       CHECK:   epilogue{in0, in1, in2, out0, (long long)blockIdx.z * 76800LL, &map2};
// PTX-LABEL: // === ptx residual_k0
//       PTX: mov.b64 [[PARAM:%rd[0-9]+]], {{kiln_[0-9A-F]+}}_param_2;
//   PTX-NOT: {{cp.async.cg.shared.global|prefetch.global.L2}}
//       PTX: wgmma.mma_async
//   PTX-NOT: {{cp.async.cg.shared.global|prefetch.global.L2}}
//       PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
//   PTX-NOT: {{cp.async.cg.shared.global|prefetch.global.L2}}
//       PTX: cvta.param.u64 [[MAP:%rd[0-9]+]], [[PARAM]];
//   PTX-NOT: {{cp.async.cg.shared.global|prefetch.global.L2}}
//       PTX: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [{{%r[0-9]+}}], [[[MAP]],
//   PTX-NOT: {{cp.async.cg.shared.global|prefetch.global.L2}}
func.func @residual(%x: tensor<300x64xf16>, %w: tensor<256x64xf16>, %r: tensor<300x256xf16>) -> tensor<300x256xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<300x64xf16>, tensor<256x64xf16>, tensor<300x256xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 4, residual_ring = true>} -> tensor<300x256xf16> {
  ^bb0(%a: tensor<300x64xf16>, %bw: tensor<256x64xf16>, %br: tensor<300x256xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x64xf16>, tensor<256x64xf16>) -> tensor<300x256xf16>
    %s = kiln.add %l, %br : tensor<300x256xf16>
    kiln.yield %s : tensor<300x256xf16>
  }
  return %0 : tensor<300x256xf16>
}

// -----

// Two row-varying inputs: the ring carries one, so the epilogue reads both
// itself (element by element), and the kernel has no tensor map for them.
// CHECK-LABEL: // === kernel two_inputs_k0
//   CHECK-NOT:   rowInputMap
//       CHECK:   static constexpr bool kRowInputRing = false;
//   CHECK-NOT:   map2
//       CHECK:   epilogue{in0, in1, in2, in3, out0, (long long)blockIdx.z * 76800LL};
// PTX-LABEL: // === ptx two_inputs_k0
func.func @two_inputs(%x: tensor<300x64xf16>, %w: tensor<256x64xf16>, %r: tensor<300x256xf16>, %q: tensor<300x256xf16>) -> tensor<300x256xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r, %q : tensor<300x64xf16>, tensor<256x64xf16>, tensor<300x256xf16>, tensor<300x256xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 4, residual_ring = true>} -> tensor<300x256xf16> {
  ^bb0(%a: tensor<300x64xf16>, %bw: tensor<256x64xf16>, %br: tensor<300x256xf16>, %bq: tensor<300x256xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x64xf16>, tensor<256x64xf16>) -> tensor<300x256xf16>
    %s = kiln.add %l, %br : tensor<300x256xf16>
    %t = kiln.mul %s, %bq : tensor<300x256xf16>
    kiln.yield %t : tensor<300x256xf16>
  }
  return %0 : tensor<300x256xf16>
}
