//===- EpilogueFunctor.cpp - the fused epilogue behind every tiled loop ---===//
//
// One builder for the functor that the GEMM, convolution and attention
// kernels call with their accumulators (see Emitters.h for its shape and why
// its loads and stores are apart).
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"

#include <cstdlib>

using namespace mlir;

namespace kiln::codegen::detail {

/// `value` without a final rounding to `type`: a value already rounded
/// through its storage type (`kiln::to_float(kiln::from_float<T>(x))`) is
/// stored as x, since rounding twice gives what rounding once does, and the
/// compiler cannot see through the conversions' inline assembly to fold them.
static std::string withoutRounding(const std::string &value, const std::string &type) {
  const std::string prefix = "kiln::to_float(kiln::from_float<" + type + ">(";
  if (value.rfind(prefix, 0) != 0 || value.size() < prefix.size() + 2 ||
      value.compare(value.size() - 2, 2, "))") != 0)
    return value;
  // The prefix's parentheses must close at the end, not inside the value.
  int depth = 2;
  for (size_t i = prefix.size(); i + 2 < value.size(); ++i) {
    depth += value[i] == '(' ? 1 : value[i] == ')' ? -1 : 0;
    if (depth < 2)
      return value;
  }
  return value.substr(prefix.size(), value.size() - prefix.size() - 2);
}

bool epilogueColumnPairs(bool pairs, const ElementCode &epilogue, llvm::StringRef pairedIndex) {
  // KILN_EPILOGUE_PAIRS=0 turns column pairs off: a diagnostic for timing
  // a kernel both ways on the GPU machine (the source, and so the kernel
  // cache's key, differs).
  const char *pairsSetting = std::getenv("KILN_EPILOGUE_PAIRS");
  pairs = pairs && !(pairsSetting && std::string(pairsSetting) == "0");
  // Two adjacent elements share one aligned store only at the element's
  // own index (or one the caller knows is as aligned) and for a float
  // result.
  for (const ElementCode::DeferredStore &store : epilogue.deferredStores)
    pairs = pairs && (store.at == "idx" || (!pairedIndex.empty() && store.at == pairedIndex)) &&
            !store.integer;
  return pairs;
}

/// The CUDA type of the epilogue's one row-varying input ("" without
/// exactly one).
static std::string rowInputCudaType(FusionOp group, const ElementCode &epilogue) {
  if (epilogue.elementLoads.size() != 1)
    return "";
  return cudaType(
      cast<RankedTensorType>(group.getInputs()[epilogue.elementLoads[0]].getType())
          .getElementType());
}

bool epilogueOnFragments(FusionOp group, const ElementCode &epilogue, bool pairs, bool chunks) {
  // KILN_EPILOGUE_FRAGMENTS is a diagnostic for timing a kernel each way
  // (the source, and so the kernel cache's key, differs): "0" turns
  // fragments off, "columns" keeps them to epilogues without a row-varying
  // input (the other settings: emitEpilogueFunctor, GemmEmitter.cpp).
  const char *fragmentsSetting = std::getenv("KILN_EPILOGUE_FRAGMENTS");
  const std::string fragmentsMode = fragmentsSetting ? fragmentsSetting : "";
  auto sixteenBits = [](const std::string &type) {
    return type == "__half" || type == "__nv_bfloat16";
  };
  const std::string rowInputType = rowInputCudaType(group, epilogue);
  return pairs && chunks && fragmentsMode != "0" && epilogue.deferredStores.size() == 1 &&
         sixteenBits(epilogue.deferredStores[0].type) &&
         (epilogue.elementLoads.empty() ||
          (fragmentsMode != "columns" && sixteenBits(rowInputType)));
}

/// Whether fragments (`fragments`) take the result's last ops on packed
/// fp16 pairs (see emitEpilogueFunctor).
static bool packedStepsOn(bool fragments, const EpilogueFunctor &functor,
                          const ElementCode &epilogue) {
  return fragments && functor.halfSteps && epilogue.deferredStores[0].type == "__half" &&
         !epilogue.deferredStores[0].packedSteps.empty();
}

/// Where a pooled functor's element (m, n) adds into the tile's sums: its
/// image among the tile's, its column among the tile's.
static std::string poolSlot(const EpilogueFunctor &functor) {
  return "pool_sums() + (m / " + std::to_string(functor.poolPixels) + " % " +
         std::to_string(functor.poolImages) + ") * " + std::to_string(functor.poolWidth) +
         " + n % " + std::to_string(functor.poolWidth);
}

std::string emitEpilogueFunctor(FusionOp group, const EpilogueFunctor &functor,
                                const ElementCode &epilogue) {
  std::string members;
  for (auto [index, input] : llvm::enumerate(group.getInputs()))
    members += "  const " +
               cudaType(cast<RankedTensorType>(input.getType()).getElementType()) + " *in" +
               std::to_string(index) + ";\n";
  for (auto [index, result] : llvm::enumerate(group.getResults()))
    members += "  " + cudaType(cast<RankedTensorType>(result.getType()).getElementType()) +
               " *out" + std::to_string(index) + ";\n";

  // Values hold each result as computed (a float, or an exact integer) and
  // store() rounds it to its type: a pair of adjacent columns then rounds
  // to a half2 in one instruction (store_pair).
  std::string values, returned, stores, pairStores;
  const bool pairs = epilogueColumnPairs(functor.pairs, epilogue, functor.pairedIndex);
  for (auto [position, store] : llvm::enumerate(epilogue.deferredStores)) {
    std::string field = "r" + std::to_string(position);
    values += std::string(store.integer ? " long long " : " float ") + field + ";";
    returned += std::string(position ? ", " : "") + withoutRounding(store.value, store.type);
    std::string out = "out" + std::to_string(store.result);
    stores += "    " + out + "[" + store.at + "] = kiln::from_float<" + store.type +
              ">(values." + field + ");\n";
    pairStores += "    kiln::store_pair(" + out + " + " + store.at + ", first." + field +
                  ", second." + field + ");\n";
  }
  // A residual's tile is read only after the main loop, and under the
  // accumulators' register pressure ptxas issues those loads one at a time:
  // from DRAM, each is a round trip that nothing hides. prefetch_l2() pulls
  // one element's row-varying inputs into L2 (a main loop asks for the next
  // tile's while it computes this one), prefetch_l1() into L1 (the next
  // slice's, while it runs this one's epilogue); kPrefetchStep is the
  // columns one 128-byte line covers (0: no such input).
  std::string prefetchesL2, prefetchesL1;
  unsigned widestBytes = 0;
  for (unsigned input : epilogue.elementLoads) {
    prefetchesL2 += "    kiln::prefetch_l2(in" + std::to_string(input) + " + idx);\n";
    prefetchesL1 += "    kiln::prefetch_l1(in" + std::to_string(input) + " + idx);\n";
    Type element =
        cast<RankedTensorType>(group.getInputs()[input].getType()).getElementType();
    widestBytes = std::max(widestBytes, (element.getIntOrFloatBitWidth() + 7) / 8);
  }
  const std::string signature = "(" + functor.parameters;
  // element(): one element from its accumulator and the inputs read at its
  // own index (residuals), which compute() loads one at a time and
  // compute_pair() two at a time, by one aligned load per input.
  std::string elementParameters, loads, ownLoads, firstLoads, secondLoads;
  for (unsigned input : epilogue.elementLoads) {
    const std::string name = "in" + std::to_string(input);
    Type type = cast<RankedTensorType>(group.getInputs()[input].getType()).getElementType();
    elementParameters += ", const " + cudaType(type) + " " + name + "_element";
    ownLoads += ", " + name + "[idx]";
    loads += "    const auto " + name + "_pair = kiln::load_pair(" + name + " + idx);\n";
    firstLoads += ", " + name + "_pair.x";
    secondLoads += ", " + name + "_pair.y";
  }
  const std::string element =
      "  __device__ __forceinline__ Values element" + signature + ", float acc" +
      elementParameters + ") const {\n" + functor.indexCode + "    (void)idx;\n" +
      epilogue.code + "    return Values{" + returned + "};\n  }\n";
  std::string computePair;
  if (pairs) {
    // The column is the functor's last argument (n for a GEMM, o for a
    // convolution): the second element's is one more.
    const std::string nextColumn = functor.arguments + " + 1";
    computePair = "  __device__ __forceinline__ void compute_pair" + signature +
                  ", float acc0, float acc1, Values &first, Values &second) const {\n" +
                  functor.indexCode + loads + "    first = element(" + functor.arguments +
                  ", acc0" + firstLoads + ");\n    second = element(" + nextColumn + ", acc1" +
                  secondLoads + ");\n  }\n";
  }
  // Fragments: the kernel rounds each pair to one 32-bit register and
  // gathers a row's 8 elements in shared memory for one 16-byte store. A
  // row-varying input (a residual) of 16 bits comes the other way: copied
  // into shared memory by 16-byte rows, read back in the accumulators'
  // layout (row_input_at, compute_packed's `inputs`). Besides the settings
  // epilogueOnFragments reads, KILN_EPILOGUE_FRAGMENTS=late-residual has the
  // Hopper main loops copy a tile's first slice of the row input when its
  // epilogue starts instead of before its k-steps (kRowInputEarly, the
  // default: 0.5-0.7 us faster on the transformer GEMMs with a residual on
  // 2026-12-03, so that the epilogue does not open on a round trip to L2).
  // A kernel configuration's residual_ring has the GEMM emitter give the
  // row input a tensor map (EpilogueFunctor::rowInputMap) for the main
  // loop's ring to load it through instead.
  const char *fragmentsSetting = std::getenv("KILN_EPILOGUE_FRAGMENTS");
  const std::string fragmentsMode = fragmentsSetting ? fragmentsSetting : "";
  const std::string rowInputType = rowInputCudaType(group, epilogue);
  // A pool adds each stored element into the tile's sums instead (below).
  const bool pooled = functor.poolPixels > 0;
  const bool fragments = epilogueOnFragments(group, epilogue, pairs, functor.chunks);
  const bool rowInput = fragments && !epilogue.elementLoads.empty();
  // Where the result's last ops are a GELU, a ReLU or an add of the row
  // input (ElementCode's packedSteps), the fragments take them on the
  // rounded pair in half2 arithmetic: the add and the ReLU exactly as
  // PyTorch computes them, in a quarter of the fp32 instructions, and the
  // GELU in a third (kiln_common.cuh's kiln::approx::gelu_half2: at most
  // 12.5 fp16 ulps off, where the fp32 form is 2).
  const bool packedSteps = packedStepsOn(fragments, functor, epilogue);
  std::string fragmentMembers;
  if (fragments) {
    // compute_packed takes the two row-input elements packed as the kernel
    // read them (ignored without a row input), so that one call serves both.
    const ElementCode::DeferredStore &store = epilogue.deferredStores[0];
    // What element() computes, or with packed steps what they start from
    // (packed_base(): element()'s code, whose own last ops are then dead).
    const std::string compute = packedSteps ? "packed_base(" : "element(";
    const std::string first = packedSteps ? "first" : "first.r0";
    const std::string second = packedSteps ? "second" : "second.r0";
    if (packedSteps)
      fragmentMembers = "  __device__ __forceinline__ float packed_base" + signature +
                        ", float acc" + elementParameters + ") const {\n" + functor.indexCode +
                        "    (void)idx;\n" + epilogue.code + "    return " +
                        withoutRounding(store.packedBase, store.type) + ";\n  }\n";
    std::string body;
    if (rowInput) {
      const std::string input = "in" + std::to_string(epilogue.elementLoads[0]);
      fragmentMembers += "  __device__ __forceinline__ const void *row_input_at" + signature +
                         ") const {\n" + functor.indexCode + "    return " + input +
                         " + idx;\n  }\n";
      body = "    const kiln::Pair<" + rowInputType + "> pair = *reinterpret_cast<const "
             "kiln::Pair<" + rowInputType + "> *>(&inputs);\n";
    }
    if (rowInput || packedSteps) {
      const std::string x = rowInput ? ", pair.x)" : ")", y = rowInput ? ", pair.y)" : ")";
      body += "    const " + std::string(packedSteps ? "float" : "Values") + " first = " +
              compute + functor.arguments + ", acc0" + x + ", second = " + compute +
              functor.arguments + " + 1, acc1" + y + ";\n";
    } else {
      body = "    Values first, second;\n    compute_pair(" + functor.arguments +
             ", acc0, acc1, first, second);\n";
    }
    body += "    unsigned packed = kiln::pack_pair<" + store.type + ">(" + first + ", " + second +
            ");\n";
    // Each step's call on `packed`, first step first.
    if (packedSteps)
      for (const std::string &step : store.packedSteps) {
        std::string call = step;
        call.replace(call.find('%'), 1, "packed");
        body += "    packed = " + call + ";\n";
      }
    fragmentMembers += "  __device__ __forceinline__ unsigned compute_packed" + signature +
                       ", float acc0, float acc1, unsigned inputs) const {\n" + body +
                       "    return packed;\n  }\n"
                       "  __device__ __forceinline__ void store_chunk" + signature +
                       ", uint4 chunk) const {\n" +
                       (pooled
                            // The chunk's 8 rounded elements into the pool's sums.
                            ? "    const " + store.type +
                                  " *elements = reinterpret_cast<const " + store.type +
                                  " *>(&chunk);\n    float *sums = " + poolSlot(functor) +
                                  ";\n#pragma unroll\n    for (int i = 0; i < 8; ++i)\n"
                                  "      atomicAdd(sums + i, kiln::to_float(elements[i]));\n"
                            : functor.indexCode + "    *reinterpret_cast<uint4 *>(out" +
                                  std::to_string(store.result) + " + idx) = chunk;\n") +
                       "  }\n";
  }
  const std::string prefetchStep = std::to_string(widestBytes ? 128 / widestBytes : 0);
  // The row input through the main loop's ring: a box of the tile's rows x
  // 64 columns from its tensor map (a TMA copy the producer issues).
  const bool ring = !functor.rowInputMap.empty();
  std::string ringMembers;
  if (ring)
    ringMembers =
        "  const kiln::sm90::TensorMap *rowInputMap;\n"
        "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
        "  __device__ __forceinline__ void load_row_input_box(void *dst, int m0, int n0, "
        "unsigned long long *bar) const {\n"
        "    kiln::sm90::tma_load_2d(dst, *rowInputMap, n0, m0, bar);\n"
        "  }\n"
        "#endif\n";
  std::string poolMembers = "  static constexpr int kPoolImages = 0, kPoolPixels = 0, "
                            "kPoolWidth = 0;\n";
  if (pooled) {
    // One result, the pool's; its deferred store is the pooled element's.
    const ElementCode::DeferredStore &store = epilogue.deferredStores[0];
    const std::string images = std::to_string(functor.poolImages),
                      pixels = std::to_string(functor.poolPixels),
                      width = std::to_string(functor.poolWidth),
                      sums = std::to_string(functor.poolImages * functor.poolWidth);
    const std::string slot = poolSlot(functor);
    const std::string rounded = "kiln::to_float(kiln::from_float<" + store.type + ">(";
    stores = "    atomicAdd(" + slot + ", " + rounded + "values.r0)));\n";
    pairStores = "    atomicAdd(" + slot + ", " + rounded + "first.r0)));\n"
                 "    atomicAdd(" + slot + " + 1, " + rounded + "second.r0)));\n";
    const std::string poolType = cudaType(
        cast<RankedTensorType>(group.getResult(store.result).getType()).getElementType());
    poolMembers =
        "  static constexpr int kPoolImages = " + images + ", kPoolPixels = " + pixels +
        ", kPoolWidth = " + width + ";\n"
        "  // A tile's sums, its images by its columns (static: the kernel's\n"
        "  // dynamic shared memory is the main loop's).\n"
        "  static __device__ __forceinline__ float *pool_sums() {\n"
        "    __shared__ float sums[" + sums + "];\n"
        "    return sums;\n"
        "  }\n"
        "  __device__ __forceinline__ void pool_clear(int thread, int threads) const {\n"
        "    for (int s = thread; s < " + sums + "; s += threads)\n"
        "      pool_sums()[s] = 0.0f;\n"
        "  }\n"
        "  // Row tile tileM's means into the pool, its sums cleared for the next.\n"
        "  __device__ __forceinline__ void pool_flush(int tileM, int blockN, int thread, "
        "int threads) const {\n"
        "    for (int s = thread; s < " + sums + "; s += threads) {\n"
        "      const int image = tileM * " + images + " + s / " + width +
        ", n = blockN + s % " + width + ";\n"
        "      if (image < " + std::to_string(functor.poolTotalImages) + " && n < " +
        std::to_string(functor.poolColumns) + ")\n"
        "        pool_store(image, n, pool_sums()[s]);\n"
        "      pool_sums()[s] = 0.0f;\n"
        "    }\n"
        "  }\n"
        "  __device__ __forceinline__ void pool_store(int image, int n, float sum) const {\n"
        "    out" + std::to_string(store.result) + "[(long long)image * " +
        std::to_string(functor.poolColumns) + " + n] = kiln::from_float<" + poolType +
        ">(sum / " + pixels + ".0f);\n"
        "  }\n"
        "  // An element as the pool adds it (the fallback's).\n"
        "  __device__ __forceinline__ float pool_value" + signature + ", float acc) const {\n"
        "    return " + rounded + "compute(" + functor.arguments + ", acc).r0));\n"
        "  }\n";
  }
  return "struct " + functor.name + " {\n" + members + functor.extraMembers + ringMembers +
         "  struct Values {" + values + " };\n" + element +
         "  __device__ __forceinline__ Values compute" + signature + ", float acc) const {\n" +
         functor.indexCode + "    return element(" + functor.arguments + ", acc" + ownLoads +
         ");\n  }\n"
         "  __device__ __forceinline__ void store" + signature +
         ", const Values &values) const {\n" + functor.indexCode + "    (void)idx;\n" + stores +
         "  }\n"
         "  static constexpr bool kPairs = " + (pairs ? "true" : "false") + ";\n" + computePair +
         "  static constexpr bool kFragments = " + (fragments ? "true" : "false") + ";\n" +
         "  static constexpr bool kRowInput = " + (rowInput ? "true" : "false") + ";\n" +
         "  static constexpr bool kRowInputEarly = " +
         (rowInput && fragmentsMode != "late-residual" ? "true" : "false") + ";\n" +
         fragmentMembers + poolMembers +
         "  __device__ __forceinline__ void store_pair" + signature +
         ", const Values &first, const Values &second) const {\n" +
         (pairs ? functor.indexCode + pairStores : "") + "  }\n"
         "  static constexpr bool kRowInputRing = " + (ring && rowInput ? "true" : "false") +
         ";\n"
         "  static constexpr int kPrefetchStep = " + prefetchStep + ";\n"
         "  __device__ __forceinline__ void prefetch_l2" + signature + ") const {\n" +
         (prefetchesL2.empty() ? "" : functor.indexCode + prefetchesL2) + "  }\n"
         "  __device__ __forceinline__ void prefetch_l1" + signature + ") const {\n" +
         (prefetchesL1.empty() ? "" : functor.indexCode + prefetchesL1) + "  }\n"
         "  __device__ __forceinline__ void operator()" + signature + ", float acc) const {\n"
         "    store(" + functor.arguments + ", compute(" + functor.arguments + ", acc));\n"
         "  }\n};\n";
}

std::string epilogueInitializers(FusionOp group) {
  std::string text;
  for (unsigned i = 0; i < group.getInputs().size(); ++i)
    text += std::string(i ? ", " : "") + "in" + std::to_string(i);
  for (unsigned i = 0; i < group.getNumResults(); ++i)
    text += ", out" + std::to_string(i);
  return text;
}

} // namespace kiln::codegen::detail
