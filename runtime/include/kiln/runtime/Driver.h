//===- Driver.h - the CUDA driver API, loaded at run time -------*- C++ -*-===//
//
// kiln loads libcuda.so.1 with dlopen instead of linking it, so binaries start
// on machines without an NVIDIA driver (CI, compile-only hosts) and report a
// clear NoDeviceError there instead of failing in the dynamic loader. The
// environment variable KILN_CUDA_DRIVER names another library to load: the
// tests point it at a host-memory stand-in (test/fakecuda) to run the
// runtime's host code, under ThreadSanitizer too, on machines without a GPU. Every
// driver call goes through KILN_CU_CHECK, which names the call and the error.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DRIVER_H
#define KILN_RUNTIME_DRIVER_H

#include <cuda.h>

namespace kiln::rt {

// The driver entry points kiln uses; each becomes a member of Driver with the
// signature cuda.h declares (its macros pick the current _v2/_v3 versions).
#define KILN_CUDA_DRIVER_FUNCTIONS(X)                                          \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceTotalMem)                                                          \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuMemGetInfo)                                                              \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamBeginCapture)                                                      \
  X(cuStreamEndCapture)                                                        \
  X(cuGraphInstantiate)                                                        \
  X(cuGraphExecUpdate)                                                         \
  X(cuGraphLaunch)                                                             \
  X(cuGraphDestroy)                                                            \
  X(cuGraphExecDestroy)                                                        \
  X(cuMemHostAlloc)                                                            \
  X(cuMemFreeHost)                                                             \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuPointerGetAttribute)                                                     \
  X(cuModuleLoadData)                                                          \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuLaunchKernel)                                                            \
  X(cuLaunchKernelEx)                                                          \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemcpyDtoH)                                                              \
  X(cuMemsetD8)                                                                \
  X(cuFuncSetAttribute)                                                        \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)                                                        \
  X(cuTensorMapEncodeTiled)

struct Driver {
#define KILN_DECLARE_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  KILN_CUDA_DRIVER_FUNCTIONS(KILN_DECLARE_DRIVER_MEMBER)
#undef KILN_DECLARE_DRIVER_MEMBER

  /// The process-wide driver table, loaded and cuInit-ed on first use. Throws
  /// NoDeviceError when there is no driver or no CUDA device.
  static const Driver &get();
};

/// Throws kiln::rt::Error naming `call` and the driver's error name and text.
[[noreturn]] void throwDriverError(CUresult result, const char *call,
                                   const char *file, int line);

} // namespace kiln::rt

#define KILN_CU_CHECK(expr)                                                    \
  do {                                                                         \
    CUresult kiln_cu_result_ = (expr);                                         \
    if (kiln_cu_result_ != CUDA_SUCCESS)                                       \
      ::kiln::rt::throwDriverError(kiln_cu_result_, #expr, __FILE__,           \
                                   __LINE__);                                  \
  } while (0)

#endif // KILN_RUNTIME_DRIVER_H
