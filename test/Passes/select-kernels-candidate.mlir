// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=0}))" | FileCheck %s --check-prefix=FIRST
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=1}))" | FileCheck %s --check-prefix=SECOND
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=4}))" | FileCheck %s --check-prefix=FIFTH
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=7 explain=true}))" 2>&1 | FileCheck %s --check-prefix=PAST
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{wgmma-candidate=-2}))" 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// BERT's FFN up-projection at batch 32: candidate 0 is the cost model's
// own choice (ping-pong 128 x 128, as without the option), then the other
// tiles it admitted, cheapest first; past the seventh, its own again.
// FIRST:  kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 132, schedule = pingpong>
// SECOND: kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 132>
// FIFTH:  kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [192, 192, 64], stages = 3, grid_limit = 132>
// PAST:   remark: gemm_wgmma: {{.*}}wgmma-candidate 7: only 7, the cost model's kept
// PAST:   kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 132, schedule = pingpong>
// NEGATIVE: error: wgmma-candidate -2: -1 (the cost model's tile) or a candidate's index, 0 or more
func.func @batch32_up_projection(%x: tensor<4096x768xf16>, %w: tensor<3072x768xf16>) -> tensor<4096x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<3072x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16>
    kiln.yield %l : tensor<4096x3072xf16>
  }
  return %0 : tensor<4096x3072xf16>
}
