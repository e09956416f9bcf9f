//===- kiln_common.cuh - element types and math for kiln kernels ----------===//
//
// Compiled with every generated kernel (NVRTC, stringified into the compiler
// at build time). Loads widen to float, stores narrow with round-to-nearest:
// fp16/bf16 kernels compute elementwise math in fp32, as the reference
// evaluator does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

// NVRTC has no <math.h> macros.
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif

namespace kiln {

/// Programmatic dependent launch (sm_90): wait until the kernel launched
/// before this one has finished and its writes are visible, then let the
/// next kernel start launching. Both are no-ops when the launch carried no
/// programmatic dependency, and compile to nothing before sm_90.
__device__ __forceinline__ void grid_dependency_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\ngriddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

/// A hint that the 128-byte line holding `p` will be read soon: it moves
/// from DRAM into L2 while the caller does other work.
template <typename T> __device__ __forceinline__ void prefetch_l2(const T *p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}
/// The same into L1, for a read a few hundred cycles away.
template <typename T> __device__ __forceinline__ void prefetch_l1(const T *p) {
  asm volatile("prefetch.global.L1 [%0];" ::"l"(p));
}

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(long long x) { return (float)x; }
__device__ __forceinline__ float to_float(int x) { return (float)x; }
__device__ __forceinline__ float to_float(bool x) { return x ? 1.0f : 0.0f; }

/// A wgmma accumulator as an epilogue's first instruction should read it:
/// x + -0, exact for every x (-0 included). Where a conversion reads the
/// accumulator's register directly (the rounding of a bias-free linear's
/// result to fp16), ptxas serializes every wgmma of a ping-pong kernel
/// (C7514), which kiln rejects; an add in front of it does not. (__fadd_rn,
/// which the compiler does not fold away as it would a plain x + -0.0f.)
__device__ __forceinline__ float accumulator_value(float x) { return __fadd_rn(x, -0.0f); }

template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
// Float to integer truncates toward zero, as PyTorch's to(dtype).
template <> __device__ __forceinline__ long long from_float<long long>(float x) { return (long long)x; }
template <> __device__ __forceinline__ int from_float<int>(float x) { return (int)x; }
template <> __device__ __forceinline__ bool from_float<bool>(float x) { return x != 0.0f; }
/// An exact integer (a kernel holds i32 and i64 values as long long) into
/// its integer or bool element.
template <typename T> __device__ __forceinline__ T from_float(long long x) {
  return static_cast<T>(x);
}

/// Two adjacent elements of a buffer, loaded together: `p` is aligned to
/// twice the element (an even index of a buffer kiln allocated).
template <typename T> struct alignas(2 * sizeof(T)) Pair {
  T x, y;
};
template <typename T> __device__ __forceinline__ Pair<T> load_pair(const T *p) {
  return *reinterpret_cast<const Pair<T> *>(p);
}
/// N adjacent elements moved as one (N * sizeof(T) = 16: one 16-byte load
/// or store from an address aligned to it).
template <typename T, int N> struct alignas(N * sizeof(T)) Vec {
  T v[N];
};
/// Two adjacent elements at `p` (aligned to twice the element: an even
/// index of a buffer kiln allocated), rounded and stored by one instruction:
/// a half2 or bfloat162 pair is converted by one instruction too.
template <typename T> __device__ __forceinline__ void store_pair(T *p, float a, float b) {
  p[0] = from_float<T>(a);
  p[1] = from_float<T>(b);
}
template <> __device__ __forceinline__ void store_pair<float>(float *p, float a, float b) {
  *reinterpret_cast<float2 *>(p) = make_float2(a, b);
}
template <> __device__ __forceinline__ void store_pair<__half>(__half *p, float a, float b) {
  *reinterpret_cast<__half2 *>(p) = __floats2half2_rn(a, b);
}
template <>
__device__ __forceinline__ void store_pair<__nv_bfloat16>(__nv_bfloat16 *p, float a, float b) {
  *reinterpret_cast<__nv_bfloat162 *>(p) = __floats2bfloat162_rn(a, b);
}

/// Two floats rounded to adjacent 16-bit elements of type T, packed into
/// one 32-bit register (the first in the low half, as it lies in memory).
template <typename T> __device__ __forceinline__ unsigned pack_pair(float a, float b);
template <> __device__ __forceinline__ unsigned pack_pair<__half>(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<const unsigned *>(&h);
}
template <> __device__ __forceinline__ unsigned pack_pair<__nv_bfloat16>(float a, float b) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<const unsigned *>(&h);
}

/// Two fp16 pairs added, and a pair's ReLU, in half2 arithmetic: what
/// PyTorch computes for fp16 tensors (the exact sum rounded once; its fp32
/// sum is exact to 24 bits, and rounding that to 11 gives the same, since
/// 24 >= 2 * 11 + 2), with NaN kept through the ReLU.
__device__ __forceinline__ unsigned add_half2(unsigned a, unsigned b) {
  const __half2 sum = __hadd2(*reinterpret_cast<const __half2 *>(&a),
                              *reinterpret_cast<const __half2 *>(&b));
  return *reinterpret_cast<const unsigned *>(&sum);
}
__device__ __forceinline__ unsigned relu_half2(unsigned a) {
  const __half2 y = __hmax2_nan(*reinterpret_cast<const __half2 *>(&a), __float2half2_rn(0.0f));
  return *reinterpret_cast<const unsigned *>(&y);
}

// PyTorch's maximum/minimum/clamp/relu propagate NaN; fmaxf/fminf do not.
__device__ __forceinline__ float nan_max(float a, float b) { return (a != a || a > b) ? a : b; }
__device__ __forceinline__ float nan_min(float a, float b) { return (a != a || a < b) ? a : b; }
__device__ __forceinline__ float relu(float x) { return x < 0.0f ? 0.0f : x; }
__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }
__device__ __forceinline__ float gelu_erf(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}
__device__ __forceinline__ float gelu_tanh(float x) {
  float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}
/// For ops whose result is f16 or bf16: the hardware's exp2 and reciprocal
/// (errors of a few fp32 ulps, far under the half's rounding) instead of
/// expf's range reduction and IEEE division, whose slow-path branch and
/// call cost more than the rest of a GEMM's epilogue (EfficientNet's
/// 1x1 + SiLU: 28 instructions an element). tanh is not among them:
/// tanh.approx's 2^-11 relative error is the half's own, and 2 sigmoid - 1
/// cancels near 0; the tanh GELU needs no tanh, since
/// 0.5 (1 + tanh u) = 1 / (1 + exp(-2u)), with no cancellation for u << 0.
namespace approx {
/// exp through ex2.approx.ftz: __expf's non-ftz form spends three more
/// instructions keeping results under 2^-126, which no half holds (and a
/// bf16 that small is below any tolerance).
__device__ __forceinline__ float exp(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f));
  return y;
}
/// 2^x through ex2.approx.ftz: exp2f's non-ftz form spends an FSETP and two
/// FMULs an exponential keeping results under 2^-126 (a softmax's
/// probabilities that small round to 0 in any half anyway): a fifth of an
/// attention tile's instructions.
__device__ __forceinline__ float exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float div(float a, float b) { return __fdividef(a, b); }
/// 1 / y for y >= 1 (or +inf, giving 0) in one MUFU instruction: the
/// denominators below are 1 + a non-negative term, where __fdividef spends
/// four more instructions scaling a denominator near the denormal range.
__device__ __forceinline__ float rcp_from_one(float y) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
  return r;
}
__device__ __forceinline__ float sigmoid(float x) { return rcp_from_one(1.0f + exp(-x)); }
__device__ __forceinline__ float silu(float x) { return x * rcp_from_one(1.0f + exp(-x)); }
__device__ __forceinline__ float gelu_tanh(float x) {
  float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return x * rcp_from_one(1.0f + exp(-2.0f * inner));
}
/// Abramowitz and Stegun 7.1.26, in 12 instructions against erff's 30:
/// absolute error 5e-7 in fp32 arithmetic, so GELU's relative error stays
/// under 2.2e-4 even where 1 + erf cancels (x near -3), under the half's
/// 4.9e-4 rounding.
__device__ __forceinline__ float erf(float x) {
  const float a = fabsf(x);
  const float t = rcp_from_one(1.0f + 0.3275911f * a);
  const float poly =
      t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  return copysignf(1.0f - poly * exp(-a * a), x);
}
__device__ __forceinline__ float gelu_erf(float x) {
  return 0.5f * x * (1.0f + erf(x * 0.70710678118654752f));
}
/// The same written as a tail: h = erfc(|x| / sqrt 2) / 2 (1/2 and
/// 1/sqrt 2 folded into the constants, exp(-x^2 / 2) one exp2), Phi = h
/// below 0 and 1 - h above, so no 1 + erf cancels: at most 0.96 fp16 ulp
/// off over every fp16 input where gelu_erf is 1.63
/// (bench/gelu_erf_accuracy.py), and 14% fewer instructions in a GEMM's
/// epilogue. Not the default: ptxas spilled 128-accumulator matmul tiles
/// with a GELU and a residual with it. KILN_GELU_ERF=tail takes it, for
/// timing (ElementCode.cpp).
__device__ __forceinline__ float gelu_erf_tail(float x) {
  const float t = rcp_from_one(1.0f + 0.23164188826636045f * fabsf(x));
  const float h =
      t * (0.127414796f + t * (-0.142248368f + t * (0.7107068705f + t * (-0.7265760135f + t * 0.5307027145f))));
  float gauss;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(gauss) : "f"(x * (x * -0.7213475204444817f)));
  // x (1 - h) above 0 and x h below: one FFMA from max(x, 0).
  return fmaf(-fabsf(x), h * gauss, fmaxf(x, 0.0f));
}
/// GELU of two fp16 values packed as a half2, in half2 arithmetic, as
/// max(x, 0) - a T(a), a = |x| and T(a) = x's tail below -a (Phi(-a) for
/// the erf GELU) written 2^Q(a), Q a quintic fitted in fp16 coefficients
/// (bench/gelu_erf_accuracy.py). Nine instructions and two MUFU.EX2.F16 a
/// pair against about 30 and four in fp32: a GEMM's GELU epilogue runs
/// beside the other warpgroup's wgmmas, and its cost there grows with its
/// instructions (bench/NOTES.md, 2026-12-05). The price is accuracy: an
/// exponent of magnitude |Q| is held to fp16's absolute precision there,
/// so results are off by up to 0.6% (12.5 fp16 ulps), under the fp16
/// tolerance of 1e-2. a is capped at 5.8984375, past which 2^Q is below
/// fp16's least subnormal: the product is then exactly 0, also for an
/// infinite x; a NaN stays NaN through the max.
struct Half2Tail {
  float q5, q4, q3, q2, q1, q0;
};
__device__ __forceinline__ unsigned gelu_half2(unsigned packed, const Half2Tail &q) {
  const __half2 x = *reinterpret_cast<const __half2 *>(&packed);
  const __half2 a = __hmin2(__habs2(x), __float2half2_rn(5.8984375f));
  __half2 exponent = __float2half2_rn(q.q5);
  exponent = __hfma2(exponent, a, __float2half2_rn(q.q4));
  exponent = __hfma2(exponent, a, __float2half2_rn(q.q3));
  exponent = __hfma2(exponent, a, __float2half2_rn(q.q2));
  exponent = __hfma2(exponent, a, __float2half2_rn(q.q1));
  exponent = __hfma2(exponent, a, __float2half2_rn(q.q0));
  unsigned tail;
  asm("ex2.approx.f16x2 %0, %1;"
      : "=r"(tail)
      : "r"(*reinterpret_cast<const unsigned *>(&exponent)));
  const __half2 y = __hfma2(__hneg2(a), *reinterpret_cast<const __half2 *>(&tail),
                            __hmax2_nan(x, __float2half2_rn(0.0f)));
  return *reinterpret_cast<const unsigned *>(&y);
}
/// The erf GELU: at most 12.5 fp16 ulps off the exact one over every fp16
/// input, 7.7 for x >= -3 (gelu_erf: 1.63).
__device__ __forceinline__ unsigned gelu_erf_half2(unsigned packed) {
  return gelu_half2(packed, {-0.00020766258239746094f, 0.004547119140625f,
                             -0.043182373046875f, -0.47216796875f, -1.14453125f,
                             -1.001953125f});
}
/// The tanh GELU (its tail sigma(-2u(a))): at most 11.7 fp16 ulps off the
/// exact formula over every fp16 input.
__device__ __forceinline__ unsigned gelu_tanh_half2(unsigned packed) {
  return gelu_half2(packed, {0.0005350112915039062f, -0.013031005859375f,
                             0.0187835693359375f, -0.54736328125f, -1.11328125f,
                             -1.0009765625f});
}
} // namespace approx
__device__ __forceinline__ float clamp(float x, float lo, float hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// Sum over the block (blockDim.x a multiple of 32, at most 1024); every
/// thread gets the result. `scratch` holds 32 floats.
__device__ __forceinline__ float block_sum(float v, float *scratch) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  int warps = blockDim.x >> 5;
  v = lane < warps ? scratch[lane] : 0.0f;
  return warp_sum(v);
}
__device__ __forceinline__ float block_max(float v, float *scratch) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  int warps = blockDim.x >> 5;
  v = lane < warps ? scratch[lane] : -INFINITY;
  return warp_max(v);
}

/// A generated epilogue functor (compute, store, operator(); see the code
/// generator's EpilogueFunctor) seen with its columns shifted by `offset`:
/// a grouped convolution's group g writes channels g * Og onwards.
template <typename Epilogue> struct ColumnOffset {
  const Epilogue &inner;
  int offset;
  using Values = typename Epilogue::Values;
  __device__ __forceinline__ Values compute(int m, int n, float acc) const {
    return inner.compute(m, n + offset, acc);
  }
  __device__ __forceinline__ void store(int m, int n, const Values &values) const {
    inner.store(m, n + offset, values);
  }
  __device__ __forceinline__ void operator()(int m, int n, float acc) const {
    inner(m, n + offset, acc);
  }
};

} // namespace kiln
