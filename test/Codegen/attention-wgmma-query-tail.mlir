// RUN: env KILN_ATTENTION_QUERY_TAIL=1 kiln-translate --kiln-to-sm90a-ptx %s | FileCheck %s
// RUN: env -u KILN_ATTENTION_QUERY_TAIL kiln-translate --kiln-to-sm90a-ptx %s | FileCheck %s --check-prefix=DEFAULT

// ViT's 197 queries: the block of the last 5 takes S^T = K Q^T and
// O^T += V^T P^T as m64n16 products (the second with A MN-major,
// imm-trans-a = 1) where the other blocks take m64n64 ones, under
// KILN_ATTENTION_QUERY_TAIL=1 (a diagnostic until timed on the GPU machine).
// CHECK-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CHECK-DAG: wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {{.*}}, 1, 1, 1, 1, 0;
// DEFAULT: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// DEFAULT-NOT: m64n16k16.f32.f16.f16 {{.*}}, 1, 1, 1, 1, 0;
func.func @vit(%q: tensor<2x3x197x64xf16>, %k: tensor<2x3x197x64xf16>, %v: tensor<2x3x197x64xf16>) -> tensor<2x3x197x64xf16> {
  %0 = kiln.fusion attention ins(%q, %k, %v : tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>) {kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64]>} -> tensor<2x3x197x64xf16> {
  ^bb0(%a: tensor<2x3x197x64xf16>, %b: tensor<2x3x197x64xf16>, %c: tensor<2x3x197x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>, tensor<2x3x197x64xf16>) -> tensor<2x3x197x64xf16>
    kiln.yield %o : tensor<2x3x197x64xf16>
  }
  return %0 : tensor<2x3x197x64xf16>
}
