//===- FakeCuda.cpp - a host-memory stand-in for libcuda.so.1 -------------===//
//
// Loaded by the runtime in place of the NVIDIA driver (KILN_CUDA_DRIVER, see
// runtime/include/kiln/runtime/Driver.h) so that the runtime's host code
// (bindings, graph capture, staging, profiling, errors, threads) runs in CI
// without a GPU, under ThreadSanitizer too. Kernels are not executed: a
// launch is checked and counted. Device memory is host memory; copies are
// memcpy; events read a steady clock.
//
// The driver's own rules that kiln relies on are enforced, so the fake
// catches misuse a GPU would: a context must be current on the calling
// thread, pointers must be allocations, launches need a non-empty grid.
//
// Knobs (environment, read on each use): KILN_FAKE_CUDA_MEMORY (device
// bytes, default 8 GiB), KILN_FAKE_CUDA_CC (compute capability, default 90).
// Counters for tests: kilnFakeCudaCounter("launches" | "graph-launches" |
// "captures" | "instantiations" | "updates" | "dependent-launches": launches
// with programmatic stream serialization, captured or not |
// "contextless-releases": frees and unloads called without a current
// context, which a driver refuses | "zeroed-bytes": bytes cuMemsetD8 set to
// zero).
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

std::mutex mutex;
std::map<CUdeviceptr, size_t> deviceAllocations; // guarded by mutex
std::map<const void *, size_t> hostAllocations;  // guarded by mutex
size_t deviceBytesInUse = 0;                       // guarded by mutex

std::atomic<unsigned long long> launches{0}, graphLaunches{0}, captures{0},
    instantiations{0}, updates{0}, dependentLaunches{0}, contextlessReleases{0},
    zeroedBytes{0};

int fakeContextObject;
CUcontext const theContext = reinterpret_cast<CUcontext>(&fakeContextObject);
thread_local CUcontext current = nullptr;

struct FakeStream {
  bool capturing = false;
  unsigned long long capturedLaunches = 0;
};
struct FakeGraph {
  unsigned long long launches = 0;
};
struct FakeEvent {
  std::chrono::steady_clock::time_point when{};
  bool recorded = false;
};

size_t envBytes(const char *name, size_t fallback) {
  const char *text = std::getenv(name);
  return text && *text ? std::strtoull(text, nullptr, 10) : fallback;
}

int computeCapability() {
  const char *text = std::getenv("KILN_FAKE_CUDA_CC");
  return text && *text ? std::atoi(text) : 90;
}

bool haveContext() { return current == theContext; }

/// The device allocation holding `address`: its start and size, or false.
bool findAllocation(CUdeviceptr address, CUdeviceptr &start, size_t &size) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = deviceAllocations.upper_bound(address);
  if (it == deviceAllocations.begin())
    return false;
  --it;
  if (address >= it->first + it->second)
    return false;
  start = it->first;
  size = it->second;
  return true;
}

bool isDeviceRange(CUdeviceptr address, size_t bytes) {
  CUdeviceptr start = 0;
  size_t size = 0;
  return findAllocation(address, start, size) && address - start + bytes <= size;
}

} // namespace

extern "C" unsigned long long kilnFakeCudaCounter(const char *name) {
  std::string which = name;
  if (which == "launches")
    return launches;
  if (which == "graph-launches")
    return graphLaunches;
  if (which == "captures")
    return captures;
  if (which == "instantiations")
    return instantiations;
  if (which == "updates")
    return updates;
  if (which == "dependent-launches")
    return dependentLaunches;
  if (which == "contextless-releases")
    return contextlessReleases;
  if (which == "zeroed-bytes")
    return zeroedBytes;
  return ~0ull;
}

CUresult CUDAAPI cuInit(unsigned int) { return CUDA_SUCCESS; }

CUresult CUDAAPI cuDriverGetVersion(int *version) {
  *version = 13000;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **text) {
  switch (error) {
  case CUDA_ERROR_OUT_OF_MEMORY: *text = "CUDA_ERROR_OUT_OF_MEMORY"; break;
  case CUDA_ERROR_INVALID_CONTEXT: *text = "CUDA_ERROR_INVALID_CONTEXT"; break;
  case CUDA_ERROR_INVALID_HANDLE: *text = "CUDA_ERROR_INVALID_HANDLE"; break;
  case CUDA_ERROR_INVALID_VALUE: *text = "CUDA_ERROR_INVALID_VALUE"; break;
  case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: *text = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"; break;
  default: *text = "CUDA_ERROR_UNKNOWN"; break;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **text) {
  *text = error == CUDA_ERROR_INVALID_CONTEXT ? "no current context on this thread (fake driver)"
                                              : "reported by kiln's fake CUDA driver";
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  if (ordinal != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int length, CUdevice) {
  std::strncpy(name, "kiln fake GPU (host memory)", length);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice) {
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = computeCapability() / 10; break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = computeCapability() % 10; break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; break;
  default: *value = 0; break;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice) {
  *bytes = envBytes("KILN_FAKE_CUDA_MEMORY", 8ull << 30);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice) {
  *context = theContext;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }

CUresult CUDAAPI cuCtxSetCurrent(CUcontext context) {
  if (context && context != theContext)
    return CUDA_ERROR_INVALID_CONTEXT;
  current = context;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void) {
  return haveContext() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult CUDAAPI cuMemGetInfo(size_t *free, size_t *total) {
  std::lock_guard<std::mutex> lock(mutex);
  *total = envBytes("KILN_FAKE_CUDA_MEMORY", 8ull << 30);
  *free = *total > deviceBytesInUse ? *total - deviceBytesInUse : 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *address, size_t bytes) {
  if (!haveContext())
    return CUDA_ERROR_INVALID_CONTEXT;
  if (bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(mutex);
  // Compared without a sum: a request near 2^64 must not wrap into a fit.
  size_t limit = envBytes("KILN_FAKE_CUDA_MEMORY", 8ull << 30);
  if (bytes > limit || deviceBytesInUse > limit - bytes)
    return CUDA_ERROR_OUT_OF_MEMORY;
  void *memory = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!memory)
    return CUDA_ERROR_OUT_OF_MEMORY;
  // Kernels do not run here: zeroed memory keeps outputs deterministic.
  std::memset(memory, 0, bytes);
  *address = reinterpret_cast<CUdeviceptr>(memory);
  deviceAllocations[*address] = bytes;
  deviceBytesInUse += bytes;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr address) {
  if (!haveContext()) {
    ++contextlessReleases;
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  std::lock_guard<std::mutex> lock(mutex);
  auto it = deviceAllocations.find(address);
  if (it == deviceAllocations.end())
    return CUDA_ERROR_INVALID_VALUE;
  deviceBytesInUse -= it->second;
  deviceAllocations.erase(it);
  std::free(reinterpret_cast<void *>(address));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostAlloc(void **pointer, size_t bytes, unsigned int) {
  if (!haveContext())
    return CUDA_ERROR_INVALID_CONTEXT;
  *pointer = std::malloc(bytes ? bytes : 1);
  if (!*pointer)
    return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> lock(mutex);
  hostAllocations[*pointer] = bytes;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFreeHost(void *pointer) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!hostAllocations.erase(pointer))
    return CUDA_ERROR_INVALID_VALUE;
  std::free(pointer);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
                                       CUdeviceptr address) {
  CUdeviceptr start = 0;
  size_t size = 0;
  if (!findAllocation(address, start, size))
    return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    *static_cast<unsigned int *>(data) = CU_MEMORYTYPE_DEVICE;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    *static_cast<CUdeviceptr *>(data) = start;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    *static_cast<size_t *>(data) = size;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr to, const void *from, size_t bytes) {
  if (!haveContext())
    return CUDA_ERROR_INVALID_CONTEXT;
  if (!isDeviceRange(to, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(reinterpret_cast<void *>(to), from, bytes);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoH(void *to, CUdeviceptr from, size_t bytes) {
  if (!haveContext())
    return CUDA_ERROR_INVALID_CONTEXT;
  if (!isDeviceRange(from, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(to, reinterpret_cast<const void *>(from), bytes);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr to, const void *from, size_t bytes, CUstream) {
  return cuMemcpyHtoD(to, from, bytes);
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *to, CUdeviceptr from, size_t bytes, CUstream) {
  return cuMemcpyDtoH(to, from, bytes);
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr to, unsigned char value, size_t bytes) {
  if (!isDeviceRange(to, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  std::memset(reinterpret_cast<void *>(to), value, bytes);
  if (value == 0)
    zeroedBytes += bytes;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) {
  if (!haveContext())
    return CUDA_ERROR_INVALID_CONTEXT;
  if (!image)
    return CUDA_ERROR_INVALID_IMAGE;
  *module = reinterpret_cast<CUmodule>(new int(0));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) {
  if (!haveContext()) {
    ++contextlessReleases;
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  delete reinterpret_cast<int *>(module);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
  if (!module || !name || !*name)
    return CUDA_ERROR_NOT_FOUND;
  *function = reinterpret_cast<CUfunction>(module);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction function, CUfunction_attribute, int value) {
  return function && value >= 0 && value <= 227 * 1024 ? CUDA_SUCCESS
                                                       : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction function, unsigned int gridX, unsigned int gridY,
                                unsigned int gridZ, unsigned int blockX, unsigned int blockY,
                                unsigned int blockZ, unsigned int sharedBytes, CUstream stream,
                                void **parameters, void **extra) {
  if (!haveContext())
    return CUDA_ERROR_INVALID_CONTEXT;
  if (!function || !gridX || !gridY || !gridZ || !blockX || !blockY || !blockZ ||
      blockX * blockY * blockZ > 1024 || sharedBytes > 227 * 1024 || (!parameters && !extra))
    return CUDA_ERROR_INVALID_VALUE;
  auto *s = reinterpret_cast<FakeStream *>(stream);
  if (s && s->capturing)
    ++s->capturedLaunches;
  else
    ++launches;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction function,
                                  void **parameters, void **extra) {
  if (!config || (config->numAttrs && !config->attrs))
    return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute &attribute = config->attrs[i];
    if (attribute.id != CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
      return CUDA_ERROR_NOT_SUPPORTED; // kiln asks for no other
    // As the driver: programmatic launches need sm_90.
    if (computeCapability() < 90)
      return CUDA_ERROR_NOT_SUPPORTED;
    if (attribute.value.programmaticStreamSerializationAllowed)
      ++dependentLaunches;
  }
  return cuLaunchKernel(function, config->gridDimX, config->gridDimY, config->gridDimZ,
                        config->blockDimX, config->blockDimY, config->blockDimZ,
                        config->sharedMemBytes, config->hStream, parameters, extra);
}

CUresult CUDAAPI cuStreamCreate(CUstream *stream, unsigned int) {
  if (!haveContext())
    return CUDA_ERROR_INVALID_CONTEXT;
  *stream = reinterpret_cast<CUstream>(new FakeStream);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream stream) {
  delete reinterpret_cast<FakeStream *>(stream);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream stream) {
  auto *s = reinterpret_cast<FakeStream *>(stream);
  return s && s->capturing ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamBeginCapture(CUstream stream, CUstreamCaptureMode) {
  auto *s = reinterpret_cast<FakeStream *>(stream);
  if (!s || s->capturing)
    return CUDA_ERROR_ILLEGAL_STATE;
  s->capturing = true;
  s->capturedLaunches = 0;
  ++captures;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream stream, CUgraph *graph) {
  auto *s = reinterpret_cast<FakeStream *>(stream);
  if (!s || !s->capturing)
    return CUDA_ERROR_ILLEGAL_STATE;
  s->capturing = false;
  auto *g = new FakeGraph;
  g->launches = s->capturedLaunches;
  *graph = reinterpret_cast<CUgraph>(g);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *exec, CUgraph graph, unsigned long long) {
  auto *g = reinterpret_cast<FakeGraph *>(graph);
  if (!g)
    return CUDA_ERROR_INVALID_VALUE;
  *exec = reinterpret_cast<CUgraphExec>(new FakeGraph(*g));
  ++instantiations;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphExecUpdate(CUgraphExec exec, CUgraph graph,
                                   CUgraphExecUpdateResultInfo *info) {
  auto *e = reinterpret_cast<FakeGraph *>(exec);
  auto *g = reinterpret_cast<FakeGraph *>(graph);
  if (!e || !g || e->launches != g->launches) {
    if (info)
      info->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  }
  if (info)
    info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  ++updates;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec exec, CUstream) {
  if (!haveContext())
    return CUDA_ERROR_INVALID_CONTEXT;
  auto *e = reinterpret_cast<FakeGraph *>(exec);
  if (!e)
    return CUDA_ERROR_INVALID_VALUE;
  ++graphLaunches;
  launches += e->launches;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphDestroy(CUgraph graph) {
  delete reinterpret_cast<FakeGraph *>(graph);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec exec) {
  delete reinterpret_cast<FakeGraph *>(exec);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent *event, unsigned int) {
  if (!haveContext())
    return CUDA_ERROR_INVALID_CONTEXT;
  *event = reinterpret_cast<CUevent>(new FakeEvent);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent event) {
  delete reinterpret_cast<FakeEvent *>(event);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent event, CUstream) {
  auto *e = reinterpret_cast<FakeEvent *>(event);
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  e->when = std::chrono::steady_clock::now();
  e->recorded = true;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent event) {
  return event ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  auto *a = reinterpret_cast<FakeEvent *>(start), *b = reinterpret_cast<FakeEvent *>(end);
  if (!a || !b || !a->recorded || !b->recorded)
    return CUDA_ERROR_INVALID_HANDLE;
  *ms = std::chrono::duration<float, std::milli>(b->when - a->when).count();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType, cuuint32_t rank,
                                        void *address, const cuuint64_t *, const cuuint64_t *strides,
                                        const cuuint32_t *box, const cuuint32_t *,
                                        CUtensorMapInterleave, CUtensorMapSwizzle,
                                        CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  if (!map || rank < 1 || rank > 5 || reinterpret_cast<uintptr_t>(address) % 16 != 0 ||
      (rank > 1 && strides[0] % 16 != 0) || box[0] == 0)
    return CUDA_ERROR_INVALID_VALUE;
  std::memset(map, 0, sizeof(*map));
  return CUDA_SUCCESS;
}
