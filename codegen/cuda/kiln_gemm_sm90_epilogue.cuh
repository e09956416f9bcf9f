//===- kiln_gemm_sm90_epilogue.cuh - Hopper main loop's epilogue stores ---===//
//
// How a warp of kiln_gemm_sm90.cuh's main loop hands its accumulators to
// the caller's epilogue functor: through fp32 staging in shared memory
// (store_accumulators, store_slice_in_pairs) or on the accumulators' own
// registers (store_fragments, with a row input copied in by rows). The
// accumulators are a consumer's registers or, under the epilogue
// warpgroups' schedule, the handoff in shared memory (HandoffAccumulators).
// Included by kiln_gemm_sm90.cuh inside its sm_90a guard.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace kiln::sm90 {

/// The epilogue of one staged slice (16 rows x 64 columns) with each lane
/// on two adjacent columns: one 8-byte shared load, one rounding to a
/// half2 and one 4-byte store for two elements, and a row's 64 columns in
/// one 128-byte store instruction, where a lane on one column takes two of
/// each and a row takes two stores (Epilogue::kPairs: N is even and the
/// output's rows start at even elements). `rowAt(r)` is the output row of
/// the slice's row r; with kRowsByShuffle, lane l % 16 holds row l % 16's
/// in `laneRow`.
template <int kRows, bool kRowsByShuffle, typename Operands, typename Epilogue,
          typename RowAt>
__device__ __forceinline__ void store_slice_in_pairs(const Operands &ops, int N,
                                                     const Epilogue &epilogue,
                                                     const float *staging, int sliceN,
                                                     int laneRow, RowAt rowAt) {
  const int lane = threadIdx.x % 32;
  const int n = sliceN + 2 * lane;
  // An out-of-range pair is computed at the last pair (and not stored).
  const int computedN = min(n, N - 2);
#pragma unroll
  for (int r0 = 0; r0 < 16; r0 += kRows) {
    typename Epilogue::Values first[kRows], second[kRows];
    int rows[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      rows[r] = kRowsByShuffle ? __shfl_sync(0xffffffffu, laneRow, r0 + r) : rowAt(r0 + r);
    // Every row's loads before any store, as in the one-column path.
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const float2 acc =
          *reinterpret_cast<const float2 *>(staging + (r0 + r) * kStagingPitch + 2 * lane);
      const int m = ops.clamp_row(rows[r]);
      epilogue.compute_pair(m, computedN, acc.x, acc.y, first[r], second[r]);
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      if (ops.stores(rows[r]) && n < N)
        epilogue.store_pair(rows[r], n, first[r], second[r]);
  }
}

/// One warp's share of a tile's epilogue: rows warpRow .. warpRow + 15 of
/// row tile tileM, the 64-row accumulator half `acc` of columns blockN ..
/// blockN + kBN - 1, staged through this warp's `staging`.
template <int kBN, typename Operands, typename Epilogue, typename Accumulators>
__device__ __forceinline__ void store_accumulators(const Operands &ops, int N,
                                                   const Epilogue &epilogue,
                                                   const Accumulators &acc,
                                                   float *staging, int tileM, int blockN,
                                                   int warpRow) {
  const int lane = threadIdx.x % 32;
  // Staged slices of 64 columns (a narrow tile's one, part past it).
  constexpr int kSlices = (kBN + kStagingCols - 1) / kStagingCols;
  // Accumulator layout of m64nNk16: warp w of the warpgroup owns rows
  // 16w + lane/4 (+8); chunk j covers columns 16j + 2(lane%4) (+1, +8, +9).
  // Called straight from that layout, the epilogue's loads and stores
  // touch 8 rows x 8 bytes per warp instruction and the LSU, not the
  // tensor cores, sets the tile's pace. So each warp stages 64 columns at
  // a time in shared memory and runs the epilogue row by row, 32
  // consecutive columns per instruction.
  // Lane l holds the output row of the warp's row l % 16.
  const int laneRow = Operands::kRowsByShuffle ? ops.row(tileM, warpRow + (lane & 15)) : 0;
  // The row-varying inputs of staged slice c (its 16 rows x 64 columns)
  // into L1, one slice ahead of the loads that read them: lane l takes
  // row l % 16 and, for 4-byte inputs, the second line of the row.
  auto prefetch_slice = [&](int c) {
    if constexpr (Epilogue::kPrefetchStep > 0) {
      const int m = Operands::kRowsByShuffle ? laneRow : ops.row(tileM, warpRow + (lane & 15));
      const int n = blockN + c * kStagingCols + (lane / 16) * Epilogue::kPrefetchStep;
      if (lane / 16 * Epilogue::kPrefetchStep < kStagingCols && ops.stores(m) && n < N)
        epilogue.prefetch_l1(m, n);
    }
  };
  prefetch_slice(0);
#pragma unroll
  for (int c = 0; c < kSlices; ++c) {
    // No early exit for slices wholly past N: a `break` here made the
    // compiler issue a residual epilogue's loads one at a time (ResNet-50's
    // 1x1 + residual layers took twice as long). They are rare: the
    // selection stage never takes a width whose last slice is dead where
    // a narrower one covers N in as many tiles (N = 144 takes 192).
    const int sliceN = blockN + c * kStagingCols;
    if (c + 1 < kSlices)
      prefetch_slice(c + 1);
#pragma unroll
    for (int jj = 0; jj < kStagingCols / 16; ++jj) {
      const auto &chunk = acc[c * (kStagingCols / 16) + jj];
      float *top = staging + (lane / 4) * kStagingPitch + 16 * jj + 2 * (lane % 4);
      float *bottom = top + 8 * kStagingPitch;
      *reinterpret_cast<float2 *>(top) = make_float2(chunk[0], chunk[1]);
      *reinterpret_cast<float2 *>(bottom) = make_float2(chunk[2], chunk[3]);
      *reinterpret_cast<float2 *>(top + 8) = make_float2(chunk[4], chunk[5]);
      *reinterpret_cast<float2 *>(bottom + 8) = make_float2(chunk[6], chunk[7]);
    }
    __syncwarp();
    if constexpr (Epilogue::kPairs) {
      store_slice_in_pairs<Operands::kEpilogueRows, Operands::kRowsByShuffle>(
          ops, N, epilogue, staging, sliceN, laneRow, [&](int r) { return ops.row(tileM, warpRow + r); });
      __syncwarp();
      continue;
    }
    const int n0 = blockN + c * kStagingCols + lane;
    // Eight rows' elements are computed before any is stored, so their
    // loads (a residual, a bias) are all in flight at once: a store
    // between two loads would keep them in order, since an output may
    // alias an input. Out-of-range elements are computed at a row in
    // range (ops.clamp_row) or the last column (and not stored):
    // unconditional loads let the compiler share a column's bias load
    // between rows.
    // A 32-column half wholly past N is not computed (by the whole warp
    // at once; its stores fail the lane's own bounds test). Guarding the
    // stores with it too made ptxas spill beside a 256-wide tile's 128
    // accumulators.
    auto live = [&](int h) { return h == 0 || sliceN + 32 * h < N; };
#pragma unroll
    for (int r0 = 0; r0 < 16; r0 += Operands::kEpilogueRows) {
      constexpr int kRows = Operands::kEpilogueRows;
      typename Epilogue::Values values[kRows][kStagingCols / 32];
      // Shuffled rows are taken by the whole warp here, outside the
      // stores' bounds checks (a lane skipping a __shfl_sync would hang
      // the warp).
      int shuffled[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        shuffled[r] = Operands::kRowsByShuffle ? __shfl_sync(0xffffffffu, laneRow, r0 + r) : 0;
      auto rowOf = [&](int r) {
        return Operands::kRowsByShuffle ? shuffled[r] : ops.row(tileM, warpRow + r0 + r);
      };
#pragma unroll
      for (int r = 0; r < kRows; ++r)
#pragma unroll
        for (int h = 0; h < kStagingCols / 32; ++h)
          if (live(h))
            values[r][h] = epilogue.compute(ops.clamp_row(rowOf(r)), min(n0 + 32 * h, N - 1),
                                            staging[(r0 + r) * kStagingPitch + 32 * h + lane]);
#pragma unroll
      for (int r = 0; r < kRows; ++r)
#pragma unroll
        for (int h = 0; h < kStagingCols / 32; ++h)
          if (ops.stores(rowOf(r)) && n0 + 32 * h < N)
            epilogue.store(rowOf(r), n0 + 32 * h, values[r][h]);
    }
    __syncwarp();
  }
}

/// A warp's staging as 16 rows of 64 halves, 144 bytes apart (stmatrix's
/// and ldmatrix's 16-byte rows and the 16-byte row copies are free of bank
/// conflicts): the results, then the row input's slice.
constexpr int kFragmentPitch = kStagingCols + 8;
static_assert(2 * 16 * kFragmentPitch * 2 <= kWarpStagingBytes,
              "a warp's staging holds its results' and its row input's slices as halves");
static_assert(16 * kFragmentPitch * 2 == kInputSliceBytes, "a row-input slice's bytes");
__device__ __forceinline__ unsigned short *row_input_slice(float *staging) {
  return reinterpret_cast<unsigned short *>(staging) + 16 * kFragmentPitch;
}

/// stmatrix and ldmatrix x4 on a 16 x 16 block of 16-bit values, rows
/// `pitch` elements apart: lane l gives the address of row l % 8 of matrix
/// l / 8, matrices 0..3 being the block's top-left, bottom-left, top-right
/// and bottom-right 8 x 8. This lane's offset from the block's first.
__device__ __forceinline__ int matrix_lane_offset(int pitch) {
  const int lane = threadIdx.x % 32;
  return ((lane & 7) + 8 * ((lane >> 3) & 1)) * pitch + 8 * (lane >> 4);
}

/// This lane's output rows of a warp's 16-row slice at the 16-byte row
/// copies' four steps (4 rows a step, 8 lanes a row). With kRowsByShuffle,
/// lane l % 16 holds row l % 16's in `laneRow`.
template <typename Operands>
__device__ __forceinline__ void row_copy_rows(const Operands &ops, int tileM, int warpRow,
                                              int laneRow, int (&chunkRows)[4]) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int step = 0; step < 4; ++step)
    chunkRows[step] = Operands::kRowsByShuffle
                          ? __shfl_sync(0xffffffffu, laneRow, 4 * step + lane / 8)
                          : ops.row(tileM, warpRow + 4 * step + lane / 8);
}

/// Slice c (64 columns) of the warp's rows of the row input into
/// `inputSlice` by 16-byte asynchronous copies, committed as one group;
/// rows and columns past the output are zero-filled from an address in
/// range.
template <typename Operands, typename Epilogue>
__device__ __forceinline__ void copy_row_input(const Operands &ops, int N, const Epilogue &epilogue,
                                               unsigned short *inputSlice,
                                               const int (&chunkRows)[4], int blockN, int c) {
  const int lane = threadIdx.x % 32, chunkColumn = 8 * (lane % 8);
  const int n = blockN + c * kStagingCols + chunkColumn;
#pragma unroll
  for (int step = 0; step < 4; ++step) {
    const int m = chunkRows[step];
    cp_async16(inputSlice + (4 * step + lane / 8) * kFragmentPitch + chunkColumn,
               epilogue.row_input_at(ops.clamp_row(m), min(n, N - 8)), ops.stores(m) && n < N);
  }
  cp_async_commit();
}

/// The row input's first slice of a tile (of rows warpRow ..), copied into
/// `inputSlice` before its main loop (Epilogue::kRowInputEarly) so that the
/// epilogue does not start on a round trip to L2: store_fragments is then
/// told it is there.
template <typename Operands, typename Epilogue>
__device__ __forceinline__ void copy_first_row_input(const Operands &ops, int N,
                                                     const Epilogue &epilogue,
                                                     unsigned short *inputSlice, int tileM,
                                                     int blockN, int warpRow) {
  const int lane = threadIdx.x % 32;
  const int laneRow = Operands::kRowsByShuffle ? ops.row(tileM, warpRow + (lane & 15)) : 0;
  int chunkRows[4];
  row_copy_rows(ops, tileM, warpRow, laneRow, chunkRows);
  copy_row_input(ops, N, epilogue, inputSlice, chunkRows, blockN, 0);
}

/// The row input's slices of a tile in the main loop's ring
/// (Epilogue::kRowInputRing): after a tile's k-steps the producer loads
/// slice c (the tile's rows x 64 columns, by TMA with the 128-byte swizzle,
/// the shape of an A tile) into the A half of the stage at ring position
/// `first + c`, as if it were one more k-step. A consumer warp waits on that
/// stage's `full` barrier, reads its 16 rows with ldmatrix and releases the
/// stage like a k-step's: the producer refills it with the next tile's
/// k-steps while the epilogue goes on. In a multicast cluster each block
/// loads its own rows' slices, and a warp releases the stage in every
/// block, as a k-step's: each block's `empty` barrier counts the warps of
/// all of them, whose rings stay in step.
struct RingInput {
  const unsigned char *tilesA;
  unsigned long long *full, *empty;
  int first, stages;
  unsigned stageBytes;
  unsigned clusterBlocks = 1, rank = 0;
  __device__ __forceinline__ int stage(int c) const { return (first + c) % stages; }
  /// Slice c once it has landed.
  __device__ __forceinline__ const unsigned char *wait(int c) const {
    barrier_wait(&full[stage(c)], ((first + c) / stages) & 1);
    return tilesA + stage(c) * stageBytes;
  }
  /// This warp is done with slice c (one lane arrives for the warp).
  __device__ __forceinline__ void release(int c) const {
    __syncwarp();
    if (threadIdx.x % 32 == 0)
      barrier_arrive_every_block(&empty[stage(c)], rank, clusterBlocks);
  }
};

/// ldmatrix's address for this lane of the 16 x 16 block jj of a warp's
/// 16 rows from row warpRow of a 128-byte-swizzled slice (row r's 16-byte
/// chunk q at r * 128 + (q ^ r % 8) * 16).
__device__ __forceinline__ const unsigned char *swizzled_block(const unsigned char *slice,
                                                               int warpRow, int jj) {
  const int lane = threadIdx.x % 32;
  const int r = warpRow + (lane & 7) + 8 * ((lane >> 3) & 1), q = 2 * jj + (lane >> 4);
  return slice + r * 128 + ((q ^ (r & 7)) << 4);
}

/// One warp's share of a tile's epilogue where the epilogue runs on the
/// accumulators where they are (Epilogue::kFragments: one 16-bit result,
/// rows in 16-byte chunks). Each lane computes its own pairs of adjacent
/// columns and rounds each pair into one register, whose layout is then
/// stmatrix's: one instruction puts a 16 x 16 block in shared memory as
/// halves, and each lane stores 16-byte chunks of a row from there. Against
/// store_accumulators, an element costs no fp32 staging round trip (an
/// 8-byte shared store and load a pair) and a store instruction carries 8
/// elements, not 2. A row-varying input (Epilogue::kRowInput: a residual)
/// takes the opposite path through the other half of the warp's staging:
/// 16-byte asynchronous copies by rows, one slice ahead of the math, and
/// ldmatrix back into the accumulators' layout.
/// kPendingInputs: groups of row-input copies committed after this tile's
/// that may still be in flight (the next tile's, copied ahead).
template <int kBN, int kPendingInputs = 0, typename Operands, typename Epilogue,
          typename Accumulators>
__device__ __forceinline__ void store_fragments(const Operands &ops, int N,
                                                const Epilogue &epilogue,
                                                const Accumulators &acc,
                                                float *staging, int tileM, int blockN,
                                                int warpRow, bool firstInputCopied = false,
                                                unsigned short *inputSlice = nullptr,
                                                const RingInput *ring = nullptr) {
  constexpr int kSlices = (kBN + kStagingCols - 1) / kStagingCols;
  static_assert(kPendingInputs == 0 || kSlices == 1,
                "a wider tile copies its further slices here, behind any copied ahead");
  const int lane = threadIdx.x % 32;
  // Accumulator layout of m64nNk16 (see store_accumulators): this lane's
  // rows are the warp's lane / 4 and lane / 4 + 8.
  int laneRow = 0, top, bottom;
  if constexpr (Operands::kRowsByShuffle) {
    laneRow = ops.row(tileM, warpRow + (lane & 15));
    top = __shfl_sync(0xffffffffu, laneRow, lane / 4);
    bottom = __shfl_sync(0xffffffffu, laneRow, lane / 4 + 8);
  } else {
    top = ops.row(tileM, warpRow + lane / 4);
    bottom = ops.row(tileM, warpRow + lane / 4 + 8);
  }
  const int topAt = ops.clamp_row(top), bottomAt = ops.clamp_row(bottom);
  // Row copies go by 16-byte chunks: a step takes 4 rows, 8 lanes (128
  // bytes) a row; these are this lane's rows at steps 0..3.
  int chunkRows[4];
  row_copy_rows(ops, tileM, warpRow, laneRow, chunkRows);
  const int chunkColumn = 8 * (lane % 8);
  constexpr int kPitch = kFragmentPitch;
  unsigned short *slice = reinterpret_cast<unsigned short *>(staging);
  // The row input's slices: the staging's own, or (a first slice copied
  // before the main loop) where the caller put it.
  if (!inputSlice)
    inputSlice = row_input_slice(staging);
  const int blockOffset = matrix_lane_offset(kPitch);
  auto copy_input = [&](int c) {
    if constexpr (Epilogue::kRowInput)
      copy_row_input(ops, N, epilogue, inputSlice, chunkRows, blockN, c);
  };
  if (!firstInputCopied && !ring)
    copy_input(0);
#pragma unroll
  for (int c = 0; c < kSlices; ++c) {
    unsigned inputs[kStagingCols / 16][4] = {};
    if (ring) {
      const unsigned char *ringSlice = ring->wait(c);
#pragma unroll
      for (int jj = 0; jj < kStagingCols / 16; ++jj)
        ldmatrix_x4(inputs[jj], swizzled_block(ringSlice, warpRow, jj));
      ring->release(c);
    } else if constexpr (Epilogue::kRowInput) {
      cp_async_wait<kPendingInputs>();
      __syncwarp();
#pragma unroll
      for (int jj = 0; jj < kStagingCols / 16; ++jj)
        ldmatrix_x4(inputs[jj], inputSlice + blockOffset + 16 * jj);
      __syncwarp();
      if (c + 1 < kSlices)
        copy_input(c + 1);
    }
    unsigned packed[kStagingCols / 16][4];
#pragma unroll
    for (int jj = 0; jj < kStagingCols / 16; ++jj) {
      const auto &chunk = acc[c * (kStagingCols / 16) + jj];
      // Columns past N (a tile's ragged end) are computed at the last pair
      // and never stored: N is a multiple of 8, so a stored chunk is whole.
      const int n = blockN + c * kStagingCols + 16 * jj + 2 * (lane % 4);
      const int left = min(n, N - 2), right = min(n + 8, N - 2);
      packed[jj][0] = epilogue.compute_packed(topAt, left, chunk[0], chunk[1], inputs[jj][0]);
      packed[jj][1] = epilogue.compute_packed(bottomAt, left, chunk[2], chunk[3], inputs[jj][1]);
      packed[jj][2] = epilogue.compute_packed(topAt, right, chunk[4], chunk[5], inputs[jj][2]);
      packed[jj][3] = epilogue.compute_packed(bottomAt, right, chunk[6], chunk[7], inputs[jj][3]);
    }
#pragma unroll
    for (int jj = 0; jj < kStagingCols / 16; ++jj)
      stmatrix_x4(slice + blockOffset + 16 * jj, packed[jj]);
    __syncwarp();
#pragma unroll
    for (int step = 0; step < 4; ++step) {
      const int r = 4 * step + lane / 8, m = chunkRows[step];
      const uint4 chunk = *reinterpret_cast<const uint4 *>(slice + r * kPitch + chunkColumn);
      const int n = blockN + c * kStagingCols + chunkColumn;
      if (ops.stores(m) && n < N)
        epilogue.store_chunk(m, n, chunk);
    }
    __syncwarp();
  }
}

} // namespace kiln::sm90
