// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-wgmma=false}))" | FileCheck %s --check-prefix=AUTO
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{targets=sm_80}))" | FileCheck %s --check-prefix=AUTO
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-rows=128 attention-wgmma=false}))" | FileCheck %s --check-prefix=WIDE
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-rows=128 targets=sm_80}))" | FileCheck %s --check-prefix=WIDE
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-rows=96}))" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-stages=4}))" 2>&1 | FileCheck %s --check-prefix=BADSTAGES

// The tensor-core attention takes 64 queries a block (4 warps) unless
// asked for 128 (8 warps); the knob leaves the SIMT kernel alone. (On
// sm_90a attention_wgmma comes first, where the knob gives it two consumer
// warpgroups: select-kernels-attention-wgmma.mlir.)
// AUTO: kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [64, 64, 64]>
// AUTO: kiln.kernel = #kiln.kernel<variant = attention_simt>
// WIDE: kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [128, 64, 64]>
// WIDE: kiln.kernel = #kiln.kernel<variant = attention_simt>
// BAD: error: --attention-rows must be 0 (the cost model's choice), 64 or 128, got 96
// BADSTAGES: error: --attention-stages must be 0 (the kernel's 2), 2 or 3, got 4
func.func @attention(%q: tensor<32x12x128x64xf16>, %q32: tensor<1x12x128x64xf32>) -> (tensor<32x12x128x64xf16>, tensor<1x12x128x64xf32>) {
  %0 = kiln.fusion attention ins(%q, %q, %q : tensor<32x12x128x64xf16>, tensor<32x12x128x64xf16>, tensor<32x12x128x64xf16>) -> tensor<32x12x128x64xf16> {
  ^bb0(%a: tensor<32x12x128x64xf16>, %b: tensor<32x12x128x64xf16>, %c: tensor<32x12x128x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<32x12x128x64xf16>, tensor<32x12x128x64xf16>, tensor<32x12x128x64xf16>) -> tensor<32x12x128x64xf16>
    kiln.yield %o : tensor<32x12x128x64xf16>
  }
  %1 = kiln.fusion attention ins(%q32, %q32, %q32 : tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32> {
  ^bb0(%a: tensor<1x12x128x64xf32>, %b: tensor<1x12x128x64xf32>, %c: tensor<1x12x128x64xf32>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32>
    kiln.yield %o : tensor<1x12x128x64xf32>
  }
  return %0, %1 : tensor<32x12x128x64xf16>, tensor<1x12x128x64xf32>
}
