//===- GpuTestSupport.h - shared by the GPU test files -----------*- C++ -*-===//

#ifndef KILN_TEST_GPU_GPUTESTSUPPORT_H
#define KILN_TEST_GPU_GPUTESTSUPPORT_H

#include "GpuExecutor.h"
#include "ReferenceEvaluator.h"

#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "kiln/codegen/CompileJobs.h"
#include "kiln/codegen/CudaEmitter.h"
#include "kiln/runtime/Device.h"
#include "kiln/runtime/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace kiln::testing {

/// An environment variable set for one scope: KILN_EPILOGUE_FRAGMENTS and
/// KILN_EPILOGUE_PAIRS (the code generator reads them per kernel; the
/// kernel cache keys on the source, which they change), KILN_GPU_TEST_OFFSET
/// (the GPU executor's placement), KILN_GPU_TEST_SELECT (its selection
/// pass's options).
struct ScopedSetting {
  const char *name;
  ScopedSetting(const char *name, const char *value) : name(name) { setenv(name, value, 1); }
  ~ScopedSetting() { unsetenv(name); }
};

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

/// The relative L2 error a result may have: fp32 1e-5, 16-bit types 1e-2.
inline double toleranceOf(const at::Tensor &t) {
  return t.scalar_type() == c10::kFloat ? 1e-5 : 1e-2;
}

/// `ir` parsed, random inputs drawn with `seed`, and the evaluator's
/// results on them (nullptr, with a test failure, when any step fails).
struct Evaluated {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp fn;
  std::vector<at::Tensor> inputs, expected;
};
inline std::unique_ptr<Evaluated> evaluated(const std::string &ir, uint64_t seed) {
  auto e = std::make_unique<Evaluated>();
  e->context.loadDialect<KilnDialect, mlir::func::FuncDialect>();
  e->module = mlir::parseSourceString<mlir::ModuleOp>(ir, &e->context);
  if (!e->module) {
    ADD_FAILURE() << "cannot parse\n" << ir;
    return nullptr;
  }
  e->fn = *e->module->getOps<mlir::func::FuncOp>().begin();
  e->inputs = randomInputs(e->fn, seed);
  std::string error;
  auto expected = frontend::evaluateReference(e->fn, e->inputs, error);
  if (!expected) {
    ADD_FAILURE() << error;
    return nullptr;
  }
  e->expected = std::move(*expected);
  return e;
}

/// Parses `ir`, runs it on the GPU and through the evaluator on the same
/// random inputs, and expects every result within its dtype's tolerance
/// (or `tolerance`, when given).
inline void expectMatchesReference(const std::string &ir, uint64_t seed = 1,
                                   double tolerance = 0) {
  std::unique_ptr<Evaluated> e = evaluated(ir, seed);
  ASSERT_TRUE(e);
  const std::vector<at::Tensor> &expected = e->expected;
  std::vector<at::Tensor> actual = kiln::testing::runOnGpu(e->fn, e->inputs);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    double err = kiln::testing::relativeL2(actual[i], expected[i]);
    EXPECT_LE(err, tolerance > 0 ? tolerance : toleranceOf(expected[i]))
        << "result " << i << " rel L2 " << err;
    std::printf("    result %zu: rel L2 %.3e vs the reference (%s)\n", i, err,
                c10::toString(expected[i].scalar_type()));
  }
}

/// `tensor<AxBx...xtype>`.
inline std::string tensorType(std::vector<int64_t> shape, const std::string &type) {
  std::string text = "tensor<";
  for (int64_t d : shape)
    text += std::to_string(d) + "x";
  return text + type + ">";
}

/// A linear with a bias and a GELU (`approximate`: "none" or "tanh") in
/// one gemm_epilogue group, its configuration forced to `kernel` when given:
/// `type` is f16, bf16 or f32.
inline std::string linearGelu(int64_t m, int64_t n, int64_t k, const std::string &type,
                              const std::string &kernel = "",
                              const std::string &approximate = "none") {
  auto t = [&](std::string s) { return "tensor<" + s + "x" + type + ">"; };
  std::string x = t(std::to_string(m) + "x" + std::to_string(k));
  std::string w = t(std::to_string(n) + "x" + std::to_string(k));
  std::string b = t(std::to_string(n));
  std::string y = t(std::to_string(m) + "x" + std::to_string(n));
  return "func.func @f(%x: " + x + ", %w: " + w + ", %b: " + b + ") -> " + y + " {\n"
         "  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : " + x + ", " + w + ", " + b + ")" +
         (kernel.empty() ? "" : " {kiln.kernel = " + kernel + "}") + " -> " + y + " {\n"
         "  ^bb0(%a: " + x + ", %bw: " + w + ", %bb: " + b + "):\n"
         "    %l = kiln.linear %a, %bw, %bb : (" + x + ", " + w + ", " + b + ") -> " + y + "\n"
         "    %g = kiln.gelu %l" + (approximate == "none" ? "" : " approximate = " + approximate) +
         " : " + y + "\n"
         "    kiln.yield %g : " + y + "\n  }\n  return %0 : " + y + "\n}\n";
}

/// Every kernel of every module in `irs` compiles with NVRTC for both
/// images the artifact carries (sm_90a, sm_80) without a spill, a stack
/// frame or a ptxas warning; the compiles run in worker processes, as
/// kiln-compile's do.
inline void expectCompilesForBothImages(const std::vector<std::string> &irs) {
  mlir::MLIRContext context;
  context.loadDialect<KilnDialect, mlir::func::FuncDialect>();
  struct Job {
    codegen::EmittedKernel kernel;
    const char *arch;
    const std::string *ir;
  };
  std::vector<Job> jobs;
  for (const std::string &ir : irs) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(ir, &context);
    ASSERT_TRUE(module) << ir;
    auto kernels = kiln::testing::emitSelectedKernels(*module);
    ASSERT_TRUE(mlir::succeeded(kernels)) << ir;
    for (const codegen::EmittedKernel &kernel : *kernels)
      for (const char *arch : {"sm_90a", "sm_80"})
        jobs.push_back({kernel, arch, &ir});
  }
  std::vector<codegen::CompileJobResult> results = codegen::runCompileJobs(
      jobs.size(), [&](size_t i, std::string &error) {
        return codegen::compileKernel(jobs[i].kernel, jobs[i].arch, error);
      });
  for (size_t i = 0; i < jobs.size(); ++i)
    EXPECT_TRUE(results[i].output)
        << jobs[i].arch << ": " << results[i].error << "\nfor\n" << *jobs[i].ir;
}

} // namespace kiln::testing

#endif // KILN_TEST_GPU_GPUTESTSUPPORT_H
