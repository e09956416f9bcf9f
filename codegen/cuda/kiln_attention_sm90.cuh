//===- kiln_attention_sm90.cuh - Hopper attention: TMA + wgmma -------------===//
//
// out = softmax(q k^T * scale + mask) v for each (batch, head) and block of
// 64 queries, as flash_attention (kiln_attention.cuh) computes it, on
// Hopper's own instructions (sm_90a only), a persistent block walking
// several of them:
//
//   - a producer warp (one thread) brings each item's 64 queries and then
//     each 64-key tile of K and V into shared memory with TMA, two stages
//     deep (three where the configuration asks), through tensor maps of
//     the projection outputs as they lie (a packed QKV's rows, a head's
//     columns): no thread computes an address or waits on a load it
//     issued;
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

/// Queries a consumer warpgroup (its m64), keys a tile, K/V stages by
/// default (3 fit three blocks a multiprocessor at a head size of 64).
constexpr int kAttnWgmmaBM = 64, kAttnWgmmaBN = 64, kAttnWgmmaStages = 2;
/// Threads of a block whose item is `queries` queries: a consumer
/// warpgroup for each 64 of them, and the producer warp (160 or 288).
__host__ __device__ constexpr int attention_wgmma_threads(int queries) {
  return queries / kAttnWgmmaBM * 128 + 32;
}
/// Dynamic shared memory: Q (`queries` rows) and the stages of K and V as
/// boxes of 64 columns (128 bytes a row), 1 KiB to align them to 1024, the
/// barriers (Q's 2, then 2 a stage, or 4 where K and V each have their
/// own: at most 10).
__host__ __device__ constexpr int attention_wgmma_shared_bytes(int d,
                                                               int stages = kAttnWgmmaStages,
                                                               int queries = kAttnWgmmaBM) {
  return (queries + 2 * stages * kAttnWgmmaBN) * d * 2 + 1024 + 128;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

/// Generic-proxy writes to shared memory made visible to wgmma's reads.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/// One consumer warpgroup's share of a tile: its products, its softmax and
/// the state it carries between tiles. Accumulator layout of m64nNk16 (warp
/// w, lane l, chunk j of 16 columns, register i): row 16w + l/4 (+8 when
/// i & 2), column 16j + 8(i/4) + 2(l%4) + (i&1). kConsumers: the block's
/// consumer warpgroups (threads 128c .. 128c + 127 are warpgroup c, which
/// syncs its own warps on named barrier 1 + c).
template <typename T, int kD, bool kCausal, int kConsumers = 1> struct AttentionWarpgroup {
  static constexpr int kBoxes = kD / 64; // 64-column boxes of a row
  static constexpr int kBoxBytesQ = kAttnWgmmaBM * 128, kBoxBytesKV = kAttnWgmmaBN * 128;
  int row0, row1;
  float o[kD / 16][8];
  float rowMax[2] = {-INFINITY, -INFINITY}, rowSum[2] = {0.0f, 0.0f};

  /// This thread within its warpgroup (with one consumer, threadIdx.x
  /// itself: no instruction more where the registers run out; unsigned, as
  /// threadIdx.x is: a signed quotient by 32 took a spill's worth more).
  static __device__ __forceinline__ unsigned thread() {
    return kConsumers == 1 ? threadIdx.x : threadIdx.x % 128;
  }
  /// Syncs this warpgroup's 128 threads (its own named barrier).
  static __device__ __forceinline__ void sync_warpgroup() {
    named_barrier_sync(kConsumers == 1 ? 1 : 1 + static_cast<int>(threadIdx.x / 128), 128);
  }

  __device__ __forceinline__ AttentionWarpgroup(int m0) {
    const int lane = threadIdx.x % 32;
    row0 = m0 + (thread() / 32) * 16 + lane / 4;
    row1 = row0 + 8;
    clear_accumulators(o);
  }
  /// This thread's place in its row's quad of lanes. (Read from threadIdx
  /// where used, not held: the compiler then knows it is under 4 and drops
  /// the key < Sk tests of tiles it can tell are whole.)
  static __device__ __forceinline__ int quad() { return threadIdx.x % 4; }

  /// Rows of V past the last key hold another sequence's values (or TMA's
  /// zeros): zeroed up to the kN rows P V reads, since P's zeros there would
  /// not cancel an inf. A row is 128 contiguous bytes of a box whatever the
  /// swizzle.
  template <int kN = kAttnWgmmaBN>
  static __device__ __forceinline__ void zero_rows_past(unsigned char *Vt, int keys) {
    if (keys >= kN)
      return;
    // (With two consumers both zero the same rows: the same zeros, each
    // warpgroup's own written and fenced before its own P V reads them.)
    for (int e = thread(); e < kBoxes * (kN - keys) * 8; e += 128) {
      const int box = e / ((kN - keys) * 8), rest = e % ((kN - keys) * 8);
      reinterpret_cast<uint4 *>(Vt + box * kBoxBytesKV + (keys + rest / 8) * 128)[rest % 8] =
          make_uint4(0, 0, 0, 0);
    }
    fence_proxy_async_shared();
    sync_warpgroup();
  }

  /// Issues S = Q K^T for one tile's first 16 kChunks keys (committed as
  /// one group).
  template <int kChunks>
  __device__ __forceinline__ void issue_scores(float (&sc)[kChunks][8], const unsigned char *Qs,
                                               const unsigned char *Kt) const {
    clear_accumulators(sc);
    // Each k-step's descriptors as the tile's and an offset
    // (descriptor_plus): descriptor() of each address was a sixth of a
    // tile's instructions.
    const unsigned long long q0 = descriptor(Qs), k0 = descriptor(Kt);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)
      Wgmma<T, 16 * kChunks>::run(sc, descriptor_plus(q0, (kk / 4) * kBoxBytesQ + (kk % 4) * 32),
                                  descriptor_plus(k0, (kk / 4) * kBoxBytesKV + (kk % 4) * 32));
    wgmma_commit();
  }

  /// Scale, mask, and the online softmax of the two rows this thread holds
  /// (row0: registers i & 2 == 0, row1: the others), across the quad: the
  /// scores become P in place, the running max and sum move on, and
  /// `correction` is what O must be multiplied by before P V adds to it.
  /// kCheckKeys: see masked_score (false for a tile before the last).
  ///
  /// Without a mask and with a positive scale (the code generator's
  /// literal, so the test folds), the scale goes into the exponent's FFMA
  /// and the maximum is taken over the unscaled scores: max(s x) = s max(x)
  /// for s > 0, and a score's FMUL less.
  template <bool kCheckKeys, int kChunks, typename Mask>
  __device__ __forceinline__ void softmax(float (&sc)[kChunks][8], int n0, int Sq,
                                          int Sk, float scale, const Mask &mask,
                                          float (&correction)[2]) {
    const bool scaleInExponent = !Mask::kActive && scale > 0.0f;
    const float scoreScale = scaleInExponent ? 1.0f : scale;
    const float exponentScale = scaleInExponent ? scale * log2e() : log2e();
    if constexpr (Mask::kPairs) {
      // Registers i and i + 1 of an even i: keys 2 quad() and one more. An
      // even Sk (the code generator's promise) keeps a pair clamped to
      // Sk - 2 inside the mask.
#pragma unroll
      for (int j = 0; j < kChunks; ++j)
#pragma unroll
        for (int i = 0; i < 8; i += 2) {
          const int r = (i & 2) ? row1 : row0;
          const int key = n0 + 16 * j + 8 * (i / 4) + 2 * quad();
          const float2 m = mask.pair(min(r, Sq - 1), min(key, Sk - 2));
          sc[j][i] = score_with_mask<kCausal, kCheckKeys>(sc[j][i], scale, m.x, r, key, Sk);
          sc[j][i + 1] =
              score_with_mask<kCausal, kCheckKeys>(sc[j][i + 1], scale, m.y, r, key + 1, Sk);
        }
    } else {
#pragma unroll
      for (int j = 0; j < kChunks; ++j)
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const int r = (i & 2) ? row1 : row0;
          const int key = n0 + 16 * j + 8 * (i / 4) + 2 * quad() + (i & 1);
          sc[j][i] =
              masked_score<kCausal, kCheckKeys>(sc[j][i], scoreScale, mask, r, key, Sq, Sk);
        }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float tileMax = -INFINITY;
#pragma unroll
      for (int j = 0; j < kChunks; ++j)
        tileMax = fmaxf(tileMax, fmaxf(fmaxf(sc[j][2 * h], sc[j][2 * h + 1]),
                                       fmaxf(sc[j][2 * h + 4], sc[j][2 * h + 5])));
      if (scaleInExponent)
        tileMax *= scale;
      const auto [shift, factor] = online_softmax_step(tileMax, rowMax[h]);
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < kChunks; ++j)
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const int c = (k & 1) + 4 * (k >> 1); // 0, 1, 4, 5
          const float p = approx::exp2(fmaf(sc[j][2 * h + c], exponentScale, -shift));
          sc[j][2 * h + c] = p;
          sum += p;
        }
      rowSum[h] = rowSum[h] * factor + sum;
      correction[h] = factor;
    }
  }

  __device__ __forceinline__ void rescale(const float (&correction)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int j = 0; j < kD / 16; ++j)
#pragma unroll
        for (int k = 0; k < 4; ++k)
          o[j][2 * h + (k & 1) + 4 * (k >> 1)] *= correction[h];
  }

  /// Each 16 keys of P, rounded in pairs, are an A fragment.
  template <int kChunks>
  static __device__ __forceinline__ void pack(const float (&sc)[kChunks][8],
                                              unsigned (&p)[kChunks][4]) {
#pragma unroll
    for (int j = 0; j < kChunks; ++j) {
      p[j][0] = pack2<T>(sc[j][0], sc[j][1]);
      p[j][1] = pack2<T>(sc[j][2], sc[j][3]);
      p[j][2] = pack2<T>(sc[j][4], sc[j][5]);
      p[j][3] = pack2<T>(sc[j][6], sc[j][7]);
    }
  }

  /// Issues O += P V for one tile's first 16 kChunks keys (committed as one
  /// group).
  template <int kChunks>
  __device__ __forceinline__ void issue_values(const unsigned (&p)[kChunks][4],
                                               const unsigned char *Vt) {
    const unsigned long long v0 = descriptor_mn(Vt, kBoxBytesKV); // (see issue_scores)
    wgmma_fence();
#pragma unroll
    for (int j = 0; j < kChunks; ++j)
      WgmmaRegsTransB<T, kD>::run(o, p[j], descriptor_plus(v0, j * 16 * 128));
    wgmma_commit();
  }

  template <typename Epilogue>
  __device__ __forceinline__ void store(int Sq, const Epilogue &epilogue) const {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float inverse = quad_sum_inverse(rowSum[h]);
      const int i = h == 0 ? row0 : row1;
      if (i < Sq)
#pragma unroll
        for (int j = 0; j < kD / 16; ++j)
#pragma unroll
          for (int k = 0; k < 4; k += 2)
            store_columns(epilogue, i, 16 * j + 8 * (k >> 1) + 2 * quad(),
                          o[j][2 * h + 4 * (k >> 1)] * inverse,
                          o[j][2 * h + 4 * (k >> 1) + 1] * inverse);
    }
  }
};

/// Queries a block takes with the keys on wgmma's M side (see
/// attention_query_tail).
constexpr int kAttnTailQueries = 16;

/// The last few queries of a sequence (at most kAttnTailQueries past the
/// last whole 64: ViT's 197 = 3 x 64 + 5, ViT-L's 257 = 4 x 64 + 1) with the
/// products transposed: S^T = K Q^T as m64n16 (64 keys a tile on M, the
/// queries on N) and O^T += V^T P^T as m64n16 with V MN-major as A. An m64
/// product over those queries computes 64 query rows for 16 or fewer, so a
/// tail block cost as much as a whole one: a quarter of ViT-B/16's blocks.
/// A query's scores now lie down a column spread over the warpgroup's 128
/// threads: its tile maximum goes across the 8 lanes of a column and the 4
/// warps (through shared memory), its running sum stays partial in each
/// thread until the end. P goes through shared memory as a K-major B tile.
/// The scratch lies in Q's first box past the 16 queries' rows, which this
/// block never reads: P^T at row 16 (1024-aligned, 16 rows of 64 keys), the
/// warps' column maxima (two tiles' worth, alternating) and sums at row 32.
template <typename T, int kD, bool kCausal, bool kOverlapped, int kStages, int kConsumers,
          typename Mask, typename Epilogue>
__device__ __forceinline__ void attention_query_tail(unsigned char *Qs, unsigned char *stages,
                                                     unsigned long long *full,
                                                     unsigned long long *empty,
                                                     unsigned long long *fullV,
                                                     unsigned long long *emptyV, int g,
                                                     int m0, int tiles, int Sq, int Sk,
                                                     float scale, const Mask &mask,
                                                     const Epilogue &epilogue) {
  using Warpgroup = AttentionWarpgroup<T, kD, kCausal, kConsumers>;
  constexpr int kBoxes = Warpgroup::kBoxes;
  constexpr int kBoxBytesQ = Warpgroup::kBoxBytesQ, kBoxBytesKV = Warpgroup::kBoxBytesKV;
  constexpr unsigned kTileBytes = kBoxes * kBoxBytesKV, kStageBytes = 2 * kTileBytes;
  static_assert(kAttnTailQueries == 16, "m64n16 products");
  const int warp = Warpgroup::thread() / 32, lane = threadIdx.x % 32;
  unsigned char *Ps = Qs + kAttnTailQueries * 128;
  float *partialMax = reinterpret_cast<float *>(Qs + 2 * kAttnTailQueries * 128);
  float *partialSum = partialMax + 2 * 4 * kAttnTailQueries;
  // m64n16 accumulator: register i is row 16 warp + lane / 4 (+ 8 when
  // i & 2), column 8 (i / 4) + 2 (lane % 4) + (i & 1). Rows are keys in
  // S^T and head columns in O^T; columns are queries in both. A thread's
  // query j (0..3) is in registers first(j) (top row) and first(j) + 2.
  const int row = 16 * warp + lane / 4;
  auto column = [&](int j) { return 8 * (j >> 1) + 2 * (lane & 3) + (j & 1); };
  auto first = [](int j) { return (j & 1) + 4 * (j >> 1); };
  float st[1][8], ot[kBoxes][1][8];
#pragma unroll
  for (int b = 0; b < kBoxes; ++b)
    clear_accumulators(ot[b]);
  float colMax[4], colSum[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    colMax[j] = -INFINITY;
    colSum[j] = 0.0f;
  }
#pragma unroll 1
  for (int t = 0; t < tiles; ++t) {
    // (Stages and phases by the block's running tile count g + t.)
    const int s = (g + t) % kStages, n0 = t * kAttnWgmmaBN;
    const unsigned parity = ((g + t) / kStages) & 1;
    unsigned char *Kt = stages + s * kStageBytes, *Vt = Kt + kTileBytes;
    barrier_wait(&full[s], parity);
    clear_accumulators(st);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)
      Wgmma<T, 16>::run(st, descriptor(Kt + (kk / 4) * kBoxBytesKV + (kk % 4) * 32),
                        descriptor(Qs + (kk / 4) * kBoxBytesQ + (kk % 4) * 32));
    wgmma_commit();
    wgmma_wait<0>();
    // (Pinned: nothing reads the scores or O before the wait.)
    pin_accumulators(st);
    if (kOverlapped && lane == 0)
      barrier_arrive(&empty[s]); // K's stage (V's has its own barrier)
    float *slot = partialMax + (t & 1) * 4 * kAttnTailQueries;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int q = m0 + column(j), i = first(j);
      st[0][i] = masked_score<kCausal>(st[0][i], scale, mask, q, n0 + row, Sq, Sk);
      st[0][i + 2] = masked_score<kCausal>(st[0][i + 2], scale, mask, q, n0 + row + 8, Sq, Sk);
      float m = fmaxf(st[0][i], st[0][i + 2]);
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 4));
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 8));
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 16));
      if (lane < 4)
        slot[warp * kAttnTailQueries + column(j)] = m;
    }
    Warpgroup::sync_warpgroup();
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int i = first(j);
      float tileMax = slot[column(j)];
#pragma unroll
      for (int w = 1; w < 4; ++w)
        tileMax = fmaxf(tileMax, slot[w * kAttnTailQueries + column(j)]);
      const float newMax = fmaxf(colMax[j], tileMax);
      const float shift = newMax == -INFINITY ? 0.0f : newMax * log2e();
      const float factor = approx::exp2(colMax[j] * log2e() - shift);
      colMax[j] = newMax;
      const float top = approx::exp2(fmaf(st[0][i], log2e(), -shift));
      const float bottom = approx::exp2(fmaf(st[0][i + 2], log2e(), -shift));
      colSum[j] = colSum[j] * factor + top + bottom;
#pragma unroll
      for (int b = 0; b < kBoxes; ++b) {
        ot[b][0][i] *= factor;
        ot[b][0][i + 2] *= factor;
      }
      // P^T's row column(j), keys row and row + 8, in 128-byte swizzle
      // (16-byte chunk c of row r at r * 128 + (c ^ r % 8) * 16).
      const int r = column(j);
      unsigned char *line = Ps + r * 128;
      *reinterpret_cast<unsigned short *>(line + (((row / 8) ^ (r & 7)) << 4) + (row & 7) * 2) =
          static_cast<unsigned short>(pack2<T>(top, 0.0f) & 0xFFFFu);
      *reinterpret_cast<unsigned short *>(line + (((row / 8 + 1) ^ (r & 7)) << 4) +
                                          (row & 7) * 2) =
          static_cast<unsigned short>(pack2<T>(bottom, 0.0f) & 0xFFFFu);
    }
    fence_proxy_async_shared();
    Warpgroup::sync_warpgroup();
    if constexpr (kOverlapped)
      barrier_wait(&fullV[s], parity);
    Warpgroup::zero_rows_past(Vt, Sk - n0);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kAttnWgmmaBN / 16; ++kk)
#pragma unroll
      for (int b = 0; b < kBoxes; ++b)
        WgmmaM64N16<T, 1>::run(
            ot[b], descriptor_mn(Vt + b * kBoxBytesKV + kk * 16 * 128, kBoxBytesKV),
            descriptor(Ps + kk * 32));
    wgmma_commit();
    wgmma_wait<0>();
#pragma unroll
    for (int b = 0; b < kBoxes; ++b)
      pin_accumulators(ot[b]);
    if (lane == 0)
      barrier_arrive(kOverlapped ? &emptyV[s] : &empty[s]);
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float sum = colSum[j];
    sum += __shfl_xor_sync(0xffffffffu, sum, 4);
    sum += __shfl_xor_sync(0xffffffffu, sum, 8);
    sum += __shfl_xor_sync(0xffffffffu, sum, 16);
    if (lane < 4)
      partialSum[warp * kAttnTailQueries + column(j)] = sum;
  }
  Warpgroup::sync_warpgroup();
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < 4; ++w)
      sum += partialSum[w * kAttnTailQueries + column(j)];
    const float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
    const int q = m0 + column(j), i = first(j);
    if (q < Sq)
#pragma unroll
      for (int b = 0; b < kBoxes; ++b) {
        epilogue(q, 64 * b + row, ot[b][0][i] * inverse);
        epilogue(q, 64 * b + row + 8, ot[b][0][i + 2] * inverse);
      }
  }
}

/// Whether a tile's scores are checked against the last key (and, causal,
/// each row's): a type, so that the unchecked tiles' code has no test.
template <bool kCheck> struct KeyCheck {
  static constexpr bool value = kCheck;
};

/// One (batch, head) as a block takes it: where its first query, key and
/// value lie in their tensor maps (row, column of element 0), its mask and
/// its epilogue. The code generator's functor builds it from the item's
/// (batch, head) index.
template <typename Mask, typename Epilogue> struct AttentionItem {
  Mask mask;
  Epilogue epilogue;
  int qRow, qCol, kRow, kCol, vRow, vCol;
};

/// The consumer warpgroup's share of one item: 64 queries from m0 against
/// `tiles` key tiles, Q in `Qs` (landed), the tiles' stages and phases
/// counted from the block's running tile count `g` (kOverlapped: see
/// flash_attention_wgmma). `epilogueOf()` gives the item's epilogue, built
/// where the results are stored: held across the tiles, its offsets took
/// registers that the overlapped schedule at three blocks a multiprocessor
/// does not have. `releaseQ()` runs once the last product that reads Q is
/// complete.
template <typename T, int kD, bool kCausal, bool kOverlapped, int kStages, int kConsumers,
          typename Mask, typename EpilogueOf, typename ReleaseQ>
__device__ __forceinline__ void attention_block(const unsigned char *Qs, unsigned char *stages,
                                                unsigned long long *full,
                                                unsigned long long *empty,
                                                unsigned long long *fullV,
                                                unsigned long long *emptyV, int g, int m0,
                                                int tiles, int Sq, int Sk, float scale,
                                                const Mask &mask, const EpilogueOf &epilogueOf,
                                                const ReleaseQ &releaseQ) {
  using Warpgroup = AttentionWarpgroup<T, kD, kCausal, kConsumers>;
  constexpr unsigned kTileBytes = Warpgroup::kBoxes * Warpgroup::kBoxBytesKV;
  const int lane = threadIdx.x % 32;
  const int keyEnd = kCausal ? min(Sk, m0 + kAttnWgmmaBM) : Sk;
  auto stage = [&](int t) { return (g + t) % kStages; };
  auto phase = [&](int t) { return static_cast<unsigned>((g + t) / kStages) & 1; };
  auto keysOf = [&](int t) { return stages + stage(t) * 2 * kTileBytes; };
  auto valuesOf = [&](int t) { return keysOf(t) + kTileBytes; };

  Warpgroup wg(m0);
  float sc[kAttnWgmmaBN / 16][8];
  unsigned p[kAttnWgmmaBN / 16][4];
  float correction[2];

  if constexpr (!kOverlapped) {
    // Not unrolled where the sizes fix the tile count (S = 128: two tiles):
    // two tiles' products and softmax interleaved need more than the 128
    // registers of three blocks a multiprocessor.
#pragma unroll 1
    for (int t = 0; t < tiles; ++t) {
      const int n0 = t * kAttnWgmmaBN;
      barrier_wait(&full[stage(t)], phase(t));
      wg.zero_rows_past(valuesOf(t), Sk - n0);
      wg.issue_scores(sc, Qs, keysOf(t));
      wgmma_wait<0>();
      if (t == tiles - 1)
        releaseQ();
      wg.template softmax<true>(sc, n0, Sq, Sk, scale, mask, correction);
      wg.rescale(correction);
      Warpgroup::pack(sc, p);
      wg.issue_values(p, valuesOf(t));
      wgmma_wait<0>();
      // This warp is done with the stage (its wgmmas are complete).
      if (lane == 0)
        barrier_arrive(&empty[stage(t)]);
    }
  } else {
    // The tile count kept opaque: where the sizes fix it (S = 128: two
    // tiles) the loop would become straight-line code whose schedule needs
    // more than the 128 registers of three blocks a multiprocessor.
    int loopTiles = tiles;
    asm volatile("" : "+r"(loopTiles));
    const int last = loopTiles - 1;
    // Tile 0's scores and softmax alone (O is still zero: no rescale).
    // (checkKeys: as nextScores's.)
    auto firstScores = [&](auto &scores, auto &packed, auto checkKeys) {
      barrier_wait(&full[stage(0)], phase(0));
      wg.issue_scores(scores, Qs, keysOf(0));
      wgmma_wait<0>();
      pin_accumulators(scores);
      if (lane == 0)
        barrier_arrive(&empty[stage(0)]);
      if (last == 0)
        releaseQ();
      wg.template softmax<decltype(checkKeys)::value>(scores, 0, Sq, Sk, scale, mask, correction);
      Warpgroup::pack(scores, packed);
    };
    // Tile t's scores and softmax beside tile t - 1's P V (p, 64 keys;
    // whole: only the last tile may pass Sk, and lastValues zeroes its V).
    // checkKeys: KeyCheck<false> for a tile before the last, whose keys are
    // all under Sk and (causal) under every row of the block, as 64-row
    // blocks start at multiples of 64.
    auto nextScores = [&](int t, auto &scores, auto &packed, auto checkKeys) {
      const int n0 = t * kAttnWgmmaBN;
      barrier_wait(&fullV[stage(t - 1)], phase(t - 1));
      barrier_wait(&full[stage(t)], phase(t));
      wg.issue_scores(scores, Qs, keysOf(t));
      wg.issue_values(p, valuesOf(t - 1));
      wgmma_wait<1>(); // the scores (the older group)
      pin_accumulators(scores);
      if (lane == 0)
        barrier_arrive(&empty[stage(t)]);
      if (t == last)
        releaseQ();
      wg.template softmax<decltype(checkKeys)::value>(scores, n0, Sq, Sk, scale, mask,
                                                      correction);
      wgmma_wait<0>(); // P V: O may be touched again
      pin_accumulators(wg.o);
      if (lane == 0)
        barrier_arrive(&emptyV[stage(t - 1)]);
      wg.rescale(correction);
      Warpgroup::pack(scores, packed);
    };
    // The last tile's P V (lastP: 16 keys a chunk), after its V landed.
    auto lastValues = [&](auto &lastP) {
      constexpr int kChunks = sizeof(lastP) / sizeof(lastP[0]);
      barrier_wait(&fullV[stage(last)], phase(last));
      wg.template zero_rows_past<16 * kChunks>(valuesOf(last), Sk - last * kAttnWgmmaBN);
      wg.issue_values(lastP, valuesOf(last));
      wgmma_wait<0>();
      pin_accumulators(wg.o);
      if (lane == 0)
        barrier_arrive(&emptyV[stage(last)]);
    };
    // A last tile of at most 16 keys (ViT's 197 = 3 x 64 + 5) takes m64n16
    // products and a quarter of the softmax. From the sizes as given, so
    // that the test folds where they fix it; not where causal tile counts
    // vary by block (both bodies in one kernel ran out of registers for
    // the wgmma pipeline, for one tile of many).
    if (!kCausal && keyEnd - (tiles - 1) * kAttnWgmmaBN <= 16) {
      float narrowScores[1][8];
      unsigned narrowP[1][4];
      if (last == 0) {
        firstScores(narrowScores, narrowP, KeyCheck<true>{});
      } else {
        firstScores(sc, p, KeyCheck<false>{});
#pragma unroll 1
        for (int t = 1; t < last; ++t)
          nextScores(t, sc, p, KeyCheck<false>{});
        nextScores(last, narrowScores, narrowP, KeyCheck<true>{});
      }
      lastValues(narrowP);
    } else {
      // (Checked: two bodies of the first tile, for one tile or more, had
      // ptxas serialize the wgmmas of the kernels at a head size of 128.)
      firstScores(sc, p, KeyCheck<true>{});
#pragma unroll 1
      for (int t = 1; t < (Mask::kActive ? loopTiles : last); ++t)
        nextScores(t, sc, p, KeyCheck<Mask::kActive>{});
      // (A mask reads each score's key anyway, and a second body took
      // BERT's padding-masked kernel past its 128 registers.)
      if (!Mask::kActive && last > 0)
        nextScores(last, sc, p, KeyCheck<true>{});
      lastValues(p);
    }
  }
  wg.store(Sq, epilogueOf());
}

/// A persistent grid over the items (batch, head) x query block (a head's
/// query blocks last to first, as causal masks make the last ones the
/// longest), each block taking one item of each round of gridDim.x.
/// `itemOf(bh)` gives an item's AttentionItem.
///
/// A block given an item of its own paid a load's latency before its first
/// product and the stores' drain after its last, with nothing to overlap
/// them (ViT-B/16 at batch 32: 1536 blocks of 4 key tiles; 11% and 9% of
/// its warps' stall samples on the H200). Here the producer walks the
/// block's items without a break: the next item's Q lands once the last
/// score product has read this one's (during the last tile's softmax, its
/// P V and the stores: a second buffer cost the overlapped schedule a
/// register it does not have at three blocks a multiprocessor), and K and
/// V go through one ring whose stages and phases follow the block's running
/// tile count, so the next item's first tiles land while the consumers
/// finish this one's.
///
/// kOverlapped (FlashAttention-3's intra-warpgroup pipelining): the
/// warpgroup issues tile t's S = Q K^T and tile t-1's O += P V together and
/// runs tile t's softmax while P V is still on the tensor cores, instead of
/// one product, the softmax and the other product one after another. K and
/// V then have barriers of their own: a K stage is free once its scores
/// are, a tile before its V stage, so the next K load is never behind the
/// current P V.
///
/// kQueries = 128: an item is 128 queries, two consumer warpgroups taking
/// 64 each (threads 0-127 and 128-255, the producer warp after them) over
/// one ring, so that each K and V tile is loaded once for both, as cuDNN's
/// kernel does: half the loads from L2 a query, one block a multiprocessor
/// (288 threads at about 128 registers). A causal item's first warpgroup
/// needs a tile fewer than its second: it waits for that tile and releases
/// it unread.
template <typename T, int kD, bool kCausal, bool kOverlapped = false,
          int kStages = kAttnWgmmaStages, int kQueries = kAttnWgmmaBM, typename ItemOf>
__device__ __forceinline__ void flash_attention_wgmma(const TensorMap &mapQ, const TensorMap &mapK,
                                                      const TensorMap &mapV, int heads, int Sq,
                                                      int Sk, float scale, const ItemOf &itemOf) {
  static_assert(kD == 64 || kD == 128, "head sizes 64 and 128");
  static_assert(kQueries == 64 || kQueries == 128, "items of 64 or 128 queries");
  constexpr int kConsumers = kQueries / kAttnWgmmaBM;
  using Warpgroup = AttentionWarpgroup<T, kD, kCausal, kConsumers>;
  constexpr int kBoxes = Warpgroup::kBoxes;
  constexpr int kBoxBytesQ = Warpgroup::kBoxBytesQ, kBoxBytesKV = Warpgroup::kBoxBytesKV;
  constexpr unsigned kQBytes = kBoxes * kBoxBytesQ;
  constexpr unsigned kTileBytes = kBoxes * kBoxBytesKV; // K's, or V's
  constexpr unsigned kStageBytes = 2 * kTileBytes;      // K, then V
  static_assert(kStages == 2 || (kStages == 3 && kD == 64),
                "2 stages, or 3 at a head size of 64");
  extern __shared__ __align__(16) unsigned char hopperAttentionShared[];
  unsigned char *base =
      hopperAttentionShared + ((1024 - (smem_address(hopperAttentionShared) & 1023)) & 1023);
  unsigned char *Qs = base; // consumer c's 64 queries at c kQBytes
  unsigned char *stages = base + kConsumers * kQBytes;
  auto *bars = reinterpret_cast<unsigned long long *>(stages + kStages * kStageBytes);
  // Q's full and empty; then full/empty per stage, for K and V together
  // (serial) or K's (overlapped), then V's (overlapped).
  unsigned long long *qFull = bars, *qEmpty = bars + 1, *full = bars + 2;
  unsigned long long *empty = full + kStages, *fullV = empty + kStages, *emptyV = fullV + kStages;

  const int queryBlocks = (Sq + kQueries - 1) / kQueries;
  const int items = queryBlocks * heads;
  // The block's n-th item: round n takes items [n G, n G + G) (G blocks),
  // in turn forwards and backwards, so that a block whose item was one of
  // a head's long causal query blocks in one round takes a short one in
  // the next (with a plain stride of an even G, the same blocks got every
  // head's longest).
  // (The grid's size and the block's index read afresh at each use:
  // hoisted out of the item loop, G - 1 - 2 b took the register the
  // overlapped schedule does not have.)
  auto itemAt = [&](int n) {
    unsigned G, b;
    asm volatile("mov.u32 %0, %%nctaid.x;" : "=r"(G));
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(b));
    return static_cast<int>(n * G + ((n & 1) ? G - 1 - b : b));
  };
  auto queryStart = [&](int item) {
    return (queryBlocks - 1 - item % queryBlocks) * kQueries;
  };
  // Key tiles of `rows` queries from m0: an item's (kQueries), or one
  // warpgroup's (64).
  auto tilesFrom = [&](int m0, int rows = kQueries) {
    const int keyEnd = kCausal ? min(Sk, m0 + rows) : Sk;
    return (keyEnd + kAttnWgmmaBN - 1) / kAttnWgmmaBN;
  };
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  if (threadIdx.x == 0) {
    barrier_init(qFull, 1);
    barrier_init(qEmpty, 4 * kConsumers); // a lane of each consumer warp
    for (int s = 0; s < kStages; ++s) {
      barrier_init(&full[s], 1);
      barrier_init(&empty[s], 4 * kConsumers);
      if constexpr (kOverlapped) {
        barrier_init(&fullV[s], 1);
        barrier_init(&emptyV[s], 4 * kConsumers);
      }
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (warp == 4 * kConsumers) {
    if (lane == 0) {
      // g: the block's running tile count; n: its items so far.
      int g = 0;
      for (int n = 0; itemAt(n) < items; ++n) {
        const int item = itemAt(n);
        const unsigned bh = static_cast<unsigned>(item / queryBlocks);
        const int m0 = queryStart(item), tiles = tilesFrom(m0);
        const auto where = itemOf(bh);
        if (n >= 1)
          barrier_wait(qEmpty, (n - 1) & 1);
        barrier_expect_tx(qFull, kConsumers * kQBytes);
#pragma unroll
        for (int h = 0; h < kConsumers; ++h)
#pragma unroll
          for (int c = 0; c < kBoxes; ++c)
            tma_load_2d(Qs + h * kQBytes + c * kBoxBytesQ, mapQ, where.qCol + 64 * c,
                        where.qRow + m0 + kAttnWgmmaBM * h, qFull);
        for (int t = 0; t < tiles; ++t) {
          const int i = g + t, s = i % kStages;
          const unsigned phase = ((i / kStages) - 1) & 1;
          unsigned char *keys = stages + s * kStageBytes, *values = keys + kTileBytes;
          if (i >= kStages)
            barrier_wait(&empty[s], phase);
          barrier_expect_tx(&full[s], kOverlapped ? kTileBytes : kStageBytes);
#pragma unroll
          for (int c = 0; c < kBoxes; ++c)
            tma_load_2d(keys + c * kBoxBytesKV, mapK, where.kCol + 64 * c,
                        where.kRow + t * kAttnWgmmaBN, &full[s]);
          unsigned long long *vFull = &full[s];
          if constexpr (kOverlapped) {
            if (i >= kStages)
              barrier_wait(&emptyV[s], phase);
            barrier_expect_tx(&fullV[s], kTileBytes);
            vFull = &fullV[s];
          }
#pragma unroll
          for (int c = 0; c < kBoxes; ++c)
            tma_load_2d(values + c * kBoxBytesKV, mapV, where.vCol + 64 * c,
                        where.vRow + t * kAttnWgmmaBN, vFull);
        }
        g += tiles;
      }
    }
    return;
  }

  // Only n (the block's items so far) is carried from one item to the
  // next, and everything of an item is computed from it where it is needed
  // rather than held across its tiles: the kernels at their register limit
  // (the overlapped schedule at three blocks a multiprocessor, a head size
  // of 128 at two) have none to spare. g, the tiles of the block's earlier
  // items, is summed again for causal ones (a few items a block) rather
  // than carried.
  for (int n = 0; itemAt(n) < items; ++n) {
    const int item = itemAt(n);
    const int m0 = queryStart(item), tiles = tilesFrom(m0);
    int g = n * tiles;
    if constexpr (kCausal) {
      g = 0;
      for (int before = 0; before < n; ++before)
        g += tilesFrom(queryStart(itemAt(before)));
    }
    barrier_wait(qFull, n & 1);
    auto epilogueOf = [&] {
      return itemOf(static_cast<unsigned>(itemAt(n) / queryBlocks)).epilogue;
    };
    // The producer may load the next item's Q (every wgmma that read this
    // one is complete).
    auto releaseQ = [&] {
      if (lane == 0)
        barrier_arrive(qEmpty);
    };
    const unsigned bh = static_cast<unsigned>(item / queryBlocks);
    // This warpgroup's 64 queries of the item, their Q, and their key tiles
    // (with one consumer: the item's).
    const int consumer = kConsumers == 1 ? 0 : static_cast<int>(threadIdx.x / 128);
    const int rows0 = m0 + kAttnWgmmaBM * consumer;
    unsigned char *ownQ = Qs + consumer * kQBytes;
    const int ownTiles = kConsumers == 1 ? tiles : tilesFrom(rows0, kAttnWgmmaBM);
#if defined(KILN_ATTENTION_QUERY_TAIL)
    if (Sq - rows0 <= kAttnTailQueries) {
      attention_query_tail<T, kD, kCausal, kOverlapped, kStages, kConsumers>(
          ownQ, stages, full, empty, fullV, emptyV, g, rows0,
          ownTiles, Sq, Sk, scale, itemOf(bh).mask, epilogueOf());
      // Its scratch in Q's buffer: the plain stores ordered before the TMA
      // that refills it, and every warp past its last read.
      fence_proxy_async_shared();
      __syncwarp();
      releaseQ();
    } else
#endif
      attention_block<T, kD, kCausal, kOverlapped, kStages, kConsumers>(
          ownQ, stages, full, empty, fullV, emptyV, g, rows0, ownTiles, Sq, Sk, scale,
          itemOf(bh).mask, epilogueOf, releaseQ);
    // A causal item's tiles past this warpgroup's last key: the other's,
    // released unread.
    if constexpr (kCausal && kConsumers > 1)
#pragma unroll 1
      for (int t = ownTiles; t < tiles; ++t) {
        const int s = (g + t) % kStages;
        const unsigned phase = static_cast<unsigned>((g + t) / kStages) & 1;
        barrier_wait(&full[s], phase);
        if (lane == 0)
          barrier_arrive(&empty[s]);
        if constexpr (kOverlapped) {
          barrier_wait(&fullV[s], phase);
          if (lane == 0)
            barrier_arrive(&emptyV[s]);
        }
      }
  }
}

#endif // __CUDA_ARCH_FEAT_SM90_ALL

} // namespace kiln::sm90
