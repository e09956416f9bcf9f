//===- DeviceHeaders.cpp - the .cuh files every kernel includes -----------===//

#include "kiln/codegen/CudaEmitter.h"

// Defined in the file generated from codegen/cuda/*.cuh at build time.
const std::vector<std::pair<std::string, std::string>> &kilnEmbeddedDeviceHeaders();

const std::vector<std::pair<std::string, std::string>> &
kiln::codegen::deviceHeaders() {
  return kilnEmbeddedDeviceHeaders();
}
