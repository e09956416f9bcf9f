//===- RuntimeTest.cpp - runtime behaviour that needs no GPU --------------===//
//
// Runs everywhere: on a machine without a driver the runtime must raise
// NoDeviceError with the cause, never crash; on a GPU machine the same calls
// must reject a device ordinal that does not exist.

#include "kiln/runtime/Device.h"
#include "kiln/runtime/Error.h"

#include <gtest/gtest.h>

using namespace kiln::rt;

TEST(Runtime, MissingDeviceIsANamedError) {
  try {
    queryDevice(4096);
    FAIL() << "queryDevice(4096) returned a device";
  } catch (const NoDeviceError &e) {
    std::string message = e.what();
    // Either no driver at all, or a driver without device 4096.
    EXPECT_TRUE(message.find("libcuda.so.1") != std::string::npos ||
                message.find("no CUDA device 4096") != std::string::npos ||
                message.find("no CUDA device is visible") != std::string::npos)
        << message;
  }
}

TEST(Runtime, NoDeviceErrorRepeatsTheSameCause) {
  // The driver is loaded once; a second caller must see the same cause rather
  // than a crash on a half-initialized table.
  std::string first, second;
  try {
    queryDevice(4096);
  } catch (const NoDeviceError &e) {
    first = e.what();
  }
  try {
    queryDevice(4096);
  } catch (const NoDeviceError &e) {
    second = e.what();
  }
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(first, second);
}

TEST(Runtime, NvrtcArchNamesHopperArchSpecificTarget) {
  DeviceInfo hopper;
  hopper.computeMajor = 9;
  hopper.computeMinor = 0;
  EXPECT_EQ(hopper.nvrtcArch(), "sm_90a");
  DeviceInfo ampere;
  ampere.computeMajor = 8;
  ampere.computeMinor = 6;
  EXPECT_EQ(ampere.nvrtcArch(), "sm_86");
}
