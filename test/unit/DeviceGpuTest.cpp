//===- DeviceGpuTest.cpp - runtime device tests (label: gpu) --------------===//
//
// Each test skips, with the reason, where no GPU is present.

#include "kiln/runtime/Device.h"
#include "kiln/runtime/Error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

using namespace kiln::rt;

namespace {
class DeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    try {
      info_ = queryDevice(0);
    } catch (const NoDeviceError &e) {
      GTEST_SKIP() << "no GPU: " << e.what();
    }
    context_ = std::make_unique<Context>(0);
  }
  DeviceInfo info_;
  std::unique_ptr<Context> context_;
};
} // namespace

TEST_F(DeviceTest, ReportsASaneDevice) {
  EXPECT_FALSE(info_.name.empty());
  EXPECT_GE(info_.computeMajor, 7);
  EXPECT_GT(info_.multiprocessors, 0);
  EXPECT_GT(info_.totalMemory, size_t(1) << 30);
}

TEST_F(DeviceTest, BufferRoundTripsRandomData) {
  const size_t n = 12345; // odd size on purpose
  std::vector<float> host(n), back(n, std::nanf(""));
  std::mt19937 rng(7);
  std::normal_distribution<float> dist;
  for (float &v : host)
    v = dist(rng);
  DeviceBuffer buffer(n * sizeof(float));
  buffer.upload(host.data(), n * sizeof(float));
  buffer.download(back.data(), n * sizeof(float));
  EXPECT_EQ(host, back);
}

TEST_F(DeviceTest, OversizedTransferIsRejected) {
  DeviceBuffer buffer(64);
  std::vector<char> host(128);
  EXPECT_THROW(buffer.upload(host.data(), host.size()), Error);
}

TEST_F(DeviceTest, OutOfMemoryNamesTheBytes) {
  const size_t petabyte = size_t(1) << 50;
  try {
    DeviceBuffer huge(petabyte);
    FAIL() << "allocated a petabyte";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(petabyte)),
              std::string::npos)
        << e.what();
  }
}

TEST_F(DeviceTest, LoadingGarbageAsAModuleIsAnError) {
  std::string garbage(1024, '\x5a');
  EXPECT_THROW(Module module(garbage), Error);
}
