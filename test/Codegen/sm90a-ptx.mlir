// RUN: kiln-translate --kiln-to-sm90a-ptx %s | FileCheck %s

// The sm_90a image of a fused fp16 linear (96 tiles of 128 x 128, one
// wave) loads its tiles with the tensor memory accelerator on an mbarrier
// pipeline and multiplies with wgmma.
// CHECK-LABEL: // === ptx gemm_k0
//       CHECK: .target sm_90a
//       CHECK: mbarrier.init.shared::cta.b64
//   CHECK-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
//   CHECK-DAG: mbarrier.try_wait.parity.shared::cta.b64
//   CHECK-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
//   CHECK-DAG: wgmma.commit_group.sync.aligned
func.func @gemm(%x: tensor<4096x512xf16>, %w: tensor<384x512xf16>, %b: tensor<384xf16>) -> tensor<4096x384xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<4096x512xf16>, tensor<384x512xf16>, tensor<384xf16>) -> tensor<4096x384xf16> {
  ^bb0(%a: tensor<4096x512xf16>, %bw: tensor<384x512xf16>, %bb: tensor<384xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<4096x512xf16>, tensor<384x512xf16>, tensor<384xf16>) -> tensor<4096x384xf16>
    %g = kiln.gelu %l : tensor<4096x384xf16>
    kiln.yield %g : tensor<4096x384xf16>
  }
  return %0 : tensor<4096x384xf16>
}
