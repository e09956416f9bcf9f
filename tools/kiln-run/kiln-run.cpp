//===- kiln-run.cpp - run a .kiln artifact, check it, time it -------------===//
//
//   kiln-run model.kiln [--input NAME=FILE.npy ...] [--check REF.npy ...]
//            [--tolerance T] [--save-inputs DIR] [--save-outputs DIR]
//            [--bench N] [--seed S] [--device-io] [--no-graph]
//            [--profile] [--time-launches N] [--trace FILE.json] [--threads T]
//            [--json FILE]
//
// Inputs not given as .npy are drawn at random (normal for floats). --check
// compares each output, in order, with a reference by relative L2 error
// (default tolerance: 1e-5 for fp32 outputs, 1e-2 for fp16/bf16). --bench
// times N runs after warm-up: wall time per run including copies, and the
// device time of the launch plan as plain launches and as CUDA graph
// replays. --device-io keeps inputs and outputs in device memory (used in
// place). --profile prints per-kernel times; --trace writes a Chrome trace.
// --time-launches N times each launch alone, N back to back from a CUDA
// graph, as vendor libraries' kernels are timed.
// --threads T runs T sessions of the one model on T threads at once and
// checks that each reproduces the single session's outputs bit for bit.
// Exit status: 0, 1 for an error, 2 for a usage error, 3 for a failed check.
// Depends on the runtime only.
//
//===----------------------------------------------------------------------===//

#include "JsonReport.h"
#include "Npy.h"

#include "kiln/kiln.h"
#include "kiln/runtime/ArtifactFormat.h"
#include "kiln/runtime/Device.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

using namespace kiln;

namespace {
/// Exit statuses, as --help states them.
constexpr int kExitError = 1, kExitUsage = 2, kExitCheckFailed = 3;

constexpr const char *kUsage =
    "usage: kiln-run model.kiln [--input NAME=FILE.npy]... [--check REF.npy]... "
    "[--tolerance T] [--save-inputs DIR] [--save-outputs DIR] [--bench N] [--seed S] [--device N] "
    "[--device-io] [--no-graph] [--profile] [--time-launches N] [--trace FILE.json] [--threads T] "
    "[--json FILE]\n";

constexpr const char *kHelp =
    "\nRuns a .kiln artifact on this machine's GPU; checks and times it.\n\n"
    "  --input NAME=FILE.npy  an input's values (others are random: normal for floats)\n"
    "  --check REF.npy        compare the next output with a reference by relative L2\n"
    "  --tolerance T          the checks' tolerance (default 1e-5 for f32 outputs, 1e-2 for\n"
    "                         f16/bf16)\n"
    "  --save-inputs DIR      write the inputs used as DIR/NAME.npy\n"
    "  --save-outputs DIR     write the outputs as DIR/NAME.npy\n"
    "  --bench N              time N runs: wall time per run, and the launch plan's device\n"
    "                         time as plain launches and as CUDA graph replays\n"
    "  --seed S               the random inputs' seed\n"
    "  --device N             run on CUDA device N (default 0)\n"
    "  --device-io            keep inputs and outputs in device memory\n"
    "  --no-graph             launch kernel by kernel instead of replaying a CUDA graph\n"
    "  --profile              per-kernel times; --trace FILE.json also a Chrome trace\n"
    "  --time-launches N      each launch timed alone: N launches of it back to back,\n"
    "                         replayed from a CUDA graph between two events (after the\n"
    "                         checks: the repetitions overwrite intermediates)\n"
    "  --threads T            run T sessions at once and check each against the first\n"
    "  --json FILE            also write what the run found (outputs, checks, bench,\n"
    "                         profile) as one JSON object\n"
    "  --help, --version\n\n"
    "Exit status: 0 when every check passed; 1 for an error (artifact, input, GPU); 2 for\n"
    "a usage error; 3 when an output failed its --check or a thread's outputs differed.\n";

[[noreturn]] void usage(const std::string &why) {
  std::fprintf(stderr, "kiln-run: error: %s\n%s", why.c_str(), kUsage);
  std::exit(kExitUsage);
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // inf or nan
    return sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0);
  if (absx >= 0x477ff000u) // rounds to inf
    return sign | 0x7c00u;
  if (absx < 0x38800000u) { // subnormal half
    float magnitude;
    std::memcpy(&magnitude, &absx, 4);
    return sign | static_cast<uint16_t>(std::nearbyint(magnitude * 16777216.0f));
  }
  uint32_t rounded = absx + 0xfffu + ((absx >> 13) & 1);
  return sign | static_cast<uint16_t>((rounded - 0x38000000u) >> 13);
}

float bf16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

/// The tensor's elements as doubles.
std::vector<double> toDouble(const std::string &data, DType type) {
  size_t n = data.size() / dtypeBytes(type);
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    const char *p = data.data() + i * dtypeBytes(type);
    switch (type) {
    case DType::F32: { float v; std::memcpy(&v, p, 4); out[i] = v; break; }
    case DType::F16: { uint16_t v; std::memcpy(&v, p, 2); out[i] = halfToFloat(v); break; }
    case DType::BF16: { uint16_t v; std::memcpy(&v, p, 2); out[i] = bf16ToFloat(v); break; }
    case DType::I64: { int64_t v; std::memcpy(&v, p, 8); out[i] = double(v); break; }
    case DType::I32: { int32_t v; std::memcpy(&v, p, 4); out[i] = v; break; }
    case DType::Bool: out[i] = *p ? 1 : 0; break;
    }
  }
  return out;
}

std::string fromDouble(const std::vector<double> &values, DType type) {
  std::string out(values.size() * dtypeBytes(type), '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    char *p = out.data() + i * dtypeBytes(type);
    switch (type) {
    case DType::F32: { float v = float(values[i]); std::memcpy(p, &v, 4); break; }
    case DType::F16: { uint16_t v = floatToHalf(float(values[i])); std::memcpy(p, &v, 2); break; }
    case DType::BF16: { uint16_t v = floatToBf16(float(values[i])); std::memcpy(p, &v, 2); break; }
    case DType::I64: { int64_t v = int64_t(values[i]); std::memcpy(p, &v, 8); break; }
    case DType::I32: { int32_t v = int32_t(values[i]); std::memcpy(p, &v, 4); break; }
    case DType::Bool: *p = values[i] != 0; break;
    }
  }
  return out;
}

/// A .npy file's values: float64 (numpy's default, no artifact dtype) read
/// as it is, every other dtype through the artifact's.
std::vector<double> npyValues(const npy::Array &array);

DType npyType(const std::string &descr) {
  if (descr == "<f4") return DType::F32;
  if (descr == "<f2") return DType::F16;
  if (descr == "<i8") return DType::I64;
  if (descr == "<i4") return DType::I32;
  if (descr == "|b1") return DType::Bool;
  throw std::runtime_error("unsupported .npy dtype " + descr);
}

std::vector<double> npyValues(const npy::Array &array) {
  if (array.descr == "<f8") {
    std::vector<double> out(array.data.size() / 8);
    std::memcpy(out.data(), array.data.data(), out.size() * 8);
    return out;
  }
  return toDouble(array.data, npyType(array.descr));
}

struct Options {
  std::string modelPath, saveDir, saveInputsDir, tracePath, jsonPath;
  std::map<std::string, std::string> inputFiles;
  std::vector<std::string> checks;
  double tolerance = -1;
  int bench = 0, threads = 0, device = 0, timeLaunches = 0;
  unsigned seed = 1234;
  bool deviceIO = false, graph = true, profile = false;
};

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage(arg + " needs a value");
      return argv[++i];
    };
    auto number = [&](const std::string &text) {
      try {
        size_t used = 0;
        long n = std::stol(text, &used);
        if (used != text.size() || n < 0 || n > 1000000)
          throw std::invalid_argument(text);
        return static_cast<int>(n);
      } catch (const std::exception &) {
        usage(arg + " takes a count, got '" + text + "'");
      }
    };
    if (arg == "--help" || arg == "-h") {
      std::printf("%s%s", kUsage, kHelp);
      std::exit(0);
    } else if (arg == "--version") {
      std::printf("kiln-run (kiln artifact format %u)\n", artifact::kVersion);
      std::exit(0);
    } else if (arg == "--input") {
      std::string v = value();
      size_t eq = v.find('=');
      if (eq == std::string::npos)
        usage("--input takes NAME=FILE.npy, got '" + v + "'");
      o.inputFiles[v.substr(0, eq)] = v.substr(eq + 1);
    } else if (arg == "--check") {
      o.checks.push_back(value());
    } else if (arg == "--tolerance") {
      std::string text = value();
      char *end = nullptr;
      errno = 0;
      o.tolerance = std::strtod(text.c_str(), &end);
      if (text.empty() || *end || errno == ERANGE || !std::isfinite(o.tolerance) ||
          o.tolerance < 0)
        usage("--tolerance takes a non-negative relative L2 error (e.g. 1e-3), got '" +
              text + "'");
    } else if (arg == "--save-outputs") {
      o.saveDir = value();
    } else if (arg == "--save-inputs") {
      o.saveInputsDir = value();
    } else if (arg == "--bench") {
      o.bench = number(value());
    } else if (arg == "--time-launches") {
      o.timeLaunches = number(value());
      if (o.timeLaunches == 0)
        usage("--time-launches takes a positive count");
    } else if (arg == "--threads") {
      o.threads = number(value());
    } else if (arg == "--device") {
      o.device = number(value());
    } else if (arg == "--seed") {
      o.seed = static_cast<unsigned>(number(value()));
    } else if (arg == "--device-io") {
      o.deviceIO = true;
    } else if (arg == "--no-graph") {
      o.graph = false;
    } else if (arg == "--profile") {
      o.profile = true;
    } else if (arg == "--json") {
      o.jsonPath = value();
    } else if (arg == "--trace") {
      o.tracePath = value();
      o.profile = true;
    } else if (!arg.empty() && arg[0] == '-') {
      usage("unknown option " + arg);
    } else if (o.modelPath.empty()) {
      o.modelPath = arg;
    } else {
      usage("more than one model given");
    }
  }
  if (o.modelPath.empty())
    usage("no model given");
  // Where results go is checked before any work, so a typo costs no run
  // and nothing is written anywhere else.
  auto folder = [](const char *option, const std::string &dir) {
    struct stat info;
    if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
      usage(std::string(option) + ": '" + dir + "' is not a folder (create it first)");
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
      usage(std::string(option) + ": cannot write into '" + dir + "': " +
            std::strerror(errno));
  };
  if (!o.saveDir.empty())
    folder("--save-outputs", o.saveDir);
  if (!o.saveInputsDir.empty())
    folder("--save-inputs", o.saveInputsDir);
  auto folderOf = [&](const char *option, const std::string &path) {
    size_t slash = path.rfind('/');
    folder(option, slash == std::string::npos ? "."
                   : slash == 0               ? "/"
                                              : path.substr(0, slash));
  };
  if (!o.tracePath.empty())
    folderOf("--trace", o.tracePath);
  if (!o.jsonPath.empty())
    folderOf("--json", o.jsonPath);
  return o;
}

/// The inputs and outputs of one session: host strings, and device copies
/// when --device-io asks for them.
struct Buffers {
  std::vector<std::string> inputs, outputs;
  std::vector<std::unique_ptr<rt::DeviceBuffer>> deviceInputs, deviceOutputs;
  std::vector<Tensor> in, out;

  Buffers(const Model &model, const std::vector<std::string> &inputData, bool deviceIO)
      : inputs(inputData) {
    for (const TensorInfo &info : model.outputs())
      outputs.emplace_back(info.bytes(), '\0');
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TensorInfo &info = model.inputs()[i];
      if (deviceIO) {
        deviceInputs.push_back(std::make_unique<rt::DeviceBuffer>(
            std::max<size_t>(info.bytes(), 1), "input '" + info.name + "'"));
        deviceInputs.back()->upload(inputs[i].data(), inputs[i].size());
        in.push_back(Tensor::device(reinterpret_cast<void *>(deviceInputs.back()->address()),
                                    info.dtype, info.shape));
      } else {
        in.push_back(Tensor::host(inputs[i].data(), info.dtype, info.shape));
      }
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      const TensorInfo &info = model.outputs()[i];
      if (deviceIO) {
        deviceOutputs.push_back(std::make_unique<rt::DeviceBuffer>(
            std::max<size_t>(info.bytes(), 1), "output '" + info.name + "'"));
        out.push_back(Tensor::device(reinterpret_cast<void *>(deviceOutputs.back()->address()),
                                     info.dtype, info.shape));
      } else {
        out.push_back(Tensor::host(outputs[i].data(), info.dtype, info.shape));
      }
    }
  }
  /// Brings device outputs back into `outputs`.
  void fetch() {
    for (size_t i = 0; i < deviceOutputs.size(); ++i)
      deviceOutputs[i]->download(outputs[i].data(), outputs[i].size());
  }
};

/// T sessions on T threads, each running `runs` times: every output must
/// equal the single session's bit for bit. Prints the throughput, and with
/// --profile how much copy time overlapped other sessions' kernels.
bool runThreads(const std::shared_ptr<Model> &model, const Options &o,
                const std::vector<std::string> &inputData,
                const std::vector<std::string> &expected) {
  int runs = std::max(o.bench, 20);
  std::vector<std::string> failures(o.threads);
  std::vector<std::vector<TraceEvent>> traces(o.threads);
  std::vector<std::string> chrome(o.threads);
  auto work = [&](int t) {
    try {
      Session session(model, {o.graph, o.profile, o.device});
      Buffers buffers(*model, inputData, o.deviceIO);
      for (int r = 0; r < runs; ++r) {
        for (std::string &output : buffers.outputs)
          std::fill(output.begin(), output.end(), '\0');
        session.run(buffers.in, buffers.out);
        buffers.fetch();
        if (buffers.outputs != expected) {
          failures[t] = "run " + std::to_string(r) + " differs from the single session";
          return;
        }
      }
      if (o.profile) {
        traces[t] = session.trace();
        chrome[t] = session.chromeTrace();
      }
    } catch (const std::exception &e) {
      failures[t] = e.what();
    }
  };
  std::vector<std::thread> workers;
  std::string startFailure;
  auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < o.threads; ++t) {
    try {
      workers.emplace_back(work, t);
    } catch (const std::exception &e) {
      // The system refused a thread (a memory or process limit): the ones
      // started must still be joined before the error leaves this frame.
      startFailure = "--threads " + std::to_string(o.threads) + ": cannot start thread " +
                     std::to_string(t + 1) + ": " + e.what();
      break;
    }
  }
  for (std::thread &w : workers)
    w.join();
  if (!startFailure.empty())
    throw Error(startFailure);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bool ok = true;
  for (int t = 0; t < o.threads; ++t)
    if (!failures[t].empty()) {
      ok = false;
      std::printf("  threads: session %d FAILED: %s\n", t, failures[t].c_str());
    }
  std::printf("  threads: %d sessions x %d runs on one model: %s; %.1f runs/s in all\n",
              o.threads, runs, ok ? "every output identical to the single session" : "FAIL",
              o.threads * runs / seconds);
  if (o.profile) {
    // Copy time of each session that ran while another session's kernel ran.
    double copyMs = 0, overlappedMs = 0;
    for (int t = 0; t < o.threads; ++t)
      for (const TraceEvent &c : traces[t]) {
        if (c.kind != "copy")
          continue;
        copyMs += c.durationMs;
        std::vector<std::pair<double, double>> spans;
        for (int u = 0; u < o.threads; ++u)
          if (u != t)
            for (const TraceEvent &k : traces[u])
              if (k.kind != "copy") {
                double lo = std::max(c.startMs, k.startMs);
                double hi = std::min(c.startMs + c.durationMs, k.startMs + k.durationMs);
                if (hi > lo)
                  spans.push_back({lo, hi});
              }
        std::sort(spans.begin(), spans.end());
        double covered = 0, reach = -1e300;
        for (auto [lo, hi] : spans) {
          lo = std::max(lo, reach);
          if (hi > lo)
            covered += hi - lo;
          reach = std::max(reach, hi);
        }
        overlappedMs += covered;
      }
    std::printf("  overlap: %.4f ms of host copies, %.4f ms (%.0f%%) of it while another "
                "session's kernels ran\n",
                copyMs, overlappedMs, copyMs > 0 ? 100 * overlappedMs / copyMs : 0.0);
    if (!o.tracePath.empty()) {
      npy::writeFileAtomically(o.tracePath, mergeChromeTraces(chrome));
      std::printf("  trace of %d sessions: %s\n", o.threads, o.tracePath.c_str());
    }
  }
  return ok;
}

int run(int argc, char **argv) {
  Options o = parse(argc, argv);
  auto model = Model::load(o.modelPath);
  const std::vector<TensorInfo> &inputs = model->inputs(), &outputs = model->outputs();
  if (!o.checks.empty() && o.checks.size() != outputs.size())
    usage("the model has " + std::to_string(outputs.size()) + " outputs but " +
          std::to_string(o.checks.size()) + " --check references were given");
  for (const auto &[name, file] : o.inputFiles)
    if (std::none_of(inputs.begin(), inputs.end(),
                     [&](const TensorInfo &s) { return s.name == name; }))
      usage("the model has no input named '" + name + "'");

  // The device takes the model and one set of inputs and outputs before any
  // host memory is spent on them: a plan too large fails here, by its size.
  Session session(model, {o.graph, o.profile, o.device});
  size_t ioBytes = 0;
  for (const TensorInfo &info : inputs)
    ioBytes += info.bytes();
  for (const TensorInfo &info : outputs)
    ioBytes += info.bytes();
  rt::checkFreeMemory(ioBytes, "the model's inputs and outputs");

  std::mt19937 rng(o.seed);
  std::normal_distribution<double> normal;
  std::vector<std::string> inputData;
  for (const TensorInfo &spec : inputs) {
    auto file = o.inputFiles.find(spec.name);
    if (file != o.inputFiles.end()) {
      npy::Array array = npy::read(file->second);
      if (array.shape != spec.shape)
        throw Error("input '" + spec.name + "' from " + file->second + " has shape " +
                    shapeText(array.shape) + "; the model expects " + shapeText(spec.shape));
      // Floats travel as f4 for every float dtype (numpy has no bfloat16);
      // any other difference changes values the user may not expect.
      bool f64 = array.descr == "<f8";
      DType fileType = f64 ? DType::F32 : npyType(array.descr);
      bool floatCarrier = !f64 && fileType == DType::F32 &&
                          (spec.dtype == DType::F16 || spec.dtype == DType::BF16);
      if (f64 || (fileType != spec.dtype && !floatCarrier))
        std::fprintf(stderr, "kiln-run: note: input '%s': %s holds %s values, converted to %s\n",
                     spec.name.c_str(), file->second.c_str(), f64 ? "f64" : dtypeName(fileType),
                     dtypeName(spec.dtype));
      inputData.push_back(fromDouble(npyValues(array), spec.dtype));
    } else {
      std::vector<double> values(spec.elements());
      for (double &v : values)
        v = spec.dtype == DType::F32 || spec.dtype == DType::F16 || spec.dtype == DType::BF16
                ? normal(rng)
                : double(rng() % 8);
      inputData.push_back(fromDouble(values, spec.dtype));
    }
    if (!o.saveInputsDir.empty()) {
      // Integer and boolean inputs (token ids, masks) keep their type; floats
      // travel as f4 (numpy has no bfloat16).
      const char *descr = spec.dtype == DType::I64   ? "<i8"
                          : spec.dtype == DType::I32 ? "<i4"
                          : spec.dtype == DType::Bool ? "|b1"
                                                      : "<f4";
      bool raw = descr[1] != 'f';
      npy::write(o.saveInputsDir + "/" + spec.name + ".npy",
                 {descr, spec.shape,
                  raw ? inputData.back()
                      : fromDouble(toDouble(inputData.back(), spec.dtype), DType::F32)});
    }
  }

  Buffers buffers(*model, inputData, o.deviceIO);
  session.run(buffers.in, buffers.out);
  buffers.fetch();
  std::printf("kiln-run: %s on %s (%s): %zu launches of %zu kernels%s%s\n",
              o.modelPath.c_str(), model->deviceName().c_str(), model->loadedArch().c_str(),
              model->launchCount(), model->kernelCount(),
              o.deviceIO ? ", device-resident I/O" : ", host I/O through pinned staging",
              o.profile ? ", profiled" : (o.graph ? ", CUDA graph" : ", plain launches"));

  std::printf("  device memory: weights %.1f MiB, arena %.1f MiB, inputs and outputs %.1f MiB\n",
              model->weightBytes() / 1048576.0, model->arenaBytes() / 1048576.0,
              ioBytes / 1048576.0);
  JsonReport report;
  report.add("model", JsonReport::str(o.modelPath));
  report.add("device", JsonReport::str(model->deviceName()));
  report.add("image", JsonReport::str(model->loadedArch()));
  report.add("launches", std::to_string(model->launchCount()));
  report.add("kernels", std::to_string(model->kernelCount()));
  report.add("memory_bytes", JsonReport::object({{"weights", std::to_string(model->weightBytes())},
                                                 {"arena", std::to_string(model->arenaBytes())},
                                                 {"io", std::to_string(ioBytes)}}));
  std::vector<std::string> outputRows, checkRows;

  bool ok = true;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorInfo &spec = outputs[i];
    std::vector<double> values = toDouble(buffers.outputs[i], spec.dtype);
    size_t nonFinite = std::count_if(values.begin(), values.end(),
                                     [](double v) { return !std::isfinite(v); });
    std::printf("  %s %s %s: %zu non-finite\n", spec.name.c_str(), dtypeName(spec.dtype),
                shapeText(spec.shape).c_str(), nonFinite);
    std::vector<std::string> dims;
    for (int64_t d : spec.shape)
      dims.push_back(std::to_string(d));
    outputRows.push_back(JsonReport::object({{"name", JsonReport::str(spec.name)},
                                             {"dtype", JsonReport::str(dtypeName(spec.dtype))},
                                             {"shape", JsonReport::array(dims)},
                                             {"non_finite", std::to_string(nonFinite)}}));
    if (!o.saveDir.empty())
      npy::write(o.saveDir + "/" + spec.name + ".npy",
                 {"<f4", spec.shape, fromDouble(values, DType::F32)});
    if (o.checks.empty())
      continue;
    npy::Array reference = npy::read(o.checks[i]);
    if (reference.shape != spec.shape)
      throw Error(o.checks[i] + " has shape " + shapeText(reference.shape) + ", output '" +
                  spec.name + "' is " + shapeText(spec.shape));
    std::vector<double> expected = npyValues(reference);
    double diff = 0, norm = 0, maxAbs = 0;
    for (size_t k = 0; k < values.size(); ++k) {
      double d = values[k] - expected[k];
      diff += d * d;
      norm += expected[k] * expected[k];
      maxAbs = std::max(maxAbs, std::fabs(d));
    }
    double relL2 = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
    double limit = o.tolerance >= 0 ? o.tolerance : (spec.dtype == DType::F32 ? 1e-5 : 1e-2);
    bool pass = relL2 <= limit && nonFinite == 0;
    ok &= pass;
    std::printf("  check %s against %s: rel L2 %.3e, max abs %.3e (tolerance %.0e) %s\n",
                spec.name.c_str(), o.checks[i].c_str(), relL2, maxAbs, limit,
                pass ? "ok" : "FAIL");
    checkRows.push_back(JsonReport::object({{"output", JsonReport::str(spec.name)},
                                            {"reference", JsonReport::str(o.checks[i])},
                                            {"rel_l2", JsonReport::num(relL2)},
                                            {"max_abs", JsonReport::num(maxAbs)},
                                            {"tolerance", JsonReport::num(limit)},
                                            {"pass", JsonReport::boolean(pass)}}));
  }
  report.add("outputs", JsonReport::array(outputRows));
  report.add("checks", JsonReport::array(checkRows));

  if (o.bench > 0) {
    for (int i = 0; i < 3; ++i)
      session.run(buffers.in, buffers.out);
    std::vector<double> wall;
    for (int i = 0; i < o.bench; ++i) {
      auto start = std::chrono::steady_clock::now();
      session.run(buffers.in, buffers.out);
      wall.push_back(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start).count());
    }
    std::sort(wall.begin(), wall.end());
    std::printf("  bench (%d runs): wall per run with %s: median %.4f ms, p10 %.4f, "
                "p90 %.4f\n",
                o.bench, o.deviceIO ? "device-resident I/O" : "host copies",
                wall[wall.size() / 2], wall[wall.size() / 10], wall[wall.size() * 9 / 10]);
    float plain = session.timeLaunches(o.bench, false);
    float graph = session.timeLaunches(o.bench, true);
    std::printf("  bench: launch plan alone (device time per run): plain launches %.4f ms, "
                "CUDA graph %.4f ms (%.2fx)\n",
                plain, graph, graph > 0 ? plain / graph : 0.0);
    report.add("bench", JsonReport::object(
                            {{"runs", std::to_string(o.bench)},
                             {"io", JsonReport::str(o.deviceIO ? "device" : "host")},
                             {"wall_median_ms", JsonReport::num(wall[wall.size() / 2])},
                             {"wall_p10_ms", JsonReport::num(wall[wall.size() / 10])},
                             {"wall_p90_ms", JsonReport::num(wall[wall.size() * 9 / 10])},
                             {"plain_launches_ms", JsonReport::num(plain)},
                             {"cuda_graph_ms", JsonReport::num(graph)}}));
  }
  if (o.profile) {
    std::printf("%s", session.profileTable().c_str());
    std::vector<std::string> rows;
    for (const KernelProfile &k : session.profile())
      rows.push_back(JsonReport::object({{"kernel", JsonReport::str(k.name)},
                                         {"kind", JsonReport::str(k.kind)},
                                         {"calls", std::to_string(k.calls)},
                                         {"total_ms", JsonReport::num(k.totalMs)},
                                         {"mean_ms", JsonReport::num(k.meanMs)},
                                         {"percent_of_run", JsonReport::num(k.percentOfRun)}}));
    report.add("profile", JsonReport::array(rows));
    if (!o.tracePath.empty() && o.threads == 0) {
      npy::writeFileAtomically(o.tracePath, session.chromeTrace());
      std::printf("  trace: %s\n", o.tracePath.c_str());
    }
  }
  if (o.timeLaunches > 0) {
    std::vector<LaunchTime> times = session.timeEachLaunch(o.timeLaunches);
    std::printf("launches timed alone (%d back to back each, replayed from a CUDA graph)\n"
                "  launch  kernel                 kind              mean ms\n",
                o.timeLaunches);
    double together = 0;
    std::vector<std::string> rows;
    for (const LaunchTime &t : times) {
      std::printf("  %6zu  %-22s %-14s %10.5f\n", t.launch, t.kernel.c_str(), t.kind.c_str(),
                  t.meanMs);
      together += t.meanMs;
      rows.push_back(JsonReport::object({{"launch", std::to_string(t.launch)},
                                         {"kernel", JsonReport::str(t.kernel)},
                                         {"kind", JsonReport::str(t.kind)},
                                         {"mean_ms", JsonReport::num(t.meanMs)}}));
    }
    std::printf("%zu launches alone: %.4f ms together\n", times.size(), together);
    report.add("launches_alone", JsonReport::object({{"repetitions", std::to_string(o.timeLaunches)},
                                                     {"launches", JsonReport::array(rows)}}));
  }
  if (o.threads > 0) {
    std::vector<std::string> expected = buffers.outputs;
    bool same = runThreads(model, o, inputData, expected);
    report.add("threads", JsonReport::object({{"sessions", std::to_string(o.threads)},
                                              {"outputs_identical", JsonReport::boolean(same)}}));
    ok &= same;
  }
  report.add("ok", JsonReport::boolean(ok));
  if (!o.jsonPath.empty())
    npy::writeFileAtomically(o.jsonPath, report.text());
  return ok ? 0 : kExitCheckFailed;
}
} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "kiln-run: error: out of host memory\n");
    return kExitError;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "kiln-run: error: %s\n", e.what());
    return kExitError;
  }
}
