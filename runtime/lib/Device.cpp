//===- Device.cpp - devices, contexts, modules and buffers ----------------===//

#include "kiln/runtime/Device.h"
#include "kiln/runtime/Error.h"

#include <cstdio>

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

void Context::makeCurrent() const {
  KILN_CU_CHECK(Driver::get().cuCtxSetCurrent(context_));
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

namespace {
std::string mib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MiB", bytes / 1048576.0);
  return text;
}
} // namespace

void kiln::rt::checkFreeMemory(uint64_t bytes, const std::string &what) {
  size_t free = 0, total = 0;
  KILN_CU_CHECK(Driver::get().cuMemGetInfo(&free, &total));
  if (bytes > free)
    throw OutOfMemoryError("out of device memory: " + what + " needs " +
                               std::to_string(bytes) + " bytes (" + mib(bytes) +
                               "); the GPU has " + mib(free) + " free of " + mib(total),
                           bytes);
}

DeviceBuffer::DeviceBuffer(size_t bytes, const std::string &what) : bytes_(bytes) {
  const Driver &cu = Driver::get();
  CUresult result = cu.cuMemAlloc(&address_, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    size_t free = 0, total = 0;
    cu.cuMemGetInfo(&free, &total);
    throw OutOfMemoryError("out of device memory: " + what + " needs " +
                               std::to_string(bytes) + " bytes (" + mib(bytes) +
                               "); the GPU has " + mib(free) + " free of " + mib(total),
                           bytes);
  }
  KILN_CU_CHECK(result);
}

DeviceBuffer::~DeviceBuffer() {
  if (address_)
    Driver::get().cuMemFree(address_);
}

void DeviceBuffer::zero() {
  KILN_CU_CHECK(Driver::get().cuMemsetD8(address_, 0, bytes_));
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

PinnedBuffer::PinnedBuffer(size_t bytes, const std::string &what) : bytes_(bytes) {
  if (bytes == 0)
    return;
  void *pointer = nullptr;
  CUresult result = Driver::get().cuMemHostAlloc(&pointer, bytes, 0);
  if (result == CUDA_ERROR_OUT_OF_MEMORY)
    throw OutOfMemoryError("out of pinned host memory: " + what + " needs " +
                               std::to_string(bytes) + " bytes (" + mib(bytes) + ")",
                           bytes);
  KILN_CU_CHECK(result);
  data_ = static_cast<unsigned char *>(pointer);
}

PinnedBuffer::~PinnedBuffer() {
  if (data_)
    Driver::get().cuMemFreeHost(data_);
}

Stream::Stream() {
  KILN_CU_CHECK(Driver::get().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
}

Stream::~Stream() {
  if (stream_ && owned_)
    Driver::get().cuStreamDestroy(stream_);
}

void Stream::synchronize() const {
  KILN_CU_CHECK(Driver::get().cuStreamSynchronize(stream_));
}

Event::Event() { KILN_CU_CHECK(Driver::get().cuEventCreate(&event_, CU_EVENT_DEFAULT)); }

Event::~Event() {
  if (event_)
    Driver::get().cuEventDestroy(event_);
}

void Event::record(CUstream stream) const {
  KILN_CU_CHECK(Driver::get().cuEventRecord(event_, stream));
}

float Event::since(const Event &earlier) const {
  float ms = 0;
  KILN_CU_CHECK(Driver::get().cuEventElapsedTime(&ms, earlier.event_, event_));
  return ms;
}

bool kiln::rt::isDeviceRange(CUdeviceptr address, size_t bytes) {
  const Driver &cu = Driver::get();
  unsigned int type = 0;
  if (cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address) !=
          CUDA_SUCCESS ||
      (type != CU_MEMORYTYPE_DEVICE && type != CU_MEMORYTYPE_UNIFIED))
    return false;
  CUdeviceptr start = 0;
  size_t size = 0;
  if (cu.cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, address) !=
          CUDA_SUCCESS ||
      cu.cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, address) != CUDA_SUCCESS)
    return false;
  return address >= start && address - start + bytes <= size;
}

TensorMap kiln::rt::encodeTensorMap(CUdeviceptr address, bool bf16,
                                    const std::vector<uint64_t> &dims,
                                    const std::vector<uint32_t> &box,
                                    const std::vector<uint32_t> &elementStrides) {
  static_assert(sizeof(TensorMap) == sizeof(CUtensorMap), "CUtensorMap size");
  const size_t rank = dims.size();
  if (rank < 2 || rank > 5 || box.size() != rank || elementStrides.size() != rank)
    throw Error("TMA tensor maps have 2 to 5 dimensions, each with a box size and a stride");
  if (address % 16 != 0)
    throw Error("TMA needs a 16-byte aligned tensor address");
  if ((dims[0] * 2) % 16 != 0)
    throw Error("TMA needs rows of a multiple of 16 bytes, got " + std::to_string(dims[0] * 2));
  if (box[0] == 0 || box[0] * 2 > 128)
    throw Error("TMA box row of " + std::to_string(box[0]) +
                " elements is invalid for 128-byte swizzle");
  cuuint64_t sizes[5], strides[4];
  cuuint32_t boxes[5], steps[5];
  uint64_t stride = 2;
  for (size_t d = 0; d < rank; ++d) {
    if (box[d] == 0 || box[d] > 256 || elementStrides[d] == 0 || elementStrides[d] > 8)
      throw Error("TMA box of " + std::to_string(box[d]) + " elements with stride " +
                  std::to_string(elementStrides[d]) + " in dimension " + std::to_string(d) +
                  " (1 to 256, stride 1 to 8)");
    sizes[d] = dims[d];
    boxes[d] = box[d];
    steps[d] = elementStrides[d];
    stride *= dims[d];
    if (d + 1 < rank)
      strides[d] = stride;
  }
  TensorMap map{};
  KILN_CU_CHECK(Driver::get().cuTensorMapEncodeTiled(
      reinterpret_cast<CUtensorMap *>(&map),
      bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
      static_cast<cuuint32_t>(rank), reinterpret_cast<void *>(address), sizes, strides, boxes,
      steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}
