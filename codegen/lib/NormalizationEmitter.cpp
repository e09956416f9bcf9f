//===- NormalizationEmitter.cpp - layer norm and softmax rows -> CUDA -----===//
//
// A normalization group: a layer norm (or RMSNorm) or softmax over the last
// dimension, the elementwise ops that compute its input (the prologue) and
// those on its result (the epilogue); or a layer norm's row moments alone
// (a folded norm's statistics: two values a row, no epilogue). Two layouts,
// statistics in fp32:
//   normalization_warp: a row per warp held in registers (rows of up to
//       1024). Where every input read at the element's own index and every
//       result have one element size and rows are whole 16-byte vectors, a
//       lane holds runs of 16 bytes of its row (8 halves or 4 floats) and
//       moves each with one load or store: BERT's layer norms at batch 32
//       issued 24 two-byte loads a lane and moved 1.4 TB/s.
//   normalization: a row per block, cached in shared memory as fp32.
//
//===----------------------------------------------------------------------===//

#include "ElementCode.h"
#include "Emitters.h"
#include "kiln/Dialect/Kiln/KernelShapes.h"

#include "llvm/ADT/SetVector.h"

#include <set>

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;
using namespace kiln::codegen::detail;

namespace {

/// The per-element code of a normalization group: the prologue up to the
/// anchor's input (`load`), and the normalized element with the epilogue
/// (`store`). With `vectors`, both name inputs read at the element's own
/// index `in<K>_element` and leave their stores deferred, for a caller that
/// moves them 16 bytes at a time.
struct RowCode {
  ElementCode load, store;
  std::string inputValue;
};

FailureOr<RowCode> rowCode(FusionOp group, Operation *anchor, RankedTensorType type,
                           const std::string &rowElement, bool vectors) {
  Block &body = group.getBody().front();
  llvm::SetVector<Operation *> prologue = prologueOf(anchor);
  RowCode code{ElementCode(group, type.getShape(), "idx", vectors ? "      " : "    "),
               ElementCode(group, type.getShape(), "idx", vectors ? "      " : "    "), ""};
  ElementCode &load = code.load, &store = code.store;
  load.deferStores = store.deferStores = vectors;
  load.namesColumnLoads = store.namesColumnLoads = vectors;

  // The prologue per element, cached, plus yielded prologue values.
  for (Operation &op : body.without_terminator())
    if (prologue.contains(&op) && failed(load.emit(&op)))
      return failure();
  YieldOp yield = yieldOf(group);
  for (auto [index, value] : llvm::enumerate(yield.getValues()))
    if (Operation *def = value.getDefiningOp(); def && prologue.contains(def))
      load.store(index, value);
  code.inputValue = load.valueOf(anchor->getOperand(0));
  // Row moments store two values a row, not elements (emitNormalization).
  // Their statistics are of the row as stored: a GEMM reads it back rounded
  // and subtracts mean x its weights' sums, which cancels exactly only for
  // the mean of what it multiplied.
  if (isa<RowMomentsOp>(anchor)) {
    Type element = cast<RankedTensorType>(anchor->getOperand(0).getType()).getElementType();
    if (anchor->getOperand(0).getDefiningOp() && !element.isF32())
      code.inputValue = "kiln::to_float(kiln::from_float<" + cudaType(element) + ">(" +
                        code.inputValue + "))";
    return code;
  }

  // The normalized element, then the epilogue (the prologue values it reads
  // are recomputed from the inputs).
  for (Operation &op : body.without_terminator())
    if (prologue.contains(&op) && isa<ConstantOp>(op) && failed(store.emit(&op)))
      return failure();
  std::string normalized;
  if (auto norm = dyn_cast<LayerNormOp>(anchor)) {
    normalized = norm.getRms() ? "(" + rowElement + " * rstd)"
                               : "(" + rowElement + " - mean) * rstd";
    if (norm.getWeight())
      normalized = "(" + normalized + " * " + store.valueOf(norm.getWeight()) + ")";
    if (norm.getBias())
      normalized = "(" + normalized + " + " + store.valueOf(norm.getBias()) + ")";
  } else if (cast<SoftmaxOp>(anchor).getLog()) {
    normalized = "(" + rowElement + " - rowMax - logSum)";
  } else {
    normalized = "(expf(" + rowElement + " - rowMax) * invSum)";
  }
  Type element = type.getElementType();
  store.bind(anchor->getResult(0), element.isF32()
                                       ? normalized
                                       : "kiln::to_float(kiln::from_float<" +
                                             cudaType(element) + ">(" + normalized + "))");
  bool epilogueReadsPrologue = false;
  for (Operation &op : body) {
    if (prologue.contains(&op) || &op == anchor)
      continue;
    for (Value operand : op.getOperands())
      if (Operation *def = operand.getDefiningOp(); def && prologue.contains(def))
        epilogueReadsPrologue = true;
  }
  for (Operation &op : body.without_terminator()) {
    if (&op == anchor || (prologue.contains(&op) && isa<ConstantOp>(op)))
      continue;
    if (prologue.contains(&op) && !epilogueReadsPrologue)
      continue;
    if (failed(store.emit(&op)))
      return failure();
  }
  for (auto [index, value] : llvm::enumerate(yield.getValues())) {
    Operation *def = value.getDefiningOp();
    if (!def || !prologue.contains(def))
      store.store(index, value);
  }
  return code;
}

/// What the vector passes move: the element size every own-index input,
/// column input and result of `code` share, and their pointers (whose
/// alignment the kernel tests). None when sizes differ or a result is not
/// at the element's own index.
struct VectorOperands {
  unsigned bytes = 0;
  std::set<std::string> pointers;
};
std::optional<VectorOperands> vectorOperands(FusionOp group, const RowCode &code) {
  VectorOperands operands;
  auto take = [&](Type element, std::string pointer) {
    if (!element.isF16() && !element.isBF16() && !element.isF32())
      return false;
    unsigned size = element.getIntOrFloatBitWidth() / 8;
    if (operands.bytes && size != operands.bytes)
      return false;
    operands.bytes = size;
    operands.pointers.insert(std::move(pointer));
    return true;
  };
  for (const ElementCode *part : {&code.load, &code.store}) {
    for (const auto &inputs : {part->elementLoads, part->columnLoads})
      for (unsigned input : inputs)
        if (!take(cast<RankedTensorType>(group.getInputs()[input].getType()).getElementType(),
                  "in" + std::to_string(input)))
          return std::nullopt;
    for (const ElementCode::DeferredStore &store : part->deferredStores)
      if (store.at != "idx" ||
          !take(cast<RankedTensorType>(group.getResultTypes()[store.result]).getElementType(),
                "out" + std::to_string(store.result)))
        return std::nullopt;
  }
  return operands;
}

/// One pass over a lane's vectors of its row (vector v = lane + 32 c starts
/// at column kV v): each own-index input loaded as a vector (16 bytes where
/// every pointer is 16-byte aligned, else element by element) and each
/// input indexed by the column likewise, `body` run per element with `idx`,
/// `t` (the register), `in<K>_element` and `in<K>_column` in scope, then
/// each deferred store written as a vector.
std::string vectorPass(FusionOp group, const ElementCode &part, const std::string &body) {
  auto inputType = [&](unsigned input) {
    return cudaType(cast<RankedTensorType>(group.getInputs()[input].getType()).getElementType());
  };
  std::string loads, elements, stores, results;
  // kV adjacent elements of input K from index `start` into the vector
  // in<K><vector> (one 16-byte load where the pointers allow), and each
  // element's own as in<K><element>.
  auto loadRun = [&](unsigned input, const std::string &vector, const std::string &element,
                     const std::string &start) {
    const std::string name = "in" + std::to_string(input), type = inputType(input);
    loads += "    kiln::Vec<" + type + ", kV> " + name + vector + ";\n"
             "    if (vectors) " + name + vector + " = *reinterpret_cast<const kiln::Vec<" +
             type + ", kV> *>(" + name + " + " + start + ");\n"
             "    else for (int e = 0; e < kV; ++e) " + name + vector + ".v[e] = " + name + "[" +
             start + " + e];\n";
    elements += "      const " + type + " " + name + element + " = " + name + vector +
                ".v[e];\n";
  };
  for (unsigned input : part.elementLoads)
    loadRun(input, "_vector", "_element", "base");
  // Inputs indexed by the column (a weight, a bias): the same run of the
  // row's columns.
  for (unsigned input : part.columnLoads)
    loadRun(input, "_columns", "_column", "kV * (lane + 32 * c)");
  for (auto [position, store] : llvm::enumerate(part.deferredStores)) {
    const std::string out = "out" + std::to_string(store.result),
                      vector = "result" + std::to_string(position);
    loads += "    kiln::Vec<" + store.type + ", kV> " + vector + ";\n";
    results += "      " + vector + ".v[e] = kiln::from_float<" + store.type + ">(" + store.value +
               ");\n";
    stores += "    if (vectors) *reinterpret_cast<kiln::Vec<" + store.type + ", kV> *>(" + out +
              " + base) = " + vector + ";\n"
              "    else for (int e = 0; e < kV; ++e) " + out + "[base + e] = " + vector +
              ".v[e];\n";
  }
  return "  #pragma unroll\n  for (int c = 0; c < kVectors; ++c) if (kV * (lane + 32 * c) < L) {\n"
         "    const long long base = r * L + kV * (lane + 32 * c);\n" +
         loads +
         "    #pragma unroll\n    for (int e = 0; e < kV; ++e) {\n"
         "      const int t = c * kV + e;\n      const long long idx = base + e;\n" +
         elements + part.code + body + results + "    }\n" + stores + "  }\n";
}

} // namespace

FailureOr<EmittedKernel> kiln::codegen::detail::emitNormalization(FusionOp group,
                                                                  StringRef name) {
  std::optional<NormalizationShape> shape = normalizationShapeOf(group);
  if (!shape)
    return group.emitOpError("a normalization group needs a layer_norm, softmax or row_moments");
  Operation *anchor = shape->anchor;
  // The rows' type (a layer norm's and a softmax's result have it too).
  auto type = cast<RankedTensorType>(anchor->getOperand(0).getType());
  auto moments = dyn_cast<RowMomentsOp>(anchor);
  if (auto softmax = dyn_cast<SoftmaxOp>(anchor);
      softmax && softmax.getDim() != static_cast<uint64_t>(type.getRank() - 1))
    return anchor->emitOpError("softmax over a dimension other than the last "
                               "is not supported by the code generator yet");
  const int64_t rowLength = shape->rowLength, rows = shape->rows;
  // normalization_warp: a row per warp in registers; normalization: a row
  // per block in shared memory, as fp32 (48 KiB without opt-in).
  const bool perWarp = configOf(group).getVariant() == KernelVariant::normalization_warp;
  if (perWarp && rowLength > kWarpRowMaxLength)
    return group.emitOpError("cannot run as normalization_warp: rows of ")
           << rowLength << " elements exceed the " << kWarpRowMaxLength
           << " a warp holds in registers";
  if (rowLength * 4 > 48 * 1024)
    return anchor->emitOpError("rows of ")
           << rowLength << " elements exceed the 12288 the row kernel caches";
  if (rows > (1LL << 31) - 1)
    return anchor->emitOpError("too many rows: ") << rows;
  // The row's element j: row[j] in shared memory, row[t] in a warp's
  // registers (j = lane + 32 t, or with vectors of kV elements
  // j = kV (lane + 32 (t / kV)) + t % kV).
  const std::string rowElement = perWarp ? "row[t]" : "row[j]";
  // Rows in 16-byte vectors where the element code allows: its own-index
  // loads and its stores are left to the vector passes. Else the element
  // code loads and stores one element at a time.
  std::optional<RowCode> code;
  std::optional<VectorOperands> vector;
  if (perWarp) {
    FailureOr<RowCode> candidate = rowCode(group, anchor, type, rowElement, /*vectors=*/true);
    if (failed(candidate))
      return failure();
    vector = vectorOperands(group, *candidate);
    if (vector && rowLength % (16 / vector->bytes) == 0)
      code = std::move(*candidate);
    else
      vector.reset();
  }
  if (!code) {
    FailureOr<RowCode> scalar = rowCode(group, anchor, type, rowElement, /*vectors=*/false);
    if (failed(scalar))
      return failure();
    code = std::move(*scalar);
  }

  // The loop over this thread's elements of the row (j, the element's
  // column, in scope in its body) and the reductions across the row.
  const std::string forEach =
      !perWarp ? "for (int j = threadIdx.x; j < L; j += blockDim.x)"
      : vector ? "#pragma unroll\n  for (int t = 0; t < kPerLane; ++t) if (const int j = kV * "
                 "(lane + 32 * (t / kV)) + t % kV; j < L)"
               : "#pragma unroll\n  for (int t = 0; t < kPerLane; ++t) if (const int j = lane + "
                 "32 * t; j < L)";
  auto rowSum = [&](const std::string &v) {
    return perWarp ? "kiln::warp_sum(" + v + ")" : "kiln::block_sum(" + v + ", scratch)";
  };
  auto rowMaximum = [&](const std::string &v) {
    return perWarp ? "kiln::warp_max(" + v + ")" : "kiln::block_max(" + v + ", scratch)";
  };
  std::string statistics;
  // The mean, then the squares about it (or, for RMSNorm's statistics,
  // about zero).
  auto meanAndDeviation = [&](double eps, bool rms) {
    return "  float sum = 0.0f;\n  " + forEach + " sum += " + rowElement + ";\n"
           "  const float mean = " + rowSum("sum") + " / L;\n"
           "  float squares = 0.0f;\n  " + forEach + " {\n"
           "    const float d = " + rowElement + (rms ? "" : " - mean") +
           ";\n    squares += d * d;\n  }\n"
           "  const float rstd = rsqrtf(" + rowSum("squares") + " / L + " + floatLiteral(eps) +
           ");\n";
  };
  if (moments) {
    statistics = meanAndDeviation(moments.getEps().convertToDouble(), moments.getRms());
  } else if (auto norm = dyn_cast<LayerNormOp>(anchor); norm && norm.getRms()) {
    // RMSNorm: the mean of squares, nothing subtracted.
    statistics = "  float squares = 0.0f;\n  " + forEach + " squares += " + rowElement +
                 " * " + rowElement + ";\n"
                 "  const float rstd = rsqrtf(" + rowSum("squares") + " / L + " +
                 floatLiteral(norm.getEps().convertToDouble()) + ");\n";
  } else if (auto norm = dyn_cast<LayerNormOp>(anchor)) {
    statistics = meanAndDeviation(norm.getEps().convertToDouble(), /*rms=*/false);
  } else {
    statistics =
        "  float localMax = -INFINITY;\n  " + forEach + " localMax = fmaxf(localMax, " +
        rowElement + ");\n"
        "  const float rowMax = " + rowMaximum("localMax") + ";\n"
        "  float sum = 0.0f;\n  " + forEach + " sum += expf(" + rowElement + " - rowMax);\n"
        "  const float " +
        (cast<SoftmaxOp>(anchor).getLog() ? "logSum = logf(" + rowSum("sum") + ");\n"
                                          : "invSum = 1.0f / " + rowSum("sum") + ";\n");
  }

  EmittedKernel kernel = kernelFor(group, name, "normalization");
  // runtime_sizes: the row count is the kernel's last parameter and its
  // source names none (the row length stays: the row's registers are laid
  // out for it), so every group of one row length, epilogue and layout
  // shares the kernel.
  const bool runtimeRows = configOf(group).getRuntimeSizes();
  const unsigned lastDim = static_cast<unsigned>(type.getRank() - 1);
  if (runtimeRows && (code->load.indexesByShapeBeyond(lastDim) ||
                      code->store.indexesByShapeBeyond(lastDim)))
    return group.emitOpError("cannot run as ")
           << stringifyKernelVariant(configOf(group).getVariant())
           << " with its rows given at launch: an input is indexed by the row (a broadcast "
              "or a data movement), which would name the row count";
  if (runtimeRows)
    kernel.scalars = {rows};
  const std::string rowCount = runtimeRows ? "row_count" : std::to_string(rows) + "LL";
  const std::vector<std::string> rowParameter =
      runtimeRows ? std::vector<std::string>{"row_count"} : std::vector<std::string>{};
  std::string loadLoop, storeLoop, vectorConstants;
  if (vector) {
    // Views into a buffer may start anywhere: each pointer's alignment is
    // checked once, and the loops move elements one by one where any is
    // off (the same lanes hold the same elements either way).
    std::string alignment;
    for (const std::string &pointer : vector->pointers)
      alignment += std::string(alignment.empty() ? "" : " | ") + "(unsigned long long)" + pointer;
    vectorConstants = ", kV = " + std::to_string(16 / vector->bytes) +
                      ", kVectors = (L / kV + 31) / 32, kPerLane = kVectors * kV;\n"
                      "  const bool vectors = ((" + alignment + ") & 15) == 0;\n";
    loadLoop = vectorPass(group, code->load,
                          "      " + rowElement + " = " + code->inputValue + ";\n");
    storeLoop = vectorPass(group, code->store, "");
  } else {
    loadLoop = "  " + forEach + " {\n    const long long idx = r * L + j;\n" + code->load.code +
               "    " + rowElement + " = " + code->inputValue + ";\n  }\n";
    storeLoop = "  " + forEach + " {\n    const long long idx = r * L + j;\n" +
                code->store.code + "  }\n";
  }
  if (moments) {
    // One thread stores the row's two statistics.
    std::string stores;
    const llvm::SetVector<Operation *> prologue = prologueOf(anchor);
    for (auto [index, value] : llvm::enumerate(yieldOf(group).getValues())) {
      const std::string out = "out" + std::to_string(index) + "[r] = ";
      if (value == moments.getMean())
        stores += "    " + out + "mean;\n";
      else if (value == moments.getRstd())
        stores += "    " + out + "rstd;\n";
      else if (!prologue.contains(value.getDefiningOp()))
        return group.emitOpError("a row_moments group yields the statistics and its "
                                 "prologue's values only");
    }
    storeLoop = "  if (" + std::string(perWarp ? "lane" : "threadIdx.x") + " == 0) {\n" +
                stores + "  }\n";
  }
  if (perWarp) {
    // 8 rows to a block of 256 threads, a warp's rows strided by every
    // warp of the grid.
    constexpr int64_t kRowsPerBlock = 8;
    kernel.block = 32 * kRowsPerBlock;
    kernel.grid[0] = static_cast<unsigned>(
        std::min<int64_t>((rows + kRowsPerBlock - 1) / kRowsPerBlock, (1LL << 31) - 1));
    // A minimum of one block: with none, ptxas spilled rows of 96 to 768
    // (Swin V2's layer norms) that fit in 72 to 123 registers.
    kernel.source =
        header(group, kernel.kind, /*withLocation=*/!runtimeRows) +
        kernelOpen(group, name, kernel.block, 0, /*minBlocks=*/1, false, false, "",
                   rowParameter) +
        "  constexpr int L = " + std::to_string(rowLength) +
        (vector ? vectorConstants : ", kPerLane = (L + 31) / 32;\n") +
        "  const int lane = threadIdx.x & 31;\n"
        "  const long long warps = (long long)gridDim.x * (blockDim.x / 32);\n"
        "  for (long long r = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; r < " +
        rowCount + "; r += warps) {\n"
        "  float row[kPerLane];\n" + loadLoop + statistics + storeLoop + "  }\n}\n";
    return kernel;
  }
  unsigned threads = rowLength >= 1024 ? 512 : rowLength >= 256 ? 256 : 128;
  kernel.block = threads;
  kernel.grid[0] = static_cast<unsigned>(std::min<int64_t>(rows, 65535LL * 32));
  kernel.dynamicSharedBytes = static_cast<unsigned>(rowLength * sizeof(float));
  kernel.source =
      header(group, kernel.kind, /*withLocation=*/!runtimeRows) +
      kernelOpen(group, name, threads, 0, /*minBlocks=*/1, false, false, "", rowParameter) +
      "  extern __shared__ float row[];\n  __shared__ float scratch[32];\n"
      "  constexpr int L = " + std::to_string(rowLength) + ";\n"
      "  for (long long r = blockIdx.x; r < " + rowCount + "; r += gridDim.x) {\n" + loadLoop + "  __syncthreads();\n" + statistics + storeLoop +
      "  __syncthreads();\n  }\n}\n";
  return kernel;
}
