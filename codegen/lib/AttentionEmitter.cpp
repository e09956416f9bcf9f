//===- AttentionEmitter.cpp - attention groups -> CUDA --------------------===//
//
// An attention group holds one kiln.attention whose query, key, value and
// mask are inputs of the group, plus elementwise ops on its result (a cast,
// a residual add) that run in the kernel's epilogue. q, k and v may be
// permute/slice/reshape views of inputs (split heads of a QKV projection,
// read in place at their row stride) and the result may be stored through a
// permute (merge heads). The leading dimensions of q/k/v ([..., S, D])
// flatten into blockIdx.y; blockIdx.x
// walks the tile's 64 or 128 (tensor cores) or 16 (SIMT) queries. Main loops, from
// kiln_attention.cuh:
//   fp16/bf16 with D == Dv a multiple of 16 up to 128: flash_attention
//     (mma.sync m16n8k16, online softmax, cp.async double buffering): one
//     source for sm_80, sm_89 and sm_90a;
//   fp32, or other head sizes up to 128: simt_attention (fp32 FMA).
// Head sizes past 128 are refused. The mask is read in place at its
// broadcast strides: a per-(batch, head) base computed from blockIdx.y, a
// stride per query and one per key (0 where it broadcasts).
//
//===----------------------------------------------------------------------===//

#include "ElementCode.h"
#include "Emitters.h"

#include "kiln/Dialect/Kiln/KernelShapes.h"
#include "kiln/Dialect/Kiln/StridedView.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <cstdlib>

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;
using namespace kiln::codegen::detail;

namespace {

/// The epilogue's index into a merged-heads output (a permute of the
/// attention's result stored in place).
constexpr llvm::StringLiteral kMergedIndex = "oidx";

ArrayRef<int64_t> shapeOf(Value v) { return cast<RankedTensorType>(v.getType()).getShape(); }

/// Whether `shape` broadcasts to `target` without growing it.
bool broadcastsInto(ArrayRef<int64_t> shape, ArrayRef<int64_t> target) {
  if (shape.size() > target.size())
    return false;
  size_t lead = target.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1 && shape[d] != target[d + lead])
      return false;
  return true;
}

/// The mask functor's initializer: the base offset of (batch, head)
/// `index` (an unsigned expression: blockIdx.y, or the persistent kernel's
/// item) and the strides per query and per key, 0 where the mask
/// broadcasts along a dimension of the scores [lead..., Sq, Sk].
std::string maskInitializer(BlockArgument mask, ArrayRef<int64_t> lead,
                            const std::string &index) {
  ArrayRef<int64_t> shape = shapeOf(mask);
  SmallVector<int64_t> strides = stridesOf(shape);
  size_t rank = lead.size() + 2, offset = rank - shape.size();
  auto strideOf = [&](size_t scoreDim) -> int64_t {
    if (scoreDim < offset || shape[scoreDim - offset] == 1)
      return 0;
    return strides[scoreDim - offset];
  };
  SmallVector<int64_t> leadStrides = stridesOf(lead);
  std::string base = "0LL";
  for (size_t d = 0; d < lead.size(); ++d)
    if (int64_t stride = strideOf(d))
      base += " + (long long)(" + index + " / " + std::to_string(leadStrides[d]) + "u % " +
              std::to_string(lead[d]) + "u) * " + std::to_string(stride) + "LL";
  return "{in" + std::to_string(mask.getArgNumber()) + ", " + base + ", " +
         std::to_string(strideOf(rank - 2)) + "LL, " + std::to_string(strideOf(rank - 1)) +
         "LL}";
}

/// `offset` plus the offset of the (batch, head) slice `index` numbers (an
/// unsigned expression: blockIdx.y, or the persistent kernel's item):
/// it walks the leading dims `lead` row-major; `strides` are the tensor's
/// strides of those dims. Dims that are contiguous with each other merge,
/// so a plain [B, H, S, D] tensor costs one multiply.
std::string leadOffset(int64_t offset, ArrayRef<int64_t> lead, ArrayRef<int64_t> strides,
                       const std::string &index) {
  SmallVector<std::pair<int64_t, int64_t>> dims; // (size, stride), outermost first
  for (size_t d = 0; d < lead.size(); ++d) {
    if (lead[d] == 1)
      continue;
    if (!dims.empty() && dims.back().second == strides[d] * lead[d])
      dims.back() = {dims.back().first * lead[d], strides[d]};
    else
      dims.push_back({lead[d], strides[d]});
  }
  std::string result = std::to_string(offset) + "LL";
  int64_t inner = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    auto [size, stride] = dims[i];
    std::string at = index;
    if (inner != 1)
      at = "(" + index + " / " + std::to_string(inner) + "u)";
    if (i != 0) // the outermost dim needs no wrap: the index < the product
      at = "(" + at + " % " + std::to_string(size) + "u)";
    if (stride != 0)
      result += " + (long long)" + at + " * " + std::to_string(stride) + "LL";
    inner *= size;
  }
  return "(" + result + ")";
}

} // namespace

FailureOr<EmittedKernel> kiln::codegen::detail::emitAttention(FusionOp group, StringRef name) {
  std::optional<AttentionShape> shape = attentionShapeOf(group);
  if (!shape)
    return group.emitOpError("an attention group needs a kiln.attention");
  AttentionOp attention = shape->attention;
  const std::optional<StridedView> &q = shape->q, &k = shape->k, &v = shape->v;
  Value maskValue = attention.getMask();
  auto mask = dyn_cast_if_present<BlockArgument>(maskValue);
  if (!q || !k || !v || (maskValue && !mask))
    return attention.emitOpError(
        "the attention's query, key and value must be inputs of the group or views of them "
        "(permute, slice, reshape) that keep the head dimension contiguous, and the mask an "
        "input; the code generator computes none of them");

  ArrayRef<int64_t> qShape = q->shape, kShape = k->shape, vShape = v->shape;
  ArrayRef<int64_t> lead = qShape.drop_back(2);
  int64_t batch = 1;
  for (int64_t d : lead)
    batch *= d;
  int64_t Sq = qShape[qShape.size() - 2], Sk = kShape[kShape.size() - 2];
  int64_t D = qShape.back(), Dv = vShape.back();
  if (Sq == 0 || Sk == 0 || D == 0 || Dv == 0 || batch == 0)
    return attention.emitOpError("attention over an empty tensor is not supported");
  if (batch > 65535)
    return attention.emitOpError("batch times heads of ")
           << batch << " exceeds the grid's y limit of 65535";
  for (const StridedView *view : {&*q, &*k, &*v})
    if (view->shape[view->shape.size() - 2] * view->strides[view->strides.size() - 2] +
            view->shape.back() >=
        (1LL << 31))
      return attention.emitOpError("a (batch, head) slice past 2^31 elements is not supported");
  if (D > 128 || Dv > 128)
    return attention.emitOpError("head sizes past 128 are not supported by the attention "
                                 "kernel yet, got ")
           << D << " and " << Dv;
  Type element = cast<RankedTensorType>(attention.getQuery().getType()).getElementType();
  KernelConfigAttr config = configOf(group);
  const bool hopper = config.getVariant() == KernelVariant::attention_wgmma;
  bool tensorCores = config.getVariant() == KernelVariant::attention_mma;
  // attention_mma's queries a block: 16 a warp, 4 or 8 warps; attention_wgmma's
  // one warpgroup's 64 (its other images' block, and its items unless the
  // tile asks for 128: two consumer warpgroups over one ring, at a head
  // size of 64; at 128 the other images' 4-warp kernel spilled under the
  // 224 registers of 288 threads).
  const int64_t queryRows = hopper ? 64 : tensorCores ? config.getTile()[0] : 16;
  const int64_t itemQueries = hopper ? config.getTile()[0] : queryRows;
  std::optional<MatrixRows> qRows = matrixRowsOf(*q), kRows = matrixRowsOf(*k),
                            vRows = matrixRowsOf(*v);
  // (16-byte aligned rows: the other images' flash_attention reads them.)
  if (hopper && (!(element.isF16() || element.isBF16()) || D != Dv || (D != 64 && D != 128) ||
                 (config.getTile() != ArrayRef<int64_t>{64, 64, D} &&
                  config.getTile() != ArrayRef<int64_t>{128, 64, 64}) ||
                 !shape->rowsChunkAligned || !qRows || !kRows || !vRows))
    return group.emitOpError("cannot run as attention_wgmma: it needs fp16/bf16, equal head "
                             "sizes of 64 or 128, the tile [64, 64, head size] or [128, 64, "
                             "64], and q, k and v that are 16-byte aligned rows of a matrix a "
                             "tensor map can read");
  if (hopper && config.getSchedule() == WgmmaSchedule::overlapped &&
      overlappedAttentionSpills(attention))
    return group.emitOpError("cannot run as attention_wgmma with the overlapped schedule: "
                             "with a float mask per score it spills "
                             "(take the cooperative schedule)");
  if (hopper && config.getBlocksPerSm() == 4 && attention.getMask())
    return group.emitOpError("cannot run as attention_wgmma four blocks a multiprocessor: "
                             "with a mask it spills within 96 registers a thread");
  if (tensorCores &&
      (!(element.isF16() || element.isBF16()) || D != Dv || D % 16 != 0 ||
       !shape->rowsChunkAligned ||
       (config.getTile() != ArrayRef<int64_t>{64, 64, D} &&
        config.getTile() != ArrayRef<int64_t>{128, 64, D})))
    return group.emitOpError("cannot run as attention_mma: it needs fp16/bf16, equal head "
                             "sizes that are multiples of 16, 16-byte aligned q, k and v "
                             "rows and the tile [64 or 128, 64, head size]");
  const int64_t warps = queryRows / 16;
  std::string type = cudaType(element);

  // The epilogue: the attention's result rounded to its type, then every
  // other op of the group at idx = (bh * Sq + i) * Dv + d. A yielded
  // permute of a value of the result's shape (merge heads) stores that value
  // at the permuted position instead.
  auto resultType = cast<RankedTensorType>(attention.getType());
  ArrayRef<int64_t> resultShape = resultType.getShape();
  llvm::SmallPtrSet<Operation *, 8> views;
  for (const StridedView *view : {&*q, &*k, &*v})
    views.insert(view->chain.begin(), view->chain.end());
  YieldOp yield = yieldOf(group);
  auto permutedStore = [&](Value yielded) -> PermuteOp {
    auto permute = yielded.getDefiningOp<PermuteOp>();
    if (permute && shapeOf(permute.getInput()) == resultShape &&
        permute.getPermutation().back() == static_cast<int64_t>(resultShape.size()) - 1)
      return permute;
    return {};
  };
  for (Value yielded : yield.getValues())
    if (PermuteOp permute = permutedStore(yielded))
      views.insert(permute);
  ElementCode epilogue(group, resultShape, "idx", "    ");
  epilogue.deferStores = true;
  epilogue.bind(attention.getResult(), roundedTo(element, "acc"));
  for (Operation &op : group.getBody().front().without_terminator()) {
    if (&op == attention.getOperation() || views.contains(&op))
      continue;
    for (Value result : op.getResults())
      if (!broadcastsInto(shapeOf(result), resultShape))
        return op.emitOpError("in an attention group must broadcast to the attention's result");
    if (failed(epilogue.emit(&op)))
      return failure();
  }
  std::optional<SmallVector<int64_t>> mergedStrides;
  for (auto [index, value] : llvm::enumerate(yield.getValues())) {
    if (PermuteOp permute = permutedStore(value)) {
      // Stride of each result dimension in the permuted output.
      SmallVector<int64_t> outStrides = stridesOf(shapeOf(permute.getResult()));
      SmallVector<int64_t> strides(resultShape.size());
      for (auto [outDim, resultDim] : llvm::enumerate(permute.getPermutation()))
        strides[resultDim] = outStrides[outDim];
      if (mergedStrides && *mergedStrides != strides)
        return group.emitOpError("an attention kernel stores one permuted layout only");
      mergedStrides = strides;
      epilogue.store(index, permute.getInput(), kMergedIndex.str());
      continue;
    }
    if (shapeOf(value) != resultShape)
      return group.emitOpError("an attention kernel stores results of the attention's shape "
                               "or a permute of it that keeps the head dimension last; result ")
             << index << " differs";
    epilogue.store(index, value);
  }

  EmittedKernel kernel = kernelFor(group, name, "attention");
  // kiln::sm90::attention_wgmma_threads(itemQueries) (the source asserts
  // it): a consumer warpgroup for each 64 queries of an item, and the
  // producer warp.
  kernel.block = hopper        ? static_cast<unsigned>(itemQueries / 64 * 128 + 32)
                 : tensorCores ? static_cast<unsigned>(32 * warps)
                               : 128;
  kernel.grid[0] = static_cast<unsigned>((Sq + queryRows - 1) / queryRows);
  kernel.grid[1] = static_cast<unsigned>(batch);
  // kiln::attention_shared_bytes(D, warps): Q and two buffers each of 64
  // rows of K and V.
  if (tensorCores)
    kernel.dynamicSharedBytes = static_cast<unsigned>((queryRows + 4 * 64) * (D + 8) * 2);
  // kiln::sm90::attention_wgmma_shared_bytes(D, stages): Q and the stages
  // of K and V in 128-byte rows, 1 KiB of alignment, the barriers.
  const bool overlapped = config.getSchedule() == WgmmaSchedule::overlapped;
  // The K/V ring's stages (0 in the configuration: the kernel's 2).
  const int64_t stages = config.getStages() ? config.getStages() : 2;
  if (hopper) {
    kernel.dynamicSharedBytes =
        static_cast<unsigned>((itemQueries + 2 * stages * 64) * D * 2 + 1024 + 128);
    // A persistent grid of at most grid_limit blocks walks the items
    // (query blocks of itemQueries x batch); the other images run
    // flash_attention with 4 warps, a block each 64 queries.
    const int64_t items = (Sq + itemQueries - 1) / itemQueries * kernel.grid[1];
    kernel.otherImagesGrid = {kernel.grid[0], kernel.grid[1], 1};
    kernel.grid[0] = static_cast<unsigned>(
        config.getGridLimit() > 0 ? std::min<int64_t>(items, config.getGridLimit()) : items);
    kernel.grid[1] = 1;
    kernel.otherImagesSharedBytes = static_cast<unsigned>((64 + 4 * 64) * (D + 8) * 2);
    for (auto [view, rows] : {std::pair{&*q, *qRows}, {&*k, *kRows}, {&*v, *vRows}})
      kernel.tensorMaps.push_back(
          TensorMapArg::matrix(cast<BlockArgument>(view->root).getArgNumber(), rows.rows,
                               rows.rowStride, 64, 64));
  }

  // Mask values two keys a load where the keys are the mask's contiguous
  // last dimension, of even length: every row and (batch, head) offset is
  // then a multiple of it, so an even key's pair is aligned.
  const int64_t maskKeys = mask ? shapeOf(mask).back() : 1;
  const bool maskPairs = maskKeys != 1 && maskKeys % 2 == 0;
  std::string maskType =
      mask ? "kiln::TensorMask<" +
                 cudaType(cast<RankedTensorType>(mask.getType()).getElementType()) +
                 (maskPairs ? ", true>" : ">")
           : "kiln::NoMask";
  auto maskInit = [&](const std::string &index) {
    return mask ? maskInitializer(mask, lead, index) : std::string("{}");
  };
  std::string causal = attention.getCausal() ? "true" : "false";
  // attention_wgmma: where each (batch, head)'s first row lies in its
  // tensor map (matrixRowsOf: no column carries into the row).
  auto matrixPosition = [&](const StridedView &view, const MatrixRows &rows) {
    const std::string offset = leadOffset(view.offset, lead, view.strides, "bh"),
                      stride = std::to_string(rows.rowStride) + "LL";
    return "(int)(" + offset + " / " + stride + "), (int)(" + offset + " % " + stride + ")";
  };
  auto operandPointer = [&](const StridedView &view) {
    return "in" + std::to_string(cast<BlockArgument>(view.root).getArgNumber()) + " + " +
           leadOffset(view.offset, lead, view.strides, "blockIdx.y");
  };
  auto rowStride = [](const StridedView &view) {
    return std::to_string(view.strides[view.strides.size() - 2]) + "LL";
  };
  // The pointer-based kernels' call: q, k and v in place, their row strides.
  auto pointerCall = [&](const std::string &function) {
    return function + "(" + operandPointer(*q) + ", " + operandPointer(*k) + ", " +
           operandPointer(*v) + ", " + rowStride(*q) + ", " + rowStride(*k) + ", " +
           rowStride(*v) + ", " + std::to_string(Sq) + ", " + std::to_string(Sk) + ", " +
           floatLiteral(attention.getScale().convertToDouble()) + ", mask, epilogue);\n";
  };
  SmallVector<int64_t> resultStrides = stridesOf(resultShape);
  std::string outIndex =
      mergedStrides ? "    const long long " + kMergedIndex.str() + " = outBase + (long long)i * " +
                          std::to_string((*mergedStrides)[resultShape.size() - 2]) + "LL + d;\n"
                    : "";
  std::string epilogueName = name.str() + "_epilogue";
  // Adjacent head columns stored as one 32-bit pair (the kernels' threads
  // hold them so): every offset is a multiple of the head size, and so is
  // each stride of a permuted output, whose head dimension stays last.
  EpilogueFunctor epilogueFunctor{epilogueName, "int i, int d", "i, d",
                                  "  long long base, outBase;\n",
                                  "    const long long idx = base + (long long)i * " +
                                      std::to_string(Dv) + "LL + d;\n" + outIndex};
  epilogueFunctor.pairs =
      Dv % 2 == 0 && (!mergedStrides ||
                      llvm::all_of(llvm::drop_end(*mergedStrides),
                                   [](int64_t stride) { return stride % 2 == 0; }));
  epilogueFunctor.pairedIndex = kMergedIndex.str();
  // The epilogue functor's initializer for the (batch, head) `index` numbers.
  auto epilogueInit = [&](const std::string &index) {
    return "{" + epilogueInitializers(group) + ", " +
           leadOffset(0, lead, resultStrides, index) + ", " +
           (mergedStrides ? leadOffset(0, lead, *mergedStrides, index) : std::string("0LL")) +
           "}";
  };
  // A block an item: its (batch, head) is blockIdx.y.
  const std::string blockLocals = "  const " + epilogueName + " epilogue" +
                                  epilogueInit("blockIdx.y") + ";\n  const " + maskType +
                                  " mask" + maskInit("blockIdx.y") + ";\n";
  // flash_attention_wgmma's kOverlapped, kStages and kQueries, and
  // attention_wgmma_shared_bytes's stages and queries, named only where
  // they differ from their defaults.
  const std::string stagesText = std::to_string(stages), queriesText = std::to_string(itemQueries);
  std::string call;
  if (hopper)
    call = "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n  kiln::sm90::flash_attention_wgmma<" +
           withoutTrailingDefaults({type, std::to_string(D), causal, overlapped ? "true" : "false",
                                    stagesText, queriesText},
                                   {"false", "2", "64"}) +
           ">(map0, map1, map2, " + std::to_string(batch) + ", " + std::to_string(Sq) + ", " +
           std::to_string(Sk) + ", " + floatLiteral(attention.getScale().convertToDouble()) +
           ",\n      [&](unsigned bh) {\n        return kiln::sm90::AttentionItem<" + maskType +
           ", " + epilogueName + ">{" + maskType + maskInit("bh") + ", " + epilogueName +
           epilogueInit("bh") +
           ",\n            " + matrixPosition(*q, *qRows) + ", " + matrixPosition(*k, *kRows) +
           ", " + matrixPosition(*v, *vRows) +
           "};\n      });\n#else\n" + blockLocals +
           "  // Other GPUs: the mma.sync kernel, without the producer warp.\n"
           "  if (threadIdx.x < 128)\n  " +
           pointerCall("kiln::flash_attention<" + type + ", " + std::to_string(D) + ", " + causal +
                       ", 4>") +
           "#endif\n";
  else
    call = blockLocals + "  " +
           pointerCall(tensorCores ? "kiln::flash_attention<" + type + ", " + std::to_string(D) +
                                         ", " + causal + ", " + std::to_string(warps) + ">"
                                   : "kiln::simt_attention<" + type + ", " + std::to_string(D) +
                                         ", " + std::to_string(Dv) + ", " + causal + ">");
  std::string sharedCheck =
      hopper ? "static_assert(kiln::sm90::attention_wgmma_shared_bytes(" +
                   withoutTrailingDefaults({std::to_string(D), stagesText, queriesText},
                                           {"2", "64"}) +
                   ") == " + std::to_string(kernel.dynamicSharedBytes) +
                   " && kiln::attention_shared_bytes(" + std::to_string(D) + ", 4) == " +
                   std::to_string(*kernel.otherImagesSharedBytes) +
                   " && kiln::sm90::attention_wgmma_threads(" + queriesText +
                   ") == " + std::to_string(kernel.block) +
                   ", \"the launch's shared memory and threads must match the kernel's\");\n"
      : tensorCores ? "static_assert(kiln::attention_shared_bytes(" + std::to_string(D) + ", " +
                          std::to_string(warps) + ") == " +
                          std::to_string(kernel.dynamicSharedBytes) +
                          ", \"the launch's shared memory must match the kernel's\");\n"
                    : "";
  // KILN_ATTENTION_QUERY_TAIL=1: a sequence's last few queries with the
  // products transposed (attention_query_tail), a diagnostic until timed.
  const char *queryTail = std::getenv("KILN_ATTENTION_QUERY_TAIL");
  const bool transposedTail = hopper && queryTail && std::string(queryTail) == "1";
  const int64_t wgmmaBlocks =
      attentionWgmmaBlocksPerSM(itemQueries, D, config.getBlocksPerSm());
  kernel.source =
      header(group, kernel.kind) +
      (transposedTail ? "#define KILN_ATTENTION_QUERY_TAIL\n" : "") +
      (hopper ? "#include \"kiln_attention_sm90.cuh\"\n" : "#include \"kiln_attention.cuh\"\n") +
      sharedCheck + "\n" +
      emitEpilogueFunctor(group, epilogueFunctor, epilogue) +
      "\n" + (hopper ? wgmmaBlocksPreamble(wgmmaBlocks) : "") +
      kernelOpen(group, name, kernel.block, hopper ? 3 : 0,
                 /*minBlocks=*/hopper && wgmmaBlocks > 1 ? 2 : 1) +
      call + "}\n";
  return kernel;
}
