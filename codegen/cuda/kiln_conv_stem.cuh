//===- kiln_conv_stem.cuh - convolutions over few input channels ----------===//
//
// A network's stem (3 input channels, K = KH * KW * 3 = 27 or 147): every
// element of an im2col row is a gather of its own, so conv_mma's 16-byte
// loader does not apply and its 32-wide k tiles cost a global round trip a
// tap. conv_stem keeps the whole weight in shared memory and runs mma.sync
// over all of K per tile of 64 output positions, 8 warps of 16 rows x
// Opad / 2 columns, in one of two ways:
//
//   Rows of the input (stem::kRowPatch: no column dilation, SW * C even):
//   a tile is 128 adjacent outputs of one output row, and what it reads is
//   KH input rows of (128 - 1) * SW + KW pixels: the "patch", copied to
//   shared memory once per tile (NCHW or NHWC, zero in the padding). Within
//   one filter row kh, the reduction index r = kw * C + c of output column
//   ow sits at patch offset ow * SW * C + r: A's fragments are 4-byte loads
//   straight from the patch (SW * C even keeps them aligned), the filter
//   row's K padded to 16 with zero weights and A masked to zero there.
//   Each input element is loaded from global memory once per tile instead
//   of once per window that covers it (KH * KW / (SH * SW) times: 12 for
//   ResNet's 7x7 stride-2 stem). Dynamic shared memory (the code generator
//   sizes it with stem::shared_bytes).
//
//   im2col (any other stem): the im2col rows of 64 consecutive output
//   positions gathered into shared memory through per-row and per-k offset
//   tables, K padded to 16 as a whole; static shared memory, at most 48
//   KiB, so several blocks share a multiprocessor.
//
// Both gather the next tile into registers while this tile's math and
// epilogue run, and commit it to shared memory at the next tile.
// Included by kiln_conv.cuh.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace kiln::conv {

namespace stem {
constexpr int kBM = 64, kThreads = 256;

/// The im2col path's sizes: K rounded up to 16, O to 16, and the pitch of
/// the weight and im2col rows in halves (16 bytes past a multiple of 32:
/// conflict-free ldmatrix).
template <typename S> struct Sizes {
  static constexpr int K = Dims<S>::K;
  static constexpr int Kp = (K + 15) / 16 * 16;
  static constexpr int Opad = (S::O + 15) / 16 * 16;
  static constexpr int Pitch = Kp + 8;
};

/// Whether the stem reads whole rows of the input (see the file comment).
template <typename S>
constexpr bool kRowPatch = S::DW == 1 && (S::SW * S::C) % 2 == 0 && S::G == 1;

constexpr int max_of(int a, int b) { return a > b ? a : b; }

/// The row path's sizes, in halves unless named otherwise.
template <typename S> struct RowPatch {
  /// Output columns a tile takes.
  static constexpr int Tile = 128;
  /// A filter row's reduction (kw, c) and the same padded to mma's k.
  static constexpr int RowK = S::KW * S::C;
  static constexpr int RowKp = (RowK + 15) / 16 * 16;
  static constexpr int Kp = S::KH * RowKp;
  static constexpr int Opad = (S::O + 15) / 16 * 16;
  static constexpr int Pitch = Kp + 8;
  /// Between the windows of adjacent output columns.
  static constexpr int Step = S::SW * S::C;
  /// Input columns a tile reads.
  static constexpr int Columns = (Tile - 1) * S::SW + S::KW;
  /// A patch row: the tile's pixels, and as far as the last column's
  /// padded filter row reads (masked), rounded to 16 bytes.
  static constexpr int RowLength = (max_of(Columns * S::C, (Tile - 1) * Step + RowKp) + 7) / 8 * 8;
  static constexpr int PatchHalves = S::KH * RowLength;
  /// The results staged for 16-byte stores: a row of Opad halves a column,
  /// 16 bytes apart from a multiple of 32 (conflict-free in both layouts).
  static constexpr int OutPitch = Opad + 8;
  static constexpr int TilesPerRow = (S::OW + Tile - 1) / Tile;
  static constexpr int Tiles = S::N * S::OH * TilesPerRow;
  /// Warps along the output channels (two where each then has at least 32)
  /// and along the columns, and a warp's 16-row fragments and 8-column
  /// blocks.
  static constexpr int WarpsN = Opad >= 64 ? 2 : 1, WarpsM = kThreads / 32 / WarpsN;
  static constexpr int FragmentsM = Tile / WarpsM / 16, BlocksN = Opad / WarpsN / 8;
};

/// Shared memory a conv_stem block uses (the code generator checks it):
/// the row path's weight, two patches and the staged results (dynamic);
/// the im2col path's weight, im2col tile, offset tables and two tiles' row
/// tables (static).
template <typename S> __host__ __device__ constexpr int shared_bytes() {
  if constexpr (kRowPatch<S>) {
    using P = RowPatch<S>;
    return (P::Opad * P::Pitch + 2 * P::PatchHalves + P::Tile * P::OutPitch) * 2;
  } else {
    using Z = Sizes<S>;
    return (kBM + Z::Opad) * Z::Pitch * 2 + Z::Kp * 8 + kBM * 32;
  }
}

/// The K a tile runs (the selection stage's tile[2]; asserted by the code
/// generator).
template <typename S> __host__ __device__ constexpr int reduction() {
  if constexpr (kRowPatch<S>)
    return RowPatch<S>::Kp;
  else
    return Sizes<S>::Kp;
}

/// A warp's m16n8 accumulators through the epilogue: its rows lane / 4 and
/// lane / 4 + 8 are output positions m[0] and m[1], computed at at[h] (a
/// position in range) and stored where stores[h]; its columns start at
/// column0. Every element's loads before any store.
template <typename S, int NT, typename Epilogue>
__device__ __forceinline__ void store_tile(const float (&acc)[NT][4], const Epilogue &epilogue,
                                           const int (&m)[2], const int (&at)[2],
                                           const bool (&stores)[2], int column0) {
  const int lane = threadIdx.x & 31;
  if constexpr (Epilogue::kPairs) {
    // Columns 2 (lane % 4) and +1 in one 4-byte store (a residual in one
    // load), half the store instructions of one element at a time. A pair
    // in the padding past O is computed at the last pair, not stored.
    typename Epilogue::Values first[NT][2], second[NT][2];
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int o = min(column0 + j * 8 + (lane & 3) * 2, S::O - 2);
        epilogue.compute_pair(at[h], o, acc[j][2 * h], acc[j][2 * h + 1], first[j][h],
                              second[j][h]);
      }
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int o = column0 + j * 8 + (lane & 3) * 2;
        if (stores[h] && o < S::O)
          epilogue.store_pair(m[h], o, first[j][h], second[j][h]);
      }
  } else {
    typename Epilogue::Values values[NT][4];
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int o = min(column0 + j * 8 + (lane & 3) * 2 + (q & 1), S::O - 1);
        values[j][q] = epilogue.compute(at[q / 2], o, acc[j][q]);
      }
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int o = column0 + j * 8 + (lane & 3) * 2 + (q & 1);
        if (stores[q / 2] && o < S::O)
          epilogue.store(m[q / 2], o, values[j][q]);
      }
  }
}

/// The weight [O, KH, KW, C] into Bs[Opad][Pitch] with each filter row's
/// RowK values padded to RowKp (the im2col path: RowK = RowKp = K, one
/// row), zero past O and in the padding.
template <typename T, int O, int Opad, int Pitch, int Rows, int RowK, int RowKp>
__device__ __forceinline__ void load_weight(T (*Bs)[Pitch], const T *__restrict__ w) {
  for (int e = threadIdx.x; e < Opad * Rows * RowKp; e += kThreads) {
    const int o = e / (Rows * RowKp), k = e % (Rows * RowKp);
    const int row = k / RowKp, r = k % RowKp;
    Bs[o][k] = o < O && r < RowK ? w[(o * Rows + row) * RowK + r] : from_float<T>(0.0f);
  }
}
} // namespace stem

/// The row path (stem::kRowPatch; see the file comment): a tile of 128
/// output columns, 8 warps of FragmentsM x 16 rows by BlocksN x 8 columns
/// (32 x 32 at 64 output channels: each A and B fragment read from shared
/// memory serves two products), results through shared memory into
/// 16-byte stores where the epilogue allows (Epilogue::kFragments).
template <typename S, typename T, typename Epilogue>
__device__ __forceinline__ void conv_stem_rows(const T *__restrict__ x, const T *__restrict__ w,
                                               const Epilogue &epilogue) {
  using P = stem::RowPatch<S>;
  constexpr int kThreads = stem::kThreads, kWarps = kThreads / 32;
  constexpr int FM = P::FragmentsM, NT = P::BlocksN;
  static_assert(P::Opad <= 128, "at most 128 output channels");
  static_assert(P::Step % 2 == 0 && P::RowLength % 8 == 0, "4-byte A fragments");
  extern __shared__ __align__(16) unsigned char stemShared[];
  T(*Bs)[P::Pitch] = reinterpret_cast<T(*)[P::Pitch]>(stemShared);
  T *patches = reinterpret_cast<T *>(stemShared) + P::Opad * P::Pitch;
  T *staged = patches + 2 * P::PatchHalves;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int warpM = warp % P::WarpsM, warpN = warp / P::WarpsM;
  stem::load_weight<T, S::O, P::Opad, P::Pitch, S::KH, P::RowK, P::RowKp>(Bs, w);
  // A patch row's tail past the tile's pixels is read only under a mask;
  // zeroed once all the same, so that no read sees uninitialized memory.
  for (int e = tid; e < 2 * P::PatchHalves; e += kThreads)
    patches[e] = from_float<T>(0.0f);
  __syncthreads();

  // The gather: the patch's rows as the input stores them (NCHW: a row of
  // Columns pixels for each (kh, c); NHWC: a row of Columns * C values for
  // each kh). Warp w takes rows w, w + 8, ..., its lanes 32 adjacent values
  // of a row at a time, so the only arithmetic per value is its bounds test
  // and address; each into a register of its own, zero in the padding, and
  // committed to the patch at (kh, column * C + c) at the next tile.
  constexpr int kSourceRows = S::kNchw ? S::KH * S::C : S::KH;
  constexpr int kSourceLength = S::kNchw ? P::Columns : P::Columns * S::C;
  constexpr int kSourceWidth = S::kNchw ? S::W : S::W * S::C;
  constexpr int kRowsPerWarp = (kSourceRows + kWarps - 1) / kWarps;
  constexpr int kChunks = (kSourceLength + 31) / 32;
  unsigned short gathered[kRowsPerWarp][kChunks];
  auto gather = [&](int tile) {
    const int outputRow = tile / P::TilesPerRow; // n * OH + oh
    const int n = outputRow / S::OH, oh = outputRow % S::OH;
    const int iw0 = (tile % P::TilesPerRow) * P::Tile * S::SW - S::PL;
    const int ih0 = oh * S::SH - S::PT;
#pragma unroll
    for (int q = 0; q < kRowsPerWarp; ++q) {
      const int row = warp + kWarps * q;
      const int kh = S::kNchw ? row / S::C : row, c = S::kNchw ? row % S::C : 0;
      const int ih = ih0 + kh * S::DH;
      const bool rowInside = row < kSourceRows && (unsigned)ih < (unsigned)S::H;
      // The row's first value (in the padding where iw0 < 0).
      const int first = S::kNchw ? ((n * S::C + c) * S::H + ih) * S::W + iw0
                                 : ((n * S::H + ih) * S::W + iw0) * S::C;
      const int start = (S::kNchw ? iw0 : iw0 * S::C) + lane;
#pragma unroll
      for (int j = 0; j < kChunks; ++j) {
        gathered[q][j] = 0;
        if (rowInside && lane + 32 * j < kSourceLength &&
            (unsigned)(start + 32 * j) < (unsigned)kSourceWidth)
          gathered[q][j] =
              *reinterpret_cast<const unsigned short *>(x + (first + lane + 32 * j));
      }
    }
  };
  auto commit = [&](int buffer) {
    unsigned short *to = reinterpret_cast<unsigned short *>(patches + buffer * P::PatchHalves);
#pragma unroll
    for (int q = 0; q < kRowsPerWarp; ++q) {
      const int row = warp + kWarps * q;
      if (row >= kSourceRows)
        break;
      const int kh = S::kNchw ? row / S::C : row, c = S::kNchw ? row % S::C : 0;
      unsigned short *rowAt = to + kh * P::RowLength + c + lane * (S::kNchw ? S::C : 1);
#pragma unroll
      for (int j = 0; j < kChunks; ++j)
        if (lane + 32 * j < kSourceLength)
          rowAt[32 * j * (S::kNchw ? S::C : 1)] = gathered[q][j];
    }
  };

  // A fragments of m16n8k16: this lane's rows (output columns) lane / 4 and
  // +8 of each fragment, reduction pairs 2 (lane % 4) and +8. In a filter
  // row's last k step, pairs at or past RowK are masked to zero: their
  // weights are zero, but the patch there holds the next pixel, which may
  // not be finite.
  const int g = lane >> 2, t = lane & 3;
  constexpr int kSteps = P::RowKp / 16;
  auto mask_of = [](int k) {
    return k + 1 < P::RowK ? 0xffffffffu : k < P::RowK ? 0x0000ffffu : 0u;
  };
  const unsigned maskLow = mask_of((kSteps - 1) * 16 + 2 * t);
  const unsigned maskHigh = mask_of((kSteps - 1) * 16 + 2 * t + 8);
  const int warpRow = warpM * FM * 16, warpColumn = warpN * NT * 8;
  const int aOffset = (warpRow + g) * P::Step + 2 * t;

  if (blockIdx.x < P::Tiles)
    gather(blockIdx.x);
  for (int tile = blockIdx.x, buffer = 0; tile < P::Tiles; tile += gridDim.x, buffer ^= 1) {
    // The buffer's last reader was the tile before the previous one, and
    // every thread passed the previous tile's barrier after it (and after
    // its reads of the staged results).
    commit(buffer);
    __syncthreads();
    if (tile + gridDim.x < P::Tiles)
      gather(tile + gridDim.x);

    float acc[FM][NT][4];
#pragma unroll
    for (int f = 0; f < FM; ++f)
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q)
          acc[f][j][q] = 0.0f;
    const T *rows = patches + buffer * P::PatchHalves + aOffset;
#pragma unroll
    for (int kh = 0; kh < S::KH; ++kh)
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        unsigned a[FM][4];
#pragma unroll
        for (int f = 0; f < FM; ++f) {
          const T *at = rows + (16 * f) * P::Step + kh * P::RowLength + s * 16;
          a[f][0] = *reinterpret_cast<const unsigned *>(at);
          a[f][1] = *reinterpret_cast<const unsigned *>(at + 8 * P::Step);
          a[f][2] = *reinterpret_cast<const unsigned *>(at + 8);
          a[f][3] = *reinterpret_cast<const unsigned *>(at + 8 * P::Step + 8);
          if (s == kSteps - 1 && P::RowK % 16 != 0) {
            a[f][0] &= maskLow;
            a[f][1] &= maskLow;
            a[f][2] &= maskHigh;
            a[f][3] &= maskHigh;
          }
        }
        const int kk = kh * P::RowKp + s * 16;
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          unsigned b[2];
          ldmatrix_x2(b, &Bs[warpColumn + j * 8 + (lane & 7)][kk + ((lane >> 3) & 1) * 8]);
#pragma unroll
          for (int f = 0; f < FM; ++f)
            MmaName<T>::mma(acc[f][j], a[f], b);
        }
      }

    const int outputRow = tile / P::TilesPerRow;
    const int ow0 = (tile % P::TilesPerRow) * P::Tile;
    // Output column ow of this tile's row, and one in range to compute at.
    auto position = [&](int ow) { return outputRow * S::OW + ow; };
    auto in_range = [&](int ow) { return outputRow * S::OW + min(ow, S::OW - 1); };
    if constexpr (Epilogue::kFragments) {
      // Each pair rounded into one register and staged as a row of
      // halves per output column; then the block stores whole rows, 16
      // bytes a lane. A row input (a residual) is read as the pair it
      // adds to.
#pragma unroll
      for (int f = 0; f < FM; ++f)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = warpRow + 16 * f + g + 8 * h, at = in_range(ow0 + r);
#pragma unroll
          for (int j = 0; j < NT; ++j) {
            const int o = min(warpColumn + j * 8 + 2 * t, S::O - 2);
            unsigned input = 0;
            if constexpr (Epilogue::kRowInput)
              input = *reinterpret_cast<const unsigned *>(epilogue.row_input_at(at, o));
            *reinterpret_cast<unsigned *>(staged + r * P::OutPitch + warpColumn + j * 8 +
                                          2 * t) =
                epilogue.compute_packed(at, o, acc[f][j][2 * h], acc[f][j][2 * h + 1], input);
          }
        }
      __syncthreads();
      constexpr int kRowChunks = P::Opad / 8;
#pragma unroll
      for (int e = tid; e < P::Tile * kRowChunks; e += kThreads) {
        const int r = e / kRowChunks, o = (e % kRowChunks) * 8;
        if (ow0 + r < S::OW && o < S::O)
          epilogue.store_chunk(position(ow0 + r), o,
                               *reinterpret_cast<const uint4 *>(staged + r * P::OutPitch + o));
      }
    } else {
#pragma unroll
      for (int f = 0; f < FM; ++f) {
        int m[2], at[2];
        bool stores[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int ow = ow0 + warpRow + 16 * f + g + 8 * h;
          m[h] = position(ow);
          at[h] = in_range(ow);
          stores[h] = ow < S::OW;
        }
        stem::store_tile<S>(acc[f], epilogue, m, at, stores, warpColumn);
      }
    }
  }
}

/// The im2col path (any stem the row path does not take).
template <typename S, typename T, typename Epilogue>
__device__ __forceinline__ void conv_stem_im2col(const T *__restrict__ x,
                                                 const T *__restrict__ w,
                                                 const Epilogue &epilogue) {
  using D = Dims<S>;
  using Z = stem::Sizes<S>;
  constexpr int kBM = stem::kBM, Kp = Z::Kp, Pitch = Z::Pitch, NT = Z::Opad / 16;
  static_assert(S::G == 1, "one group");
  static_assert(Z::Opad <= 128, "at most 128 output channels");
  static_assert(stem::shared_bytes<S>() <= 48 * 1024, "static shared memory");
  __shared__ __align__(16) T As[kBM][Pitch];
  __shared__ __align__(16) T Bs[Z::Opad][Pitch];
  // Per k: the input offset of tap (kh, kw) and channel c from the window's
  // corner, and (kh * DH, kw * DW) for the bounds check; k past K never
  // passes it.
  __shared__ int kOffset[Kp], kStep[Kp];
  // Per row of the tile being gathered and the one computed: the window's
  // corner and its offset (past M: never in bounds).
  __shared__ int4 rows[2][kBM];

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int warpM = warp & 3, warpN = warp >> 2;
  for (int k = tid; k < Kp; k += stem::kThreads) {
    const int c = k % S::C, khw = k / S::C;
    const int dh = (khw / S::KW) * S::DH, dw = (khw % S::KW) * S::DW;
    kOffset[k] = S::kNchw ? (c * S::H + dh) * S::W + dw : (dh * S::W + dw) * S::C + c;
    kStep[k] = k < D::K ? (dh | (dw << 16)) : 0x40004000;
  }
  stem::load_weight<T, S::O, Z::Opad, Pitch, 1, D::K, Kp>(Bs, w);

  constexpr int tiles = (D::M + kBM - 1) / kBM;
  // Two consecutive k per element of the gather: one 4-byte store.
  constexpr int kPairs = kBM * Kp / 2;
  constexpr int kPerThread = (kPairs + stem::kThreads - 1) / stem::kThreads;
  auto fill_rows = [&](int tile, int buffer) {
    if (tid < kBM && tile < tiles) {
      const int m = tile * kBM + tid;
      if (m < D::M) {
        const Window win = window_of<S>(m);
        rows[buffer][tid] = make_int4(
            win.ih, win.iw,
            S::kNchw ? (win.n * S::C * S::H + win.ih) * S::W + win.iw
                     : ((win.n * S::H + win.ih) * S::W + win.iw) * S::C,
            0);
      } else {
        rows[buffer][tid] = make_int4(-0x8000, 0, 0, 0);
      }
    }
  };
  // The next tile's im2col rows are gathered into registers while this
  // tile's math and epilogue run, so their loads' latency hides behind it.
  // Consecutive lanes take consecutive rows (output positions) of one k
  // pair: their loads are neighbouring pixels of one channel and tap, a
  // few sectors a warp, where lanes along k read a channel (NCHW) or a tap
  // apart each, a sector a lane.
  static_assert(kBM % 32 == 0, "a warp's lanes on rows of one k pair");
  // Each element is loaded into a register of its own, zeroed first and
  // overwritten by a predicated load, and packed into pairs only at commit:
  // packing at the gather made every thread wait for its loads there,
  // before this tile's math, and the latency the prefetch was to hide was
  // paid in full.
  unsigned short staged[kPerThread][2];
  auto gather = [&](int buffer) {
#pragma unroll
    for (int p = 0; p < kPerThread; ++p) {
      const int e = tid + p * stem::kThreads;
      if (kPairs % stem::kThreads != 0 && e >= kPairs)
        break;
      const int r = e % kBM, k = (e / kBM) * 2;
      const int4 row = rows[buffer][r];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int step = kStep[k + i];
        const bool inside = (unsigned)(row.x + (step & 0xffff)) < (unsigned)S::H &&
                            (unsigned)(row.y + (step >> 16)) < (unsigned)S::W;
        staged[p][i] = 0;
        if (inside)
          staged[p][i] = *reinterpret_cast<const unsigned short *>(x + row.z + kOffset[k + i]);
      }
    }
  };
  auto commit = [&]() {
#pragma unroll
    for (int p = 0; p < kPerThread; ++p) {
      const int e = tid + p * stem::kThreads;
      if (kPairs % stem::kThreads != 0 && e >= kPairs)
        break;
      *reinterpret_cast<unsigned *>(&As[e % kBM][(e / kBM) * 2]) =
          unsigned(staged[p][0]) | (unsigned(staged[p][1]) << 16);
    }
  };

  fill_rows(blockIdx.x, 0);
  __syncthreads(); // the tables and the first rows
  if (blockIdx.x < tiles)
    gather(0);
  for (int tile = blockIdx.x, buffer = 0; tile < tiles; tile += gridDim.x, buffer ^= 1) {
    const int m0 = tile * kBM;
    __syncthreads(); // the previous tile's ldmatrix reads are done
    commit();
    fill_rows(tile + gridDim.x, buffer ^ 1);
    __syncthreads();
    if (tile + gridDim.x < tiles)
      gather(buffer ^ 1);

    float acc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q)
        acc[j][q] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < Kp; kk += 16) {
      unsigned a[4];
      ldmatrix_x4(a, &As[warpM * 16 + (lane & 15)][kk + (lane >> 4) * 8]);
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        unsigned b[2];
        ldmatrix_x2(b, &Bs[warpN * (NT * 8) + j * 8 + (lane & 7)][kk + ((lane >> 3) & 1) * 8]);
        MmaName<T>::mma(acc[j], a, b);
      }
    }
    // m16n8 accumulators: row lane / 4 (+8 for q >= 2).
    int m[2], at[2];
    bool stores[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      m[h] = m0 + warpM * 16 + (lane >> 2) + 8 * h;
      at[h] = min(m[h], D::M - 1);
      stores[h] = m[h] < D::M;
    }
    stem::store_tile<S>(acc, epilogue, m, at, stores, warpN * (NT * 8));
  }
}

template <typename S, typename T, typename Epilogue>
__device__ __forceinline__ void conv_stem(const T *__restrict__ x, const T *__restrict__ w,
                                          const Epilogue &epilogue) {
  if constexpr (stem::kRowPatch<S>)
    conv_stem_rows<S>(x, w, epilogue);
  else
    conv_stem_im2col<S>(x, w, epilogue);
}

} // namespace kiln::conv
