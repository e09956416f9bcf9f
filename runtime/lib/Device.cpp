//===- Device.cpp - devices, contexts, modules and buffers ----------------===//

#include "kiln/runtime/Device.h"
#include "kiln/runtime/Error.h"

using namespace kiln::rt;

std::string DeviceInfo::nvrtcArch() const {
  std::string arch = "sm_" + std::to_string(computeMajor * 10 + computeMinor);
  return computeMajor == 9 && computeMinor == 0 ? arch + "a" : arch;
}

DeviceInfo kiln::rt::queryDevice(int ordinal) {
  const Driver &cu = Driver::get();
  int count = 0;
  KILN_CU_CHECK(cu.cuDeviceGetCount(&count));
  if (ordinal < 0 || ordinal >= count)
    throw NoDeviceError("no CUDA device " + std::to_string(ordinal) + " (" +
                        std::to_string(count) + " visible)");
  CUdevice device;
  KILN_CU_CHECK(cu.cuDeviceGet(&device, ordinal));
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  KILN_CU_CHECK(cu.cuDeviceGetName(name, sizeof(name) - 1, device));
  info.name = name;
  KILN_CU_CHECK(cu.cuDeviceGetAttribute(
      &info.computeMajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
      device));
  KILN_CU_CHECK(cu.cuDeviceGetAttribute(
      &info.computeMinor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
      device));
  KILN_CU_CHECK(cu.cuDeviceGetAttribute(
      &info.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device));
  KILN_CU_CHECK(cu.cuDeviceTotalMem(&info.totalMemory, device));
  KILN_CU_CHECK(cu.cuDriverGetVersion(&info.driverVersion));
  return info;
}

Context::Context(int ordinal) {
  const Driver &cu = Driver::get();
  KILN_CU_CHECK(cu.cuDeviceGet(&device_, ordinal));
  KILN_CU_CHECK(cu.cuDevicePrimaryCtxRetain(&context_, device_));
  KILN_CU_CHECK(cu.cuCtxSetCurrent(context_));
}

Context::~Context() {
  if (context_)
    Driver::get().cuDevicePrimaryCtxRelease(device_);
}

void Context::synchronize() const {
  KILN_CU_CHECK(Driver::get().cuCtxSynchronize());
}

Module::Module(std::string_view image) {
  // cuModuleLoadData reads up to the ELF's own size (or a NUL for PTX), so
  // PTX text must be NUL-terminated: copy it into a string that is.
  std::string owned(image);
  KILN_CU_CHECK(Driver::get().cuModuleLoadData(&module_, owned.c_str()));
}

Module::~Module() {
  if (module_)
    Driver::get().cuModuleUnload(module_);
}

CUfunction Module::function(const char *name) const {
  CUfunction fn = nullptr;
  KILN_CU_CHECK(Driver::get().cuModuleGetFunction(&fn, module_, name));
  return fn;
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  CUresult result = Driver::get().cuMemAlloc(&address_, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY)
    throw Error("out of device memory allocating " + std::to_string(bytes) +
                " bytes");
  KILN_CU_CHECK(result);
}

DeviceBuffer::~DeviceBuffer() {
  if (address_)
    Driver::get().cuMemFree(address_);
}

void DeviceBuffer::upload(const void *host, size_t bytes) {
  if (bytes > bytes_)
    throw Error("upload of " + std::to_string(bytes) + " bytes into a " +
                std::to_string(bytes_) + "-byte buffer");
  KILN_CU_CHECK(Driver::get().cuMemcpyHtoD(address_, host, bytes));
}

void DeviceBuffer::download(void *host, size_t bytes) const {
  if (bytes > bytes_)
    throw Error("download of " + std::to_string(bytes) + " bytes from a " +
                std::to_string(bytes_) + "-byte buffer");
  KILN_CU_CHECK(Driver::get().cuMemcpyDtoH(host, address_, bytes));
}
