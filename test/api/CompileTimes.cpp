//===- CompileTimes.cpp - cold compiles at load time, timed in one process -===//
//
//   kiln-compile-times CACHE_ROOT [--arch A,B] [--precision P] [--io-dtype D]
//                      [--init-cuda] MODEL.pt...
//
// The compile time a program that compiles at load time sees (kiln/compile.h):
// LibTorch, NVRTC and (with --arch native) CUDA are already loaded in its
// process, as torch and Inductor are in the Python process that times
// torch.compile. The first model is compiled once uncounted (its loads of
// those libraries), then every model from an empty kernel cache of its own
// under CACHE_ROOT (KILN_CACHE_DIR; removed after), so that no kernel comes from an earlier
// compile. Prints one JSON object: {"warmup_s": S, "models": [{"path": P,
// "seconds": S, "kernel_seconds": S, "images_compiled": N, "images":
// [{"kernel": K, "kind": K, "arch": A, "seconds": S}, ...]}, ...]}: also the
// phase that compiles the kernel images and each image's CPU seconds,
// slowest first, to set beside kiln-compile -v's. With --init-cuda the
// process first holds device 0's primary context, as a program that runs
// the models it compiles does (CUDA initialized before the compiler's NVRTC
// workers are forked). Exits 1 on any error, naming the model.
//
//===----------------------------------------------------------------------===//

#include "JsonReport.h"
#include "kiln/compile.h"
#include "kiln/runtime/Device.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {
std::vector<std::string> splitCommas(const std::string &text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos)
      comma = text.size();
    if (comma > start)
      parts.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return parts;
}

/// Seconds of one compile of `model` with an empty kernel cache at `cache`.
double coldCompile(const std::string &model, const std::filesystem::path &cache,
                   const kiln::CompileOptions &options, kiln::CompileReport &report) {
  std::filesystem::remove_all(cache);
  std::filesystem::create_directories(cache);
  if (::setenv("KILN_CACHE_DIR", cache.c_str(), 1) != 0)
    throw kiln::Error("cannot set KILN_CACHE_DIR");
  auto start = std::chrono::steady_clock::now();
  std::string artifact = kiln::compileModel(model, options, report);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (artifact.empty())
    throw kiln::Error(model + ": the compile returned no artifact");
  return seconds;
}
} // namespace

int main(int argc, char **argv) {
  const char *usage = "usage: kiln-compile-times CACHE_ROOT [--arch A,B] [--precision P] "
                      "[--io-dtype D] [--init-cuda] MODEL.pt...\n";
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() < 2) {
    std::fputs(usage, stderr);
    return 1;
  }
  const std::filesystem::path cacheRoot = args[0];
  kiln::CompileOptions options;
  options.precision = "fp16";
  std::vector<std::string> models;
  bool initCuda = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "--init-cuda") {
      initCuda = true;
    } else if (arg == "--arch" || arg == "--precision" || arg == "--io-dtype") {
      if (i + 1 == args.size()) {
        std::fprintf(stderr, "kiln-compile-times: %s needs a value\n%s", arg.c_str(), usage);
        return 1;
      }
      const std::string &value = args[++i];
      if (arg == "--arch")
        options.archs = splitCommas(value);
      else if (arg == "--precision")
        options.precision = value;
      else
        options.ioDtype = value;
    } else if (arg.rfind("--", 0) == 0) {
      std::fprintf(stderr, "kiln-compile-times: unknown option %s\n%s", arg.c_str(), usage);
      return 1;
    } else {
      models.push_back(arg);
    }
  }
  if (models.empty() || options.archs.empty()) {
    std::fputs(usage, stderr);
    return 1;
  }
  std::string current;
  try {
    std::unique_ptr<kiln::rt::Context> context;
    if (initCuda)
      context = std::make_unique<kiln::rt::Context>(0);
    current = models.front();
    using kiln::JsonReport;
    JsonReport report;
    kiln::CompileReport compiled;
    report.add("warmup_s",
               JsonReport::num(coldCompile(current, cacheRoot / "warmup", options, compiled)));
    std::vector<std::string> timed;
    for (size_t i = 0; i < models.size(); ++i) {
      current = models[i];
      const double seconds =
          coldCompile(current, cacheRoot / std::to_string(i), options, compiled);
      std::fprintf(stderr, "%s: %.3f s, %zu kernel images compiled in %.3f s\n",
                   current.c_str(), seconds, compiled.compiledImages, compiled.kernelSeconds);
      std::vector<std::string> images;
      for (const kiln::CompileReport::Image &image : compiled.images)
        images.push_back(JsonReport::object({{"kernel", JsonReport::str(image.kernel)},
                                             {"kind", JsonReport::str(image.kind)},
                                             {"arch", JsonReport::str(image.arch)},
                                             {"seconds", JsonReport::num(image.seconds)}}));
      timed.push_back(JsonReport::object(
          {{"path", JsonReport::str(current)},
           {"seconds", JsonReport::num(seconds)},
           {"kernel_seconds", JsonReport::num(compiled.kernelSeconds)},
           {"images_compiled", JsonReport::num(static_cast<double>(compiled.compiledImages))},
           {"images", JsonReport::array(images)}}));
    }
    report.add("models", JsonReport::array(timed));
    std::fputs(report.text().c_str(), stdout);
    // Only the folders made here: CACHE_ROOT itself may hold other things.
    std::error_code ignored;
    std::filesystem::remove_all(cacheRoot / "warmup", ignored);
    for (size_t i = 0; i < models.size(); ++i)
      std::filesystem::remove_all(cacheRoot / std::to_string(i), ignored);
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "kiln-compile-times: %s: %s\n", current.c_str(), e.what());
    return 1;
  }
}
