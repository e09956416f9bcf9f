//===- ReductionEmitter.cpp - reduction groups -> CUDA kernels ------------===//
//
// A reduction group holds one reduce_sum / reduce_mean / reduce_max, the
// elementwise ops that compute its input (the prologue, on the input's
// shape) and elementwise ops on its result (the epilogue). The input's
// dimensions split into kept ones (numbered by the output index p) and
// reduced ones (numbered by r, L of them); element (p, r) sits at a
// row-major offset built from both, with runs of adjacent dimensions merged.
// Two layouts, both accumulating in fp32:
//   rows:    the last dimension is reduced (softmax-like rows, flattening
//            means): one warp per output, lanes stride over r, shuffles.
//   columns: some kept dimensions are innermost (NHWC spatial mean over
//            [1, 2] keeps C): 32 consecutive outputs per block on the lanes,
//            so a warp reads 32 contiguous elements, and 8 warps split r;
//            the 8 partials combine in shared memory.
//   middle:  the group's input itself reduced over a run of dimensions
//            with kept ones on both sides ([O, L, C]; squeeze-and-excitation
//            pooling): kiln_reduce.cuh, 16-byte loads along C, and on
//            sm_90a the configuration's split_k blocks of one image split L
//            as a cluster.
// The result is rounded to its type before the epilogue reads it.
//
//===----------------------------------------------------------------------===//

#include "ElementCode.h"
#include "Emitters.h"
#include "kiln/Dialect/Kiln/KernelShapes.h"

#include "llvm/ADT/SetVector.h"

#include <algorithm>

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;
using namespace kiln::codegen::detail;

namespace {

/// The offset contributed by `dims` of `shape` (row-major strides) when
/// `index` numbers their elements in order. Adjacent dimensions merge into
/// one term; the outermost term needs no modulo since index < the count.
std::string offsetTerms(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims,
                        const std::string &index) {
  SmallVector<int64_t> strides = stridesOf(shape);
  // Runs of consecutive dims: (size, memory stride).
  SmallVector<std::pair<int64_t, int64_t>> runs;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0 && dims[i] == dims[i - 1] + 1)
      runs.back() = {runs.back().first * shape[dims[i]], strides[dims[i]]};
    else
      runs.push_back({shape[dims[i]], strides[dims[i]]});
  }
  std::string text;
  int64_t inner = 1;
  for (size_t i = runs.size(); i-- > 0;) {
    auto [size, stride] = runs[i];
    if (size == 1)
      continue;
    std::string term = inner == 1 ? index : "(" + index + " / " + std::to_string(inner) + "LL)";
    if (i != 0)
      term = "(" + term + " % " + std::to_string(size) + "LL)";
    if (stride != 1)
      term += " * " + std::to_string(stride) + "LL";
    text = text.empty() ? term : term + " + " + text;
    inner *= size;
  }
  return text.empty() ? "0LL" : text;
}

FailureOr<EmittedKernel> emitReductionKernel(FusionOp group, StringRef name) {
  Block &body = group.getBody().front();
  Operation *anchor = nullptr;
  for (Operation &op : body.without_terminator()) {
    if (!isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op))
      continue;
    if (anchor)
      return op.emitOpError("a reduction kernel holds one reduction; a second one "
                            "is not supported by the code generator yet");
    anchor = &op;
  }
  Value input = anchor->getOperand(0);
  auto inputType = cast<RankedTensorType>(input.getType());
  auto resultType = cast<RankedTensorType>(anchor->getResult(0).getType());
  Type element = resultType.getElementType();
  if (!isa<FloatType>(element))
    return anchor->emitOpError("integer reductions are not supported by the code "
                               "generator yet");
  for (Value result : group.getResults())
    if (cast<RankedTensorType>(result.getType()).getShape() != resultType.getShape())
      return group.emitOpError("a reduction kernel needs every result in the "
                               "reduction's shape");
  ArrayRef<int64_t> shape = inputType.getShape();
  ArrayRef<int64_t> dims = reducedDims(anchor);
  SmallVector<int64_t> reduced(dims);
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < inputType.getRank(); ++d)
    if (!llvm::is_contained(reduced, d))
      kept.push_back(d);
  int64_t L = 1;
  for (int64_t d : reduced)
    L *= shape[d];
  int64_t P = resultType.getNumElements();
  bool rows = reduced.back() == inputType.getRank() - 1;

  // The prologue: everything the reduction's input depends on.
  llvm::SetVector<Operation *> prologue = prologueOf(anchor);
  for (Operation &op : body.without_terminator()) {
    if (prologue.contains(&op) || &op == anchor || isa<ConstantOp>(op))
      continue;
    for (Value operand : op.getOperands())
      if (Operation *def = operand.getDefiningOp(); def && prologue.contains(def) &&
                                                    !isa<ConstantOp>(def))
        return op.emitOpError("reads a value computed before the reduction; a "
                              "reduction kernel's epilogue reads only its result");
  }
  for (Value value : yieldOf(group).getValues())
    if (Operation *def = value.getDefiningOp(); def && prologue.contains(def))
      return group.emitOpError("a reduction kernel yields only values computed from "
                               "the reduction's result");

  ElementCode load(group, shape, "idx", "      ");
  for (Operation &op : body.without_terminator())
    if (prologue.contains(&op) && failed(load.emit(&op)))
      return failure();
  std::string value = load.valueOf(input);

  bool isMax = isa<ReduceMaxOp>(anchor);
  std::string result = isMax ? "acc" : isa<ReduceMeanOp>(anchor)
                                            ? "(acc / " + floatLiteral(double(L)) + ")"
                                            : "acc";
  ElementCode store(group, resultType.getShape(), "idx", "    ");
  store.bind(anchor->getResult(0), roundedTo(element, result));
  for (Operation &op : body.without_terminator())
    if (&op != anchor && (!prologue.contains(&op) || isa<ConstantOp>(op)) &&
        failed(store.emit(&op)))
      return failure();
  for (auto [index, v] : llvm::enumerate(yieldOf(group).getValues()))
    store.store(index, v);

  auto combine = [&](const std::string &a, const std::string &b) {
    return isMax ? "kiln::nan_max(" + a + ", " + b + ")" : "(" + a + " + " + b + ")";
  };
  std::string init = isMax ? "-INFINITY" : "0.0f";
  std::string offset = "const long long idx = " + offsetTerms(shape, kept, "p") + " + " +
                       offsetTerms(shape, reduced, "r") + ";\n";
  std::string P_ = std::to_string(P) + "LL", L_ = std::to_string(L) + "LL";

  EmittedKernel kernel = kernelFor(group, name, "reduction");
  kernel.block = kThreads;
  int64_t split = std::max<int64_t>(configOf(group).getSplitK(), 1);
  if (std::optional<MiddleReductionShape> middle = middleReductionShapeOf(group)) {
    // kiln_reduce.cuh: 16-byte loads, kSplit blocks of an image in a cluster.
    const int64_t vectors = middle->inner / middle->vector;
    const int64_t rowsPerBlock = kThreads / vectors;
    kernel.block = static_cast<unsigned>(rowsPerBlock * vectors);
    kernel.grid[0] = static_cast<unsigned>(middle->outer * split);
    kernel.clusterBlocks = static_cast<unsigned>(split);
    std::string inputIndex =
        std::to_string(cast<BlockArgument>(input).getArgNumber());
    std::string loop = "  auto epilogue = [&](long long p, float acc) {\n"
                       "    const long long idx = p;\n" + store.code + "  };\n"
                       "  kiln::reduce::over_middle<" + cudaType(inputType.getElementType()) +
                       ", " + std::to_string(middle->inner) + ", " +
                       std::to_string(rowsPerBlock) + ", " + std::to_string(split) + ", " +
                       (isMax ? "true" : "false") + ">(in" + inputIndex + ", " +
                       std::to_string(middle->length) + "LL, epilogue);\n";
    kernel.source = header(group, kernel.kind) + "#include \"kiln_reduce.cuh\"\n" +
                    clusterPreamble(split) +
                    kernelOpen(group, name, kernel.block, 0, /*minBlocks=*/1,
                               /*splitCluster=*/true) +
                    loop + "}\n";
    return kernel;
  }
  if (split > 1)
    return group.emitOpError("cannot run as a reduction split over ")
           << split << " blocks: it needs a group input reduced over a middle run of "
           << "dimensions whose inner size is a whole number of 16-byte vectors (at most 256)";
  std::string loop;
  if (rows) {
    kernel.grid[0] = gridStrideBlocks(group, P, 8);
    loop = "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
           "  for (long long p = (long long)blockIdx.x * 8 + warp; p < " + P_ +
           "; p += (long long)gridDim.x * 8) {\n"
           "    float acc = " + init + ";\n"
           "    for (long long r = lane; r < " + L_ + "; r += 32) {\n      " + offset +
           load.code + "      acc = " + combine("acc", value) + ";\n    }\n"
           "#pragma unroll\n"
           "    for (int offset = 16; offset > 0; offset >>= 1)\n"
           "      acc = " + combine("acc", "__shfl_xor_sync(0xffffffffu, acc, offset)") + ";\n"
           "    if (lane != 0)\n      continue;\n"
           "    const long long idx = p;\n" + store.code + "  }\n";
  } else {
    kernel.grid[0] = gridStrideBlocks(group, P, 32);
    loop = "  __shared__ float partial[8][33];\n"
           "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
           "  for (long long p0 = (long long)blockIdx.x * 32; p0 < " + P_ +
           "; p0 += (long long)gridDim.x * 32) {\n"
           "    const long long p = p0 + lane;\n"
           "    float acc = " + init + ";\n"
           "    if (p < " + P_ + ") {\n"
           "    for (long long r = warp; r < " + L_ + "; r += 8) {\n      " + offset +
           load.code + "      acc = " + combine("acc", value) + ";\n    }\n    }\n"
           "    partial[warp][lane] = acc;\n    __syncthreads();\n"
           "    if (warp == 0 && p < " + P_ + ") {\n"
           "#pragma unroll\n"
           "      for (int j = 1; j < 8; ++j)\n"
           "        acc = " + combine("acc", "partial[j][lane]") + ";\n"
           "    const long long idx = p;\n" + store.code + "    }\n"
           "    __syncthreads();\n  }\n";
  }
  // ptxas may otherwise hold these to 32 registers and spill the indexing.
  kernel.source = header(group, kernel.kind) +
                  kernelOpen(group, name, kThreads, 0, /*minBlocks=*/1) + loop + "}\n";
  return kernel;
}

} // namespace

FailureOr<EmittedKernel> kiln::codegen::detail::emitReduction(FusionOp group, StringRef name) {
  return emitReductionKernel(group, name);
}
