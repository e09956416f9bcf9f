// RUN: kiln-translate --kiln-to-cuda %s | FileCheck %s
// RUN: not env KILN_EPILOGUE_FRAGMENTS=0 kiln-translate --kiln-to-cuda %s 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: not env KILN_EPILOGUE_PAIRS=0 kiln-translate --kiln-to-cuda %s 2>&1 | FileCheck %s --check-prefix=OFF

// The Hopper GEMM's residual through the main loop's ring (kRingInput in
// kiln_gemm_sm90.cuh); KILN_EPILOGUE_FRAGMENTS=ring for any ring depth is
// checked in gemm-fragment-epilogue.mlir.

// A ring deeper than the full staging leaves room for (what
// --wgmma-residual-ring selects: 5 stages of 128 x 192) takes the residual
// through the ring whatever KILN_EPILOGUE_FRAGMENTS says, and keeps only
// the results' half of the staging. Without the fragments epilogue
// (KILN_EPILOGUE_FRAGMENTS=0 or KILN_EPILOGUE_PAIRS=0, diagnostics) the
// ring does not fit.
// OFF: error: 'kiln.fusion' op needs 242688 bytes of dynamic shared memory in its sm_90a image
// CHECK-LABEL: // === kernel deep_ring_k0 grid(5, 1, 1) block(384) shared(224256)
//       CHECK: // tensor map of in2: dims [192, 600] box [64, 128] strides [1, 1]
//       CHECK: static_assert(kiln::sm90::shared_bytes(192, 5, false, 128, false, false, 1, true) == 224256,
//       CHECK:   const kiln::sm90::TensorMap *rowInputMap;
//       CHECK:   static constexpr bool kRowInputRing = true;
//       CHECK:   epilogue{in0, in1, in2, out0, (long long)blockIdx.z * 115200LL, &map2};
func.func @deep_ring(%x: tensor<600x64xf16>, %w: tensor<192x64xf16>, %r: tensor<600x192xf16>) -> tensor<600x192xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<600x64xf16>, tensor<192x64xf16>, tensor<600x192xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 5>} -> tensor<600x192xf16> {
  ^bb0(%a: tensor<600x64xf16>, %aw: tensor<192x64xf16>, %ar: tensor<600x192xf16>):
    %l = kiln.linear %a, %aw : (tensor<600x64xf16>, tensor<192x64xf16>) -> tensor<600x192xf16>
    %t = kiln.add %l, %ar : tensor<600x192xf16>
    kiln.yield %t : tensor<600x192xf16>
  }
  return %0 : tensor<600x192xf16>
}
