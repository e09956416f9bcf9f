//===- NativeDevice.h - `--arch native`'s GPU, asked about apart ----------===//
//
// `native` needs the GPU's architecture and multiprocessor count before any
// kernel is selected. Asked in this process, the CUDA driver stays loaded
// and initialized here for the rest of the compile, and every NVRTC worker
// the code generator forks afterwards is a fork of a process with CUDA
// initialized. So unless the driver is already loaded here (a program that
// runs models and compiles at load time), the question is asked in a child
// process that exits with the answer.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_COMPILER_API_NATIVEDEVICE_H
#define KILN_TOOLS_COMPILER_API_NATIVEDEVICE_H

#include "kiln/runtime/Device.h"

#include <optional>
#include <string>

namespace kiln::driver {

/// Device 0's description, or std::nullopt with `why` (no driver, no
/// device, a child that died). KILN_NATIVE_QUERY=here asks in this process
/// always (to compare the two).
std::optional<rt::DeviceInfo> queryNativeDevice(std::string &why);

} // namespace kiln::driver

#endif // KILN_TOOLS_COMPILER_API_NATIVEDEVICE_H
