// RUN: kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s

// A Hopper GEMM with runtime_sizes names no size in its source: M, N and K
// are its last parameters, the epilogue's row stride a member. Two GEMMs of
// one configuration and epilogue, at different sizes (a model's batch 1
// and batch 32 layers, or two models), launch one kernel with their own
// integers, grids and tensor maps.
// CHECK-LABEL: // === kernel sizes_k0 grid(16, 1, 1) block(384) shared(185344) inputs(3) outputs(1) integers(4096, 4096, 1024)
//       CHECK: // tensor map of in0: dims [1024, 4096] box [64, 128]
//       CHECK: struct [[NAME:kiln_[0-9A-F]+]]_epilogue {
//       CHECK:   long long columns;
//   CHECK-NOT: 4096LL
//       CHECK:     const long long idx = batchBase + (long long)m * columns + n;
//       CHECK: __global__ void __launch_bounds__(384, 1) [[NAME]](const __grid_constant__ kiln::sm90::TensorMap map0, const __grid_constant__ kiln::sm90::TensorMap map1, const __half *__restrict__ in0, const __half *__restrict__ in1, const __half *__restrict__ in2, __half *__restrict__ out0, const long long size_m, const long long size_n, const long long size_k) {
//       CHECK:   const [[NAME]]_epilogue epilogue{in0, in1, in2, out0, 0LL, size_n};
//       CHECK:   kiln::sm90::wgmma_gemm<__half, 256, 3, kiln::sm90::Schedule::cooperative, 1, 1>(map0, map1, (int)size_m, (int)size_n, (int)size_k, epilogue);
//       CHECK:   kiln::mma_gemm_persistent<__half, true>(in0 + aOffset, in1 + bOffset, (int)size_m, (int)size_n, (int)size_k, epilogue);
//       CHECK: // === kernel sizes_k1 grid(16, 1, 1) block(384) shared(185344) inputs(3) outputs(1) integers(100, 4096, 1024)
//       CHECK: // tensor map of in0: dims [1024, 100] box [64, 128]
//       CHECK: __global__ void __launch_bounds__(384, 1) [[NAME]](
func.func @sizes(%x: tensor<4096x1024xf16>, %w: tensor<4096x1024xf16>, %b: tensor<4096xf16>, %y: tensor<100x1024xf16>) -> (tensor<4096x4096xf16>, tensor<100x4096xf16>) {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<4096x1024xf16>, tensor<4096x1024xf16>, tensor<4096xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 16, runtime_sizes = true>} -> tensor<4096x4096xf16> {
  ^bb0(%a: tensor<4096x1024xf16>, %bw: tensor<4096x1024xf16>, %bb: tensor<4096xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<4096x1024xf16>, tensor<4096x1024xf16>, tensor<4096xf16>) -> tensor<4096x4096xf16>
    %g = kiln.gelu %l : tensor<4096x4096xf16>
    kiln.yield %g : tensor<4096x4096xf16>
  }
  %1 = kiln.fusion gemm_epilogue ins(%y, %w, %b : tensor<100x1024xf16>, tensor<4096x1024xf16>, tensor<4096xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 16, runtime_sizes = true>} -> tensor<100x4096xf16> {
  ^bb0(%a: tensor<100x1024xf16>, %bw: tensor<4096x1024xf16>, %bb: tensor<4096xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<100x1024xf16>, tensor<4096x1024xf16>, tensor<4096xf16>) -> tensor<100x4096xf16>
    %g = kiln.gelu %l : tensor<100x4096xf16>
    kiln.yield %g : tensor<100x4096xf16>
  }
  return %0, %1 : tensor<4096x4096xf16>, tensor<100x4096xf16>
}

// -----

// Split K across a cluster (a batch-1 layer): the same parameters, the
// same functor, the split-K template called with them.
// CHECK-LABEL: // === kernel split_k0 grid(192, 2, 1) block(128) shared({{[0-9]+}}) inputs(3) outputs(1) cluster(4, 1, 1) integers(128, 3072, 768)
//       CHECK: // kiln gemm_epilogue kernel, sizes given at launch
//       CHECK:     const long long idx = batchBase + (long long)m * columns + n;
//       CHECK: , const long long size_m, const long long size_n, const long long size_k) {
//       CHECK:   kiln::splitk_gemm<__half, true, 4, 64, 3>(in0 + aOffset, in1 + bOffset, (int)size_m, (int)size_n, (int)size_k, epilogue);
func.func @split(%x: tensor<128x768xf16>, %w: tensor<3072x768xf16>, %b: tensor<3072xf16>) -> tensor<128x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<128x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64], stages = 3, split_k = 4, runtime_sizes = true>} -> tensor<128x3072xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<3072x768xf16>, %bb: tensor<3072xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<128x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<128x3072xf16>
    %g = kiln.gelu %l : tensor<128x3072xf16>
    kiln.yield %g : tensor<128x3072xf16>
  }
  return %0 : tensor<128x3072xf16>
}

// -----

// A layer norm with its row count given at launch: the row loop's bound is
// the kernel's last parameter; the row length stays a constant.
// CHECK-LABEL: // === kernel norm_k0 grid(513, 1, 1) block(256) shared(0) inputs(3) outputs(1) integers(4101)
//       CHECK: // kiln normalization kernel, sizes given at launch
//       CHECK: __half *__restrict__ out0, const long long row_count) {
//       CHECK:   constexpr int L = 768, kV = 8
//       CHECK: r < row_count; r += warps) {
func.func @norm(%x: tensor<4101x768xf16>, %w: tensor<768xf16>, %b: tensor<768xf16>) -> tensor<4101x768xf16> {
  %0 = kiln.fusion normalization ins(%x, %w, %b : tensor<4101x768xf16>, tensor<768xf16>, tensor<768xf16>) {kiln.kernel = #kiln.kernel<variant = normalization_warp, runtime_sizes = true>} -> tensor<4101x768xf16> {
  ^bb0(%a: tensor<4101x768xf16>, %aw: tensor<768xf16>, %ab: tensor<768xf16>):
    %y = kiln.layer_norm %a weight %aw bias %ab axis = 1 eps = 1.0e-05 : (tensor<4101x768xf16>, tensor<768xf16>, tensor<768xf16>) -> tensor<4101x768xf16>
    kiln.yield %y : tensor<4101x768xf16>
  }
  return %0 : tensor<4101x768xf16>
}
