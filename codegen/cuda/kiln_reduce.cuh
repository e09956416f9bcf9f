//===- kiln_reduce.cuh - a reduction over the middle of [O, L, C] ----------===//
//
// Squeeze-and-excitation's pooling: the mean of an NHWC map over H and W,
// O = N images of L = H*W pixels of C channels. The generic column layout
// (32 outputs on a warp's lanes, 2-byte loads, one block per 32 outputs)
// gives EfficientNet-B0's first pooling at batch 32 only 32 blocks and
// reads 0.4 TB/s. Here a thread reads kV consecutive channels with one
// 16-byte load, kR threads per channel vector walk L together, and kSplit
// blocks of one image split L as a thread-block cluster (sm_90a): each
// leaves its per-channel totals in shared memory and finishes a share of
// the channels by reading its peers' totals (DSMEM), so no global scratch
// or atomics. Without clusters (the sm_80 image) the first block of each
// image walks all of L and the others return. Accumulates in fp32, in a
// fixed order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_common.cuh"
#include "kiln_ptx.cuh"

namespace kiln::reduce {

/// kV consecutive elements from p as floats: one 16-byte load when the
/// tensor is 16-byte aligned (every arena buffer is), else kV loads.
template <typename T, int kV>
__device__ __forceinline__ void load_vector(const T *p, bool aligned, float (&out)[kV]) {
  static_assert(kV * sizeof(T) == 16, "a vector is 16 bytes");
  if (aligned) {
    const uint4 raw = __ldg(reinterpret_cast<const uint4 *>(p));
    const T *elements = reinterpret_cast<const T *>(&raw);
#pragma unroll
    for (int j = 0; j < kV; ++j)
      out[j] = to_float(elements[j]);
  } else {
#pragma unroll
    for (int j = 0; j < kV; ++j)
      out[j] = to_float(p[j]);
  }
}

/// Reduces `in` [O, L, kC] over L: block b takes image b / kSplit and part
/// b % kSplit of L; its kR * kC / kV threads are the launch's block. Calls
/// epilogue(o * kC + c, total) once per output.
template <typename T, int kC, int kR, int kSplit, bool kMax, typename Epilogue>
__device__ __forceinline__ void over_middle(const T *in, long long L, const Epilogue &epilogue) {
  constexpr int kV = 16 / sizeof(T), kVectors = kC / kV, kThreads = kR * kVectors;
  static_assert(kC % kV == 0, "the kept inner size is a whole number of vectors");
  __shared__ float partial[kR][kC];
  __shared__ float totals[kC];
  const float init = kMax ? -INFINITY : 0.0f;
  auto combine = [](float a, float b) { return kMax ? nan_max(a, b) : a + b; };

  const int vector = threadIdx.x % kVectors, row = threadIdx.x / kVectors;
  const long long image = blockIdx.x / kSplit;
  const int part = blockIdx.x % kSplit;
  long long begin = 0, end = L;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const long long per = (L + kSplit - 1) / kSplit;
  begin = min(L, part * per);
  end = min(L, begin + per);
#else
  if (part != 0)
    return;
#endif
  float acc[kV];
#pragma unroll
  for (int j = 0; j < kV; ++j)
    acc[j] = init;
  const T *base = in + image * L * kC + vector * kV;
  const bool aligned = (reinterpret_cast<unsigned long long>(in) & 15) == 0;
#pragma unroll 4
  for (long long r = begin + row; r < end; r += kR) {
    float x[kV];
    load_vector<T, kV>(base + r * kC, aligned, x);
#pragma unroll
    for (int j = 0; j < kV; ++j)
      acc[j] = combine(acc[j], x[j]);
  }
#pragma unroll
  for (int j = 0; j < kV; ++j)
    partial[row][vector * kV + j] = acc[j];
  __syncthreads();
  for (int c = threadIdx.x; c < kC; c += kThreads) {
    float total = init;
#pragma unroll 8
    for (int i = 0; i < kR; ++i)
      total = combine(total, partial[i][c]);
    totals[c] = total;
  }
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (kSplit > 1) {
    // Release this block's totals to the cluster, acquire the others'.
    cluster_sync();
    constexpr int kShare = (kC + kSplit - 1) / kSplit;
    unsigned peerBase[kSplit];
    cluster_peer_addresses(totals, peerBase);
    const int last = min(kC, (part + 1) * kShare);
    for (int c = part * kShare + threadIdx.x; c < last; c += kThreads) {
      float total = init;
#pragma unroll
      for (int peer = 0; peer < kSplit; ++peer)
        total = combine(total, cluster_load(peerBase[peer] + 4u * c));
      epilogue(image * kC + c, total);
    }
    // Peers keep their shared memory alive until every block has read it.
    cluster_sync();
    return;
  }
#endif
  __syncthreads();
  for (int c = threadIdx.x; c < kC; c += kThreads)
    epilogue(image * kC + c, totals[c]);
}

} // namespace kiln::reduce
