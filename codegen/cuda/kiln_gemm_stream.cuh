//===- kiln_gemm_stream.cuh - GEMMs that move more bytes than they compute -===//
//
// MobileNet's and EfficientNet's 1x1 convolutions at batch 32 (24 -> 144
// channels over 56 x 56 pixels: 0.7 GFLOP and 34 MB) are bandwidth, not
// math. The persistent TMA + wgmma GEMM runs them one block a multiprocessor
// with two consumer warpgroups that wait on their epilogues in turn: on the
// H200 (2026-12-04, Nsight Compute) such kernels issued 0.15-0.36 warp
// instructions a cycle a scheduler at 14% occupancy, 0.9-1.5 TB/s, and took
// 2-2.8x cuDNN's time.
//
// Here the whole weight stays in shared memory, 128-row tiles of A (and the
// residual the epilogue reads, if any) stream through a ring of cp.async
// stages several tiles ahead, and mma.sync computes each tile in column
// chunks of 64: 8 warps, each 32 rows x 32 columns of a chunk. Results go
// through shared memory into 16-byte stores (Epilogue::kFragments). Two
// blocks a multiprocessor (the code generator's launch bounds), so one
// block's epilogue runs beside the other's loads and math.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_gemm.cuh"

namespace kiln {

namespace stream {
/// Rows a tile takes, threads a block and the columns a chunk takes.
constexpr int kRows = 128, kThreads = 256, kChunk = 64;

__host__ __device__ constexpr int round16(int v) { return (v + 15) / 16 * 16; }
/// A shared row of `v` halves: padded to mma's k (or n) and then 16 bytes
/// more, so that its 4-byte words start 8j + 4 words apart: ldmatrix's 8
/// rows and the fragments' 8 rows each fall on distinct banks.
__host__ __device__ constexpr int pitch(int v) { return round16(v) + 8; }
__host__ __device__ constexpr int min_of(int a, int b) { return a < b ? a : b; }

__host__ __device__ constexpr int weight_bytes(int N, int K) { return round16(N) * pitch(K) * 2; }
/// A stage: a tile of A and, where the epilogue's row input is staged, of
/// that input.
__host__ __device__ constexpr int stage_bytes(int N, int K, bool rowInput) {
  return kRows * pitch(K) * 2 + (rowInput ? kRows * pitch(N) * 2 : 0);
}
__host__ __device__ constexpr int chunks(int N) { return (round16(N) + kChunk - 1) / kChunk; }
/// The results of two chunks: a chunk stages into the buffer the one
/// before the previous used, whose stores every thread finished before the
/// previous chunk's barrier, so chunks and tiles need no barrier of their
/// own past the one between staging and storing.
__host__ __device__ constexpr int staging_bytes(int N) {
  return 2 * kRows * pitch(min_of(round16(N), kChunk)) * 2;
}
/// Dynamic shared memory a block uses (the code generator checks it).
__host__ __device__ constexpr int shared_bytes(int N, int K, int stages, bool rowInput) {
  return weight_bytes(N, K) + stages * stage_bytes(N, K, rowInput) + staging_bytes(N);
}
} // namespace stream

/// Whether stream_gemm takes [M, kK] x [kN, kK]^T: 2-byte elements, rows
/// and the row input in whole 16-byte vectors, at most 256 of each.
template <typename T, int kN, int kK> __host__ __device__ constexpr bool stream_gemm_fits() {
  return sizeof(T) == 2 && kK % 8 == 0 && kN % 8 == 0 && kK > 0 && kN > 0 && kK <= 256 &&
         kN <= 256;
}

/// One chunk of kWidth columns from `base` of the tile at row0: the k steps
/// of every warp's 32 x kWidth / 2, then the epilogue (see the file comment).
/// Column blocks at or past kN (in the padding to 16) are neither computed
/// nor stored.
template <typename T, int kN, int kKp, int kWidth, int kAP, int kRP, int kOP, bool kStaged,
          typename Epilogue>
__device__ __forceinline__ void stream_chunk(int base, const T (*As)[kAP], const T (*Bs)[kAP],
                                             const T (*Rs)[kRP], T *staged, int row0, int M,
                                             const Epilogue &epilogue) {
  constexpr int NT = kWidth / 16; // a warp's 8-column blocks
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int warpRow = (warp & 3) * 32, warpColumn = (warp >> 2) * (kWidth / 2);
  const int g = lane >> 2, t = lane & 3;
  float acc[2][NT][4];
#pragma unroll
  for (int f = 0; f < 2; ++f)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q)
        acc[f][j][q] = 0.0f;
#pragma unroll
  for (int kk = 0; kk < kKp; kk += 16) {
    unsigned a[2][4];
#pragma unroll
    for (int f = 0; f < 2; ++f)
      ldmatrix_x4(a[f], &As[warpRow + 16 * f + (lane & 15)][kk + (lane >> 4) * 8]);
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      const int column = base + warpColumn + j * 8;
      if (column < kN) {
        unsigned b[2];
        ldmatrix_x2(b, &Bs[column + (lane & 7)][kk + ((lane >> 3) & 1) * 8]);
#pragma unroll
        for (int f = 0; f < 2; ++f)
          MmaName<T>::mma(acc[f][j], a[f], b);
      }
    }
  }

  if constexpr (Epilogue::kFragments) {
    // Each pair rounded into one register and staged as the tile's rows;
    // then the block stores whole rows of the chunk, 16 bytes a lane. A
    // row input is read as the pair it adds to, from its stage.
#pragma unroll
    for (int f = 0; f < 2; ++f)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = warpRow + 16 * f + g + 8 * h, at = min(row0 + r, M - 1);
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          const int column = base + warpColumn + j * 8 + 2 * t;
          if (base + warpColumn + j * 8 < kN) {
            unsigned input = 0;
            if constexpr (Epilogue::kRowInput) {
              if constexpr (kStaged)
                input = *reinterpret_cast<const unsigned *>(&Rs[r][column]);
              else
                input = *reinterpret_cast<const unsigned *>(epilogue.row_input_at(at, column));
            }
            *reinterpret_cast<unsigned *>(staged + r * kOP + warpColumn + j * 8 + 2 * t) =
                epilogue.compute_packed(at, column, acc[f][j][2 * h], acc[f][j][2 * h + 1],
                                        input);
          }
        }
      }
    __syncthreads();
    constexpr int kRowChunks = kWidth / 8;
#pragma unroll
    for (int e = tid; e < stream::kRows * kRowChunks; e += stream::kThreads) {
      const int r = e / kRowChunks, o = (e % kRowChunks) * 8;
      if (row0 + r < M && base + o < kN)
        epilogue.store_chunk(row0 + r, base + o,
                             *reinterpret_cast<const uint4 *>(staged + r * kOP + o));
    }
  } else {
    // Straight from the fragments: each element's (or pair's) loads before
    // any store.
#pragma unroll
    for (int f = 0; f < 2; ++f) {
      int m[2], at[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        m[h] = row0 + warpRow + 16 * f + g + 8 * h;
        at[h] = min(m[h], M - 1);
      }
      if constexpr (Epilogue::kPairs) {
        typename Epilogue::Values first[NT][2], second[NT][2];
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            if (base + warpColumn + j * 8 < kN)
              epilogue.compute_pair(at[h], base + warpColumn + j * 8 + 2 * t, acc[f][j][2 * h],
                                    acc[f][j][2 * h + 1], first[j][h], second[j][h]);
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            if (base + warpColumn + j * 8 < kN && m[h] < M)
              epilogue.store_pair(m[h], base + warpColumn + j * 8 + 2 * t, first[j][h],
                                  second[j][h]);
      } else {
        typename Epilogue::Values values[NT][4];
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int q = 0; q < 4; ++q)
            if (base + warpColumn + j * 8 < kN)
              values[j][q] = epilogue.compute(at[q / 2], base + warpColumn + j * 8 + 2 * t + (q & 1),
                                              acc[f][j][q]);
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int q = 0; q < 4; ++q)
            if (base + warpColumn + j * 8 < kN && m[q / 2] < M)
              epilogue.store(m[q / 2], base + warpColumn + j * 8 + 2 * t + (q & 1), values[j][q]);
      }
    }
  }
}

/// C[m, :] = A[m, :] B^T, then the epilogue (see the file comment): a
/// grid-stride loop over 128-row tiles, kStages of them in flight.
/// kStageRowInput: the stages hold the row input beside A (the code
/// generator's choice, mirrored in its shared-memory size); the epilogue
/// reads them where it takes a row input as pairs (Epilogue::kRowInput).
template <typename T, int kN, int kK, int kStages, bool kStageRowInput, typename Epilogue>
__device__ __forceinline__ void stream_gemm(const T *__restrict__ A, const T *__restrict__ B,
                                            int M, const Epilogue &epilogue) {
  static_assert(stream_gemm_fits<T, kN, kK>(),
                "stream_gemm takes 2-byte elements, K % 8 == 0, N % 8 == 0, both at most 256");
  static_assert(kStages >= 2, "a ring of two stages or more");
  using namespace stream;
  constexpr int Kp = round16(kK), AP = pitch(kK), NP = round16(kN), RP = pitch(kN);
  constexpr int W = min_of(NP, kChunk), OP = pitch(W), kChunks = chunks(kN);
  constexpr int kLastWidth = NP - (kChunks - 1) * kChunk;
  constexpr int kStageBytes = stage_bytes(kN, kK, kStageRowInput);
  constexpr bool kStaged = kStageRowInput && Epilogue::kFragments && Epilogue::kRowInput;
  extern __shared__ __align__(16) unsigned char streamShared[];
  T(*Bs)[AP] = reinterpret_cast<T(*)[AP]>(streamShared);
  unsigned char *stages = streamShared + weight_bytes(kN, kK);
  T *staging = reinterpret_cast<T *>(stages + kStages * kStageBytes);
  auto tileA = [&](int s) { return reinterpret_cast<T(*)[AP]>(stages + s * kStageBytes); };
  auto tileInput = [&](int s) {
    return reinterpret_cast<T(*)[RP]>(stages + s * kStageBytes + kRows * AP * 2);
  };

  const int tid = threadIdx.x;
  // The padding of the weight and of every stage (A past K, rows past M)
  // is read by ldmatrix and must be finite: zero, and never written again.
  for (int e = tid; e < (weight_bytes(kN, kK) + kStages * kStageBytes) / 16; e += kThreads)
    reinterpret_cast<uint4 *>(streamShared)[e] = make_uint4(0, 0, 0, 0);
  __syncthreads();
  // The weight travels with the first tile's rows, in its cp.async group:
  // a block takes only a few tiles (784 at 56 x 56 and batch 32 on 264
  // blocks), so its first wait should be one round trip, not two.
  constexpr int kVectors = kK / 8;
  for (int e = tid; e < kN * kVectors; e += kThreads) {
    const int n = e / kVectors, c = e % kVectors;
    cp_async16(&Bs[n][c * 8], B + (n * kK + c * 8), true);
  }

  const int tiles = (M + kRows - 1) / kRows;
  // A tile's rows (and its row input's) into stage s; every thread commits
  // a group per call, loads or not, so that the wait below counts tiles.
  auto load = [&](int tile, int s) {
    if (tile < tiles) {
      const int row0 = tile * kRows;
      T(*a)[AP] = tileA(s);
#pragma unroll
      for (int e = tid; e < kRows * kVectors; e += kThreads) {
        const int r = e / kVectors, c = e % kVectors;
        if (row0 + r < M)
          cp_async16(&a[r][c * 8], A + (static_cast<long long>(row0 + r) * kK + c * 8), true);
      }
      if constexpr (kStaged) {
        constexpr int kInputVectors = kN / 8;
        T(*in)[RP] = tileInput(s);
#pragma unroll
        for (int e = tid; e < kRows * kInputVectors; e += kThreads) {
          const int r = e / kInputVectors, c = e % kInputVectors;
          if (row0 + r < M)
            cp_async16(&in[r][c * 8], epilogue.row_input_at(row0 + r, c * 8), true);
        }
      }
    }
    cp_async_commit();
  };

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s)
    load(blockIdx.x + s * gridDim.x, s);
  int stage = 0, buffer = 0;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    // The stage refilled here was last read by the previous tile, which
    // every thread finished before that tile's last barrier.
    load(tile + (kStages - 1) * gridDim.x, (stage + kStages - 1) % kStages);
    cp_async_wait<kStages - 1>();
    __syncthreads();
    const int row0 = tile * kRows;
    const T(*a)[AP] = tileA(stage);
    const T(*in)[RP] = tileInput(stage);
#pragma unroll
    for (int c = 0; c + 1 < kChunks; ++c, buffer ^= 1)
      stream_chunk<T, kN, Kp, kChunk, AP, RP, OP, kStaged>(c * kChunk, a, Bs, in,
                                                           staging + buffer * kRows * OP, row0,
                                                           M, epilogue);
    stream_chunk<T, kN, Kp, kLastWidth, AP, RP, OP, kStaged>(
        (kChunks - 1) * kChunk, a, Bs, in, staging + buffer * kRows * OP, row0, M, epilogue);
    buffer ^= 1;
    // Without staged results no barrier follows the last reads of the stage.
    if constexpr (!Epilogue::kFragments)
      __syncthreads();
    stage = (stage + 1) % kStages;
  }
  cp_async_wait<0>();
}

} // namespace kiln
