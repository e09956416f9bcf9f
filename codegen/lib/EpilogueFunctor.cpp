//===- EpilogueFunctor.cpp - the fused epilogue behind every tiled loop ---===//
//
// One builder for the functor that the GEMM, convolution and attention
// kernels call with their accumulators (see Emitters.h for its shape and why
// its loads and stores are apart).
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"

using namespace mlir;

namespace kiln::codegen::detail {

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

  std::string values, returned, stores;
  for (auto [position, store] : llvm::enumerate(epilogue.deferredStores)) {
    std::string field = "r" + std::to_string(position);
    values += " " + store.type + " " + field + ";";
    returned += std::string(position ? ", " : "") + "kiln::from_float<" + store.type + ">(" +
                store.value + ")";
    stores += "    out" + std::to_string(store.result) + "[" + store.at + "] = values." + field +
              ";\n";
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
  const std::string prefetchStep = std::to_string(widestBytes ? 128 / widestBytes : 0);
  const std::string signature = "(" + functor.parameters;
  return "struct " + functor.name + " {\n" + members + functor.extraMembers +
         "  struct Values {" + values + " };\n"
         "  __device__ __forceinline__ Values compute" + signature + ", float acc) const {\n" +
         functor.indexCode + epilogue.code + "    return Values{" + returned + "};\n  }\n"
         "  __device__ __forceinline__ void store" + signature +
         ", const Values &values) const {\n" + functor.indexCode + "    (void)idx;\n" + stores +
         "  }\n"
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
