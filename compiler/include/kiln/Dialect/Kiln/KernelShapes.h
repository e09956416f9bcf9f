//===- KernelShapes.h - the problem a fusion group poses --------*- C++ -*-===//
//
// The sizes kernel selection decides on and the code generator emits for,
// read once from a group's anchor op: kiln-select-kernels and the emitters
// agree on them by construction.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_KERNELSHAPES_H
#define KILN_DIALECT_KILN_KERNELSHAPES_H

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Dialect/Kiln/StridedView.h"

#include <algorithm>
#include <optional>

namespace kiln {

/// C[M, N] = A[M, K] B, `batch` times: B is [N, K] (`kMajorB`, nn.Linear
/// and 1x1 convolutions) or [K, N] (matmul), broadcast over the batch.
/// `batchA` and `batchB` are the batch elements of each operand's own
/// (broadcast) batch dimensions: 1 (shared by every batch), `batch` (one
/// matrix each), or between (broadcast along some dimensions). A matmul
/// whose B has no batch is one GEMM over all of A's rows (batch 1).
struct GemmShape {
  mlir::Operation *anchor = nullptr;
  int64_t M = 0, N = 0, K = 0, batch = 1;
  int64_t batchA = 1, batchB = 1;
  bool kMajorB = true;
  mlir::Type element;

  /// Each operand one matrix a batch or one for all: a batch that 3-D
  /// tensor maps walk (the Hopper GEMM's).
  bool wholeBatches() const { return wholeBatchesOf(batch, batchA, batchB); }
  static bool wholeBatchesOf(int64_t batch, int64_t batchA, int64_t batchB) {
    return (batchA == 1 || batchA == batch) && (batchB == 1 || batchB == batch);
  }
};

/// One part of a convolution input that is a channel concat: `source`
/// read in place, every `strideH`-th row and `strideW`-th column (through
/// `slice`, a kiln.slice from its origin, where not 1).
struct ConvInputPart {
  mlir::Value source;
  SliceOp slice;
  int64_t strideH = 1, strideW = 1, channels = 0;
};

/// The parts of a 1x1, unpadded, unstrided, one-group convolution's input
/// when that input is a kiln.concat along channels of NHWC tensors, each
/// whole or a slice from the origin with strides only along rows and
/// columns (a strided 1x1 convolution's reads); nullopt otherwise. A
/// bottleneck's projection shortcut merged into its last convolution
/// (kiln-merge-shortcut-conv) reads its two inputs this way.
std::optional<llvm::SmallVector<ConvInputPart, 2>> channelConcatParts(Conv2dOp conv);

/// Whether `conv` is a plain GEMM over its pixels: 1x1, stride 1, unpadded,
/// ungrouped, on an NHWC input that is neither a permute nor a channel
/// concat read in place.
bool isPlainGemmConv(Conv2dOp conv);

/// An NHWC convolution as an implicit GEMM per group: M output pixels,
/// `outChannels / groups` columns, `reduction` = kh * kw * Cin / groups.
struct ConvShape {
  Conv2dOp conv;
  int64_t M = 0, outChannels = 0, groups = 1, inChannelsPerGroup = 0, reduction = 0;
  bool depthwise = false;
  /// The input is the NHWC permute of an NCHW group input (read through it).
  bool layoutChange = false;
  /// 1x1, stride 1, unpadded, ungrouped on an NHWC input: a plain GEMM.
  bool plainGemm = false;
  /// The input is a channel concat of group inputs (channelConcatParts),
  /// each read in place; empty for any other input.
  llvm::SmallVector<ConvInputPart, 2> parts;
  mlir::Type element;
};

/// A global average pool that ends a conv_epilogue group: the mean over H
/// and W of a value in the convolution's [N, H, W, C] shape, yielded as the
/// group's one result. The kernel sums each image's `pixels` rows by
/// column and stores the means ([N, 1, 1, C], or [N, C] without keepdim).
struct GlobalPool {
  ReduceMeanOp mean;
  int64_t images = 0, pixels = 0;
};
/// Whole images of `pixels` rows a pooled GEMM's 128-row tile holds (0: an
/// image is longer than a tile).
constexpr int64_t poolImagesPerTile(int64_t pixels) {
  return pixels > 0 && pixels <= 128 ? 128 / pixels : 0;
}
/// Whether `mean` is such a pool of a value computed in `group` (the
/// FusionOp verifier's rule); nullopt otherwise.
std::optional<GlobalPool> globalPoolOf(ReduceMeanOp mean);
/// The global pool a conv_epilogue group ends in; nullopt for any other.
std::optional<GlobalPool> globalPoolOf(FusionOp group);

/// An attention group: q, k and v as strided views of group inputs that
/// keep the head dimension contiguous (nullopt where one is not).
struct AttentionShape {
  AttentionOp attention;
  std::optional<StridedView> q, k, v;
  mlir::Type element;
  /// Every q, k and v row starts 16-byte aligned (cp.async's chunks).
  bool rowsChunkAligned = false;
};

/// Whether attention_wgmma's overlapped schedule spills on `attention`:
/// with a float mask that varies by query and by key (a position bias as
/// T5's or Swin's, a float causal mask), where each score loads a mask value
/// of its own. At a head size of 64 (three blocks a multiprocessor, 128
/// registers) 8 to 24 bytes spilled at S = 128 and 197; at 128 (two blocks,
/// 168 registers) 8 bytes wherever the key count is a multiple of 64 and
/// the mask is not causal, fp16 and bf16 alike (NVRTC 13.0; S = 197 and
/// causal ones fit, but the rule does not chase ptxas' allocation case by
/// case). Boolean masks and masks broadcast over the queries (a padding
/// mask) fit at both head sizes.
bool overlappedAttentionSpills(AttentionOp attention);

/// attention_wgmma's blocks a multiprocessor in its sm_90a image, which its
/// launch bounds ask for and a persistent grid is sized to: three at a
/// head size of 64 (41 KiB each), two at 128 (81 KiB), one with two
/// consumer warpgroups (`queries` 128: 288 threads, where two blocks would
/// leave 113 registers a thread); `configured` (the configuration's
/// blocks_per_sm) where it asks for more: four at 64 with the cooperative
/// schedule (96 registers a thread).
constexpr int64_t attentionWgmmaBlocksPerSM(int64_t queries, int64_t headSize,
                                            int64_t configured = 1) {
  return configured > 1 ? configured : queries == 128 ? 1 : headSize == 64 ? 3 : 2;
}

/// A q, k or v view read as rows of its root seen as a [rows, rowStride]
/// matrix (a TMA tensor map of the projection output as it lies): the
/// head dimension contiguous, rows rowStride elements apart, and every
/// (batch, head)'s columns inside one row, so that its element offset o
/// is at row o / rowStride, column o % rowStride.
struct MatrixRows {
  int64_t rows = 0, rowStride = 0;
};
std::optional<MatrixRows> matrixRowsOf(const StridedView &view);

/// A normalization group's anchor (layer_norm or softmax) as rows of
/// `rowLength` elements, each normalized on its own.
struct NormalizationShape {
  mlir::Operation *anchor = nullptr;
  int64_t rows = 0, rowLength = 0;
};

/// A reduction group's input `[outer, length, inner]` reduced over its
/// middle run (squeeze-and-excitation's mean over H and W keeps C inner),
/// where kiln_reduce.cuh applies: the reduction reads a group input
/// itself, the reduced dimensions are one run with kept ones after it, and
/// `inner` is a whole number of 16-byte vectors of `vector` elements, at
/// most 256 of them.
struct MiddleReductionShape {
  int64_t outer = 1, length = 1, inner = 1, vector = 1;
};

/// The Hopper GEMM's (gemm_wgmma) dynamic shared memory for `rows` x
/// `tileN` x 64 tiles in a ring of `stages`: the stages (A rows * 128
/// bytes, B tileN * 128), 4.5 KiB of epilogue staging a consumer warp (36
/// KiB for 128 rows), with `handoff` (the epilogue warpgroups' schedule) a
/// tile of fp32 accumulators, and 1 KiB of alignment. The code generator
/// asserts it against kiln::sm90::shared_bytes in the kernel's source; the
/// selection stage sizes the ring with it.
/// `prefetchInputs`: two more slices a consumer warp, the next tile's
/// (kiln::sm90::input_slices_per_warp). `splitK` > 1: the peer's partial
/// sums of 64 rows (kiln::sm90::split_partial_bytes). `halfStaging`: the
/// staging's results half alone (kiln::sm90::staging_bytes), where the
/// row input comes through the ring.
constexpr int64_t wgmmaSharedBytes(int64_t tileN, int64_t stages, bool handoff = false,
                                   int64_t rows = 128, bool secondInputs = false,
                                   bool prefetchInputs = false, int64_t splitK = 1,
                                   bool halfStaging = false) {
  const int64_t staging = rows / 16 * 16 * 72 * (halfStaging ? 2 : 4);
  return stages * (rows * 64 * 2 + tileN * 64 * 2) + staging +
         (handoff ? 128 * tileN * 4 : 0) +
         (secondInputs ? rows / 16 * 16 * 72 * 2 * (prefetchInputs ? 3 : 1) : 0) +
         (splitK > 1 ? 64 * tileN * 4 : 0) + 1024;
}
/// The Hopper GEMM's one tile width under 64 (kiln_gemm_sm90.cuh's
/// kNarrowBN, wgmma m64n56k16): 128 x 56 tiles fill a wave where 64-wide
/// ones leave multiprocessors idle.
constexpr int64_t kWgmmaNarrowWidth = 56;
/// Whether a Hopper GEMM's ping-pong warps copy both row halves' first
/// row-input slices before the main loop, the second into 2304 bytes a
/// consumer warp past the staging (kiln::sm90::second_input_slices; a
/// convolution's kernel never does, but its selection may count them).
constexpr bool wgmmaSecondInputSlices(bool pingpong, int64_t tileN, int64_t rows,
                                      int64_t blocksPerSM) {
  return pingpong && tileN == 64 && rows == 128 && blocksPerSM == 1;
}
/// An epilogue that copies an input of every output element (a residual)
/// by rows: beside 128 accumulators a thread (a 256-wide cooperative
/// Hopper tile), ptxas issues those loads one at a time, each a round trip
/// to memory (ResNet-50's 1x1 + residual at 56 x 56: 7x cuDNN's time); with
/// 96 or fewer it keeps a slice's 16 loads in flight together. Through the
/// ring (TMA into shared memory) the limit does not apply.
constexpr int64_t kResidualMaxAccumulators = 96;
constexpr int64_t wgmmaAccumulators(bool pingpong, int64_t tileN) {
  return pingpong ? tileN : tileN / 2;
}
/// conv_stem's paths (kiln_conv_stem.cuh): a tile of 128 adjacent outputs
/// of one output row reads KH rows of the input once ("rows") where no
/// column dilation and SW * C even keep A's 4-byte fragments aligned in
/// them; any other stem gathers im2col rows of 64 consecutive output
/// positions.
constexpr int64_t kStemRows = 64, kStemRowTile = 128;
/// The most static shared memory a block may declare.
constexpr int64_t kStaticSharedBytes = 48 * 1024;
/// The most dynamic shared memory a block of any target kiln knows may take
/// (sm_90's 227 KiB; the selection stage asks its target, the code
/// generator, which serves every image, this bound).
constexpr int64_t kMaxDynamicSharedBytes = 227 * 1024;
struct StemGeometry {
  int64_t batch = 0, outH = 0, outW = 0, KH = 0, KW = 0, C = 0, SW = 1, DW = 1, O = 0;
  constexpr bool rows() const { return DW == 1 && (SW * C) % 2 == 0; }
  /// Output positions a tile takes.
  constexpr int64_t tileRows() const { return rows() ? kStemRowTile : kStemRows; }
  /// A filter row's reduction (rows: padded to 16 each).
  constexpr int64_t rowReduction() const { return (KW * C + 15) / 16 * 16; }
  /// The K a tile runs: KH padded filter rows, or K rounded up to 16.
  constexpr int64_t reduction() const {
    return rows() ? KH * rowReduction() : (KH * KW * C + 15) / 16 * 16;
  }
  constexpr int64_t tiles() const {
    return rows() ? batch * outH * ((outW + kStemRowTile - 1) / kStemRowTile)
                  : (batch * outH * outW + kStemRows - 1) / kStemRows;
  }
  /// Shared memory (asserted against kiln::conv::stem::shared_bytes in the
  /// kernel's source): the weight at a pitch of the reduction plus 8; then
  /// (rows, dynamic) two input patches of KH rows and the results of a tile
  /// as halves at a pitch of O rounded to 16 plus 8, or (im2col, static)
  /// the im2col tile, its offset tables and two tiles' row tables.
  constexpr int64_t sharedBytes() const {
    const int64_t oPadded = (O + 15) / 16 * 16, pitch = reduction() + 8;
    if (rows()) {
      const int64_t columns = (kStemRowTile - 1) * SW + KW;
      const int64_t reach = (kStemRowTile - 1) * SW * C + rowReduction();
      const int64_t rowLength = (std::max(columns * C, reach) + 7) / 8 * 8;
      return (oPadded * pitch + 2 * KH * rowLength + kStemRowTile * (oPadded + 8)) * 2;
    }
    return (kStemRows + oPadded) * pitch * 2 + reduction() * 8 + kStemRows * 32;
  }
  /// Whether the path's shared memory fits: dynamic up to what a block
  /// may take (rows), static up to 48 KiB (im2col).
  constexpr bool fits(int64_t maxDynamicBytes) const {
    return sharedBytes() <= (rows() ? maxDynamicBytes : kStaticSharedBytes);
  }
  /// Blocks a multiprocessor should run at once (the launch bounds'
  /// minimum; the selection stage bounds the rows path's by its target's
  /// shared memory): rows, four up to 32 output channels (a tile's math is
  /// short, and other blocks' hide its gather's latency; 64 registers a
  /// thread), two up to 64, one past that (96 outputs spilled at two);
  /// im2col, two up to 64 output channels (past that the accumulators need
  /// more than half the registers). Where ptxas spills all the same, the
  /// retry halves the rows path's.
  constexpr int64_t blocksPerSM() const {
    return rows() ? (O <= 32 ? 4 : O <= 64 ? 2 : 1) : (O <= 64 ? 2 : 1);
  }
};
/// The geometry of a conv_stem candidate (one group).
StemGeometry stemGeometryOf(const ConvShape &shape);

/// The channels a grid row of the vectorized conv_depthwise takes
/// (kiln::conv::depthwise::slice): at most 128, split evenly in 8-channel
/// groups over as few slices as that takes.
constexpr int64_t depthwiseSlice(int64_t channels) {
  const int64_t slices = (channels + 127) / 128;
  return ((channels + slices - 1) / slices + 7) / 8 * 8;
}
/// The static shared memory of conv_depthwise over `rows` x `columns`
/// patches of outputs (kiln::conv::depthwise::patch_shared_bytes): a slice's
/// filters and the patch's input window, 2-byte elements.
int64_t depthwisePatchSharedBytes(const ConvShape &shape, int64_t rows, int64_t columns);

/// gemm_stream (kiln_gemm_stream.cuh, whose kiln::stream::shared_bytes this
/// mirrors): 128-row tiles, the weight and `stages` tiles of A (and of the
/// row input, where staged) in dynamic shared memory, chunks of 64 columns.
constexpr int64_t kStreamRows = 128, kStreamChunk = 64, kStreamMaxStages = 4;
constexpr int64_t streamPitch(int64_t v) { return (v + 15) / 16 * 16 + 8; }
constexpr int64_t streamSharedBytes(int64_t N, int64_t K, int64_t stages, bool rowInput) {
  const int64_t paddedN = (N + 15) / 16 * 16;
  const int64_t width = paddedN < kStreamChunk ? paddedN : kStreamChunk;
  return (paddedN * streamPitch(K) +
          stages * kStreamRows * (streamPitch(K) + (rowInput ? streamPitch(N) : 0)) +
          2 * kStreamRows * streamPitch(width)) *
         2;
}
/// gemm_wgmma_swap (kiln_gemm_swap_sm90.cuh, whose kiln::swap::shared_bytes
/// this mirrors): a stage holds a 64 x 64 weight tile and a `tokens` x 64
/// token tile, the staging a row of 68 floats a token, and 1 KiB aligns
/// the stages.
constexpr int64_t kSwapWeightRows = 64;
/// Its threads: two consumer warpgroups and a producer warp.
constexpr int64_t kSwapThreads = 2 * 128 + 32;
/// Its token tiles (wgmma's N): 16 and 32 for a few tokens against a long
/// weight, 64 to 128 for GEMMs of many rows that would split K over
/// mma.sync (kiln::sm90::SwapWgmma's widths).
constexpr bool swapTokensSupported(int64_t tokens) {
  return tokens == 16 || tokens == 32 || tokens == 64 || tokens == 96 || tokens == 112 ||
         tokens == 128;
}
constexpr int64_t swapSharedBytes(int64_t tokens, int64_t stages) {
  return stages * (kSwapWeightRows + tokens) * 64 * 2 + tokens * (kSwapWeightRows + 4) * 4 +
         1024;
}
/// The longest row normalization_warp holds: 32 registers a lane.
constexpr int64_t kWarpRowMaxLength = 1024;

/// The GEMM of a gemm_epilogue group, or of a conv_epilogue group whose
/// convolution is a plain GEMM; nullopt for any other group.
std::optional<GemmShape> gemmShapeOf(FusionOp group);
/// The convolution of a conv_epilogue group; nullopt for any other group.
std::optional<ConvShape> convShapeOf(FusionOp group);
/// The rows of a normalization group; nullopt for any other group.
std::optional<NormalizationShape> normalizationShapeOf(FusionOp group);
/// The middle run of a reduction group, where kiln_reduce.cuh applies;
/// nullopt otherwise.
std::optional<MiddleReductionShape> middleReductionShapeOf(FusionOp group);
/// The attention of an attention group; nullopt for any other group.
std::optional<AttentionShape> attentionShapeOf(FusionOp group);

} // namespace kiln

#endif // KILN_DIALECT_KILN_KERNELSHAPES_H
