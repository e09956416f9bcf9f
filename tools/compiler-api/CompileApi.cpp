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
                       const std::string &kernelLibrary, std::string &bytes,
                       std::string &error);
} // namespace kiln::driver

std::string kiln::compileModel(const std::string &path, const CompileOptions &options) {
  std::string bytes, error;
  if (!driver::compileToArtifact(path, options.inputs, options.precision, options.ioDtype,
                                 options.archs, options.runtimeSizes, options.kernelLibrary,
                                 bytes, error))
    throw Error("kiln: " + error);
  return bytes;
}
