// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=SM90
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{targets=sm_80}))" | FileCheck %s --check-prefix=SM80
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{targets=sm_70}))" | FileCheck %s --check-prefix=SM70

// An fp32 GEMM whose operands may round to tf32 (--precision tf32) runs on
// tensor cores where there are any (sm_80 and up), SIMT on a V100.
// SM90-LABEL: func.func @tf32_gemm(
//       SM90:   kiln.kernel = #kiln.kernel<variant = gemm_tf32, tile = [128, 128, 16]>
// SM80-LABEL: func.func @tf32_gemm(
//       SM80:   kiln.kernel = #kiln.kernel<variant = gemm_tf32, tile = [128, 128, 16]>
// SM70-LABEL: func.func @tf32_gemm(
//       SM70:   kiln.kernel = #kiln.kernel<variant = gemm_simt, tile = [64, 64, 16]>
func.func @tf32_gemm(%x: tensor<4096x768xf32>, %w: tensor<3072x768xf32>) -> tensor<4096x3072xf32> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf32>, tensor<3072x768xf32>) -> tensor<4096x3072xf32> {
  ^bb0(%a: tensor<4096x768xf32>, %bw: tensor<3072x768xf32>):
    %l = kiln.linear %a, %bw {kiln.tf32} : (tensor<4096x768xf32>, tensor<3072x768xf32>) -> tensor<4096x3072xf32>
    kiln.yield %l : tensor<4096x3072xf32>
  }
  return %0 : tensor<4096x3072xf32>
}

