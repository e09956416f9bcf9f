//===- kiln-kernel-library.cpp - kernels built with kiln, for any size -----===//
//
//   kiln-kernel-library -o build/share/kiln/kernels
//
// Compiles the kernels that take their sizes at launch (--runtime-sizes:
// the Hopper and split-K GEMMs, and the normalizations' row counts) into a
// folder laid out like the kernel cache, which kiln-compile reads before
// compiling (KernelCache::library). The kernels are found the way a
// model's are: a grid of linear layers (rows x columns x depth), each with
// one of the common epilogues, and of layer norms and RMSNorms over common
// hidden sizes at common epsilons, in fp16 and bf16, goes through kiln's
// graph pipeline, and every group the selection stage gives runtime sizes
// contributes its kernel. Only those: a library
// entry must serve any model whose layer has that configuration and
// epilogue, at any size, and a kernel with sizes in its source would
// serve one shape only. A kernel that ptxas refuses (a model's compile
// would retry it with sizes in the source) is left out and counted.
//
//===----------------------------------------------------------------------===//

#include "kiln/GitHash.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Passes/Pipelines.h"
#include "kiln/Target/Target.h"
#include "kiln/codegen/CompileJobs.h"
#include "kiln/codegen/CudaEmitter.h"
#include "kiln/codegen/Nvrtc.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

using namespace mlir;
namespace codegen = kiln::codegen;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("kiln-kernel-library options");
cl::opt<std::string> output("o", cl::desc("the library's folder (made if missing)"),
                            cl::value_desc("folder"), cl::Required, cl::cat(category));
cl::list<std::string> archs("arch", cl::desc("GPU architectures, as kiln-compile's --arch "
                                             "(default sm_90a,sm_80)"),
                            cl::CommaSeparated, cl::cat(category));
cl::list<std::string> dtypes("dtypes", cl::desc("element types (default f16,bf16)"),
                             cl::CommaSeparated, cl::cat(category));
cl::list<std::string> epilogues(
    "epilogues",
    cl::desc("epilogues (default all): none, bias, gelu, gelu_tanh, relu, silu, residual "
             "(x + linear), residual_after (linear + x), residual_no_bias"),
    cl::CommaSeparated, cl::cat(category));
cl::list<int64_t> rows("rows", cl::desc("rows (M) of the grid's layers"), cl::CommaSeparated,
                       cl::cat(category));
cl::list<int64_t> columns("columns", cl::desc("output features (N) of the grid's layers"),
                          cl::CommaSeparated, cl::cat(category));
cl::list<int64_t> depths("depths", cl::desc("input features (K) of the grid's layers"),
                         cl::CommaSeparated, cl::cat(category));
cl::list<std::string> norms("norms",
                           cl::desc("normalizations over rows (default layer_norm,rms_norm; "
                                    "none: no normalization kernels)"),
                           cl::CommaSeparated, cl::cat(category));
cl::list<int64_t> normLengths("norm-lengths",
                              cl::desc("row lengths (hidden sizes) of the normalizations"),
                              cl::CommaSeparated, cl::cat(category));
cl::opt<int64_t> multiprocessors("multiprocessors",
                                 cl::desc("the GPU's multiprocessors the selection plans for "
                                          "(default: the first architecture's)"),
                                 cl::init(0), cl::cat(category));
cl::opt<unsigned> jobs("jobs", cl::desc("compiles at once (default: one per core)"),
                       cl::init(0), cl::cat(category));
cl::opt<bool> verbose("v", cl::desc("list every kernel and why a refused one was"),
                      cl::cat(category));

const char *const kEpilogues[] = {"none",     "bias",     "gelu",           "gelu_tanh",
                                  "relu",     "silu",     "residual",       "residual_after",
                                  "residual_no_bias"};

/// A function of one linear layer [m, k] x [n, k]^T and `epilogue`, as the
/// importer writes a traced model's (weights as arguments: the groups and
/// their kernels are the same).
std::optional<std::string> layer(const std::string &epilogue, const std::string &dtype,
                                 int64_t m, int64_t n, int64_t k) {
  const std::string name = "@layer_" + std::to_string(m) + "x" + std::to_string(n) + "x" +
                           std::to_string(k);
  auto t = [&](int64_t a, int64_t b) {
    return "tensor<" + std::to_string(a) + "x" + std::to_string(b) + "x" + dtype + ">";
  };
  const std::string x = t(m, k), w = t(n, k), y = t(m, n);
  const std::string b = "tensor<" + std::to_string(n) + "x" + dtype + ">";
  const bool bias = epilogue != "none" && epilogue != "residual_no_bias";
  const bool residual = epilogue.rfind("residual", 0) == 0;
  std::string args = "%x: " + x + ", %w: " + w + (bias ? ", %b: " + b : "") +
                     (residual ? ", %r: " + y : "");
  std::string body = bias ? "  %l = kiln.linear %x, %w, %b : (" + x + ", " + w + ", " + b +
                                ") -> " + y + "\n"
                          : "  %l = kiln.linear %x, %w : (" + x + ", " + w + ") -> " + y + "\n";
  std::string result = "%l";
  if (epilogue == "gelu" || epilogue == "gelu_tanh" || epilogue == "relu" ||
      epilogue == "silu") {
    std::string op = epilogue == "gelu_tanh" ? "gelu" : epilogue;
    body += "  %e = kiln." + op + " %l" + (epilogue == "gelu_tanh" ? " approximate = tanh" : "") +
            " : " + y + "\n";
    result = "%e";
  } else if (epilogue == "residual" || epilogue == "residual_no_bias") {
    body += "  %e = kiln.add %r, %l : " + y + "\n";
    result = "%e";
  } else if (epilogue == "residual_after") {
    body += "  %e = kiln.add %l, %r : " + y + "\n";
    result = "%e";
  } else if (epilogue != "none" && epilogue != "bias") {
    return std::nullopt;
  }
  return "  func.func " + name + "(" + args + ") -> " + y + " {\n" + body + "    return " + result +
         " : " + y + "\n  }\n";
}

/// A function of one normalization over rows of `length` (a layer norm
/// with weight and bias, or an RMSNorm with a weight), at `eps`.
std::string normalization(const std::string &norm, const std::string &dtype, int64_t length,
                          const std::string &eps, size_t index) {
  const std::string x = "tensor<8192x" + std::to_string(length) + "x" + dtype + ">";
  const std::string v = "tensor<" + std::to_string(length) + "x" + dtype + ">";
  const std::string name =
      "@" + norm + "_" + std::to_string(length) + "_" + std::to_string(index);
  if (norm == "rms_norm")
    return "  func.func " + name + "(%x: " + x + ", %w: " + v + ") -> " + x +
           " {\n    %n = kiln.layer_norm %x weight %w axis = 1 eps = " + eps + " rms : (" + x +
           ", " + v + ") -> " + x + "\n    return %n : " + x + "\n  }\n";
  return "  func.func " + name + "(%x: " + x + ", %w: " + v + ", %b: " + v + ") -> " + x +
         " {\n    %n = kiln.layer_norm %x weight %w bias %b axis = 1 eps = " + eps + " : (" +
         x + ", " + v + ", " + v + ") -> " + x + "\n    return %n : " + x + "\n  }\n";
}

template <typename T> std::vector<T> orDefault(const cl::list<T> &given, std::vector<T> fallback) {
  return given.empty() ? fallback : std::vector<T>(given.begin(), given.end());
}

/// What a kernel of the library is, for the manifest.
struct LibraryKernel {
  codegen::EmittedKernel kernel;
  std::string what;
};

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "kiln-kernel-library " << KILN_VERSION
       << (std::string(KILN_GIT_HASH).empty() ? "" : " (") << KILN_GIT_HASH
       << (std::string(KILN_GIT_HASH).empty() ? "" : ")") << "\n  LLVM/MLIR "
       << LLVM_VERSION_STRING << "\n  NVRTC " << codegen::nvrtcVersion() << "\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "kiln-kernel-library: builds the kernels that take their sizes at launch into a folder "
      "kiln-compile reads before compiling\n");
  auto fail = [](const std::string &message) {
    llvm::errs() << "kiln-kernel-library: error: " << message << "\n";
    return 1;
  };
  const std::vector<std::string> targets = orDefault(archs, {"sm_90a", "sm_80"});
  std::string error;
  std::optional<kiln::TargetDescription> description = kiln::describeTargets(targets, error);
  if (!description)
    return fail(error);
  for (const std::string &epilogue : epilogues)
    if (!llvm::is_contained(kEpilogues, epilogue))
      return fail("unknown epilogue '" + epilogue + "' (see --help)");
  for (const std::string &dtype : dtypes)
    if (dtype != "f16" && dtype != "bf16")
      return fail("--dtypes takes f16 and bf16 (the Hopper GEMM's), got '" + dtype + "'");

  // The grid: transformer and MLP widths, rows from a few tiles to many
  // waves, so that the cost model's every 128-row choice comes up.
  const std::vector<int64_t> ms = orDefault(rows, {128, 512, 2048, 8192});
  const std::vector<int64_t> ns =
      orDefault(columns, {256, 512, 768, 1024, 1536, 2048, 2304, 3072, 4096, 5120, 8192});
  const std::vector<int64_t> ks = orDefault(depths, {256, 768, 1024, 2048, 3072, 4096});
  for (int64_t v : llvm::concat<const int64_t>(ms, ns, ks))
    if (v <= 0 || v > (1 << 20))
      return fail("sizes run from 1 to 2^20, got " + std::to_string(v));

  const std::vector<std::string> normKinds = orDefault(norms, {"layer_norm", "rms_norm"});
  for (const std::string &norm : normKinds)
    if (norm != "layer_norm" && norm != "rms_norm" && norm != "none")
      return fail("unknown normalization '" + norm + "' (layer_norm, rms_norm or none)");
  const std::vector<int64_t> lengths = orDefault(
      normLengths, {256, 384, 512, 768, 1024, 1280, 1536, 2048, 2560, 3072, 4096, 5120, 8192});
  for (int64_t v : lengths)
    if (v <= 0 || v > 12288)
      return fail("row lengths run from 1 to 12288 (the row kernel's shared memory), got " +
                  std::to_string(v));

  // One module per type and epilogue (the layers), and per type (the
  // normalizations: layer norms at the epsilons of PyTorch, LLaMA and
  // BERT, RMSNorms at LLaMA's and PyTorch's).
  std::vector<std::pair<std::string, std::string>> modules; // (label, IR)
  for (const std::string &dtype : orDefault(dtypes, {"f16", "bf16"})) {
    for (const std::string &epilogue :
         orDefault(epilogues, std::vector<std::string>(std::begin(kEpilogues),
                                                       std::end(kEpilogues)))) {
      std::string text = "module {\n";
      for (int64_t m : ms)
        for (int64_t n : ns)
          for (int64_t k : ks)
            text += *layer(epilogue, dtype, m, n, k);
      modules.emplace_back(dtype + " " + epilogue, text + "}\n");
    }
    for (const std::string &norm : normKinds) {
      if (norm == "none")
        continue;
      std::string text = "module {\n";
      const std::vector<std::string> epsilons =
          norm == "rms_norm" ? std::vector<std::string>{"1.0e-06", "1.0e-05"}
                             : std::vector<std::string>{"1.0e-05", "1.0e-06", "1.0e-12"};
      for (int64_t length : lengths)
        for (size_t e = 0; e < epsilons.size(); ++e)
          text += normalization(norm, dtype, length, epsilons[e], e);
      modules.emplace_back(dtype + " " + norm, text + "}\n");
    }
  }

  MLIRContext context;
  context.loadDialect<kiln::KilnDialect, func::FuncDialect>();
  std::map<std::string, LibraryKernel> bySource;
  for (const auto &[label, text] : modules) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    if (!module)
      return fail("the grid's IR did not parse (" + label + ")");
    PassManager pm(&context);
    kiln::GraphPipelineOptions pipeline;
    pipeline.targets = targets;
    pipeline.multiprocessors = multiprocessors > 0
                                   ? multiprocessors.getValue()
                                   : int64_t(description->primary().multiprocessors);
    pipeline.runtimeSizes = true;
    kiln::buildGraphPipeline(pm, pipeline);
    if (failed(pm.run(*module)))
      return fail("the graph pipeline failed on the grid (" + label + ")");
    bool emitted = true;
    module->walk([&](kiln::FusionOp group) {
      auto config = group->getAttrOfType<kiln::KernelConfigAttr>(kiln::attr::kKernel);
      if (!config || !config.getRuntimeSizes())
        return;
      FailureOr<codegen::EmittedKernel> anonymous = codegen::emitKernel(group, "kiln_kernel");
      if (failed(anonymous)) {
        emitted = false;
        return;
      }
      if (bySource.count(anonymous->source))
        return;
      FailureOr<codegen::EmittedKernel> named =
          codegen::emitKernel(group, codegen::kernelSymbol(anonymous->source));
      if (failed(named)) {
        emitted = false;
        return;
      }
      std::string what;
      llvm::raw_string_ostream os(what);
      os << label << " " << config;
      bySource.emplace(anonymous->source, LibraryKernel{*named, what});
    });
    if (!emitted)
      return fail("a kernel of the grid did not emit (" + label + ")");
  }

  // The build removes entries it did not make: only in a folder of its own
  // (a library's, with its MANIFEST, or an empty one), never in a kernel
  // cache given by mistake.
  {
    std::error_code ec;
    namespace fs = std::filesystem;
    if (fs::exists(output.getValue(), ec) && !fs::exists(output + "/MANIFEST", ec) &&
        !fs::is_empty(output.getValue(), ec))
      return fail("'" + output + "' holds files and no MANIFEST file, so it is not a kernel library (give an "
                  "empty folder or a library's)");
  }
  if (std::error_code made = llvm::sys::fs::create_directories(output); made)
    return fail("cannot make '" + output + "': " + made.message());
  // The compiles go through the kernel cache, which is the library's folder
  // here: entries already there are kept, new ones written atomically.
  ::setenv("KILN_CACHE_DIR", output.c_str(), 1);
  ::unsetenv("KILN_NO_CACHE");
  ::setenv("KILN_KERNEL_LIBRARY", "", 1);
  std::vector<const LibraryKernel *> kernels;
  for (const auto &[source, entry] : bySource)
    kernels.push_back(&entry);
  std::vector<std::pair<size_t, size_t>> work; // (kernel, arch)
  for (size_t k = 0; k < kernels.size(); ++k)
    for (size_t a = 0; a < targets.size(); ++a)
      work.emplace_back(k, a);
  std::vector<codegen::CompileJobResult> results = codegen::runCompileJobs(
      work.size(),
      [&](size_t i, std::string &jobError) {
        return codegen::compileKernel(kernels[work[i].first]->kernel, targets[work[i].second],
                                      jobError);
      },
      jobs);
  size_t kept = 0, compiled = 0, refused = 0;
  std::string manifest;
  for (size_t i = 0; i < work.size(); ++i) {
    const LibraryKernel &entry = *kernels[work[i].first];
    const std::string &arch = targets[work[i].second];
    const codegen::CompileJobResult &result = results[i];
    if (!result.output) {
      ++refused;
      if (verbose)
        llvm::errs() << "kiln-kernel-library: left out " << entry.kernel.name << " for " << arch
                     << " (" << entry.what << "): " << result.error << "\n";
      continue;
    }
    ++(result.output->fromCache ? kept : compiled);
    manifest += entry.kernel.name + " " + arch + " " + entry.what + "\n";
    if (verbose)
      llvm::errs() << "kiln-kernel-library: " << entry.kernel.name << " " << arch << " "
                   << entry.what << "\n";
  }
  // Entries of an earlier build that this one has not made (kernels whose
  // source has changed since) would never be read again: removed.
  std::set<std::string> current;
  for (size_t i = 0; i < work.size(); ++i)
    current.insert(codegen::kernelCacheKey(kernels[work[i].first]->kernel, targets[work[i].second]) +
                   ".kernel");
  size_t removed = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(output.getValue(), ec), end; !ec && it != end;
       it.increment(ec))
    if (it->path().extension() == ".kernel" && !current.count(it->path().filename().string())) {
      std::error_code ignored;
      removed += std::filesystem::remove(it->path(), ignored) ? 1 : 0;
    }
  {
    std::ofstream file(output + "/MANIFEST");
    file << "# kernel, image, type, epilogue, configuration: the kernels whose sizes are given "
            "at launch that kiln-kernel-library built here\n"
         << manifest;
    if (!file)
      return fail("cannot write '" + output + "/MANIFEST'");
  }
  auto count = [](size_t n, const char *noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
  };
  llvm::errs() << "kiln-kernel-library: " << count(kernels.size(), "kernel") << ", "
               << count(kept + compiled, "image") << " in " << output << " (" << compiled
               << " compiled, " << kept << " already there, " << refused
               << " refused by ptxas and left out; " << removed << " stale entries removed)\n";
  return 0;
}
