// RUN: not kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s
// RUN: not kiln-translate --kiln-to-sm90a-ptx %s --split-input-file | FileCheck %s --check-prefix=PTX
// RUN: env KILN_EPILOGUE_HALF2=0 not kiln-translate --kiln-to-cuda %s --split-input-file 2>&1 | FileCheck %s --check-prefix=NOSTEPS
// RUN: not kiln-translate --kiln-to-cuda %s --split-input-file 2>&1 | FileCheck %s --check-prefix=REFUSED
// (The first two runs fail on the last case, refused.)

// 192 rows with the epilogue warpgroups' schedule (the packed handoff): 512
// threads as a cooperative 192-row tile has, the three consumers handing
// the bias's sum rounded to fp16 pairs (base_packed) to the producer
// warpgroup's three idle warps through a 75 KiB handoff that is also their
// staging; those run the GELU (finish_packed) and store 16 bytes at once.
// The producer warpgroup keeps 56 registers and the consumers take 152.
// CHECK-LABEL: // === kernel tall_handoff_k0 grid(3, 1, 1) block(512) shared(225280)
//       CHECK: static_assert(kiln::sm90::shared_bytes(192, 3, true, 192) == 225280
//       CHECK: static constexpr bool kPackedHandoff = true;
//       CHECK: unsigned base_packed(int m, int n, float acc0, float acc1) const {
//  CHECK-NEXT:   return kiln::pack_pair<__half>(packed_base(m, n, acc0), packed_base(m, n + 1, acc1));
//       CHECK: unsigned finish_packed(int m, int n, unsigned packed) const {
//  CHECK-NEXT:   packed = kiln::approx::gelu_erf_half2(packed);
//       CHECK: void *chunk_at(int m, int n) const {
//       CHECK: kiln::sm90::wgmma_gemm<__half, 192, 3, kiln::sm90::Schedule::epilogue_warpgroups, 1, 1, false, 192>
// PTX-LABEL: // === ptx tall_handoff_k0
//       PTX: .maxntid 512, 1, 1
//       PTX: setmaxnreg.inc.sync.aligned.u32 152
//       PTX: wgmma.mma_async.sync.aligned.m64n192k16.f32.f16.f16
//   PTX-DAG: stmatrix.sync.aligned.m8n8.x4.shared.b16
//   PTX-DAG: bar.arrive
//   PTX-DAG: setmaxnreg.dec.sync.aligned.u32 56
//   PTX-DAG: ex2.approx.f16x2
//   PTX-DAG: st.global.v4.b32
func.func @tall_handoff(%x: tensor<500x64xf16>, %w: tensor<504x64xf16>, %b: tensor<504xf16>) -> tensor<500x504xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<500x64xf16>, tensor<504x64xf16>, tensor<504xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 3, schedule = epilogue_warpgroups>} -> tensor<500x504xf16> {
  ^bb0(%a: tensor<500x64xf16>, %bw: tensor<504x64xf16>, %bb: tensor<504xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<500x64xf16>, tensor<504x64xf16>, tensor<504xf16>) -> tensor<500x504xf16>
    %g = kiln.gelu %l : tensor<500x504xf16>
    kiln.yield %g : tensor<500x504xf16>
  }
  return %0 : tensor<500x504xf16>
}

// -----

// A residual is a row input the warps would need beside the pair: the
// 192-row handoff takes the epilogue's last ops on the pair alone. So do
// the diagnostics that keep the GELU in fp32 (NOSTEPS, for the case above).
// NOSTEPS: error: 'kiln.fusion' op cannot run as gemm_wgmma: 192-row tiles hand the producer warpgroup's idle warps their results as fp16 pairs
// REFUSED: error: 'kiln.fusion' op cannot run as gemm_wgmma: 192-row tiles hand the producer warpgroup's idle warps their results as fp16 pairs
func.func @tall_handoff_residual(%x: tensor<500x64xf16>, %w: tensor<504x64xf16>, %r: tensor<500x504xf16>) -> tensor<500x504xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<500x64xf16>, tensor<504x64xf16>, tensor<500x504xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 3, schedule = epilogue_warpgroups>} -> tensor<500x504xf16> {
  ^bb0(%a: tensor<500x64xf16>, %bw: tensor<504x64xf16>, %ar: tensor<500x504xf16>):
    %l = kiln.linear %a, %bw : (tensor<500x64xf16>, tensor<504x64xf16>) -> tensor<500x504xf16>
    %g = kiln.gelu %l : tensor<500x504xf16>
    %s = kiln.add %g, %ar : tensor<500x504xf16>
    kiln.yield %s : tensor<500x504xf16>
  }
  return %0 : tensor<500x504xf16>
}
