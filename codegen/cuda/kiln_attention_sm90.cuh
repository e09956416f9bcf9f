//===- kiln_attention_sm90.cuh - Hopper attention: TMA + wgmma -------------===//
//
// out = softmax(q k^T * scale + mask) v for one (batch, head) per blockIdx.y,
// as flash_attention (kiln_attention.cuh) computes it, on Hopper's own
// instructions (sm_90a only):
//
//   - a producer warp (one thread) brings the block's 64 queries and then
//     each 64-key tile of K and V into shared memory with TMA, two stages
//     deep, through tensor maps of the projection outputs as they lie (a
//     packed QKV's rows, a head's columns): no thread computes an address
//     or waits on a load it issued;
//   - one consumer warpgroup multiplies S = Q K^T with wgmma straight from
//     shared memory (both K-major, 128-byte swizzle), runs the online
//     softmax on the accumulators in registers (fp32 statistics), rounds
//     P into wgmma A fragments in place (an m64 accumulator's 16 columns
//     are an A fragment's layout) and accumulates O += P V with V read
//     MN-major from shared memory (imm-trans-b).
//
// Where mma.sync (flash_attention) spends most of its instructions on
// ldmatrix and on 16 x 8 products, a tile here is D / 16 + 4 wgmma
// instructions; 160 threads and 41-81 KiB a block leave room for two or
// three blocks a multiprocessor, whose softmax overlaps the others'
// products.
//
// The tensor maps span the whole projection output, so a tile's rows past
// the sequence are the next sequence's (or zeros past the buffer): their
// scores are masked to -inf like every key past Sk, their rows of V are
// zeroed in shared memory before P V (0 times an inf there would be NaN),
// and query rows past Sq are computed and never stored.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_attention.cuh"
#include "kiln_sm90.cuh"

namespace kiln::sm90 {

/// Queries a block (one warpgroup's m64), keys a tile, K/V stages, threads
/// (the consumer warpgroup and the producer warp).
constexpr int kAttnWgmmaBM = 64, kAttnWgmmaBN = 64, kAttnWgmmaStages = 2;
constexpr int kAttnWgmmaThreads = 160;
/// Dynamic shared memory: Q and the stages of K and V as boxes of 64
/// columns (128 bytes a row), 1 KiB to align them to 1024, the barriers.
__host__ __device__ constexpr int attention_wgmma_shared_bytes(int d) {
  return (kAttnWgmmaBM + 2 * kAttnWgmmaStages * kAttnWgmmaBN) * d * 2 + 1024 + 64;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

/// Generic-proxy writes to shared memory made visible to wgmma's reads.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/// qRow/qCol, kRow/kCol, vRow/vCol: where this (batch, head)'s first query,
/// key and value lie in their tensor maps (row, column of element 0).
template <typename T, int kD, bool kCausal, typename Mask, typename Epilogue>
__device__ __forceinline__ void flash_attention_wgmma(const TensorMap &mapQ, const TensorMap &mapK,
                                                      const TensorMap &mapV, int qRow, int qCol,
                                                      int kRow, int kCol, int vRow, int vCol,
                                                      int Sq, int Sk, float scale,
                                                      const Mask &mask,
                                                      const Epilogue &epilogue) {
  static_assert(kD == 64 || kD == 128, "head sizes 64 and 128");
  constexpr int kBoxes = kD / 64; // 64-column boxes of a row
  constexpr int kBoxBytesQ = kAttnWgmmaBM * 128, kBoxBytesKV = kAttnWgmmaBN * 128;
  constexpr unsigned kStageBytes = 2 * kBoxes * kBoxBytesKV; // K, then V
  constexpr int kStages = kAttnWgmmaStages;
  extern __shared__ __align__(16) unsigned char hopperAttentionShared[];
  unsigned char *base =
      hopperAttentionShared + ((1024 - (smem_address(hopperAttentionShared) & 1023)) & 1023);
  unsigned char *Qs = base;
  unsigned char *stages = base + kBoxes * kBoxBytesQ;
  auto *bars = reinterpret_cast<unsigned long long *>(stages + kStages * kStageBytes);
  unsigned long long *qFull = bars, *full = bars + 1, *empty = bars + 1 + kStages;

  const int m0 = (gridDim.x - 1 - blockIdx.x) * kAttnWgmmaBM;
  const int keyEnd = kCausal ? min(Sk, m0 + kAttnWgmmaBM) : Sk;
  const int tiles = (keyEnd + kAttnWgmmaBN - 1) / kAttnWgmmaBN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  if (threadIdx.x == 0) {
    barrier_init(qFull, 1);
    for (int s = 0; s < kStages; ++s) {
      barrier_init(&full[s], 1);
      barrier_init(&empty[s], 4); // a lane of each consumer warp
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (warp == 4) {
    if (lane == 0) {
      barrier_expect_tx(qFull, kBoxes * kBoxBytesQ);
#pragma unroll
      for (int c = 0; c < kBoxes; ++c)
        tma_load_2d(Qs + c * kBoxBytesQ, mapQ, qCol + 64 * c, qRow + m0, qFull);
      for (int t = 0; t < tiles; ++t) {
        const int s = t % kStages;
        if (t >= kStages)
          barrier_wait(&empty[s], ((t / kStages) - 1) & 1);
        barrier_expect_tx(&full[s], kStageBytes);
        unsigned char *stage = stages + s * kStageBytes;
#pragma unroll
        for (int c = 0; c < kBoxes; ++c) {
          tma_load_2d(stage + c * kBoxBytesKV, mapK, kCol + 64 * c, kRow + t * kAttnWgmmaBN,
                      &full[s]);
          tma_load_2d(stage + (kBoxes + c) * kBoxBytesKV, mapV, vCol + 64 * c,
                      vRow + t * kAttnWgmmaBN, &full[s]);
        }
      }
    }
    return;
  }

  // Accumulator layout of m64nNk16 (warp w, lane l, chunk j of 16 columns,
  // register i): row 16w + l/4 (+8 when i & 2), column 16j + 8(i/4) +
  // 2(l%4) + (i&1). This thread's two rows:
  const int g = lane / 4, quad = lane % 4;
  const int row0 = m0 + warp * 16 + g, row1 = row0 + 8;
  float o[kD / 16][8];
  clear_accumulators(o);
  float rowMax[2] = {-INFINITY, -INFINITY}, rowSum[2] = {0.0f, 0.0f};
  barrier_wait(qFull, 0);

  // Not unrolled where the sizes fix the tile count (S = 128: two tiles):
  // two tiles' products and softmax interleaved need more than the 128
  // registers of three blocks a multiprocessor.
#pragma unroll 1
  for (int t = 0; t < tiles; ++t) {
    const int s = t % kStages, n0 = t * kAttnWgmmaBN;
    unsigned char *Kt = stages + s * kStageBytes, *Vt = Kt + kBoxes * kBoxBytesKV;
    barrier_wait(&full[s], (t / kStages) & 1);
    // Rows of V past the last key hold another sequence's values (or TMA's
    // zeros): zeroed, since P's zeros there would not cancel an inf. A row
    // is 128 contiguous bytes of a box whatever the swizzle.
    const int keys = Sk - n0;
    if (keys < kAttnWgmmaBN) {
      for (int e = threadIdx.x; e < kBoxes * (kAttnWgmmaBN - keys) * 8; e += 128) {
        const int box = e / ((kAttnWgmmaBN - keys) * 8), rest = e % ((kAttnWgmmaBN - keys) * 8);
        reinterpret_cast<uint4 *>(Vt + box * kBoxBytesKV + (keys + rest / 8) * 128)[rest % 8] =
            make_uint4(0, 0, 0, 0);
      }
      fence_proxy_async_shared();
      named_barrier_sync(1, 128);
    }

    float sc[kAttnWgmmaBN / 16][8];
    clear_accumulators(sc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)
      Wgmma<T, kAttnWgmmaBN>::run(sc, descriptor(Qs + (kk / 4) * kBoxBytesQ + (kk % 4) * 32),
                                  descriptor(Kt + (kk / 4) * kBoxBytesKV + (kk % 4) * 32));
    wgmma_commit();
    wgmma_wait<0>();

    // Scale, mask, and the online softmax of the two rows this thread holds
    // (row0: registers i & 2 == 0, row1: the others), across the quad.
#pragma unroll
    for (int j = 0; j < kAttnWgmmaBN / 16; ++j)
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int r = (i & 2) ? row1 : row0;
        const int key = n0 + 16 * j + 8 * (i / 4) + 2 * quad + (i & 1);
        sc[j][i] = masked_score<kCausal>(sc[j][i], scale, mask, r, key, Sq, Sk);
      }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float tileMax = -INFINITY;
#pragma unroll
      for (int j = 0; j < kAttnWgmmaBN / 16; ++j)
        tileMax = fmaxf(tileMax, fmaxf(fmaxf(sc[j][2 * h], sc[j][2 * h + 1]),
                                       fmaxf(sc[j][2 * h + 4], sc[j][2 * h + 5])));
      const auto [shift, correction] = online_softmax_step(tileMax, rowMax[h]);
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < kAttnWgmmaBN / 16; ++j)
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const int c = (k & 1) + 4 * (k >> 1); // 0, 1, 4, 5
          const float p = exp2f(fmaf(sc[j][2 * h + c], log2e(), -shift));
          sc[j][2 * h + c] = p;
          sum += p;
        }
      rowSum[h] = rowSum[h] * correction + sum;
#pragma unroll
      for (int j = 0; j < kD / 16; ++j)
#pragma unroll
        for (int k = 0; k < 4; ++k)
          o[j][2 * h + (k & 1) + 4 * (k >> 1)] *= correction;
    }

    // O += P V: each 16 keys of P, rounded in pairs, are an A fragment.
    unsigned p[kAttnWgmmaBN / 16][4];
#pragma unroll
    for (int j = 0; j < kAttnWgmmaBN / 16; ++j) {
      p[j][0] = pack2<T>(sc[j][0], sc[j][1]);
      p[j][1] = pack2<T>(sc[j][2], sc[j][3]);
      p[j][2] = pack2<T>(sc[j][4], sc[j][5]);
      p[j][3] = pack2<T>(sc[j][6], sc[j][7]);
    }
    wgmma_fence();
#pragma unroll
    for (int j = 0; j < kAttnWgmmaBN / 16; ++j)
      WgmmaRegsTransB<T, kD>::run(o, p[j], descriptor_mn(Vt + j * 16 * 128, kBoxBytesKV));
    wgmma_commit();
    wgmma_wait<0>();
    // This warp is done with the stage (its wgmmas are complete).
    if (lane == 0)
      barrier_arrive(&empty[s]);
  }

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float inverse = quad_sum_inverse(rowSum[h]);
    const int i = h == 0 ? row0 : row1;
    if (i < Sq)
#pragma unroll
      for (int j = 0; j < kD / 16; ++j)
#pragma unroll
        for (int k = 0; k < 4; ++k)
          epilogue(i, 16 * j + 8 * (k >> 1) + 2 * quad + (k & 1),
                   o[j][2 * h + (k & 1) + 4 * (k >> 1)] * inverse);
  }
}

#endif // __CUDA_ARCH_FEAT_SM90_ALL

} // namespace kiln::sm90
