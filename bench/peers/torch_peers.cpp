//===- torch_peers.cpp - time the PyTorch peers of a .kiln artifact -------===//
//
//   kiln-torch-peers aoti PACKAGE.pt2 INPUTS.pt REFERENCE.pt RUNS
//                    [--device cuda|cpu] [--no-graph]
//   kiln-torch-peers torchscript MODEL.pt INPUTS.pt REFERENCE.pt RUNS
//                    [--device cuda|cpu] [--no-graph]
//
// Times what a C++ deployment would run instead of kiln: an AOTInductor
// package or a TorchScript module, through LibTorch with no Python in the
// loop. The timing is kiln-run's for whole models, so the columns compare:
// median host wall time of synchronous calls on device-resident inputs. On
// CUDA it also times replays of a CUDA graph captured from one call. INPUTS.pt
// (a list of tensors) and REFERENCE.pt (the fp32 output) come from Python's
// torch.save; the first output is checked against the reference by relative
// L2 error. Standalone: depends on LibTorch only.
//
//===----------------------------------------------------------------------===//

#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/script.h>
#include <torch/serialize.h>
#include <torch/version.h>

#ifdef KILN_PEERS_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

[[noreturn]] void usage(const std::string &why) {
  std::fprintf(stderr,
               "kiln-torch-peers: error: %s\nusage: kiln-torch-peers aoti|torchscript "
               "MODEL INPUTS.pt REFERENCE.pt RUNS [--device cuda|cpu] [--no-graph]\n",
               why.c_str());
  std::exit(2);
}

struct Options {
  std::string kind, model, inputs, reference, device = "cuda";
  int runs = 0;
  bool graph = true;
};

Options parse(int argc, char **argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--device") {
      if (i + 1 >= argc)
        usage("--device needs a value");
      o.device = argv[++i];
      if (o.device != "cuda" && o.device != "cpu")
        usage("--device takes cuda or cpu, got '" + o.device + "'");
    } else if (arg == "--no-graph") {
      o.graph = false;
    } else if (!arg.empty() && arg[0] == '-') {
      usage("unknown option " + arg);
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 5)
    usage("expected 5 arguments (KIND MODEL INPUTS.pt REFERENCE.pt RUNS), got " +
          std::to_string(positional.size()));
  o.kind = positional[0];
  if (o.kind != "aoti" && o.kind != "torchscript")
    usage("unknown peer '" + o.kind + "' (aoti or torchscript)");
  o.model = positional[1];
  o.inputs = positional[2];
  o.reference = positional[3];
  try {
    size_t used = 0;
    long n = std::stol(positional[4], &used);
    if (used != positional[4].size() || n < 1 || n > 1000000)
      throw std::invalid_argument(positional[4]);
    o.runs = static_cast<int>(n);
  } catch (const std::exception &) {
    usage("RUNS takes a positive count, got '" + positional[4] + "'");
  }
  return o;
}

/// LibTorch's messages run to several lines (backtraces, hints); one line
/// keeps the output easy to scrape. The TorchScript interpreter's first line
/// only says that an operation failed; the reason is the last "...Error: ".
std::string firstLine(const std::string &text) {
  size_t reason = text.rfind("Error: ");
  if (text.rfind("The following operation failed", 0) == 0 && reason != std::string::npos)
    return firstLine(text.substr(text.rfind('\n', reason) + 1));
  return text.substr(0, text.find('\n'));
}

std::string message(const std::exception &e) {
  if (auto *error = dynamic_cast<const c10::Error *>(&e))
    return firstLine(error->what_without_backtrace());
  return firstLine(e.what());
}

/// A Python torch.save file (a zip archive) read back as an IValue.
c10::IValue loadSaved(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  try {
    return torch::pickle_load(bytes);
  } catch (const std::exception &e) {
    throw std::runtime_error(path + " is not a torch.save file: " + message(e));
  }
}

/// The elements of a tuple or list, the values of a dict in their order (a
/// traced Hugging Face model returns its ModelOutput as one), or else the
/// value itself.
std::vector<c10::IValue> elements(const c10::IValue &value) {
  if (value.isTuple())
    return value.toTupleRef().elements().vec();
  if (value.isList())
    return value.toList().vec();
  if (value.isGenericDict()) {
    std::vector<c10::IValue> values;
    for (const auto &entry : value.toGenericDict())
      values.push_back(entry.value());
    return values;
  }
  return {value};
}

std::vector<torch::Tensor> loadInputs(const std::string &path, torch::Device device) {
  std::vector<torch::Tensor> inputs;
  for (const c10::IValue &item : elements(loadSaved(path))) {
    if (!item.isTensor())
      throw std::runtime_error(path + ": every input must be a tensor");
    inputs.push_back(item.toTensor().to(device));
  }
  if (inputs.empty())
    throw std::runtime_error(path + " holds no tensors (expected a list of tensors)");
  return inputs;
}

/// The first tensor of a TorchScript output: a tensor, or the first tensor
/// of a tuple, list or dict.
torch::Tensor firstTensor(const c10::IValue &value) {
  for (const c10::IValue &item : elements(value))
    if (item.isTensor())
      return item.toTensor();
  throw std::runtime_error("the model's output holds no tensor");
}

double relL2(const torch::Tensor &out, const torch::Tensor &ref) {
  torch::Tensor o = out.to(torch::kCPU, torch::kFloat).reshape(-1);
  torch::Tensor r = ref.to(torch::kCPU, torch::kFloat).reshape(-1);
  if (o.numel() != r.numel())
    throw std::runtime_error("output has " + std::to_string(o.numel()) +
                             " elements, the reference " + std::to_string(r.numel()));
  double diff = (o - r).norm().item<double>(), norm = r.norm().item<double>();
  return norm > 0 ? diff / norm : diff;
}

/// One synchronous-to-be call of the peer, returning its first output.
using Call = std::function<torch::Tensor()>;

/// `singleThreaded` asks AOTInductor for its runner without the per-call
/// event and model pool, as PyTorch advises for CUDA graphs: the default
/// runner queries its last run's CUDA event, which fails under capture
/// ("operation not permitted when stream is capturing").
Call loadPeer(const Options &o, torch::Device device,
              const std::vector<torch::Tensor> &inputs, bool singleThreaded) {
  if (o.kind == "aoti") {
    auto loader = std::make_shared<torch::inductor::AOTIModelPackageLoader>(
        o.model, "model", singleThreaded);
    // A CPU package given --device cuda (or back) would fail later on, with
    // a less clear message.
    auto metadata = loader->get_metadata();
    auto key = metadata.find("AOTI_DEVICE_KEY");
    if (key != metadata.end() && key->second != device.str())
      throw std::runtime_error(o.model + " was compiled for " + key->second +
                               ", not " + device.str());
    return [=] {
      // run() falls back to the current stream when given none; naming it
      // makes the capture stream explicit.
      void *stream = nullptr;
#ifdef KILN_PEERS_CUDA
      if (device.is_cuda())
        stream = c10::cuda::getCurrentCUDAStream().stream();
#endif
      std::vector<torch::Tensor> outputs = loader->run(inputs, stream);
      if (outputs.empty())
        throw std::runtime_error("the package returned no output");
      return outputs[0];
    };
  }
  auto module = std::make_shared<torch::jit::Module>(torch::jit::load(o.model, device));
  module->eval();
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  return [module, args] { return firstTensor(module->forward(args)); };
}

struct Times {
  double median, p10, p90;
};

/// 10 warm-up calls, then `runs` calls, each timed with a synchronize after
/// it: kiln-run's "wall per run", including its percentile indices.
Times timeCalls(const std::function<void()> &call, const std::function<void()> &sync,
                int runs) {
  for (int i = 0; i < 10; ++i) {
    call();
    sync();
  }
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    call();
    sync();
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[ms.size() / 10], ms[ms.size() * 9 / 10]};
}

#ifdef KILN_PEERS_CUDA
/// Captures one call into a CUDA graph and times its replays. Throws when
/// the peer cannot be captured; the capture is ended first, so the stream
/// leaves capture mode.
void timeGraph(const Call &call, const torch::Tensor &ref, int runs) {
  at::cuda::CUDAGraph graph;
  torch::Tensor out;
  {
    // Capture needs a stream other than the legacy default one; warm-up
    // there first so lazy set-up (cuBLAS handles, allocator blocks for the
    // stream, TorchScript's profiling runs) stays out of the graph.
    c10::cuda::CUDAStreamGuard guard(c10::cuda::getStreamFromPool());
    for (int i = 0; i < 3; ++i)
      call();
    torch::cuda::synchronize();
    graph.capture_begin();
    try {
      out = call();
    } catch (...) {
      try {
        graph.capture_end();
      } catch (...) {
      }
      cudaGetLastError(); // not to leave the capture's error to later checks
      throw;
    }
    graph.capture_end();
  }
  auto replay = [&] { graph.replay(); };
  auto sync = [] { torch::cuda::synchronize(); };
  replay();
  sync();
  double check = relL2(out, ref);
  Times t = timeCalls(replay, sync, runs);
  std::printf("graph: median %.4f ms, p10 %.4f ms, p90 %.4f ms (%d synchronous replays), "
              "check rel L2 %.3e\n",
              t.median, t.p10, t.p90, runs, check);
}
#endif

int run(const Options &o) {
  torch::Device device(o.device == "cuda" ? torch::kCUDA : torch::kCPU);
#ifdef KILN_PEERS_CUDA
  if (device.is_cuda() && !torch::cuda::is_available())
    throw std::runtime_error("--device cuda, but no CUDA device is visible");
#else
  if (device.is_cuda())
    throw std::runtime_error("--device cuda, but this build has no CUDA (LibTorch for CPU)");
#endif
  // Both guards: inference is what is timed, with no autograd bookkeeping.
  c10::InferenceMode inference;
  torch::NoGradGuard noGrad;

  std::printf("peer: %s %s on %s\n", o.kind.c_str(), o.model.c_str(), o.device.c_str());
  std::fflush(stdout);
  std::vector<torch::Tensor> inputs = loadInputs(o.inputs, device);
  c10::IValue ref = loadSaved(o.reference);
  if (!ref.isTensor())
    throw std::runtime_error(o.reference + " holds no tensor");
  Call call;
  try {
    call = loadPeer(o, device, inputs, false);
  } catch (const std::exception &e) {
    throw std::runtime_error("cannot load " + o.model + " as " + o.kind + ": " + message(e));
  }

  std::function<void()> sync = [] {};
#ifdef KILN_PEERS_CUDA
  if (device.is_cuda())
    sync = [] { torch::cuda::synchronize(); };
#endif
  torch::Tensor out;
  try {
    out = call();
    sync();
  } catch (const std::exception &e) {
    throw std::runtime_error("the first call failed: " + message(e));
  }
  std::printf("check: rel L2 %.3e\n", relL2(out, ref.toTensor()));
  std::fflush(stdout);

  Times plain = timeCalls([&] { call(); }, sync, o.runs);
  std::printf("plain: median %.4f ms, p10 %.4f ms, p90 %.4f ms (%d synchronous calls)\n",
              plain.median, plain.p10, plain.p90, o.runs);
  std::fflush(stdout);

  if (!o.graph || !device.is_cuda()) {
    std::printf("graph: off\n");
    return 0;
  }
#ifdef KILN_PEERS_CUDA
  // The plain result is out already; a peer that cannot be captured only
  // loses its graph line.
  try {
    Call graphCall = o.kind == "aoti" ? loadPeer(o, device, inputs, true) : call;
    timeGraph(graphCall, ref.toTensor(), o.runs);
  } catch (const std::exception &e) {
    std::printf("graph: unavailable: %s\n", message(e).c_str());
  }
#endif
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // A check that the binary starts here (its LibTorch libraries resolve).
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::printf("kiln-torch-peers, LibTorch %s\n", TORCH_VERSION);
    return 0;
  }
  Options o = parse(argc, argv);
  try {
    return run(o);
  } catch (const std::exception &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "kiln-torch-peers: error: %s\n", message(e).c_str());
    return 1;
  }
}
