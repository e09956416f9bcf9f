//===- Driver.cpp - load libcuda.so.1 and resolve the driver API ----------===//
//
// Only cuGetProcAddress is taken with dlsym; every other entry point is asked
// of the driver by its base name and the CUDA version kiln was built against,
// so we get the ABI version our cuda.h declares (cuMemAlloc_v2, ...).
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Driver.h"
#include "kiln/runtime/Error.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

using namespace kiln::rt;

namespace {
using GetProcAddressFn = CUresult (*)(const char *, void **, int, cuuint64_t,
                                      CUdriverProcAddressQueryResult *);

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
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    throw NoDeviceError(std::string("no NVIDIA driver on this machine: cannot "
                                    "load libcuda.so.1 (") + dlerror() + ")");
  auto getProc = reinterpret_cast<GetProcAddressFn>(
      dlsym(library, "cuGetProcAddress_v2"));
  if (!getProc)
    throw NoDeviceError("the NVIDIA driver is too old: libcuda.so.1 lacks "
                        "cuGetProcAddress_v2 (kiln needs a CUDA 12+ driver)");
  Driver driver;
  std::string missing;
#define KILN_RESOLVE(name)                                                     \
  {                                                                            \
    void *fn = nullptr;                                                        \
    CUdriverProcAddressQueryResult found;                                      \
    if (getProc(#name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,         \
                &found) == CUDA_SUCCESS && fn)                                 \
      driver.name = reinterpret_cast<decltype(driver.name)>(fn);               \
    else                                                                       \
      missing += std::string(missing.empty() ? "" : ", ") + #name;             \
  }
  KILN_CUDA_DRIVER_FUNCTIONS(KILN_RESOLVE)
#undef KILN_RESOLVE
  if (!missing.empty())
    throw NoDeviceError("the NVIDIA driver lacks entry points kiln needs: " +
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
  throw Error(std::string(call) + " failed: " + describe(Driver::get(), result) +
              " at " + file + ":" + std::to_string(line));
}
