//===- GpuTestSupport.h - shared by the GPU test files -----------*- C++ -*-===//

#ifndef KILN_TEST_GPU_GPUTESTSUPPORT_H
#define KILN_TEST_GPU_GPUTESTSUPPORT_H

#include "ReferenceEvaluator.h"

#include "kiln/runtime/Device.h"
#include "kiln/runtime/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

namespace kiln::testing {

inline void skipWithoutGpu() {
  try {
    kiln::rt::queryDevice(0);
  } catch (const kiln::rt::NoDeviceError &e) {
    GTEST_SKIP() << "no GPU: " << e.what();
  }
}

// GTEST_SKIP in a helper returns from the helper only.
#define KILN_REQUIRE_GPU()                                                     \
  do {                                                                         \
    ::kiln::testing::skipWithoutGpu();                                                          \
    if (::testing::Test::IsSkipped())                                          \
      return;                                                                  \
  } while (0)

/// Random inputs for every argument of `fn`: normal floats; integers are
/// token ids and masks, small and non-negative.
inline std::vector<at::Tensor> randomInputs(mlir::func::FuncOp fn, uint64_t seed) {
  at::manual_seed(seed);
  std::vector<at::Tensor> inputs;
  for (mlir::Type type : fn.getArgumentTypes()) {
    auto tensor = mlir::cast<mlir::RankedTensorType>(type);
    auto dtype = *frontend::scalarTypeOf(tensor.getElementType());
    // Integers are token ids and masks: small and non-negative.
    if (at::isIntegralType(dtype, /*includeBool=*/true))
      inputs.push_back(at::randint(0, dtype == c10::kBool ? 2 : 8, tensor.getShape().vec())
                           .to(dtype));
    else
      inputs.push_back(at::randn(tensor.getShape().vec()).to(dtype));
  }
  return inputs;
}


} // namespace kiln::testing

#endif // KILN_TEST_GPU_GPUTESTSUPPORT_H
