//===- CompileApi.cpp - kiln::compileModel ---------------------------------===//
//
// Apart from CompilerDriver.cpp because this file throws kiln::Error and so
// is built with RTTI, while code that includes MLIR headers is built without.
//
//===----------------------------------------------------------------------===//

#include "kiln/compile.h"

#include <string>
#include <vector>

namespace kiln::driver {
bool compileToArtifact(const std::string &path, const std::vector<std::string> &inputs,
                       const std::string &precision, const std::string &ioDtype,
                       const std::vector<std::string> &archs, bool runtimeSizes,
                       const std::string &kernelLibrary, const std::string &kernelTuning,
                       std::string &bytes,
                       std::string &error, CompileReport *report);
} // namespace kiln::driver

namespace {
std::string compileWith(const std::string &path, const kiln::CompileOptions &options,
                        kiln::CompileReport *report) {
  std::string bytes, error;
  if (!kiln::driver::compileToArtifact(path, options.inputs, options.precision,
                                       options.ioDtype, options.archs, options.runtimeSizes,
                                       options.kernelLibrary, options.kernelTuning, bytes,
                                       error, report))
    throw kiln::Error("kiln: " + error);
  return bytes;
}
} // namespace

std::string kiln::compileModel(const std::string &path, const CompileOptions &options) {
  return compileWith(path, options, nullptr);
}

std::string kiln::compileModel(const std::string &path, const CompileOptions &options,
                               CompileReport &report) {
  report = {};
  return compileWith(path, options, &report);
}
