//===- Device.h - devices, contexts, modules and buffers --------*- C++ -*-===//
//
// Thin RAII owners over the driver API: what the executor and the tools need
// to pick a GPU, load compiled kernel images, move data and launch.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DEVICE_H
#define KILN_RUNTIME_DEVICE_H

#include "kiln/runtime/Driver.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>
#include <string_view>

namespace kiln::rt {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int computeMajor = 0;
  int computeMinor = 0;
  int multiprocessors = 0;
  size_t totalMemory = 0;
  int driverVersion = 0; // e.g. 13000 for CUDA 13.0

  /// The NVRTC target for this device's own instructions: `sm_90a` on Hopper
  /// (wgmma, setmaxnreg need the arch-specific target), else `sm_XY`.
  std::string nvrtcArch() const;
};

/// Describes device `ordinal`; throws NoDeviceError if there is none.
DeviceInfo queryDevice(int ordinal = 0);

/// Holds the device's primary context current on the calling thread.
class Context {
public:
  explicit Context(int ordinal = 0);
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;
  void synchronize() const;
  /// Sessions run on whatever thread calls them: each makes the context
  /// current first (cheap when it already is).
  void makeCurrent() const;

private:
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

/// A loaded cubin or PTX image.
class Module {
public:
  explicit Module(std::string_view image);
  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;
  CUfunction function(const char *name) const;

private:
  CUmodule module_ = nullptr;
};

/// Device memory owned for the buffer's lifetime. Out of memory throws
/// OutOfMemoryError naming `what`, the bytes asked and the bytes free.
class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t bytes, const std::string &what = "a buffer");
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  CUdeviceptr address() const { return address_; }
  size_t size() const { return bytes_; }
  void upload(const void *host, size_t bytes);
  /// Sets every byte to zero (synchronously).
  void zero();
  void download(void *host, size_t bytes) const;

private:
  CUdeviceptr address_ = 0;
  size_t bytes_ = 0;
};

/// Throws OutOfMemoryError naming `what` and `bytes` when the current
/// context's device has fewer than `bytes` free: a plan too large for the GPU
/// fails before any of it is allocated.
void checkFreeMemory(uint64_t bytes, const std::string &what);

/// Page-locked host memory, so copies to and from it run asynchronously.
class PinnedBuffer {
public:
  PinnedBuffer(size_t bytes, const std::string &what);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer &) = delete;
  PinnedBuffer &operator=(const PinnedBuffer &) = delete;
  unsigned char *data() const { return data_; }
  size_t size() const { return bytes_; }

private:
  unsigned char *data_ = nullptr;
  size_t bytes_ = 0;
};

/// A non-blocking stream: it does not serialize with the legacy default
/// stream, so sessions on different streams overlap.
class Stream {
public:
  /// A non-blocking stream of its own.
  Stream();
  /// The caller's stream, used and never destroyed.
  explicit Stream(CUstream borrowed) : stream_(borrowed), owned_(false) {}
  ~Stream();
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  CUstream handle() const { return stream_; }
  void synchronize() const;

private:
  CUstream stream_ = nullptr;
  bool owned_ = true;
};

/// A CUDA event for timing.
class Event {
public:
  Event();
  ~Event();
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
  CUevent handle() const { return event_; }
  void record(CUstream stream) const;
  /// Milliseconds from `earlier` to this event (both recorded and done).
  float since(const Event &earlier) const;

private:
  CUevent event_ = nullptr;
};

/// Whether [address, address + bytes) lies in one device allocation usable
/// from the current context.
bool isDeviceRange(CUdeviceptr address, size_t bytes);

/// A CUtensorMap (128 bytes, 64-byte aligned) for TMA loads of a packed
/// tensor of 2-byte elements (fp16 when `bf16` is false) at `address`,
/// sizes innermost first, in boxes of `box` elements traversed with
/// `elementStrides`, 128-byte swizzle; out-of-range elements (negative
/// coordinates too) load as zero. Throws Error naming the violated TMA rule
/// (alignment, rank, box size).
struct alignas(64) TensorMap {
  unsigned long long words[16];
};
TensorMap encodeTensorMap(CUdeviceptr address, bool bf16, const std::vector<uint64_t> &dims,
                          const std::vector<uint32_t> &box,
                          const std::vector<uint32_t> &elementStrides);

} // namespace kiln::rt

#endif // KILN_RUNTIME_DEVICE_H
