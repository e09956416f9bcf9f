//===- kiln-device-smoke.cpp - prove a machine can run kiln's kernels -----===//
//
// Initializes the driver, prints the GPU, compiles a small kernel with NVRTC
// for that GPU's own architecture, launches it on random data whose size is
// not a multiple of the block, and checks every element (the output is
// poisoned first, so an unwritten element fails). Exit codes: 0 pass, 1 fail,
// 77 no GPU here (ctest reports that as SKIPPED).
//
//===----------------------------------------------------------------------===//

#include "kiln/codegen/Nvrtc.h"
#include "kiln/runtime/Device.h"
#include "kiln/runtime/Error.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {
constexpr int kSkipped = 77;

constexpr const char *kKernelSource = R"(
extern "C" __global__ void kiln_smoke_axpy(float a, const float *x,
                                           const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = fmaf(a, x[i], y[i]);
}
)";

int run() {
  kiln::rt::DeviceInfo device = kiln::rt::queryDevice(0);
  std::printf("device 0: %s, compute capability %d.%d, %d SMs, %.1f GiB, "
              "driver CUDA %d.%d\n",
              device.name.c_str(), device.computeMajor, device.computeMinor,
              device.multiprocessors, device.totalMemory / double(1 << 30),
              device.driverVersion / 1000, device.driverVersion % 1000 / 10);

  kiln::codegen::NvrtcOptions options;
  options.arch = device.nvrtcArch();
  std::string error;
  auto compiled = kiln::codegen::compileWithNvrtc(
      kKernelSource, "kiln_smoke_axpy", options, error);
  if (!compiled) {
    std::fprintf(stderr, "kiln-device-smoke: %s\n", error.c_str());
    return 1;
  }
  std::printf("NVRTC %s compiled kiln_smoke_axpy for %s: %zu-byte cubin\n",
              kiln::codegen::nvrtcVersion().c_str(), options.arch.c_str(),
              compiled->cubin.size());

  kiln::rt::Context context(device.ordinal);
  kiln::rt::Module module(compiled->cubin);
  CUfunction kernel = module.function("kiln_smoke_axpy");

  const int n = 1'000'003; // not a multiple of the block size
  std::mt19937 rng(20261129);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> x(n), y(n), out(n);
  for (int i = 0; i < n; ++i) {
    x[i] = dist(rng);
    y[i] = dist(rng);
  }
  float a = dist(rng);
  const size_t bytes = n * sizeof(float);
  kiln::rt::DeviceBuffer dx(bytes), dy(bytes), dout(bytes);
  dx.upload(x.data(), bytes);
  dy.upload(y.data(), bytes);
  std::vector<float> poison(n, std::nanf(""));
  dout.upload(poison.data(), bytes);

  CUdeviceptr px = dx.address(), py = dy.address(), pout = dout.address();
  int count = n;
  void *args[] = {&a, &px, &py, &pout, &count};
  const unsigned block = 256, grid = (n + block - 1) / block;
  const kiln::rt::Driver &cu = kiln::rt::Driver::get();
  KILN_CU_CHECK(cu.cuLaunchKernel(kernel, grid, 1, 1, block, 1, 1, 0, nullptr,
                                  args, nullptr));
  context.synchronize();
  dout.download(out.data(), bytes);

  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    float expected = std::fma(a, x[i], y[i]);
    if (!(out[i] == expected) && wrong++ < 5)
      std::fprintf(stderr, "out[%d] = %g, expected %g\n", i, out[i], expected);
  }
  if (wrong) {
    std::fprintf(stderr, "kiln-device-smoke: FAIL: %d of %d elements wrong\n",
                 wrong, n);
    return 1;
  }
  std::printf("PASS: kiln_smoke_axpy on %d elements (grid %u x %u threads) "
              "matches the host bit for bit\n",
              n, grid, block);
  return 0;
}
} // namespace

int main() {
  try {
    return run();
  } catch (const kiln::rt::NoDeviceError &e) {
    std::fprintf(stderr, "kiln-device-smoke: SKIPPED: %s\n", e.what());
    return kSkipped;
  } catch (const kiln::rt::Error &e) {
    std::fprintf(stderr, "kiln-device-smoke: error: %s\n", e.what());
    return 1;
  }
}
