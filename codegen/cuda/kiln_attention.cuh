//===- kiln_attention.cuh - scaled dot-product attention kernels ----------===//
//
// out = softmax(q k^T * scale + mask) v for one (batch, head) per blockIdx.y:
// q is [Sq, D], k [Sk, D], v [Sk, Dv], row-major and contiguous. The caller
// passes the mask as a functor (additive value of score (i, j)) and an
// epilogue functor that receives every output element (i, d, value).
//
// flash_attention (fp16/bf16, D == Dv a multiple of 16 up to 128): one pass
// over K/V with an online softmax (FlashAttention-2). A block of kWarps (4
// or 8) warps owns 16 queries a warp (held as mma.sync A fragments): 128
// queries a block read each K/V tile once for twice the queries; K/V tiles of
// 64 keys stream through double-buffered shared memory with cp.async, the
// next tile's K and V in flight while the current one is multiplied. Scores,
// the running max/sum and the output accumulate in fp32; the probabilities
// feed the second mma.sync rounded to the element type. Query tiles are
// walked last-first so that causal blocks with the most keys start first.
//
// simt_attention (fp32, or other head sizes up to 128): 4 warps own 16
// queries (4 per warp); lane l scores key l of each 32-key tile, the warp
// reduces the tile's max and sum with shuffles, each lane accumulates output
// columns l, l + 32, ... in fp32.
//
// A query row whose every key is masked yields zeros (PyTorch's SDPA).
// Rows and keys past Sq/Sk are zero-filled on load and masked out.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_common.cuh"
#include "kiln_gemm.cuh"

namespace kiln {

//===----------------------------------------------------------------------===//
// Masks
//===----------------------------------------------------------------------===//

struct NoMask {
  static constexpr bool kActive = false, kPairs = false;
  __device__ __forceinline__ float operator()(int, int) const { return 0.0f; }
};

__device__ __forceinline__ float mask_value(bool keep) { return keep ? 0.0f : -INFINITY; }
__device__ __forceinline__ float mask_value(float x) { return x; }
__device__ __forceinline__ float mask_value(__half x) { return __half2float(x); }
__device__ __forceinline__ float mask_value(__nv_bfloat16 x) { return __bfloat162float(x); }

/// Two adjacent keys' mask values in one load (p 2-element aligned).
__device__ __forceinline__ float2 mask_pair(const bool *p) {
  const uchar2 keep = *reinterpret_cast<const uchar2 *>(p);
  return make_float2(keep.x ? 0.0f : -INFINITY, keep.y ? 0.0f : -INFINITY);
}
__device__ __forceinline__ float2 mask_pair(const float *p) {
  return *reinterpret_cast<const float2 *>(p);
}
__device__ __forceinline__ float2 mask_pair(const __half *p) {
  return __half22float2(*reinterpret_cast<const __half2 *>(p));
}
__device__ __forceinline__ float2 mask_pair(const __nv_bfloat16 *p) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(p));
}

/// mask[base + i * rowStride + j * colStride]: a mask broadcast to the
/// scores (a stride of 0 repeats it); a boolean keeps where true.
/// kPairs: keys are contiguous (colStride 1) and every offset even (the
/// code generator's promise), so pair(i, j) reads keys j and j + 1 of an
/// even j in one load: BERT's padding mask cost a tile 16 loads and their
/// 64-bit addresses, a fifth of its instructions.
template <typename M, bool kPairMask = false> struct TensorMask {
  static constexpr bool kActive = true, kPairs = kPairMask;
  const M *mask;
  long long base, rowStride, colStride;
  __device__ __forceinline__ float operator()(int i, int j) const {
    return mask_value(mask[base + i * rowStride + j * colStride]);
  }
  __device__ __forceinline__ float2 pair(int i, int j) const {
    return mask_pair(mask + base + i * rowStride + j);
  }
};

//===----------------------------------------------------------------------===//
// Tensor-core path
//===----------------------------------------------------------------------===//

/// K/V tiles of 64 keys; the SIMT path's block of 128 threads.
constexpr int kAttnBN = 64, kAttnThreads = 128;

/// Bytes of dynamic shared memory flash_attention<T, kD, ..., kWarps> needs:
/// Q (16 rows a warp) plus two buffers each of K and V, rows padded by 16
/// bytes (ldmatrix without bank conflicts).
constexpr int attention_shared_bytes(int d, int warps = 4) {
  return (16 * warps + 4 * kAttnBN) * (d + 8) * 2;
}


/// Rows [row0, row0 + kRows) of a [rows, kD] matrix whose rows lie
/// `rowStride` elements apart (a multiple of 8) into `tile`
/// ([kRows][kD + 8]), zeros past `rows`, by a block of kThreads.
template <typename T, int kD, int kRows, int kThreads>
__device__ __forceinline__ void load_rows_async(T *tile, const T *__restrict__ src,
                                                long long rowStride, int rows, int row0) {
  constexpr int kChunks = kRows * kD / 8, kPerRow = kD / 8;
  static_assert(kChunks % kThreads == 0, "whole 16-byte chunks per thread");
#pragma unroll
  for (int it = 0; it < kChunks / kThreads; ++it) {
    const int c = threadIdx.x + it * kThreads;
    const int r = c / kPerRow, col = (c % kPerRow) * 8;
    const bool valid = row0 + r < rows;
    const T *from = valid ? src + (long long)(row0 + r) * rowStride + col : src;
    cp_async16(tile + r * (kD + 8) + col, from, valid);
  }
}

template <typename T> __device__ __forceinline__ unsigned pack2(float lo, float hi);
template <> __device__ __forceinline__ unsigned pack2<__half>(float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<unsigned *>(&h);
}
template <> __device__ __forceinline__ unsigned pack2<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<unsigned *>(&h);
}

/// exp(x) = exp2(x * log2e()): the softmax's exponentials. (A function: a
/// namespace-scope constant would be emitted into every kernel's PTX.)
__host__ __device__ constexpr float log2e() { return 1.4426950408889634f; }

/// A score scaled, its mask added, and -inf past the last key or (causal)
/// past the query. The mask is read at the nearest position in range, not
/// under a condition: a row past Sq is never stored and a key past Sk is
/// -inf anyway, and unconditional reads of a mask that does not vary by
/// row (a padding mask) are one load for the thread's rows, not one each
/// (attention_wgmma with BERT's mask: 107 registers rather than 114).
/// kCheckKeys = false where the caller knows every key of the tile is at or
/// under every row's last (a tile before a row's last: an FSEL a score less,
/// and the key's index not computed where no mask reads it).
template <bool kCausal, bool kCheckKeys = true>
__device__ __forceinline__ float score_with_mask(float x, float scale, float maskValue, int i,
                                                 int key, int Sk) {
  x = fmaf(x, scale, maskValue);
  if (kCheckKeys && (key >= Sk || (kCausal && key > i)))
    x = -INFINITY;
  return x;
}
template <bool kCausal, bool kCheckKeys = true, typename Mask>
__device__ __forceinline__ float masked_score(float x, float scale, const Mask &mask, int i,
                                              int key, int Sq, int Sk) {
  if constexpr (Mask::kActive)
    return score_with_mask<kCausal, kCheckKeys>(x, scale, mask(min(i, Sq - 1), min(key, Sk - 1)),
                                                i, key, Sk);
  x *= scale;
  if (kCheckKeys && (key >= Sk || (kCausal && key > i)))
    x = -INFINITY;
  return x;
}

/// Results of columns d and d + 1 of row i: one 32-bit store where the
/// epilogue takes pairs (Epilogue::kPairs), two 16-bit ones otherwise (32
/// stores of a 64-wide head's row pair, a thread's, where 16 do).
template <typename Epilogue>
__device__ __forceinline__ void store_columns(const Epilogue &epilogue, int i, int d, float first,
                                              float second) {
  if constexpr (Epilogue::kPairs) {
    typename Epilogue::Values a, b;
    epilogue.compute_pair(i, d, first, second, a, b);
    epilogue.store_pair(i, d, a, b);
  } else {
    epilogue(i, d, first);
    epilogue(i, d + 1, second);
  }
}

/// One row's online-softmax step, the row spread over a quad of lanes:
/// the tile's max across the quad, the running max updated, the shift for
/// this tile's exp2 (0 while every score so far is masked, so that exp
/// gives 0, not NaN) and the factor the earlier sum and output take.
struct SoftmaxStep {
  float shift, correction;
};
__device__ __forceinline__ SoftmaxStep online_softmax_step(float tileMax, float &rowMax) {
  tileMax = fmaxf(tileMax, __shfl_xor_sync(0xffffffffu, tileMax, 1));
  tileMax = fmaxf(tileMax, __shfl_xor_sync(0xffffffffu, tileMax, 2));
  const float newMax = fmaxf(rowMax, tileMax);
  const float shift = newMax == -INFINITY ? 0.0f : newMax * log2e();
  const float correction = approx::exp2(rowMax * log2e() - shift);
  rowMax = newMax;
  return {shift, correction};
}

/// 1 / a row's sum across its quad (0 for a row whose every key is masked).
__device__ __forceinline__ float quad_sum_inverse(float sum) {
  sum += __shfl_xor_sync(0xffffffffu, sum, 1);
  sum += __shfl_xor_sync(0xffffffffu, sum, 2);
  return sum > 0.0f ? 1.0f / sum : 0.0f;
}

/// A barrier among the kernel's first kThreads threads (flash_attention's
/// warps): a launch may hold more (attention_wgmma's producer warp, idle
/// where its kernel falls back to flash_attention).
template <int kThreads> __device__ __forceinline__ void attention_barrier() {
  asm volatile("bar.sync 1, %0;\n" ::"n"(kThreads) : "memory");
}

/// A tile's two shapes for flash_attention's tile body: every key block
/// computed, or (a ragged last tile) only the 16-key blocks up to the last key.
template <bool kValue> struct AttentionTileShape {
  static constexpr bool ragged() { return kValue; }
};

/// A ragged last key tile's 16-key blocks past the last key (ViT's S = 197:
/// the fourth tile holds 5 keys of 64) and a warp's whole work when its 16
/// queries are past the last query (the fourth query block: 5 of 64) are
/// not computed. Their scores would be masked to -inf and their rows never
/// stored, so the results are the same; the products are about a third
/// fewer at S = 197 (ViT-B/16 at batch 32: 46.1 -> 41.1 µs, GPU machine,
/// 2026-12-03). The full tiles run a body of their own without those tests:
/// a per-block test inside the unrolled products kept their loads from
/// being issued ahead and cost a causal S = 1024 a third of its speed.
/// Where the sizes leave no ragged tile (constants once inlined), the
/// ragged body folds away.
template <typename T, int kD, bool kCausal, int kWarps, typename Mask, typename Epilogue>
__device__ __forceinline__ void flash_attention(const T *__restrict__ q, const T *__restrict__ k,
                                                const T *__restrict__ v, long long qRow,
                                                long long kRow, long long vRow, int Sq,
                                                int Sk, float scale, const Mask &mask,
                                                const Epilogue &epilogue) {
  static_assert(kD % 16 == 0 && kD <= 128, "head size must be a multiple of 16, at most 128");
  constexpr int kStride = kD + 8;
  constexpr bool kEarlyLoads = kD <= 64;
  // Queries of the block: 16 a warp.
  constexpr int kBM = 16 * kWarps, kThreads = 32 * kWarps;
  extern __shared__ __align__(16) unsigned char attentionShared[];
  T *Qs = reinterpret_cast<T *>(attentionShared);
  T *Ks = Qs + kBM * kStride; // two buffers
  T *Vs = Ks + 2 * kAttnBN * kStride;

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, quad = lane & 3;
  const int m0 = (gridDim.x - 1 - blockIdx.x) * kBM;
  const int row0 = m0 + warp * 16 + g, row1 = row0 + 8;
  const int keyEnd = kCausal ? min(Sk, m0 + kBM) : Sk;
  const int tiles = (keyEnd + kAttnBN - 1) / kAttnBN;
  // Tiles whose every key exists; a ragged last one runs the ragged body.
  const int fullTiles = keyEnd / kAttnBN;
  // Warp-uniform: whether any of this warp's 16 queries exists.
  const bool computes = m0 + warp * 16 < Sq;

  load_rows_async<T, kD, kBM, kThreads>(Qs, q, qRow, Sq, m0);
  load_rows_async<T, kD, kAttnBN, kThreads>(Ks, k, kRow, Sk, 0);
  cp_async_commit();
  load_rows_async<T, kD, kAttnBN, kThreads>(Vs, v, vRow, Sk, 0);
  cp_async_commit();

  unsigned qf[kD / 16][4];
  float o[kD / 8][4];
#pragma unroll
  for (int i = 0; i < kD / 8; ++i)
#pragma unroll
    for (int r = 0; r < 4; ++r)
      o[i][r] = 0.0f;
  float rowMax[2] = {-INFINITY, -INFINITY}, rowSum[2] = {0.0f, 0.0f};

  const auto tile = [&](const int t, const auto shape) {
    constexpr bool kRagged = decltype(shape)::ragged();
    const int n0 = t * kAttnBN;
    const T *Kt = Ks + (t & 1) * kAttnBN * kStride;
    const T *Vt = Vs + (t & 1) * kAttnBN * kStride;
    cp_async_wait<1>(); // K_t (and Q) landed; V_t may be in flight
    attention_barrier<kThreads>();
    // The next tile's K and V go into the buffers tile t - 1 used, which
    // every warp finished reading before the barrier above: both loads are
    // in flight through this whole tile (a sequence of two tiles, S = 128,
    // has all four loads issued before its first product). Past a head
    // size of 64 the loads' addresses, held across the tile, spill (D = 128
    // with a mask: 44 bytes): there K_{t+1} follows Q K^T and V_{t+1} P V.
    const bool next = t + 1 < tiles;
    if (kEarlyLoads && next) {
      load_rows_async<T, kD, kAttnBN, kThreads>(Ks + ((t + 1) & 1) * kAttnBN * kStride, k, kRow,
                                                  Sk, n0 + kAttnBN);
      cp_async_commit();
      load_rows_async<T, kD, kAttnBN, kThreads>(Vs + ((t + 1) & 1) * kAttnBN * kStride, v, vRow,
                                                  Sk, n0 + kAttnBN);
      cp_async_commit();
    }
    // Keys of a ragged tile up to keyEnd: 16-key blocks past them are skipped.
    const int keys = kRagged ? keyEnd - n0 : kAttnBN;
    if (t == 0 && computes) {
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk) {
        const T *p = Qs + (warp * 16 + (lane & 15)) * kStride + kk * 16 + (lane >> 4) * 8;
        ldmatrix_x4(qf[kk], p);
      }
    }
    // S = Q K^T: 16 x 64 per warp.
    float s[kAttnBN / 8][4];
#pragma unroll
    for (int j = 0; j < kAttnBN / 8; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        s[j][r] = 0.0f;
    if (computes) {
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk)
#pragma unroll
        for (int j = 0; j < kAttnBN / 16; ++j) {
          if (kRagged && j * 16 >= keys)
            continue;
          unsigned b[4];
          const T *p = Kt + (j * 16 + (lane & 7) + ((lane >> 4) << 3)) * kStride + kk * 16 +
                       ((lane >> 3) & 1) * 8;
          ldmatrix_x4(b, p);
          const unsigned b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
          MmaName<T>::mma(s[2 * j], qf[kk], b0);
          MmaName<T>::mma(s[2 * j + 1], qf[kk], b1);
        }
    }
    if (!kEarlyLoads && next) {
      load_rows_async<T, kD, kAttnBN, kThreads>(Ks + ((t + 1) & 1) * kAttnBN * kStride, k, kRow,
                                                  Sk, n0 + kAttnBN);
      cp_async_commit();
    }

    // Scale, mask, and the online softmax of the two rows this thread holds
    // (row0: registers 0, 1; row1: registers 2, 3), across the quad.
    // (A warp without queries skips it: nothing of it is stored.)
    if (computes) {
#pragma unroll
      for (int j = 0; j < kAttnBN / 8; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int i = r < 2 ? row0 : row1;
          const int key = n0 + j * 8 + quad * 2 + (r & 1);
          s[j][r] = masked_score<kCausal>(s[j][r], scale, mask, i, key, Sq, Sk);
        }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float tileMax = -INFINITY;
#pragma unroll
        for (int j = 0; j < kAttnBN / 8; ++j)
          tileMax = fmaxf(tileMax, fmaxf(s[j][2 * h], s[j][2 * h + 1]));
        const auto [base, correction] = online_softmax_step(tileMax, rowMax[h]);
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < kAttnBN / 8; ++j)
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            const float p = approx::exp2(fmaf(s[j][2 * h + c], log2e(), -base));
            s[j][2 * h + c] = p;
            sum += p;
          }
        rowSum[h] = rowSum[h] * correction + sum;
#pragma unroll
        for (int d = 0; d < kD / 8; ++d) {
          o[d][2 * h] *= correction;
          o[d][2 * h + 1] *= correction;
        }
      }
    }

    // V_t landed: only the next tile's K (and V) may still be in flight.
    if (next)
      cp_async_wait<kEarlyLoads ? 2 : 1>();
    else
      cp_async_wait<0>();
    attention_barrier<kThreads>(); // V_t visible to every warp
    // O += P V: P's accumulator layout is the A fragment of m16n8k16.
    if (computes) {
#pragma unroll
      for (int kk = 0; kk < kAttnBN / 16; ++kk) {
        if (kRagged && kk * 16 >= keys)
          continue;
        const unsigned a[4] = {pack2<T>(s[2 * kk][0], s[2 * kk][1]),
                               pack2<T>(s[2 * kk][2], s[2 * kk][3]),
                               pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                               pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
        for (int dp = 0; dp < kD / 16; ++dp) {
          unsigned b[4];
          const T *p = Vt + (kk * 16 + (lane & 15)) * kStride + dp * 16 + (lane >> 4) * 8;
          ldmatrix_x4_trans(b, p);
          const unsigned b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
          MmaName<T>::mma(o[2 * dp], a, b0);
          MmaName<T>::mma(o[2 * dp + 1], a, b1);
        }
      }
    }
    if (!kEarlyLoads && next) {
      load_rows_async<T, kD, kAttnBN, kThreads>(Vs + ((t + 1) & 1) * kAttnBN * kStride, v, vRow,
                                                  Sk, n0 + kAttnBN);
      cp_async_commit();
    }
  };
  for (int t = 0; t < fullTiles; ++t)
    tile(t, AttentionTileShape<false>{});
  if (fullTiles < tiles)
    tile(fullTiles, AttentionTileShape<true>{});

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float inverse = quad_sum_inverse(rowSum[h]);
    const int i = h == 0 ? row0 : row1;
    if (i < Sq)
#pragma unroll
      for (int d = 0; d < kD / 8; ++d) {
        store_columns(epilogue, i, d * 8 + quad * 2, o[d][2 * h] * inverse,
                      o[d][2 * h + 1] * inverse);
      }
  }
}

//===----------------------------------------------------------------------===//
// SIMT path
//===----------------------------------------------------------------------===//

constexpr int kSimtAttnRows = 4, kSimtAttnBM = 16, kSimtAttnBN = 32;

template <typename T, int kD, int kDv, bool kCausal, typename Mask, typename Epilogue>
__device__ __forceinline__ void simt_attention(const T *__restrict__ q, const T *__restrict__ k,
                                               const T *__restrict__ v, long long qRow,
                                               long long kRow, long long vRow, int Sq,
                                               int Sk, float scale, const Mask &mask,
                                               const Epilogue &epilogue) {
  static_assert(kD <= 128 && kDv <= 128, "head sizes up to 128");
  constexpr int kCols = (kDv + 31) / 32;
  __shared__ float Qs[kSimtAttnBM][kD];
  __shared__ float Ks[kSimtAttnBN][kD + 1];
  __shared__ float Vs[kSimtAttnBN][kDv];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int m0 = (gridDim.x - 1 - blockIdx.x) * kSimtAttnBM;
  for (int e = threadIdx.x; e < kSimtAttnBM * kD; e += kAttnThreads) {
    const int r = e / kD, d = e % kD;
    Qs[r][d] = m0 + r < Sq ? to_float(q[(long long)(m0 + r) * qRow + d]) : 0.0f;
  }
  float acc[kSimtAttnRows][kCols], rowMax[kSimtAttnRows], rowSum[kSimtAttnRows];
#pragma unroll
  for (int r = 0; r < kSimtAttnRows; ++r) {
    rowMax[r] = -INFINITY;
    rowSum[r] = 0.0f;
#pragma unroll
    for (int c = 0; c < kCols; ++c)
      acc[r][c] = 0.0f;
  }
  const int keyEnd = kCausal ? min(Sk, m0 + kSimtAttnBM) : Sk;
  for (int n0 = 0; n0 < keyEnd; n0 += kSimtAttnBN) {
    __syncthreads(); // the previous tile's readers are done
    for (int e = threadIdx.x; e < kSimtAttnBN * kD; e += kAttnThreads) {
      const int r = e / kD, d = e % kD;
      Ks[r][d] = n0 + r < Sk ? to_float(k[(long long)(n0 + r) * kRow + d]) : 0.0f;
    }
    for (int e = threadIdx.x; e < kSimtAttnBN * kDv; e += kAttnThreads) {
      const int r = e / kDv, d = e % kDv;
      Vs[r][d] = n0 + r < Sk ? to_float(v[(long long)(n0 + r) * vRow + d]) : 0.0f;
    }
    __syncthreads();
    const int key = n0 + lane;
    float p[kSimtAttnRows];
#pragma unroll
    for (int r = 0; r < kSimtAttnRows; ++r) {
      const int row = warp * kSimtAttnRows + r, i = m0 + row;
      float dot = 0.0f;
#pragma unroll 8
      for (int d = 0; d < kD; ++d)
        dot = fmaf(Qs[row][d], Ks[lane][d], dot);
      float x = dot * scale;
      if (Mask::kActive && i < Sq && key < Sk)
        x += mask(min(i, Sq - 1), min(key, Sk - 1));
      if (key >= Sk || (kCausal && key > i))
        x = -INFINITY;
      const float newMax = fmaxf(rowMax[r], warp_max(x));
      const float base = newMax == -INFINITY ? 0.0f : newMax;
      const float correction = expf(rowMax[r] - base);
      p[r] = expf(x - base);
      rowSum[r] = rowSum[r] * correction + warp_sum(p[r]);
      rowMax[r] = newMax;
#pragma unroll
      for (int c = 0; c < kCols; ++c)
        acc[r][c] *= correction;
    }
    const int keys = min(kSimtAttnBN, keyEnd - n0);
    for (int jj = 0; jj < keys; ++jj)
#pragma unroll
      for (int r = 0; r < kSimtAttnRows; ++r) {
        const float pj = __shfl_sync(0xffffffffu, p[r], jj);
#pragma unroll
        for (int c = 0; c < kCols; ++c)
          if (lane + 32 * c < kDv)
            acc[r][c] = fmaf(pj, Vs[jj][lane + 32 * c], acc[r][c]);
      }
  }
#pragma unroll
  for (int r = 0; r < kSimtAttnRows; ++r) {
    const int i = m0 + warp * kSimtAttnRows + r;
    const float inverse = rowSum[r] > 0.0f ? 1.0f / rowSum[r] : 0.0f;
    if (i < Sq)
#pragma unroll
      for (int c = 0; c < kCols; ++c)
        if (lane + 32 * c < kDv)
          epilogue(i, lane + 32 * c, acc[r][c] * inverse);
  }
}

} // namespace kiln
