//===- Driver.cpp - load libcuda.so.1 and resolve the driver API ----------===//
//
// Each entry point is looked up by the exact symbol cuda.h maps its name to
// (cuMemAlloc -> cuMemAlloc_v2, cuCtxSynchronize stays v1), as a linker would.
// Asking cuGetProcAddress for the base name instead returns the newest ABI of
// that CUDA version, whose signature may differ (CUDA 13's cuCtxSynchronize
// resolves to the _v2 that takes a context), so it is not used.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Driver.h"
#include "kiln/runtime/Error.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

using namespace kiln::rt;

#define KILN_SYMBOL_NAME(name) KILN_SYMBOL_NAME_(name)
#define KILN_SYMBOL_NAME_(name) #name

namespace {

std::string describe(const Driver &driver, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (driver.cuGetErrorName)
    driver.cuGetErrorName(result, &name);
  if (driver.cuGetErrorString)
    driver.cuGetErrorString(result, &text);
  return std::string(name ? name : "CUDA error " + std::to_string(result)) +
         (text ? std::string(" (") + text + ")" : std::string());
}

Driver load() {
  const char *override = std::getenv("KILN_CUDA_DRIVER");
  std::string name = override && *override ? override : "libcuda.so.1";
  void *library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library)
    throw NoDeviceError("no NVIDIA driver on this machine: cannot load " + name +
                        " (" + dlerror() + ")");
  Driver driver;
  std::string missing;
#define KILN_RESOLVE(name)                                                     \
  if (void *fn = dlsym(library, KILN_SYMBOL_NAME(name)))                       \
    driver.name = reinterpret_cast<decltype(driver.name)>(fn);                 \
  else                                                                         \
    missing +=                                                                 \
        std::string(missing.empty() ? "" : ", ") + KILN_SYMBOL_NAME(name);
  KILN_CUDA_DRIVER_FUNCTIONS(KILN_RESOLVE)
#undef KILN_RESOLVE
  if (!missing.empty())
    throw NoDeviceError("the NVIDIA driver is too old: " + name + " lacks " +
                        missing);
  CUresult init = driver.cuInit(0);
  if (init != CUDA_SUCCESS)
    throw NoDeviceError("the CUDA driver failed to initialize: " +
                        describe(driver, init));
  int count = 0;
  CUresult counted = driver.cuDeviceGetCount(&count);
  if (counted != CUDA_SUCCESS || count == 0)
    throw NoDeviceError("no CUDA device is visible" +
                        (counted != CUDA_SUCCESS
                             ? ": " + describe(driver, counted)
                             : std::string(" (CUDA_VISIBLE_DEVICES?)")));
  return driver;
}
} // namespace

const Driver &Driver::get() {
  // A failed load is remembered and rethrown: every caller sees one cause.
  static std::once_flag once;
  static Driver driver;
  static std::string failure;
  static bool noDevice = false;
  std::call_once(once, [] {
    try {
      driver = load();
    } catch (const NoDeviceError &e) {
      failure = e.what();
      noDevice = true;
    }
  });
  if (noDevice)
    throw NoDeviceError(failure);
  return driver;
}

void kiln::rt::throwDriverError(CUresult result, const char *call,
                                const char *file, int line) {
  throw Error(std::string(call) +
              " failed: " + describe(Driver::get(), result) + " at " + file +
              ":" + std::to_string(line));
}
