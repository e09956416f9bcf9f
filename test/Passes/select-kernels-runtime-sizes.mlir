// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=DEFAULT
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{runtime-sizes=true explain=true}))" 2>&1 | FileCheck %s

// With runtime-sizes, a Hopper GEMM without a batch whose epilogue reads
// only its bias and inputs of the result's shape takes M, N and K at
// launch. Anything that indexes by the result's shape keeps the sizes in
// the source: a vector broadcast over the rows, N % 8 != 0.
// DEFAULT-NOT: runtime_sizes

// CHECK: remark: {{.*}}gemm_wgmma: {{.*}}; sizes at run time
// CHECK: remark: {{.*}}gemm_wgmma: {{.*}}; sizes at run time
// CHECK: remark: {{.*}}gemm_wgmma: {{.*}}; sizes in the source: input 2 is broadcast over the result
// CHECK: remark: {{.*}}gemm_wgmma: {{.*}}; sizes in the source: runtime sizes take no batch and N % 8 == 0
// CHECK-LABEL: func.func @ffn(
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, {{.*}}, runtime_sizes = true>
//       CHECK:   #kiln.kernel<variant = gemm_wgmma, {{.*}}, runtime_sizes = true>
func.func @ffn(%x: tensor<32x128x1024xf16>, %w1: tensor<4096x1024xf16>, %b1: tensor<4096xf16>, %w2: tensor<1024x4096xf16>, %b2: tensor<1024xf16>) -> tensor<32x128x1024xf16> {
  %up = kiln.fusion gemm_epilogue ins(%x, %w1, %b1 : tensor<32x128x1024xf16>, tensor<4096x1024xf16>, tensor<4096xf16>) -> tensor<32x128x4096xf16> {
  ^bb0(%a: tensor<32x128x1024xf16>, %w: tensor<4096x1024xf16>, %b: tensor<4096xf16>):
    %l = kiln.linear %a, %w, %b : (tensor<32x128x1024xf16>, tensor<4096x1024xf16>, tensor<4096xf16>) -> tensor<32x128x4096xf16>
    %g = kiln.gelu %l : tensor<32x128x4096xf16>
    kiln.yield %g : tensor<32x128x4096xf16>
  }
  %down = kiln.fusion gemm_epilogue ins(%up, %w2, %b2, %x : tensor<32x128x4096xf16>, tensor<1024x4096xf16>, tensor<1024xf16>, tensor<32x128x1024xf16>) -> tensor<32x128x1024xf16> {
  ^bb0(%a: tensor<32x128x4096xf16>, %w: tensor<1024x4096xf16>, %b: tensor<1024xf16>, %r: tensor<32x128x1024xf16>):
    %l = kiln.linear %a, %w, %b : (tensor<32x128x4096xf16>, tensor<1024x4096xf16>, tensor<1024xf16>) -> tensor<32x128x1024xf16>
    %s = kiln.add %l, %r : tensor<32x128x1024xf16>
    kiln.yield %s : tensor<32x128x1024xf16>
  }
  return %down : tensor<32x128x1024xf16>
}

// CHECK-LABEL: func.func @kept_in_source(
//   CHECK-NOT:   runtime_sizes
//       CHECK:   return
func.func @kept_in_source(%x: tensor<4096x1024xf16>, %w: tensor<4096x1024xf16>, %scale: tensor<4096xf16>, %wo: tensor<1001x1024xf16>) -> (tensor<4096x4096xf16>, tensor<4096x1001xf16>) {
  %scaled = kiln.fusion gemm_epilogue ins(%x, %w, %scale : tensor<4096x1024xf16>, tensor<4096x1024xf16>, tensor<4096xf16>) -> tensor<4096x4096xf16> {
  ^bb0(%a: tensor<4096x1024xf16>, %bw0: tensor<4096x1024xf16>, %s: tensor<4096xf16>):
    %l = kiln.linear %a, %bw0 : (tensor<4096x1024xf16>, tensor<4096x1024xf16>) -> tensor<4096x4096xf16>
    %m = kiln.mul %l, %s : tensor<4096x4096xf16>, tensor<4096xf16> -> tensor<4096x4096xf16>
    kiln.yield %m : tensor<4096x4096xf16>
  }
  %odd = kiln.fusion gemm_epilogue ins(%x, %wo : tensor<4096x1024xf16>, tensor<1001x1024xf16>) -> tensor<4096x1001xf16> {
  ^bb0(%a: tensor<4096x1024xf16>, %bw0: tensor<1001x1024xf16>):
    %l = kiln.linear %a, %bw0 : (tensor<4096x1024xf16>, tensor<1001x1024xf16>) -> tensor<4096x1001xf16>
    kiln.yield %l : tensor<4096x1001xf16>
  }
  return %scaled, %odd : tensor<4096x4096xf16>, tensor<4096x1001xf16>
}

// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{runtime-sizes=true wgmma-rows=192 explain=true}))" 2>&1 | FileCheck %s --check-prefix=TALL
// TALL: remark: {{.*}}cooperative 192 x 192 tiles{{.*}}; sizes in the source: runtime sizes spill a 192-row tile's epilogue

// A batch-1 layer whose tiles fill little of the GPU (BERT-base's FFN
// down-projection at 128 tokens: 12 tiles of 128 x 64) splits K across a
// cluster; its sizes too are given at launch.
// SPLIT: remark: {{.*}}gemm_split_k: {{.*}}; sizes at run time; split
// SPLIT-LABEL: func.func @split(
//       SPLIT:   #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64], stages = 3, split_k = {{[0-9]}}, runtime_sizes = true>
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{runtime-sizes=true explain=true}))" 2>&1 | FileCheck %s --check-prefix=SPLIT
func.func @split(%x: tensor<1x128x3072xf16>, %w: tensor<768x3072xf16>, %b: tensor<768xf16>) -> tensor<1x128x768xf16> {
  %down = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<1x128x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<1x128x768xf16> {
  ^bb0(%a: tensor<1x128x3072xf16>, %bw: tensor<768x3072xf16>, %bb: tensor<768xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<1x128x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<1x128x768xf16>
    %g = kiln.gelu %l : tensor<1x128x768xf16>
    kiln.yield %g : tensor<1x128x768xf16>
  }
  return %down : tensor<1x128x768xf16>
}

// A layer norm's row count is given at launch, its row length stays; not
// where an input is indexed by the row (a per-row scale).
// NORM: remark: {{.*}}normalization_warp: 4096 rows of 1024 elements{{.*}}; rows at run time
// NORM: remark: {{.*}}normalization_warp: 4096 rows of 1024 elements{{.*}}; rows in the source: input 1 is broadcast over the result
// NORM-LABEL: func.func @norms(
//       NORM:   #kiln.kernel<variant = normalization_warp, runtime_sizes = true>
//       NORM:   #kiln.kernel<variant = normalization_warp>
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{runtime-sizes=true explain=true}))" 2>&1 | FileCheck %s --check-prefix=NORM
func.func @norms(%x: tensor<4096x1024xf16>, %w: tensor<1024xf16>, %b: tensor<1024xf16>, %s: tensor<4096x1xf16>) -> (tensor<4096x1024xf16>, tensor<4096x1024xf16>) {
  %n = kiln.fusion normalization ins(%x, %w, %b : tensor<4096x1024xf16>, tensor<1024xf16>, tensor<1024xf16>) -> tensor<4096x1024xf16> {
  ^bb0(%a: tensor<4096x1024xf16>, %aw: tensor<1024xf16>, %ab: tensor<1024xf16>):
    %y = kiln.layer_norm %a weight %aw bias %ab axis = 1 eps = 1.0e-05 : (tensor<4096x1024xf16>, tensor<1024xf16>, tensor<1024xf16>) -> tensor<4096x1024xf16>
    kiln.yield %y : tensor<4096x1024xf16>
  }
  %m = kiln.fusion normalization ins(%x, %s : tensor<4096x1024xf16>, tensor<4096x1xf16>) -> tensor<4096x1024xf16> {
  ^bb0(%a: tensor<4096x1024xf16>, %as: tensor<4096x1xf16>):
    %y = kiln.layer_norm %a axis = 1 eps = 1.0e-05 : (tensor<4096x1024xf16>) -> tensor<4096x1024xf16>
    %z = kiln.mul %y, %as : tensor<4096x1024xf16>, tensor<4096x1xf16> -> tensor<4096x1024xf16>
    kiln.yield %z : tensor<4096x1024xf16>
  }
  return %n, %m : tensor<4096x1024xf16>, tensor<4096x1024xf16>
}
