//===- kiln-compile.cpp - TorchScript model -> kiln IR ---------------------===//
//
//   kiln-compile model.pt --input x:64x256:f32 [--emit=imported|mlir]
//                [--verify] [-o OUT]
//
// Loads and freezes the model, specializes it to the declared input shapes
// (or, for traced archives, the recorded example inputs), imports it into the
// kiln dialect and runs the graph pipeline. --verify runs the imported and the
// optimized IR on random inputs through the reference evaluator and compares
// both with LibTorch running the original module. Every failure prints one
// message and exits non-zero; a failed run never leaves a partial output.
//
//===----------------------------------------------------------------------===//

#include "CompilerDriver.h"
#include "kiln/GitHash.h"
#include "KilnVerify.h"

#include "kiln/Passes/CostModel.h"
#include "kiln/codegen/ArtifactWriter.h"
#include "kiln/codegen/CudaEmitter.h"
#include "kiln/codegen/Nvrtc.h"
#include "kiln/runtime/ArtifactFormat.h"
#include "kiln/Passes/Pipelines.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>

#include <signal.h>
#include <unistd.h>

namespace cl = llvm::cl;
using namespace kiln;

namespace {
/// kiln-compile's own flags; MLIR's and LLVM's are behind --help-hidden.
cl::OptionCategory kilnCategory("kiln-compile options");
cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.pt>"), cl::Required,
                               cl::cat(kilnCategory));
cl::list<std::string> inputSpecs(
    "input", cl::desc("an input as NAME:SHAPE:DTYPE, e.g. x:64x256:f32; an integer input "
                      "may give its values' range, ids:1x128:i64[0,30522) (default for "
                      "traced models: the recorded example inputs' shapes)"),
    cl::value_desc("spec"), cl::cat(kilnCategory));
enum class Emit { Imported, Mlir, Launches, Artifact };
cl::opt<Emit> emit(
    "emit",
    cl::desc("what to write (default: what -o's extension names, .kiln an artifact and "
             ".mlir the optimized kiln IR; without -o an artifact named after the model)"),
    cl::values(clEnumValN(Emit::Imported, "imported",
                          "kiln IR as imported, before any pass"),
               clEnumValN(Emit::Mlir, "mlir", "kiln IR after the graph pipeline"),
               clEnumValN(Emit::Launches, "launches",
                          "kiln IR lowered to kernels and launches per target image: "
                          "the artifact's plan, with each kernel's CUDA source"),
               clEnumValN(Emit::Artifact, "artifact",
                          "a .kiln artifact for kiln-run and the runtime")),
    cl::cat(kilnCategory));
cl::list<std::string> archs(
    "arch", cl::CommaSeparated,
    cl::desc("GPU architectures the artifact carries cubins for, newest first "
             "(default sm_90a,sm_80; PTX of the last is added; native: this "
             "machine's GPU); kernels are selected for the first"),
    cl::value_desc("arch"), cl::cat(kilnCategory));
// Kernel selection's split-K policy (kiln-select-kernels), for tuning it.
cl::opt<int64_t> splitKMaxBlocks(
    "split-k-max-blocks",
    cl::desc("most blocks a split-K GEMM may launch (default: two per multiprocessor)"),
    cl::init(0), cl::cat(kilnCategory));
cl::opt<int64_t> splitKMinK("split-k-min-k",
                            cl::desc("least K each block of a split walks (default 128)"),
                            cl::init(kiln::kSplitKMinK), cl::cat(kilnCategory));
cl::opt<int64_t> splitKTile("split-k-k-tile",
                            cl::desc("k-tile width of the split-K pipeline (default 64)"),
                            cl::init(kiln::kSplitKTile), cl::cat(kilnCategory));
cl::opt<int64_t> splitKStages("split-k-stages",
                              cl::desc("depth of the split-K pipeline (default 3)"),
                              cl::init(kiln::kSplitKStages), cl::cat(kilnCategory));
cl::opt<bool> convWgmma(
    "conv-wgmma",
    cl::desc("run convolutions on the Hopper implicit GEMM (TMA boxes of input pixels, "
             "wgmma) where it applies (default true; =false keeps mma.sync)"),
    cl::init(true), cl::cat(kilnCategory));
cl::opt<int64_t> gemmNarrowFmas(
    "gemm-narrow-fmas",
    cl::desc("run fp16/bf16 GEMMs (and 1x1 convolutions) over many rows with K <= 128 and at "
             "most this many FMAs a row (K x N) on CUDA cores, a thread per row: 0 (never) to "
             "6144 (default 256: where it beat the tensor cores on the GPU)"),
    cl::init(256), cl::cat(kilnCategory));
cl::opt<int64_t> gemmStreamIntensity(
    "gemm-stream-intensity",
    cl::desc("run fp16/bf16 GEMMs (and 1x1 convolutions) over many rows with K and N at most "
             "256, N % 8 == 0 and at most this many FLOPs a byte moved (K N / (K + N)) with A "
             "streamed past a weight in shared memory: 0 (never) to 128 (default 32)"),
    cl::init(32), cl::cat(kilnCategory));
cl::opt<int64_t> gemmStreamBlocks(
    "gemm-stream-blocks",
    cl::desc("blocks of that streaming GEMM a multiprocessor runs, 2 to 4 (default 2), each "
             "with the deepest ring of A tiles that fits them"),
    cl::init(2), cl::cat(kilnCategory));
cl::opt<int64_t> gemmGemvRows(
    "gemm-gemv-rows",
    cl::desc("run fp16/bf16 GEMMs (and 1x1 convolutions) of at most this many rows with a "
             "block per output column and K across a warp's lanes: 0 (never) to 32 (default "
             "8: squeeze-and-excitation blocks and classifiers up to batch 8)"),
    cl::init(8), cl::cat(kilnCategory));
cl::opt<int64_t> depthwiseColumns(
    "depthwise-columns",
    cl::desc("adjacent output columns (1, 2 or 4) a thread of the vectorized depthwise "
             "convolution takes, each input column loaded once for all of them (default 1: "
             "two and four lost on MobileNetV3 at batch 32 on the GPU machine)"),
    cl::init(1), cl::cat(kilnCategory));
cl::opt<bool> depthwisePatches(
    "depthwise-patches",
    cl::desc("run vectorized depthwise convolutions over 2-D patches of outputs, each block "
             "staging its patch's input window in shared memory (default false: slower on "
             "every depthwise layer on the GPU machine, 2026-12-05)"),
    cl::init(false), cl::cat(kilnCategory));
cl::opt<bool> wgmmaMatmul(
    "wgmma-matmul",
    cl::desc("run matmul and bmm (products of two activations: a [K, N] B, a batch) on the "
             "Hopper GEMM where TMA takes them (default true; on the GPU machine, "
             "2026-12-05, 1.1-2.5x cuBLAS where mma.sync took 0.26-0.64x)"),
    cl::init(true), cl::cat(kilnCategory));
cl::opt<bool> runtimeSizes(
    "runtime-sizes",
    cl::desc("compile split-K and Hopper GEMMs without a batch, whose epilogue reads only a "
             "bias and inputs of the result's shape, for sizes given at launch, and "
             "normalizations for a row count given at launch: one kernel for every layer of "
             "a configuration, whatever its sizes, which the kernel library can hold "
             "(default false: BERT-base at batch 32 took 1.7% longer on the GPU machine, "
             "2026-12-05)"),
    cl::init(false), cl::cat(kilnCategory));
cl::opt<std::string> kernelLibrary(
    "kernel-library",
    cl::desc("the kernel library's folder (kiln-kernel-library -o's), read for kernels with "
             "runtime sizes after the kernel cache (default: $KILN_KERNEL_LIBRARY, else "
             "share/kiln/kernels beside kiln-compile's folder)"),
    cl::value_desc("folder"), cl::cat(kilnCategory));
cl::opt<int64_t> elementwiseUnroll(
    "elementwise-unroll",
    cl::desc("elements (1, 2, 4 or 8) a thread of an elementwise kernel takes a step of its "
             "grid-stride loop, every load issued before the first store (default 1: more "
             "not yet measured on the GPU)"),
    cl::init(1), cl::cat(kilnCategory));
cl::opt<bool> convGlobalPool(
    "conv-global-pool",
    cl::desc("A global average pool (the mean over H and W before a classifier) that alone "
             "reads a 1x1 convolution's result fuses into it on Hopper: row tiles of whole "
             "images, their epilogue summing each image's columns, so the convolution's "
             "result is never stored and the pool costs no launch (default false until timed "
             "on the GPU machine)"),
    cl::init(false), cl::cat(kilnCategory));
cl::opt<bool> poolVector(
    "pool-vector",
    cl::desc("pool fp16/bf16 NHWC tensors with C % 8 == 0 eight channels a thread, one "
             "16-byte load per window position (default true; =false keeps a thread per "
             "output element)"),
    cl::init(true), cl::cat(kilnCategory));
cl::opt<std::string> wgmmaSchedule(
    "wgmma-schedule",
    cl::desc("how the Hopper GEMM and convolution share tiles between their two consumer "
             "warpgroups: auto (the selection stage's cost model, the default), cooperative "
             "(both on one tile), pingpong (each on its own, one's epilogue beside the "
             "other's main loop) or epilogue_warpgroups (GEMMs: both on one tile's main loop, "
             "two more warpgroups on the previous tile's epilogue; convolutions take auto)"),
    cl::init("auto"), cl::cat(kilnCategory));
cl::opt<int64_t> wgmmaMulticast(
    "wgmma-multicast",
    cl::desc("blocks of a thread-block cluster that take neighbouring row tiles of the Hopper "
             "GEMM and convolution and share each B tile by TMA multicast: 0 (the selection "
             "stage's choice, the default), 1 (none) or 2"),
    cl::init(0), cl::cat(kilnCategory));
cl::opt<int64_t> wgmmaBlocksPerSM(
    "wgmma-blocks-per-sm",
    cl::desc("blocks of the Hopper GEMM and convolution a multiprocessor runs at once: 0 "
             "(the selection stage's choice, the default), 1 or 2 (twice the warps for "
             "epilogue-bound kernels, half the shared memory and registers each)"),
    cl::init(0), cl::cat(kilnCategory));
cl::opt<int64_t> wgmmaRows(
    "wgmma-rows",
    cl::desc("rows of the Hopper GEMM's tiles: 0 (the selection stage's cost model, the "
             "default: 192-row cooperative tiles with three consumer warpgroups where they "
             "fill the multiprocessors in fewer waves, as ViT's 6304 rows and ResNet-50's "
             "1x1 convolutions at 28 x 28 and 14 x 14 do), 128, or 192 (wherever they fit); "
             "implicit-GEMM convolutions keep 128"),
    cl::init(0), cl::cat(kilnCategory));
cl::opt<bool> wgmmaStreamK(
    "wgmma-stream-k",
    cl::desc("where the Hopper GEMM's tiles fill its last wave of blocks only partly (ViT's "
             "6304 x 768 outputs: 200 tiles on 132 multiprocessors), share the last waves' "
             "tiles by k-iterations, split tiles finished through a workspace past the "
             "arena (default false: slower on ResNet-50 at batch 32, even on ViT's "
             "down-projection)"),
    cl::init(false), cl::cat(kilnCategory));
cl::opt<bool> wgmmaSplitK(
    "wgmma-split-k",
    cl::desc("where the Hopper GEMM's or convolution's tiles fill at most half the "
             "multiprocessors (ResNet-50's last stage at batch 32: 56 tiles of 128 x 128 on "
             "132), clusters of two blocks split each cooperative tile's k-steps and add "
             "their partial sums in shared memory (default false: about 3 us slower a launch "
             "on the CNNs at batch 32)"),
    cl::init(false), cl::cat(kilnCategory));
cl::opt<bool> wgmmaFewRows(
    "wgmma-few-rows",
    cl::desc("GEMMs of one to three 128-row tiles (a transformer layer at batch 1: 128 "
             "tokens) run on the Hopper GEMM where its 128 x 64 tiles fill a quarter of the "
             "multiprocessors, instead of 64 x 64 mma.sync tiles with K split across a "
             "cluster (default true; false: GPT-2, BERT and ViT-B/16 at batch 1 took 1.18-1.31x "
             "as long on the H100)"),
    cl::init(true), cl::cat(kilnCategory));
cl::opt<int64_t> wgmmaFewRowsTiles(
    "wgmma-few-rows-tiles",
    cl::desc("the fewest 128 x 64 tiles that take --wgmma-few-rows (default 0: a quarter of "
             "the multiprocessors, so the 768-wide projections at batch 1, 12 tiles, keep K "
             "split across a cluster)"),
    cl::init(0), cl::cat(kilnCategory));
cl::opt<bool> wgmmaSwap(
    "wgmma-swap",
    cl::desc("the few-row GEMMs that --wgmma-few-rows leaves to K split across a cluster "
             "(the 768-wide projections at batch 1) run with the weight's rows as wgmma's M "
             "side, 64 a block, by 16 or 32 tokens, all of K a block, in clusters sharing each "
             "weight tile (default false: its third build, two consumer warpgroups, is still "
             "slower on the 16-token tiles, GPT-2's down-projection at batch 1 8.9 -> 11.2 us "
             "on the H100, 2026-12-07)"),
    cl::init(false), cl::cat(kilnCategory));
cl::opt<bool> wgmmaNarrow(
    "wgmma-narrow",
    cl::desc("The Hopper GEMM's tiles (GEMMs and 1x1 convolutions with a [N, K] weight, no "
             "batch) become 128 x 56 where that leaves the busiest block fewer outputs: "
             "ResNet-50's 2048 -> 512 at 7 x 7, batch 32, in 130 tiles where 128 x 64 makes "
             "104 on 132 multiprocessors (default false until timed on the GPU machine)"),
    cl::init(false), cl::cat(kilnCategory));
cl::opt<bool> wgmmaMulticastA(
    "wgmma-multicast-a",
    cl::desc("The Hopper GEMM's tiles (GEMMs and 1x1 convolutions with a [N, K] weight, no "
             "batch, two column tiles or more) run in clusters of two blocks on consecutive "
             "column tiles of the same rows, each loading half of the shared A tile by TMA "
             "multicast (default false: slower on every transformer GEMM at batch 32 and on "
             "ResNet-50's 2048 -> 512, on the H100, 2026-12-08)"),
    cl::init(false), cl::cat(kilnCategory));
cl::opt<bool> wgmmaSwapWide(
    "wgmma-swap-wide",
    cl::desc("GEMMs (1x1 convolutions among them) of 4 row tiles or more and K >= 512 that "
             "would split K over mma.sync run with the weight's rows as wgmma's M side, 64 a "
             "block, by 64 to 128 tokens, where those blocks fill one wave with no more "
             "multiply-adds a multiprocessor (default true: EfficientNet-B0's 7 x 7 "
             "projections at batch 32 took 5.5-7.9 us where K split took 8.5-11.5, on the "
             "H100, 2026-12-07)"),
    cl::init(true), cl::cat(kilnCategory));
cl::opt<int64_t> attentionBlocksPerSM(
    "attention-blocks-per-sm",
    cl::desc("blocks of the Hopper attention a multiprocessor runs: 0 (the default: three at "
             "a head size of 64, two at 128) or 4 (at a head size of 64 and 64 queries a "
             "block: four consumer warpgroups a multiprocessor instead of three, each "
             "running its softmax and products in turn, within 96 registers a thread; not "
             "yet timed)"),
    cl::init(0), cl::cat(kilnCategory));
cl::opt<int64_t> wgmmaCandidate(
    "wgmma-candidate",
    cl::desc("-1 (the default): each Hopper GEMM's and convolution's tile from the "
             "selection stage's cost model; N >= 0: the N-th tile the cost model considered "
             "for each (its own choice first, then the others cheapest first; past the last, "
             "its own; with a residual through the ring also 128 x 256 tiles, which the "
             "cost model never takes unmeasured; for a GEMM, 192-row tiles narrower than 192 "
             "last), for bench/tune_layers.py, which compiles "
             "N = 0, 1, 2, ... and times each launch alone"),
    cl::init(-1), cl::cat(kilnCategory));
cl::opt<std::string> kernelTuning(
    "kernel-tuning",
    cl::desc("a tuning file (bench/tune_layers.py's, measured on the GPU machine): each "
             "fusion group it holds takes the kernel configuration it timed fastest, the "
             "others the selection stage's; a file measured on another architecture or "
             "multiprocessor count is refused"),
    cl::value_desc("file.json"), cl::init(""), cl::cat(kilnCategory));
cl::opt<bool> wgmmaResidualPrefetch(
    "wgmma-residual-prefetch",
    cl::desc("ping-pong 64-wide Hopper GEMM tiles that read a residual (ResNet-50's 1x1 "
             "convolutions into a residual add) keep 5 stages instead of 6 and copy each tile's "
             "residual slices at the start of the warpgroup's previous tile (default false: "
             "slower on the GPU machine, ResNet-50's 64 -> 256 + residual at 56 x 56 34.6 -> "
             "37.9 us)"),
    cl::init(false), cl::cat(kilnCategory));
cl::opt<bool> wgmmaResidualRing(
    "wgmma-residual-ring",
    cl::desc("a cooperative Hopper GEMM tile whose epilogue reads one 16-bit residual (a "
             "transformer's down-projection, ResNet-50's 1x1 convolutions into a residual "
             "add, where they take cooperative tiles) loads it through the main loop's ring by TMA, and gives "
             "the staging's row-input half to one more stage where that makes room (false: "
             "the residual copied by rows; on the H100, ViT-B/16's FFN down-projection at "
             "batch 32 48.0 -> 42.9 us with it, BERT's 30.5 -> 29.8)"),
    cl::init(true), cl::cat(kilnCategory));
cl::opt<bool> attentionWgmma(
    "attention-wgmma",
    cl::desc("run attention on Hopper with TMA loads and wgmma for both products where the "
             "head size is 64 or 128 and q, k and v are rows of their projections (default "
             "true; =false keeps the mma.sync kernel there)"),
    cl::init(true), cl::cat(kilnCategory));
cl::opt<bool> attentionOverlap(
    "attention-overlap",
    cl::desc("the Hopper attention runs each key tile's softmax while the previous tile's "
             "P V is on the tensor cores, K and V on barriers of their own (default true; "
             "=false runs softmax and products in turn)"),
    cl::init(true), cl::cat(kilnCategory));
cl::opt<int64_t> attentionStages(
    "attention-stages",
    cl::desc("the Hopper attention's K/V ring: 0 (the default, 2 stages), 2, or 3 at a head size "
             "of 64 (a third tile of K and V in flight)"),
    cl::init(0), cl::cat(kilnCategory));
cl::opt<bool> attentionPersistent(
    "attention-persistent",
    cl::desc("the Hopper attention on a persistent grid of the blocks resident at once, each "
             "walking query blocks of heads, the next one's Q and first K/V tiles loading "
             "during this one's last (default true; false: a block for each 64 queries of a "
             "head)"),
    cl::init(true), cl::cat(kilnCategory));
cl::opt<int64_t> foldLayerNormBytes(
    "fold-layer-norm-bytes",
    cl::desc("an fp16 or bf16 layer norm whose output has at least this many bytes and "
             "feeds one linear alone (a pre-norm transformer's at batch 32) moves into that "
             "linear's epilogue, and a kernel computes only its rows' statistics (default "
             "4 MiB, ViT-B/16's and GPT-2's at batch 32: below it the norm's kernel is "
             "launch-bound; -1: never)"),
    cl::init(kiln::kFoldLayerNormBytes), cl::cat(kilnCategory));
cl::opt<int64_t> mergeShortcutBytes(
    "merge-shortcut-bytes",
    cl::desc("two fp16 or bf16 1x1 convolutions whose results are added (a ResNet "
             "bottleneck's projection shortcut and its last convolution) run as one over "
             "both inputs side by side, when the result has at least this many bytes and "
             "the first --arch runs conv_wgmma (default 4 MiB, every shortcut of ResNet-50 "
             "at batch 32; -1: never)"),
    cl::init(kiln::kMergeShortcutBytes), cl::cat(kilnCategory));
cl::opt<int64_t> attentionRows(
    "attention-rows",
    cl::desc("queries a block of the tensor-core attention kernels take: 0 (the selection "
             "stage's choice, the default), 64 (4 warps; one consumer warpgroup on Hopper) "
             "or 128 (8 warps; on Hopper at a head size of 64, two consumer warpgroups over "
             "one K/V ring): each K/V tile read once for twice the queries"),
    cl::init(0), cl::cat(kilnCategory));
cl::opt<int64_t> multiprocessors(
    "multiprocessors",
    cl::desc("select kernels for a GPU with this many multiprocessors (default: the first "
             "--arch's usual part; native: the GPU's)"),
    cl::init(0), cl::cat(kilnCategory));
cl::opt<std::string> precision(
    "precision", cl::desc("compute precision: fp32 (default), tf32, fp16, bf16"),
    cl::init("fp32"), cl::cat(kilnCategory));
cl::opt<std::string> ioDtype(
    "io-dtype",
    cl::desc("the floating-point inputs' and outputs' type: declared (default: the "
             "model's), f16 (with --precision fp16) or bf16 (with bf16): callers pass "
             "and get the compute type, and no cast kernel runs at either end"),
    cl::init("declared"), cl::cat(kilnCategory));
cl::opt<bool> verifyNumerics(
    "verify", cl::desc("compare the imported and optimized IR with LibTorch on "
                       "random inputs; fail past the dtype's tolerance"),
    cl::cat(kilnCategory));
cl::opt<bool> report("report",
                     cl::desc("print the kernels (kind, ops, shapes, FLOPs, "
                              "bytes) and totals against the unfused graph"),
                     cl::cat(kilnCategory));
cl::list<std::string> kernelArchs(
    "kernels-arch", cl::CommaSeparated,
    cl::desc("emit every kernel and compile it with NVRTC for these "
             "architectures (e.g. sm_90a,sm_80); fail on any compile error, "
             "register spill or ptxas performance warning"),
    cl::value_desc("arch"), cl::cat(kilnCategory));
cl::opt<int64_t> jobs("jobs",
                      cl::desc("kernel images compiled at once (NVRTC, one worker process "
                               "each): 0, the default, is one per core"),
                      cl::init(0), cl::cat(kilnCategory));
cl::opt<bool> verbose("v", cl::desc("print each phase's seconds on stderr (load and import, "
                                    "with the import's steps, passes, verify, kernels with "
                                    "cache hits, write)"),
                      cl::cat(kilnCategory));
cl::opt<bool> quiet("q", cl::desc("print nothing but errors (and what --report or --verify "
                                  "asks for)"),
                    cl::cat(kilnCategory));
cl::opt<std::string> reportJson(
    "report-json",
    cl::desc("write the kernel report (kind, ops, shapes, FLOPs, bytes, kernel name) and each "
             "phase's seconds as one JSON object to this file"),
    cl::value_desc("path"), cl::cat(kilnCategory));
cl::opt<std::string> outputPath(
    "o",
    cl::desc("output file: NAME.kiln (an artifact), NAME.mlir (kiln IR) or - (IR on stdout); "
             "default: MODEL.kiln in the current folder, or stdout for --emit=imported|mlir"),
    cl::value_desc("path"), cl::cat(kilnCategory));
cl::opt<bool> printWeights(
    "print-weights",
    cl::desc("print the weights' bytes in IR written to stdout (elided by default; IR "
             "written to a file keeps them, so that it can be read back)"),
    cl::init(false), cl::cat(kilnCategory));

/// What to write where, from --emit and -o: each names the other's default,
/// and a contradiction or an extension that names neither is an error
/// before any work.
bool resolveOutput(const std::string &model, Emit &what, std::string &path, std::string &error) {
  llvm::StringRef extension = llvm::sys::path::extension(path);
  bool given = emit.getNumOccurrences() > 0;
  if (path.empty()) {
    what = given ? emit.getValue() : Emit::Artifact;
    path = what == Emit::Artifact ? llvm::sys::path::stem(model).str() + ".kiln" : "-";
    return true;
  }
  if (path == "-") {
    what = given ? emit.getValue() : Emit::Mlir;
    if (what == Emit::Artifact) {
      error = "--emit=artifact writes a binary file: give it a name with -o";
      return false;
    }
    return true;
  }
  std::optional<Emit> named;
  llvm::sys::fs::file_status status;
  bool device = !llvm::sys::fs::status(path, status) && llvm::sys::fs::exists(status) &&
                !llvm::sys::fs::is_regular_file(status) && !llvm::sys::fs::is_directory(status);
  if (device && !given) // -o /dev/null: the IR, as for stdout
    named = Emit::Mlir;
  if (extension == ".kiln")
    named = Emit::Artifact;
  else if (extension == ".mlir")
    named = Emit::Mlir;
  if (!given && !named) {
    error = "-o '" + path + "': cannot tell what to write from its name; end it in .kiln (an "
            "artifact) or .mlir (kiln IR), or give --emit";
    return false;
  }
  what = given ? emit.getValue() : *named;
  if (named && (*named == Emit::Artifact) != (what == Emit::Artifact)) {
    error = "-o '" + path + "' names " + (*named == Emit::Artifact ? "an artifact" : "kiln IR") +
            " but --emit asks for " + (what == Emit::Artifact ? "an artifact" : "kiln IR");
    return false;
  }
  return true;
}

/// A function's kernel report (CostModel.h) as JSON, for --report-json.
llvm::json::Object reportToJson(const FusionReport &report) {
  llvm::json::Array kernels;
  for (const KernelStats &k : report.kernels)
    kernels.push_back(llvm::json::Object{{"kind", k.kind},
                                         {"ops", llvm::json::Array(k.ops)},
                                         {"result", k.resultTypes},
                                         {"flops", k.flops},
                                         {"bytes", k.bytes},
                                         {"unfused_kernels", k.unfusedKernels},
                                         {"kernel", k.kernelName},
                                         {"tuning_key", k.tuningKey},
                                         {"kernel_config", k.kernelConfig}});
  llvm::json::Object object{{"function", report.function},
                            {"kernels", std::move(kernels)},
                            {"flops", report.flops},
                            {"bytes", report.bytes},
                            {"unfused_kernels", report.unfusedKernels},
                            {"unfused_bytes", report.unfusedBytes}};
  if (report.arenaBytes >= 0)
    object["arena_bytes"] = report.arenaBytes;
  return object;
}

/// Seconds since this process started: /proc/self/stat's start time (clock
/// ticks after boot, 10 ms each) against CLOCK_BOOTTIME. What it shows is
/// the time before main, LibTorch's static initializers registering its
/// operators (0.2 s or more, as long as a small model's whole compile);
/// nothing where it cannot be read.
std::optional<double> secondsSinceProcessStart() {
  std::ifstream stat("/proc/self/stat");
  std::string text;
  if (!std::getline(stat, text))
    return std::nullopt;
  // The command name, in parentheses, may hold spaces: count from its end.
  size_t close = text.rfind(')');
  if (close == std::string::npos)
    return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  for (int index = 3; index <= 22; ++index) // starttime is field 22
    if (!(fields >> field))
      return std::nullopt;
  char *end = nullptr;
  unsigned long long ticks = std::strtoull(field.c_str(), &end, 10);
  long perSecond = ::sysconf(_SC_CLK_TCK);
  timespec now{};
  if (end == field.c_str() || *end != '\0' || perSecond <= 0 ||
      ::clock_gettime(CLOCK_BOOTTIME, &now) != 0)
    return std::nullopt;
  double seconds = static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9 -
                   static_cast<double>(ticks) / static_cast<double>(perSecond);
  return seconds >= 0 ? std::optional<double>(seconds) : std::nullopt;
}

int fail(const std::string &message) {
  llvm::errs() << "kiln-compile: error: " << message << "\n";
  return 1;
}

/// What can be known about the output before any work: the folder exists
/// and takes files, the path is no folder, and it is not the model itself.
bool checkOutput(const std::string &path, const std::string &model, std::string &error,
                 const std::string &option = "-o") {
  if (path == "-")
    return true;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path, ec) && fs::equivalent(path, model, ec)) {
    error = option + " '" + path + "' is the model itself; refusing to overwrite it";
    return false;
  }
  if (fs::is_directory(path, ec)) {
    error = option + " '" + path + "' is a folder; give a file name";
    return false;
  }
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty())
    folder = ".";
  if (!fs::is_directory(folder, ec)) {
    error = "cannot write '" + path + "': the folder '" + folder.string() +
            "' does not exist";
    return false;
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    error = "cannot write '" + path + "': the folder '" + folder.string() +
            "' is not writable (" + std::strerror(errno) + ")";
    return false;
  }
  return true;
}

/// A compile killed between writing its temporary file and renaming it
/// leaves `PATH.partial.PID`; the next compile to PATH removes those whose
/// process is gone.
void removeStalePartials(const std::string &path) {
  namespace fs = std::filesystem;
  fs::path folder = fs::path(path).parent_path();
  std::string prefix = fs::path(path).filename().string() + ".partial.";
  std::error_code ec;
  for (fs::directory_iterator it(folder.empty() ? "." : folder, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size() ||
        name.find_first_not_of("0123456789", prefix.size()) != std::string::npos ||
        name.size() - prefix.size() > 9)
      continue;
    pid_t pid = static_cast<pid_t>(std::stol(name.substr(prefix.size())));
    if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove(it->path(), ignored);
    }
  }
}

/// Writes what `write` prints to `path` through a temporary file and a
/// rename, so a reader never sees a partial file and a failure leaves none.
bool writeAtomically(const std::string &path,
                     const std::function<void(llvm::raw_ostream &)> &write,
                     std::string &error) {
  if (path == "-") {
    write(llvm::outs());
    return true;
  }
  // A device or a pipe (-o /dev/null) is written in place: renaming a
  // temporary file over it would replace the device with a regular file.
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) && llvm::sys::fs::exists(status) &&
      !llvm::sys::fs::is_regular_file(status)) {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    if (!ec)
      write(out);
    if (ec || (out.close(), out.has_error())) {
      error = "cannot write '" + path + "': " + (ec ? ec : out.error()).message();
      out.clear_error();
      return false;
    }
    return true;
  }
  std::string temporary = path + ".partial." + std::to_string(llvm::sys::Process::getProcessId());
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(temporary, ec);
    if (ec) {
      error = "cannot write '" + path + "': " + ec.message();
      return false;
    }
    write(out);
    out.close();
    if (out.has_error()) {
      error = "cannot write '" + path + "': " + out.error().message();
      out.clear_error();
      llvm::sys::fs::remove(temporary);
      return false;
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    error = "cannot write '" + path + "': " + ec.message();
    return false;
  }
  return true;
}
bool writeAtomically(const std::string &path, const std::string &text, std::string &error) {
  return writeAtomically(path, [&](llvm::raw_ostream &os) { os << text; }, error);
}
} // namespace

static int compileMain(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  cl::HideUnrelatedOptions(kilnCategory);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "kiln-compile " << KILN_VERSION << (std::string(KILN_GIT_HASH).empty() ? "" : " (")
       << KILN_GIT_HASH << (std::string(KILN_GIT_HASH).empty() ? "" : ")") << "\n  LLVM/MLIR "
       << LLVM_VERSION_STRING << "\n  NVRTC " << codegen::nvrtcVersion() << "\n  LibTorch "
       << frontend::libtorchVersion() << "\n  artifact format " << artifact::kVersion
       << "\n";
  });
  cl::ParseCommandLineOptions(argc, argv, "kiln: TorchScript to fused CUDA\n");

  std::string error;
  // Every check that needs no model comes first: a typo fails at once.
  driver::KernelSelection selection;
  selection.archs.assign(archs.begin(), archs.end());
  selection.multiprocessors = multiprocessors;
  selection.splitKMaxBlocks = splitKMaxBlocks;
  selection.splitKMinK = splitKMinK;
  selection.splitKTile = splitKTile;
  selection.splitKStages = splitKStages;
  selection.convWgmma = convWgmma;
  selection.gemmNarrowFmas = gemmNarrowFmas;
  selection.gemmGemvRows = gemmGemvRows;
  selection.gemmStreamIntensity = gemmStreamIntensity;
  selection.gemmStreamBlocks = gemmStreamBlocks;
  selection.depthwiseColumns = depthwiseColumns;
  selection.depthwisePatches = depthwisePatches;
  selection.runtimeSizes = runtimeSizes;
  selection.wgmmaMatmul = wgmmaMatmul;
  if (!driver::checkKernelLibrary(kernelLibrary, error))
    return fail(error);
  selection.elementwiseUnroll = elementwiseUnroll;
  selection.poolVector = poolVector;
  selection.convGlobalPool = convGlobalPool;
  selection.wgmmaSchedule = wgmmaSchedule;
  selection.wgmmaMulticast = wgmmaMulticast;
  selection.wgmmaBlocksPerSM = wgmmaBlocksPerSM;
  selection.wgmmaStreamK = wgmmaStreamK;
  selection.wgmmaResidualPrefetch = wgmmaResidualPrefetch;
  selection.wgmmaResidualRing = wgmmaResidualRing;
  selection.wgmmaSplitK = wgmmaSplitK;
  selection.wgmmaFewRows = wgmmaFewRows;
  selection.wgmmaFewRowsTiles = wgmmaFewRowsTiles;
  selection.wgmmaSwap = wgmmaSwap;
  selection.wgmmaSwapWide = wgmmaSwapWide;
  selection.wgmmaMulticastA = wgmmaMulticastA;
  selection.wgmmaNarrow = wgmmaNarrow;
  if (wgmmaCandidate < -1)
    return fail("--wgmma-candidate=" + std::to_string(wgmmaCandidate) +
                ": -1 (the cost model's tile) or a candidate's index, 0 or more");
  selection.wgmmaCandidate = wgmmaCandidate;
  selection.kernelTuning = kernelTuning;
  selection.attentionBlocksPerSM = attentionBlocksPerSM;
  selection.wgmmaRows = wgmmaRows;
  selection.attentionWgmma = attentionWgmma;
  selection.attentionOverlap = attentionOverlap;
  selection.attentionPersistent = attentionPersistent;
  selection.attentionStages = attentionStages;
  selection.foldLayerNormBytes = foldLayerNormBytes;
  selection.mergeShortcutBytes = mergeShortcutBytes;
  selection.attentionRows = attentionRows;
  std::optional<driver::Precision> precisionChoice =
      driver::parsePrecision(precision, ioDtype, error);
  if (!precisionChoice)
    return fail(error);
  if (jobs < 0 || jobs > 4096)
    return fail("--jobs: " + std::to_string(jobs) +
                " is not a number of compiles at once (0 for one per core, or 1 to 4096)");
  std::optional<TargetDescription> targets = driver::describeTargets(selection, error);
  if (!targets)
    // A knob's message names its flag already; the rest are about --arch.
    return fail(error.rfind("split-K", 0) == 0 || error.rfind("--", 0) == 0 ? error
                                                                             : "--arch: " + error);
  for (const std::string &arch : targets->archs())
    if (!codegen::checkArch(arch, error))
      return fail("--arch: " + error);
  for (const std::string &arch : kernelArchs)
    if (!codegen::checkArch(arch, error))
      return fail("--kernels-arch: " + error);
  // The model itself or a folder given as -o comes first: those say more
  // than its extension.
  if (!outputPath.empty() && !checkOutput(outputPath, modelPath, error))
    return fail(error);
  Emit what = Emit::Artifact;
  std::string output = outputPath;
  if (!resolveOutput(modelPath, what, output, error))
    return fail(error);
  if (!checkOutput(output, modelPath, error))
    return fail(error);
  if (!reportJson.empty() && !checkOutput(reportJson, modelPath, error, "--report-json"))
    return fail(error);
  if (output != "-")
    removeStalePartials(output);

  // -v: one line per phase, with its seconds.
  auto phaseStart = std::chrono::steady_clock::now();
  llvm::json::Array phases; // --report-json
  auto record = [&](const std::string &what, double seconds) {
    if (verbose)
      llvm::errs() << llvm::format("kiln-compile: %-40s %6.2f s\n", what.c_str(), seconds);
    phases.push_back(llvm::json::Object{{"phase", what}, {"seconds", seconds}});
  };
  auto phase = [&](const std::string &what) {
    auto now = std::chrono::steady_clock::now();
    record(what, std::chrono::duration<double>(now - phaseStart).count());
    phaseStart = now;
  };
  if (std::optional<double> started = secondsSinceProcessStart())
    record("process start", *started);
  llvm::json::Object jsonReport{{"model", modelPath.getValue()},
                                {"precision", precision.getValue()},
                                {"targets", llvm::json::Array(targets->archs())},
                                // What the selection saw: a tuning file
                                // records it (bench/tune_layers.py).
                                {"multiprocessors", targets->primary().multiprocessors}};
  mlir::MLIRContext context;
  driver::Compilation compilation;
  std::vector<std::string> specTexts(inputSpecs.begin(), inputSpecs.end());
  if (!driver::importModel(modelPath, specTexts, context, compilation, error))
    return fail(error);
  if (verbose)
    llvm::errs() << "kiln-compile: shapes learned " << compilation.model->shapeRun() << "\n";
  jsonReport["shapes_learned"] = compilation.model->shapeRun();
  phase("load, specialize and import");
  // The import's own steps: where a slow import goes (a model traced on
  // another machine, shapes learned on the CPU).
  llvm::json::Array importSteps;
  for (const auto &[what, seconds] : compilation.importSteps) {
    if (verbose)
      llvm::errs() << llvm::format("kiln-compile:   %-38s %6.2f s\n", what.c_str(), seconds);
    importSteps.push_back(llvm::json::Object{{"step", what}, {"seconds", seconds}});
  }
  jsonReport["import_steps"] = std::move(importSteps);
  if (!driver::optimize(compilation, *precisionChoice, *targets, selection, error,
                        [](mlir::PassManager &pm) {
        // -v: each pass's time too (printed when the pipeline finishes).
        if (verbose)
          pm.enableTiming();
        return mlir::succeeded(mlir::applyPassManagerCLOptions(pm));
      }))
    return fail(error);
  phase("graph passes");
  mlir::OwningOpRef<mlir::ModuleOp> &imported = compilation.imported;
  mlir::OwningOpRef<mlir::ModuleOp> &optimized = compilation.optimized;

  std::string text;
  // An artifact is written piece by piece: its weights are views of the
  // module's constants.
  std::optional<codegen::ArtifactImage> artifact;
  // With launches the report waits for them, to name each row's kernel:
  // kiln-lower-launches turns each group into one launch, in order.
  auto printReports = [&]() {
    llvm::json::Array functions;
    optimized->walk([&](mlir::func::FuncOp fn) {
      FusionReport analysis = analyzeKernels(fn);
      auto lowered = compilation.lowered
                         ? compilation.lowered->lookupSymbol<mlir::func::FuncOp>(fn.getName())
                         : nullptr;
      if (lowered) {
        auto launches = lowered.getBody().getOps<kiln::LaunchOp>();
        if (static_cast<size_t>(std::distance(launches.begin(), launches.end())) ==
            analysis.kernels.size())
          for (auto [stats, launch] : llvm::zip(analysis.kernels, launches))
            stats.kernelName = mlir::cast<kiln::LaunchConfigAttr>(launch.getImages()[0])
                                   .getKernel()
                                   .getValue()
                                   .str();
      }
      if (report)
        printReport(llvm::errs(), analysis);
      functions.push_back(reportToJson(analysis));
    });
    jsonReport["functions"] = std::move(functions);
  };
  if (what == Emit::Launches && !driver::lowerLaunches(compilation, targets->archs(), error))
    return fail(error);
  if ((report || !reportJson.empty()) && what != Emit::Artifact)
    printReports();

  if (!kernelArchs.empty()) {
    auto kernels = codegen::emitModuleKernels(*optimized);
    if (mlir::failed(kernels))
      return fail("code generation failed (see the diagnostics above)");
    for (const std::string &arch : kernelArchs)
      for (const codegen::EmittedKernel &kernel : *kernels)
        if (!codegen::compileKernel(kernel, arch, error))
          return fail(error);
    llvm::errs() << "compiled " << kernels->size() << " kernels for "
                 << llvm::join(kernelArchs, ", ") << "\n";
  }

  if (verifyNumerics) {
    std::string report, failure;
    bool ok = frontend::verifyAgainstTorch(*compilation.model, compilation.specs, *imported, *optimized,
                                           report, failure);
    if (!failure.empty())
      return fail("--verify: " + failure);
    llvm::errs() << report;
    if (!ok)
      return fail("--verify: kiln's result differs from LibTorch beyond the "
                  "tolerance");
    phase("verify against LibTorch");
  }

  if (what == Emit::Artifact) {
    codegen::ArtifactStats stats;
    artifact = driver::writeArtifact(
        compilation, targets->archs(), stats, error,
        driver::artifactMetadata(modelPath, compilation, *precisionChoice, targets->archs(),
                                 selection),
        static_cast<unsigned>(jobs), kernelLibrary);
    // Kernels retried with a safer configuration after ptxas' report was
    // refused: the artifact is not the one selected, and the user may care.
    if (!quiet)
      for (const std::string &note : stats.notes)
        llvm::errs() << "kiln-compile: note: " << note << "\n";
    if (!artifact)
      return fail(error);
    if (verbose)
      llvm::errs() << llvm::format(
          "kiln-compile: %zu kernel images: %zu from the cache, %zu from the kernel library, "
          "%zu compiled in %.2f s\n",
          stats.cachedImages + stats.libraryImages + stats.compiledImages, stats.cachedImages,
          stats.libraryImages, stats.compiledImages, stats.kernelSeconds);
    // The slowest compiles: they run concurrently, so the first bounds the
    // phase however many cores there are.
    if (verbose)
      for (size_t i = 0; i < std::min<size_t>(3, stats.imageTimes.size()); ++i)
        llvm::errs() << llvm::format("kiln-compile:   %6.2f s  %s (%s) for %s\n",
                                     stats.imageTimes[i].seconds,
                                     stats.imageTimes[i].kernel.c_str(),
                                     stats.imageTimes[i].kind.c_str(),
                                     stats.imageTimes[i].arch.c_str());
    phase("code generation, kernels and artifact");
    llvm::json::Array imageTimes;
    for (const codegen::ArtifactStats::ImageTime &image : stats.imageTimes)
      imageTimes.push_back(llvm::json::Object{{"kernel", image.kernel},
                                              {"kind", image.kind},
                                              {"arch", image.arch},
                                              {"seconds", image.seconds}});
    jsonReport["kernel_images"] =
        llvm::json::Object{{"cached", static_cast<int64_t>(stats.cachedImages)},
                           {"library", static_cast<int64_t>(stats.libraryImages)},
                           {"compiled", static_cast<int64_t>(stats.compiledImages)},
                           {"nvrtc_seconds", stats.kernelSeconds},
                           {"compiled_seconds", std::move(imageTimes)}};
    jsonReport["launches"] = static_cast<int64_t>(stats.launches);
    jsonReport["weight_bytes"] = static_cast<int64_t>(stats.weightBytes);
    llvm::json::Array retries;
    for (const std::string &note : stats.notes)
      retries.push_back(note);
    jsonReport["kernel_retries"] = std::move(retries);
    if (report || !reportJson.empty())
      printReports();
    if (!quiet)
      llvm::errs() << "kiln-compile: " << output << ": " << stats.launches
                   << " kernel launches (" << stats.distinctKernels
                   << " distinct kernels) for " << llvm::join(targets->archs(), ", ") << ", "
                   << stats.weightBytes << " bytes of weights\n";
  } else {
    llvm::raw_string_ostream os(text);
    // On stdout (for reading) the weights' bytes are elided; a file keeps
    // them, so that kiln-opt and kiln-translate can read it back.
    mlir::OpPrintingFlags flags;
    if (output == "-" && !printWeights)
      flags.elideLargeElementsAttrs(16).elideLargeResourceString(64);
    (what == Emit::Imported   ? *imported
     : what == Emit::Launches ? *compilation.lowered
                              : *optimized)
        ->print(os, flags);
    os << "\n";
  }
  bool written = artifact ? writeAtomically(
                                 output, [&](llvm::raw_ostream &os) { artifact->writeTo(os); },
                                 error)
                           : writeAtomically(output, text, error);
  if (!written)
    return fail(error);
  phase("write " + (output == "-" ? std::string("to stdout") : output));
  if (!reportJson.empty()) {
    jsonReport["phases"] = std::move(phases);
    std::string json;
    llvm::raw_string_ostream os(json);
    os << llvm::json::Value(std::move(jsonReport)) << "\n";
    if (!writeAtomically(reportJson, json, error))
      return fail(error);
  }
  return 0;
}

int main(int argc, char **argv) {
  int status = compileMain(argc, argv);
  // Every output is closed and renamed into place by now. Exiting the usual
  // way would run LibTorch's static destructors, which unregister its
  // thousands of operators one at a time: 0.09 s of the FFN's 0.5 s compile
  // on two cores, for memory the process is about to give back anyway.
  llvm::outs().flush();
  llvm::errs().flush();
  std::fflush(nullptr);
  llvm::sys::Process::Exit(status, /*NoCleanup=*/true);
}
