//===- Emitters.h - the kernel emitters behind emitKernel -------*- C++ -*-===//
//
// Internal to codegen/lib: the helpers every emitter shares (kernel
// signature, header, rounding) and one entry per kernel family, defined in
// CudaEmitter.cpp (elementwise, GEMM, normalization), ConvEmitter.cpp
// (convolution, pooling), ReductionEmitter.cpp and AttentionEmitter.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_EMITTERS_H
#define KILN_CODEGEN_EMITTERS_H

#include "ElementCode.h"
#include "kiln/codegen/CudaEmitter.h"
#include "kiln_stream_k.cuh"

#include "mlir/IR/Value.h"
#include "llvm/ADT/SetVector.h"

#include <optional>
#include <string>

namespace kiln::codegen::detail {

constexpr unsigned kThreads = 256;

/// The group's `kiln.kernel` (emitKernel has checked that it is there and
/// names a variant of the group's family).
KernelConfigAttr configOf(FusionOp group);
/// A grid-stride launch of `work` items, `perBlock` to a block: enough
/// blocks for all of it, at most the configuration's grid_limit.
unsigned gridStrideBlocks(FusionOp group, int64_t work, int64_t perBlock);

/// `  for (long long VAR = ...; VAR < COUNT; VAR += ...) {`: the grid-stride
/// loop over `count` items of blocks of kThreads (the caller closes it).
std::string gridStrideLoop(const std::string &var, int64_t count);

/// The kernel's opening: `extern "C" __global__ void name(maps..., const T
/// *in0, ..., T *out0, ...) {` and the wait for the kernel before it (the
/// programmatic-dependent-launch wait every kernel starts with). The body
/// follows; the caller closes the brace. `minBlocks` (one implied by tensor
/// maps, or 2 for a Hopper main loop: wgmmaBlocksPreamble) adds a minimum
/// of blocks per multiprocessor to the launch bounds:
/// with one, ptxas may use every register rather than spill to keep
/// occupancy; with more, it budgets registers for that many. `splitCluster` puts KILN_SPLIT_CLUSTER (splitClusterPreamble)
/// in front of the launch bounds. `workspace` adds the last parameter,
/// `float *workspace` (EmittedKernel::workspaceBytes). `threadsText`, where
/// given, is the launch bounds' thread count in place of `threads` (a macro
/// whose value differs between images). `integers` name the `long long`
/// parameters that follow (EmittedKernel::scalars).
std::string kernelOpen(FusionOp group, llvm::StringRef name, unsigned threads,
                       unsigned tensorMaps = 0, unsigned minBlocks = 0,
                       bool splitCluster = false, bool workspace = false,
                       llvm::StringRef threadsText = {},
                       llvm::ArrayRef<std::string> integers = {});
/// The comment naming the group's location and the common include. Without
/// `withLocation`, the comment names none: a kernel whose sizes are given
/// at launch is then the same text for every group of its configuration
/// and epilogue, in any model, and so one kernel-cache entry.
std::string header(FusionOp group, llvm::StringRef family, bool withLocation = true);
/// A kernel of fusion kind `kind` for `group`, named `name`, its parameter
/// counts taken from the group; the emitter fills in the launch and source.
EmittedKernel kernelFor(FusionOp group, llvm::StringRef name, llvm::StringRef kind);
YieldOp yieldOf(FusionOp group);
int64_t elementCount(mlir::Type type);
/// `value` (a float expression) rounded through `element` when it is
/// narrower than fp32: an op's result as it would be read back from memory.
std::string roundedTo(mlir::Type element, const std::string &value);
/// The ops of the group body that `anchor` depends on: its prologue.
llvm::SetVector<mlir::Operation *> prologueOf(mlir::Operation *anchor);

/// The split-K pipeline (kiln_gemm_splitk.cuh) of a gemm_split_k or
/// conv_split_k configuration, or nullopt where the template cannot run it
/// (it takes 64 x 64 tiles, a k tile that is a multiple of 16 and 2 or more
/// stages): k-tile width and depth, the template arguments
/// that follow the split (", kBK, kStages"), and the dynamic shared memory
/// its launch needs (kiln::splitk_shared_bytes, asserted in the source).
struct SplitKPipeline {
  int64_t kTile, stages;
  std::string templateArgs() const;
  int64_t sharedBytes(bool kMajorB, int64_t elementBytes) const;
  /// `static_assert` that the kernel's figure matches the launch's.
  std::string sharedAssert(llvm::StringRef element, bool kMajorB, int64_t elementBytes) const;
};
std::optional<SplitKPipeline> splitKPipelineOf(KernelConfigAttr config);
/// Why the Hopper main loop's template cannot take `config`'s tile, stages
/// and grid (a GEMM's or a convolution's), or nothing where it can.
std::optional<std::string> wgmmaConfigProblem(KernelConfigAttr config);
/// With config.getStreamK(): the launch's grid of grid_limit blocks (more
/// than the tiles under one wave) and its workspace (kiln_stream_k.cuh's
/// layout, the flags its state). Nothing otherwise.
void setStreamKLaunch(KernelConfigAttr config, int64_t width, EmittedKernel &kernel);
/// The blocks of a Hopper main loop's persistent grid: whole clusters of
/// `multicast` blocks (each on its own row tile, or with `multicastA` its
/// own column tile) or `splitK` blocks (all on one tile), at most one
/// cluster per cluster tile and `gridLimit` blocks in all.
unsigned persistentGrid(int64_t rowTiles, int64_t columnTiles, int64_t multicast,
                        int64_t gridLimit, int64_t splitK = 1, bool multicastA = false);
/// A C++ argument list whose last parameters have defaults: `values` joined
/// by ", ", less the trailing values equal to the defaults of the last
/// `defaults.size()` parameters (so that a kernel's source names only the
/// template arguments it changes).
std::string withoutTrailingDefaults(const std::vector<std::string> &values,
                                    const std::vector<std::string> &defaults);
/// kiln::sm90::shared_bytes(...) with the Hopper main loop's layout, as the
/// kernel's source asserts it against the launch's dynamic shared memory.
std::string wgmmaSharedBytesCall(int64_t width, int64_t stages, bool handoff, int64_t rows,
                                 bool secondInputs, bool prefetchInputs, int64_t splitK,
                                 bool halfStaging = false);
/// Defines KILN_WGMMA_BLOCKS_PER_SM (the Hopper main loop's blocks a
/// multiprocessor in the sm_90a image, 1 elsewhere) where it is not 1.
std::string wgmmaBlocksPreamble(int64_t blocksPerSM);
/// The kiln::sm90::Schedule a Hopper main loop is instantiated with.
std::string wgmmaScheduleName(WgmmaSchedule schedule);

/// The preamble that defines KILN_SPLIT_CLUSTER (a cluster of `blocks`
/// consecutive blocks on sm_90a, nothing elsewhere), which
/// kernelOpen(..., splitCluster) places.
std::string clusterPreamble(int64_t blocks);
/// The split-K template's include and clusterPreamble(split).
std::string splitClusterPreamble(int64_t split);

/// The functor through which a tiled main loop (GEMM, convolution,
/// attention) hands each accumulator to the group's fused epilogue:
///   struct name {
///     const T *in0, ...; T *out0, ...; <extraMembers>
///     struct Values { float r0; ... };  // the results, before rounding to their types
///     Values compute(<parameters>, float acc) const; // loads and math only
///     void store(<parameters>, const Values &) const;
///     // kPairs: the element at an even column and the next share one
///     // aligned store (a half2, a float2).
///     static constexpr bool kPairs;
///     void store_pair(<parameters of the first>, const Values &, const Values &) const;
///     void operator()(<parameters>, float acc) const; // store(compute())
///     // kFragments: one 16-bit result at `idx` whose rows are whole
///     // 16-byte chunks; a Hopper main loop computes it straight from the
///     // accumulators' registers, two columns a call, and stores 8 at once.
///     // kRowInput: besides, one 16-bit input read at `idx` (a residual),
///     // which the loop copies by rows and hands over two at a time.
///     static constexpr bool kFragments, kRowInput;
///     // Two columns' results rounded into one register; `inputs`: their
///     // row input's two elements (kRowInput), else ignored.
///     unsigned compute_packed(<parameters of the first>, float, float,
///                             unsigned inputs) const;
///     const void *row_input_at(<parameters>) const; // kRowInput
///     void store_chunk(<parameters of the first>, uint4) const;
///   };
/// compute() holds no store, so a main loop that computes many elements
/// before storing any lets their loads (residuals, biases) all be in flight
/// at once: a store between two loads would make the compiler keep them in
/// order, since an output may alias an input. `indexCode` defines `idx` (and
/// any index the deferred stores use) from the parameters; `epilogue` must
/// have been built with deferStores. `pairs`: the caller's `idx` of an
/// element at an even column is even (the row length and every base offset
/// are), so kPairs may hold. `chunks`: the caller is a Hopper main loop,
/// which can run fragment epilogues, and rows are a multiple of 8 elements
/// and every base offset of 8, so an element at a column that is a
/// multiple of 8 starts a 16-byte aligned chunk of its row (kFragments).
struct EpilogueFunctor {
  std::string name;
  std::string parameters; // "int m, int n"
  std::string arguments;  // "m, n"
  std::string extraMembers;
  std::string indexCode;
  bool pairs = false;
  bool chunks = false;
  /// Whether the fragments may take the result's last ops on packed fp16
  /// pairs (EpilogueFunctor.cpp): not in the kernels where ptxas then
  /// spilled (the stem, batched matmuls with a residual).
  bool halfSteps = true;
  /// The row input's tensor map parameter ("map2") where the Hopper main
  /// loop loads it through its ring (kiln_gemm_sm90.cuh's kRingInput): the
  /// functor's last member points at it. Empty: none.
  std::string rowInputMap = "";
  /// Another index `indexCode` defines (attention's permuted output, `oidx`)
  /// that is even at an even column wherever `idx` is, for pairs.
  std::string pairedIndex = "";
  /// A global average pool after the epilogue (the pooled Hopper GEMM's,
  /// kiln_gemm_sm90.cuh's wgmma_gemm_pooled): store() adds each element,
  /// rounded to its type, into the tile's sums in shared memory at (its
  /// image among the tile's `poolImages`, its column among the tile's
  /// `poolWidth`), and pool_flush() stores each image's sums over its
  /// `poolPixels` rows divided by them into result 0 at image * `poolColumns`
  /// + column. poolPixels 0: no pool.
  int64_t poolPixels = 0, poolImages = 0, poolWidth = 0, poolColumns = 0, poolTotalImages = 0;
};
std::string emitEpilogueFunctor(FusionOp group, const EpilogueFunctor &functor,
                                const ElementCode &epilogue);
/// Whether the functor's two adjacent columns share one aligned store
/// (`pairs`: the kernel's columns allow it): every result at the element's
/// own index (or `pairedIndex`), a float one, unless KILN_EPILOGUE_PAIRS=0.
bool epilogueColumnPairs(bool pairs, const ElementCode &epilogue,
                         llvm::StringRef pairedIndex = "");
/// Whether the epilogue runs on the accumulators' fragments (kFragments):
/// column pairs, rows of whole 16-byte chunks (`chunks`), one 16-bit result
/// and at most one row input, of 16 bits, as KILN_EPILOGUE_FRAGMENTS allows.
bool epilogueOnFragments(FusionOp group, const ElementCode &epilogue, bool pairs, bool chunks);
/// "in0, in1, out0": the functor's pointer members in declaration order.
std::string epilogueInitializers(FusionOp group);

/// A GEMM whose epilogue is the group's other ops: C[m, n] of [M, N] at
/// `idx = m * N + n` of the anchor's result (plus z * M * N in batch z).
struct GemmPlan {
  mlir::Operation *anchor = nullptr;
  mlir::BlockArgument lhs, rhs;
  mlir::Value bias; // [N], added in fp32 before rounding; may be null
  bool kMajorB = true;
  int64_t M = 0, N = 0, K = 0, batch = 1;
  /// Each operand's batch elements (GemmShape): 1 or `batch` for the
  /// Hopper GEMM's 3-D maps.
  int64_t batchA = 1, batchB = 1;
  /// Each operand's element offset in batch `z` (a long long), with its
  /// broadcast strides.
  std::string aOffsetOfZ = "0LL", bOffsetOfZ = "0LL";
  /// Whether the offsets are written out (matmul and bmm) or both 0.
  bool offsetsByBatch = false;
  std::string kind = "gemm_epilogue";
};
mlir::FailureOr<EmittedKernel> emitGemmKernel(FusionOp group, llvm::StringRef name,
                                              const GemmPlan &plan);

/// A gemm_epilogue group's kernel: its plan, then emitGemmKernel.
mlir::FailureOr<EmittedKernel> emitGemm(FusionOp group, llvm::StringRef name);
mlir::FailureOr<EmittedKernel> emitConv(FusionOp group, llvm::StringRef name);
mlir::FailureOr<EmittedKernel> emitNormalization(FusionOp group, llvm::StringRef name);
mlir::FailureOr<EmittedKernel> emitPooling(FusionOp group, llvm::StringRef name);
mlir::FailureOr<EmittedKernel> emitReduction(FusionOp group, llvm::StringRef name);
/// Attention groups (AttentionEmitter.cpp): flash attention on mma.sync for
/// fp16/bf16, a SIMT kernel for fp32 and other head sizes.
mlir::FailureOr<EmittedKernel> emitAttention(FusionOp group, llvm::StringRef name);

} // namespace kiln::codegen::detail

#endif // KILN_CODEGEN_EMITTERS_H
