// RUN: kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s

// One kernel per fusion group; launch configuration on the marker line.

// Elementwise: a grid-stride loop over the output; a full-shape input loads
// at the element's index, a broadcast input at its broadcast offset, a
// cloned splat constant is a literal, fp16 values compute in fp32.
// CHECK-LABEL: // === kernel ew_k0 grid(1, 1, 1) block(256) shared(0) inputs(2) outputs(1)
//       CHECK: extern "C" __global__ void __launch_bounds__(256, 4) {{kiln_[0-9A-F]+}}(const __half *__restrict__ in0, const __half *__restrict__ in1, __half *__restrict__ out0)
//       CHECK:   for (long long idx = (long long)blockIdx.x * 256 + threadIdx.x; idx < 40LL; idx += (long long)gridDim.x * 256) {
//       CHECK:     const float v0 = kiln::to_float(in0[idx]);
//       CHECK:     const long long c1_{{[0-9]+}} = (long long)(((unsigned)idx / 1u) % 8u);
//       CHECK:     const float v{{[0-9]+}} = kiln::to_float(in1[c1_{{[0-9]+}}]);
//       CHECK:     = (v0 + v{{[0-9]+}});
//       CHECK:     = kiln::approx::gelu_tanh(
//       CHECK:     = (v{{[0-9]+}} * 5.000000000e-01f);
//       CHECK:     out0[idx] = kiln::from_float<__half>(
func.func @ew(%a: tensor<5x8xf16>, %b: tensor<8xf16>) -> tensor<5x8xf16> {
  %0 = kiln.fusion elementwise ins(%a, %b : tensor<5x8xf16>, tensor<8xf16>) -> tensor<5x8xf16> {
  ^bb0(%x: tensor<5x8xf16>, %y: tensor<8xf16>):
    %h = kiln.constant dense<0.5> : tensor<f16>
    %s = kiln.add %x, %y : tensor<5x8xf16>, tensor<8xf16> -> tensor<5x8xf16>
    %g = kiln.gelu %s approximate = tanh : tensor<5x8xf16>
    %m = kiln.mul %g, %h : tensor<5x8xf16>, tensor<f16> -> tensor<5x8xf16>
    kiln.yield %m : tensor<5x8xf16>
  }
  return %0 : tensor<5x8xf16>
}

// -----

// Four elements a thread a step (tile [1, 4, 1], elementwise-unroll=4):
// a quarter of the blocks; steps wholly in range run without a bounds test
// between them (their loads can all be issued first), the last tests each.
// CHECK-LABEL: // === kernel ew4_k0 grid(2112, 1, 1) block(256) shared(0) inputs(2) outputs(1)
//       CHECK:   for (long long first = (long long)blockIdx.x * 256 + threadIdx.x; first < 7225344LL; first += (long long)gridDim.x * 256 * 4) {
//       CHECK:     if (first + (4 - 1) * (long long)gridDim.x * 256 < 7225344LL) {
//       CHECK:       for (int u = 0; u < 4; ++u) {
//       CHECK:     const long long idx = first + u * (long long)gridDim.x * 256;
//  CHECK-NEXT:     const float v0 = kiln::to_float(in0[idx]);
//       CHECK:     } else {
//       CHECK:     if (idx < 7225344LL) {
//       CHECK:     out0[idx] = kiln::from_float<__half>(
func.func @ew4(%a: tensor<32x14x14x1152xf16>, %b: tensor<32x1x1x1152xf16>) -> tensor<32x14x14x1152xf16> {
  %0 = kiln.fusion elementwise ins(%a, %b : tensor<32x14x14x1152xf16>, tensor<32x1x1x1152xf16>) {kiln.kernel = #kiln.kernel<variant = elementwise, tile = [1, 4, 1], grid_limit = 2112>} -> tensor<32x14x14x1152xf16> {
  ^bb0(%x: tensor<32x14x14x1152xf16>, %y: tensor<32x1x1x1152xf16>):
    %m = kiln.mul %x, %y : tensor<32x14x14x1152xf16>, tensor<32x1x1x1152xf16> -> tensor<32x14x14x1152xf16>
    kiln.yield %m : tensor<32x14x14x1152xf16>
  }
  return %0 : tensor<32x14x14x1152xf16>
}

// -----

// Ops with a half result take the hardware approximations (kiln::approx:
// exp2 and reciprocal, errors far under the half's rounding); fp32 results
// keep expf and IEEE division. tanh itself is exact in both.
// CHECK-LABEL: // === kernel approx_k0
//       CHECK:     = kiln::approx::silu(
//       CHECK:     = kiln::approx::div(
//       CHECK:     = kiln::approx::exp(
//       CHECK:     = kiln::approx::erf(
//       CHECK:     = tanhf(
// CHECK-LABEL: // === kernel approx_k1
//   CHECK-NOT:   kiln::approx
//       CHECK:     = kiln::silu(
//       CHECK:     = (v{{[0-9]+}} / v{{[0-9]+}});
//       CHECK:     = expf(
//       CHECK:     = erff(
//       CHECK:     = tanhf(
func.func @approx(%a: tensor<64xf16>, %b: tensor<64xf32>) -> (tensor<64xf16>, tensor<64xf32>) {
  %0 = kiln.fusion elementwise ins(%a : tensor<64xf16>) -> tensor<64xf16> {
  ^bb0(%x: tensor<64xf16>):
    %s = kiln.silu %x : tensor<64xf16>
    %d = kiln.div %s, %x : tensor<64xf16>, tensor<64xf16> -> tensor<64xf16>
    %e = kiln.exp %d : tensor<64xf16>
    %f = kiln.erf %e : tensor<64xf16>
    %t = kiln.tanh %f : tensor<64xf16>
    kiln.yield %t : tensor<64xf16>
  }
  %1 = kiln.fusion elementwise ins(%b : tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%x: tensor<64xf32>):
    %s = kiln.silu %x : tensor<64xf32>
    %d = kiln.div %s, %x : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
    %e = kiln.exp %d : tensor<64xf32>
    %f = kiln.erf %e : tensor<64xf32>
    %t = kiln.tanh %f : tensor<64xf32>
    kiln.yield %t : tensor<64xf32>
  }
  return %0, %1 : tensor<64xf16>, tensor<64xf32>
}

// -----

// Past 2^31 elements the index does not fit 32 bits: its coordinates take
// 64-bit divisions (under, 32-bit ones: above).
// CHECK-LABEL: // === kernel big_k0
//       CHECK:     const long long c1_{{[0-9]+}} = (idx / 1LL) % 60000LL;
func.func @big(%a: tensor<40000x60000xf16>, %b: tensor<60000xf16>) -> tensor<40000x60000xf16> {
  %0 = kiln.fusion elementwise ins(%a, %b : tensor<40000x60000xf16>, tensor<60000xf16>) -> tensor<40000x60000xf16> {
  ^bb0(%x: tensor<40000x60000xf16>, %y: tensor<60000xf16>):
    %s = kiln.add %x, %y : tensor<40000x60000xf16>, tensor<60000xf16> -> tensor<40000x60000xf16>
    kiln.yield %s : tensor<40000x60000xf16>
  }
  return %0 : tensor<40000x60000xf16>
}

// -----

// A linear with bias and residual on fp16 large enough to fill the GPU:
// one source holds the Hopper path (TMA tensor maps in, wgmma, sm_90a only;
// ping-pong over 160 tiles of 128 x 64, a ring of 6 stages, and a second
// residual slice a consumer warp: both row halves' first slices are copied
// before the main loop) and the mma.sync main loop for other GPUs; the
// epilogue rounds the GEMM result to fp16 first.
// CHECK-LABEL: // === kernel gemm_k0 grid(132, 1, 1) block(384) shared(203776) inputs(4) outputs(1)
//       CHECK: #include "kiln_gemm.cuh"
//       CHECK: #include "kiln_gemm_sm90.cuh"
//  CHECK-NEXT: static_assert(kiln::sm90::shared_bytes(64, 6, false, 128, true) == 203776,
// The epilogue functor's compute() loads and computes, its store() stores:
// the main loops compute many elements before storing any. element()
// computes one element from its accumulator and its residual, which
// compute() loads and compute_pair() loads for two.
//       CHECK: struct {{kiln_[0-9A-F]+}}_epilogue {
// Values hold floats; store() rounds them to the output's type.
//       CHECK:   struct Values { float r0; };
//       CHECK:   __device__ __forceinline__ Values element(int m, int n, float acc, const __half in3_element) const {
//       CHECK:     const long long idx = batchBase + (long long)m * 300LL + n;
//       CHECK:     const float v{{[0-9]+}} = kiln::to_float(in3_element);
//       CHECK:     kiln::to_float(kiln::from_float<__half>((acc + kiln::to_float(in2[n]))))
//   CHECK-NOT:     out0[
//       CHECK:     return Values{v{{[0-9]+}}};
//       CHECK:   __device__ __forceinline__ Values compute(int m, int n, float acc) const {
//  CHECK-NEXT:     const long long idx = batchBase + (long long)m * 300LL + n;
//  CHECK-NEXT:     return element(m, n, acc, in3[idx]);
//       CHECK:   __device__ __forceinline__ void store(int m, int n, const Values &values) const {
//       CHECK:     out0[idx] = kiln::from_float<__half>(values.r0);
// N = 300 is even: the Hopper loop takes columns in pairs, the residual
// loaded for both by one load and the two results stored by one store.
//       CHECK:   static constexpr bool kPairs = true;
//       CHECK:   __device__ __forceinline__ void compute_pair(int m, int n, float acc0, float acc1, Values &first, Values &second) const {
//       CHECK:     const auto in3_pair = kiln::load_pair(in3 + idx);
//  CHECK-NEXT:     first = element(m, n, acc0, in3_pair.x);
//  CHECK-NEXT:     second = element(m, n + 1, acc1, in3_pair.y);
//       CHECK:   __device__ __forceinline__ void store_pair(int m, int n, const Values &first, const Values &second) const {
//  CHECK-NEXT:     const long long idx = batchBase + (long long)m * 300LL + n;
//  CHECK-NEXT:     kiln::store_pair(out0 + idx, first.r0, second.r0);
//       CHECK:   __device__ __forceinline__ void operator()(int m, int n, float acc) const {
//  CHECK-NEXT:     store(m, n, compute(m, n, acc));
//       CHECK: __launch_bounds__(384, 1) {{kiln_[0-9A-F]+}}(const __grid_constant__ kiln::sm90::TensorMap map0, const __grid_constant__ kiln::sm90::TensorMap map1, const __half *__restrict__ in0,
//       CHECK: #if defined(__CUDA_ARCH_FEAT_SM90_ALL)
//  CHECK-NEXT:   kiln::sm90::wgmma_gemm<__half, 64, 6, kiln::sm90::Schedule::pingpong, 1, 1>(map0, map1, 4096, 300, 72, epilogue);
//  CHECK-NEXT: #else
//  CHECK-NEXT:   kiln::mma_gemm_persistent<__half, true>(in0 + aOffset, in1 + bOffset, 4096, 300, 72, epilogue);
//  CHECK-NEXT: #endif
func.func @gemm(%x: tensor<4096x72xf16>, %w: tensor<300x72xf16>, %b: tensor<300xf16>, %r: tensor<4096x300xf16>) -> tensor<4096x300xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b, %r : tensor<4096x72xf16>, tensor<300x72xf16>, tensor<300xf16>, tensor<4096x300xf16>) -> tensor<4096x300xf16> {
  ^bb0(%a: tensor<4096x72xf16>, %bw: tensor<300x72xf16>, %bb: tensor<300xf16>, %br: tensor<4096x300xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<4096x72xf16>, tensor<300x72xf16>, tensor<300xf16>) -> tensor<4096x300xf16>
    %s = kiln.add %l, %br : tensor<4096x300xf16>
    kiln.yield %s : tensor<4096x300xf16>
  }
  return %0 : tensor<4096x300xf16>
}

// -----

// An odd row length leaves every other row's first element at an odd index:
// no pairs. A result already rounded to its output type (the GEMM's own,
// here) is stored without rounding it again.
// CHECK-LABEL: // === kernel odd_k0
//       CHECK:     return Values{(acc + kiln::to_float(in2[n]))};
//       CHECK:   static constexpr bool kPairs = false;
//   CHECK-NOT:   compute_pair
//       CHECK:   __device__ __forceinline__ void store_pair(int m, int n, const Values &first, const Values &second) const {
//  CHECK-NEXT:   }
func.func @odd(%x: tensor<4096x72xf16>, %w: tensor<301x72xf16>, %b: tensor<301xf16>) -> tensor<4096x301xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<4096x72xf16>, tensor<301x72xf16>, tensor<301xf16>) -> tensor<4096x301xf16> {
  ^bb0(%a: tensor<4096x72xf16>, %bw: tensor<301x72xf16>, %bb: tensor<301xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<4096x72xf16>, tensor<301x72xf16>, tensor<301xf16>) -> tensor<4096x301xf16>
    kiln.yield %l : tensor<4096x301xf16>
  }
  return %0 : tensor<4096x301xf16>
}

// -----

// Too few 128 x 256 tiles to fill the GPU (a transformer's down-projection
// at batch 1: 3 of them): 64 x 64 tiles, K split 8 ways across a cluster,
// 2 x 12 x 8 = 192 blocks of 128 threads. The sm_80 image of the same
// source has no clusters (and walks all of K in the first block).
// CHECK-LABEL: // === kernel small_k0 grid(96, 2, 1) block(128) shared(55296) inputs(3) outputs(1)
//       CHECK: #include "kiln_gemm_splitk.cuh"
//       CHECK: #if defined(__CUDA_ARCH_FEAT_SM90_ALL)
//  CHECK-NEXT: #define KILN_SPLIT_CLUSTER __cluster_dims__(8, 1, 1)
//  CHECK-NEXT: #else
//  CHECK-NEXT: #define KILN_SPLIT_CLUSTER
//  CHECK-NEXT: #endif
// 64-wide k tiles 3 deep in dynamic shared memory, the launch's figure
// checked against the kernel's at compile time.
//  CHECK-NEXT: static_assert(kiln::splitk_shared_bytes<__half, true, 64, 3>() == 55296,
//       CHECK: extern "C" __global__ void KILN_SPLIT_CLUSTER __launch_bounds__(128, 1) {{kiln_[0-9A-F]+}}(
//       CHECK:   kiln::splitk_gemm<__half, true, 8, 64, 3>(in0 + aOffset, in1 + bOffset, 128, 768, 3072, epilogue);
// A K too short to split (72 < 2 x 128) keeps one block per tile.
// CHECK-LABEL: // === kernel short_k0 grid(5, 2, 1) block(128) shared(55296) inputs(3) outputs(1)
//       CHECK: #define KILN_SPLIT_CLUSTER
//   CHECK-NOT: __cluster_dims__
//       CHECK:   kiln::splitk_gemm<__half, true, 1, 64, 3>(in0 + aOffset, in1 + bOffset, 70, 300, 72, epilogue);
func.func @small(%x: tensor<128x3072xf16>, %w: tensor<768x3072xf16>, %b: tensor<768xf16>) -> tensor<128x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<128x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x3072xf16>, %bw: tensor<768x3072xf16>, %bb: tensor<768xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<128x3072xf16>, tensor<768x3072xf16>, tensor<768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}
func.func @short(%x: tensor<70x72xf16>, %w: tensor<300x72xf16>, %b: tensor<300xf16>) -> tensor<70x300xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<70x72xf16>, tensor<300x72xf16>, tensor<300xf16>) -> tensor<70x300xf16> {
  ^bb0(%a: tensor<70x72xf16>, %bw: tensor<300x72xf16>, %bb: tensor<300xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<70x72xf16>, tensor<300x72xf16>, tensor<300xf16>) -> tensor<70x300xf16>
    kiln.yield %l : tensor<70x300xf16>
  }
  return %0 : tensor<70x300xf16>
}

// -----

// A broadcast batched matmul in fp32: the SIMT main loop over an N-major
// right operand, one grid z per batch, the lhs batch broadcast (stride 0).
// CHECK-LABEL: // === kernel bmm_k0 grid(1, 1, 6) block(256) shared(0) inputs(2) outputs(1)
//       CHECK:   const long long z = blockIdx.z;
//       CHECK:   const long long aOffset = 0LL + (z / 1 % 3) * 40LL;
//       CHECK:   const long long bOffset = 0LL + (z / 3 % 2) * 168LL + (z / 1 % 3) * 56LL;
//       CHECK:   kiln::simt_gemm<false>(in0 + aOffset, in1 + bOffset, 5, 7, 8, epilogue);
func.func @bmm(%a: tensor<3x5x8xf32>, %b: tensor<2x3x8x7xf32>) -> tensor<2x3x5x7xf32> {
  %0 = kiln.fusion gemm_epilogue ins(%a, %b : tensor<3x5x8xf32>, tensor<2x3x8x7xf32>) -> tensor<2x3x5x7xf32> {
  ^bb0(%x: tensor<3x5x8xf32>, %y: tensor<2x3x8x7xf32>):
    %m = kiln.batch_matmul %x, %y : (tensor<3x5x8xf32>, tensor<2x3x8x7xf32>) -> tensor<2x3x5x7xf32>
    kiln.yield %m : tensor<2x3x5x7xf32>
  }
  return %0 : tensor<2x3x5x7xf32>
}

// -----

// Layer norm with a residual prologue (also a result) and weight/bias inputs
// indexed by the position in the row; rows this short run one to a warp,
// held in registers (normalization_warp), 8 rows to a block. Every input
// read at the element's own index and both results are fp32 and rows are
// whole 16-byte vectors: a lane moves 4 adjacent elements with one load or
// store where every such pointer is 16-byte aligned, the weight and bias's
// same 4 columns too.
// CHECK-LABEL: // === kernel ln_k0 grid(1, 1, 1) block(256) shared(0) inputs(4) outputs(2)
//       CHECK:   constexpr int L = 20, kV = 4, kVectors = (L / kV + 31) / 32, kPerLane = kVectors * kV;
//  CHECK-NEXT:   const bool vectors = (((unsigned long long)in0 | (unsigned long long)in1 | (unsigned long long)in2 | (unsigned long long)in3 | (unsigned long long)out0 | (unsigned long long)out1) & 15) == 0;
//       CHECK:   for (long long r = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; r < 6LL; r += warps) {
//       CHECK:   float row[kPerLane];
//       CHECK:   for (int c = 0; c < kVectors; ++c) if (kV * (lane + 32 * c) < L) {
//  CHECK-NEXT:     const long long base = r * L + kV * (lane + 32 * c);
//  CHECK-NEXT:     kiln::Vec<float, kV> in0_vector;
//  CHECK-NEXT:     if (vectors) in0_vector = *reinterpret_cast<const kiln::Vec<float, kV> *>(in0 + base);
//  CHECK-NEXT:     else for (int e = 0; e < kV; ++e) in0_vector.v[e] = in0[base + e];
//       CHECK:       const float in1_element = in1_vector.v[e];
//       CHECK:       row[t] = v{{[0-9]+}};
//       CHECK:       result0.v[e] = kiln::from_float<float>(
//       CHECK:     if (vectors) *reinterpret_cast<kiln::Vec<float, kV> *>(out0 + base) = result0;
//  CHECK-NEXT:     else for (int e = 0; e < kV; ++e) out0[base + e] = result0.v[e];
//       CHECK:   for (int t = 0; t < kPerLane; ++t) if (const int j = kV * (lane + 32 * (t / kV)) + t % kV; j < L) sum += row[t];
//       CHECK:   const float mean = kiln::warp_sum(sum) / L;
//       CHECK:   const float rstd = rsqrtf(kiln::warp_sum(squares) / L + 1.000000000e-05f);
//       CHECK:     if (vectors) in2_columns = *reinterpret_cast<const kiln::Vec<float, kV> *>(in2 + kV * (lane + 32 * c));
//       CHECK:       const float in2_column = in2_columns.v[e];
//   CHECK-NOT:       c1_
//       CHECK:       result0.v[e] = kiln::from_float<float>((((row[t] - mean) * rstd
//       CHECK:     if (vectors) *reinterpret_cast<kiln::Vec<float, kV> *>(out1 + base) = result0;
func.func @ln(%x: tensor<6x20xf32>, %y: tensor<6x20xf32>, %g: tensor<20xf32>, %b: tensor<20xf32>) -> (tensor<6x20xf32>, tensor<6x20xf32>) {
  %0:2 = kiln.fusion normalization ins(%x, %y, %g, %b : tensor<6x20xf32>, tensor<6x20xf32>, tensor<20xf32>, tensor<20xf32>) -> tensor<6x20xf32>, tensor<6x20xf32> {
  ^bb0(%a: tensor<6x20xf32>, %c: tensor<6x20xf32>, %w: tensor<20xf32>, %d: tensor<20xf32>):
    %h = kiln.add %a, %c : tensor<6x20xf32>
    %n = kiln.layer_norm %h weight %w bias %d axis = 1 eps = 1.0e-05 : (tensor<6x20xf32>, tensor<20xf32>, tensor<20xf32>) -> tensor<6x20xf32>
    kiln.yield %h, %n : tensor<6x20xf32>, tensor<6x20xf32>
  }
  return %0#0, %0#1 : tensor<6x20xf32>, tensor<6x20xf32>
}

// -----

// RMSNorm (layer_norm rms) with its weight's mul, fp16 rows of 37: the mean
// of squares in fp32, no mean subtracted.
// Rows of 37 are not whole 16-byte vectors: a lane takes elements
// lane + 32 t, one at a time.
// CHECK-LABEL: // === kernel rms_k0 grid(1, 1, 1) block(256) shared(0) inputs(2) outputs(1)
//       CHECK:   constexpr int L = 37, kPerLane = (L + 31) / 32;
//   CHECK-NOT:   kiln::Vec
//   CHECK-NOT:   mean
//       CHECK:   squares += row[t] * row[t];
//       CHECK:   const float rstd = rsqrtf(kiln::warp_sum(squares) / L + 1.000000000e-06f);
//   CHECK-NOT:   mean
//       CHECK:   (row[t] * rstd)
func.func @rms(%x: tensor<5x37xf16>, %g: tensor<37xf16>) -> tensor<5x37xf16> {
  %0 = kiln.fusion normalization ins(%x, %g : tensor<5x37xf16>, tensor<37xf16>) -> tensor<5x37xf16> {
  ^bb0(%a: tensor<5x37xf16>, %w: tensor<37xf16>):
    %n = kiln.layer_norm %a axis = 1 eps = 1.0e-06 rms : (tensor<5x37xf16>) -> tensor<5x37xf16>
    %y = kiln.mul %n, %w : tensor<5x37xf16>, tensor<37xf16> -> tensor<5x37xf16>
    kiln.yield %y : tensor<5x37xf16>
  }
  return %0 : tensor<5x37xf16>
}

// -----

// Softmax over the last dimension: max, then sum of exponentials, in fp32.
// CHECK-LABEL: // === kernel sm_k0 grid(1, 1, 1) block(256) shared(0) inputs(1) outputs(1)
//       CHECK:   const float rowMax = kiln::warp_max(localMax);
//       CHECK:   const float invSum = 1.0f / kiln::warp_sum(sum);
//       CHECK:     (expf(row[t] - rowMax) * invSum)
func.func @sm(%x: tensor<4x9xf32>) -> tensor<4x9xf32> {
  %0 = kiln.fusion normalization ins(%x : tensor<4x9xf32>) -> tensor<4x9xf32> {
  ^bb0(%a: tensor<4x9xf32>):
    %s = kiln.softmax %a dim = 1 : tensor<4x9xf32>
    kiln.yield %s : tensor<4x9xf32>
  }
  return %0 : tensor<4x9xf32>
}
