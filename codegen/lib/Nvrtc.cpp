//===- Nvrtc.cpp - compile CUDA C++ to cubin and PTX with NVRTC -----------===//

#include "kiln/codegen/Nvrtc.h"

#include <nvrtc.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <regex>
#include <sstream>

using namespace kiln::codegen;

namespace {
struct ProgramDeleter {
  void operator()(nvrtcProgram program) const { nvrtcDestroyProgram(&program); }
};
using Program =
    std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

std::string numbered(std::string_view source) {
  std::ostringstream out;
  int line = 1;
  size_t start = 0;
  while (start <= source.size()) {
    size_t end = source.find('\n', start);
    if (end == std::string_view::npos)
      end = source.size();
    out.width(5);
    out << line++ << " | " << source.substr(start, end - start) << "\n";
    start = end + 1;
  }
  return out.str();
}

std::string programLog(nvrtcProgram program) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1)
    return {};
  std::string log(size, '\0');
  nvrtcGetProgramLog(program, log.data());
  log.resize(size - 1);
  return log;
}
} // namespace

std::string kiln::codegen::cudaToolkitRoot() {
  const char *env = std::getenv("KILN_CUDA_HOME");
  return env && *env ? env : "/usr/local/cuda";
}

std::string kiln::codegen::nvrtcVersion() {
  int major = 0, minor = 0;
  ::nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

bool kiln::codegen::checkArch(const std::string &arch, std::string &error) {
  int count = 0;
  std::vector<int> supported;
  if (nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
    supported.resize(count);
    if (nvrtcGetSupportedArchs(supported.data()) != NVRTC_SUCCESS)
      supported.clear();
  }
  std::string digits = arch.rfind("sm_", 0) == 0 ? arch.substr(3) : "";
  bool specific = !digits.empty() && digits.back() == 'a';
  if (specific)
    digits.pop_back();
  if (digits.size() >= 2 && digits.size() <= 3 && digits[0] != '0' &&
      digits.find_first_not_of("0123456789") == std::string::npos) {
    int number = std::stoi(digits);
    if ((!specific || number >= 90) &&
        std::find(supported.begin(), supported.end(), number) != supported.end())
      return true;
  }
  std::string accepted;
  for (int number : supported) {
    accepted += (accepted.empty() ? "sm_" : ", sm_") + std::to_string(number);
    if (number >= 90)
      accepted += ", sm_" + std::to_string(number) + "a";
  }
  error = "unknown GPU architecture '" + arch + "'; NVRTC " + nvrtcVersion() +
          " accepts " + accepted;
  return false;
}

std::optional<NvrtcOutput>
kiln::codegen::compileWithNvrtc(std::string_view source, std::string_view name,
                                const NvrtcOptions &options,
                                std::string &error) {
  std::string nameText(name), sourceText(source);
  auto fail = [&](const std::string &why) -> std::optional<NvrtcOutput> {
    error = "NVRTC could not compile '" + nameText + "' for " + options.arch +
            ": " + why + "\n--- source ---\n" + numbered(source);
    return std::nullopt;
  };

  std::vector<const char *> headerSources, headerNames;
  for (const auto &[includeName, contents] : options.headers) {
    headerNames.push_back(includeName.c_str());
    headerSources.push_back(contents.c_str());
  }
  nvrtcProgram raw = nullptr;
  nvrtcResult created = nvrtcCreateProgram(
      &raw, sourceText.c_str(), (nameText + ".cu").c_str(),
      static_cast<int>(headerSources.size()), headerSources.data(),
      headerNames.data());
  if (created != NVRTC_SUCCESS)
    return fail(nvrtcGetErrorString(created));
  Program program(raw);

  std::string root = cudaToolkitRoot();
  std::vector<std::string> flags = {
      "--gpu-architecture=" + options.arch, "-std=c++17", "-default-device",
      "-I" + root + "/include", "-I" + root + "/include/cccl"};
  for (const std::string &dir : options.includeDirs)
    flags.push_back("-I" + dir);
  flags.insert(flags.end(), options.extraOptions.begin(),
               options.extraOptions.end());
  std::vector<const char *> argv;
  for (const std::string &flag : flags)
    argv.push_back(flag.c_str());

  nvrtcResult compiled;
  {
    std::lock_guard<std::mutex> lock(nvrtcCompileMutex());
    compiled = nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
  }
  std::string log = programLog(program.get());
  if (compiled != NVRTC_SUCCESS)
    return fail(std::string(nvrtcGetErrorString(compiled)) + "\n" + log);

  NvrtcOutput output;
  output.log = std::move(log);
  size_t size = 0;
  if (nvrtcGetPTXSize(program.get(), &size) != NVRTC_SUCCESS)
    return fail("no PTX was produced");
  output.ptx.resize(size);
  nvrtcGetPTX(program.get(), output.ptx.data());
  if (!output.ptx.empty() && output.ptx.back() == '\0')
    output.ptx.pop_back();
  // Only a real sm_XX target yields a cubin; compute_XX gives PTX alone.
  if (options.arch.rfind("sm_", 0) == 0) {
    if (nvrtcGetCUBINSize(program.get(), &size) != NVRTC_SUCCESS || size == 0)
      return fail("no cubin was produced");
    output.cubin.resize(size);
    nvrtcGetCUBIN(program.get(), output.cubin.data());
  }
  return output;
}

std::mutex &kiln::codegen::nvrtcCompileMutex() {
  static std::mutex *mutex = new std::mutex();
  return *mutex;
}

std::string kiln::codegen::ptxasRejection(const std::string &name, const std::string &arch,
                                          const std::string &log) {
  // ptxas -v: "N bytes stack frame, M bytes spill stores, K bytes spill loads".
  static const std::regex usage(R"((\d+) bytes stack frame, (\d+) bytes spill stores)");
  // "ptxas warning : (C7515) Potential Performance Loss: ..."; matched with
  // its parentheses, since a hashed kernel name may contain "C75" too.
  static const std::regex performanceWarning(R"(\(C75[0-9][0-9]\))");
  // The report's lines that say why, not NVRTC's whole log (the source's
  // own warnings and every function's register counts); a spill names the
  // cause before a warning does.
  std::string spillCause, why;
  bool warned = false;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    const bool spills =
        std::regex_search(line, match, usage) && (match[1] != "0" || match[2] != "0");
    if (spills && spillCause.empty())
      spillCause = "uses " + match[1].str() + " bytes of stack and spills " + match[2].str() +
                   " bytes: rejected (it would run from local memory)";
    const bool warning = !spills && std::regex_search(line, performanceWarning);
    warned = warned || warning;
    if (spills || warning) {
      line.erase(0, line.find_first_not_of(" \t"));
      why += "\n  " + line;
    }
  }
  if (spillCause.empty() && !warned)
    return {};
  return "kernel '" + name + "' for " + arch + " " +
         (spillCause.empty() ? "has a ptxas performance warning: rejected" : spillCause) + why;
}

bool kiln::codegen::isPtxasRejection(const std::string &error) {
  // ptxasRejection's first line, at the start or behind a location.
  static const std::regex rejection(R"((^|: )kernel '[^']+' for \S+ [^\n]*: rejected)");
  return std::regex_search(error, rejection);
}
