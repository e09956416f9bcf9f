//===- KernelsGpuTest.cpp - kiln's kernels against the reference (gpu) ----===//
//
// Each kernel family on random inputs, sizes that are not tile multiples
// included, against the ATen reference evaluator running the same IR; then
// the test models end to end against the evaluator and LibTorch. Every test
// skips, with the reason, where no GPU is present.
//
//===----------------------------------------------------------------------===//

#include "GpuExecutor.h"
#include "KilnVerify.h"
#include "ReferenceEvaluator.h"
#include "TorchScriptImporter.h"
#include "TorchScriptModule.h"
#include "TorchScriptState.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Passes/Pipelines.h"
#include "kiln/runtime/Device.h"
#include "kiln/runtime/Error.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace mlir;
using namespace kiln;

namespace {

void skipWithoutGpu() {
  try {
    rt::queryDevice(0);
  } catch (const rt::NoDeviceError &e) {
    GTEST_SKIP() << "no GPU: " << e.what();
  }
}

// GTEST_SKIP in a helper returns from the helper only.
#define KILN_REQUIRE_GPU()                                                     \
  do {                                                                         \
    skipWithoutGpu();                                                          \
    if (::testing::Test::IsSkipped())                                          \
      return;                                                                  \
  } while (0)

std::vector<at::Tensor> randomInputs(func::FuncOp fn, uint64_t seed) {
  at::manual_seed(seed);
  std::vector<at::Tensor> inputs;
  for (Type type : fn.getArgumentTypes()) {
    auto tensor = cast<RankedTensorType>(type);
    auto dtype = *frontend::scalarTypeOf(tensor.getElementType());
    inputs.push_back(at::randn(tensor.getShape().vec()).to(dtype));
  }
  return inputs;
}

double toleranceOf(const at::Tensor &t) {
  return t.scalar_type() == c10::kFloat ? 1e-5 : 1e-2;
}

/// Parses `ir`, runs it on the GPU and through the evaluator on the same
/// random inputs, and expects every result within its dtype's tolerance.
void expectMatchesReference(const std::string &ir, uint64_t seed = 1) {
  MLIRContext context;
  context.loadDialect<KilnDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &context);
  ASSERT_TRUE(module);
  auto fn = *module->getOps<func::FuncOp>().begin();
  std::vector<at::Tensor> inputs = randomInputs(fn, seed);
  std::string error;
  auto expected = frontend::evaluateReference(fn, inputs, error);
  ASSERT_TRUE(expected) << error;
  std::vector<at::Tensor> actual = kiln::testing::runOnGpu(fn, inputs);
  ASSERT_EQ(actual.size(), expected->size());
  for (size_t i = 0; i < actual.size(); ++i) {
    double err = kiln::testing::relativeL2(actual[i], (*expected)[i]);
    EXPECT_LE(err, toleranceOf((*expected)[i])) << "result " << i << " rel L2 " << err;
    std::printf("    result %zu: rel L2 %.3e vs the reference (%s)\n", i, err,
                c10::toString((*expected)[i].scalar_type()));
  }
}

std::string elementwise(const std::string &shape, const std::string &type) {
  std::string t = "tensor<" + shape + "x" + type + ">";
  std::string row = "tensor<" + shape.substr(shape.rfind('x') + 1) + "x" + type + ">";
  return "func.func @f(%a: " + t + ", %b: " + row + ") -> " + t + " {\n"
         "  %0 = kiln.fusion elementwise ins(%a, %b : " + t + ", " + row + ") -> " + t + " {\n"
         "  ^bb0(%x: " + t + ", %y: " + row + "):\n"
         "    %h = kiln.constant dense<0.5> : tensor<" + type + ">\n"
         "    %s = kiln.add %x, %y : " + t + ", " + row + " -> " + t + "\n"
         "    %g = kiln.gelu %s approximate = tanh : " + t + "\n"
         "    %e = kiln.sigmoid %g : " + t + "\n"
         "    %m = kiln.mul %e, %h : " + t + ", tensor<" + type + "> -> " + t + "\n"
         "    %c = kiln.clamp %m min = 0.1 max = 0.4 : " + t + "\n"
         "    %d = kiln.div %c, %e : " + t + "\n"
         "    kiln.yield %d : " + t + "\n  }\n  return %0 : " + t + "\n}\n";
}

std::string linear(int64_t m, int64_t n, int64_t k, const std::string &type) {
  auto t = [&](std::string s) { return "tensor<" + s + "x" + type + ">"; };
  std::string x = t(std::to_string(m) + "x" + std::to_string(k));
  std::string w = t(std::to_string(n) + "x" + std::to_string(k));
  std::string b = t(std::to_string(n));
  std::string y = t(std::to_string(m) + "x" + std::to_string(n));
  return "func.func @f(%x: " + x + ", %w: " + w + ", %b: " + b + ", %r: " + y + ") -> " + y + " {\n"
         "  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b, %r : " + x + ", " + w + ", " + b + ", " + y + ") -> " + y + " {\n"
         "  ^bb0(%a: " + x + ", %bw: " + w + ", %bb: " + b + ", %br: " + y + "):\n"
         "    %l = kiln.linear %a, %bw, %bb : (" + x + ", " + w + ", " + b + ") -> " + y + "\n"
         "    %g = kiln.gelu %l : " + y + "\n"
         "    %s = kiln.add %g, %br : " + y + "\n"
         "    kiln.yield %s : " + y + "\n  }\n  return %0 : " + y + "\n}\n";
}

std::string batchMatmul(const std::string &lhs, const std::string &rhs,
                        const std::string &out, const std::string &op) {
  return "func.func @f(%a: " + lhs + ", %b: " + rhs + ") -> " + out + " {\n"
         "  %0 = kiln.fusion gemm_epilogue ins(%a, %b : " + lhs + ", " + rhs + ") -> " + out + " {\n"
         "  ^bb0(%x: " + lhs + ", %y: " + rhs + "):\n"
         "    %m = kiln." + op + " %x, %y : (" + lhs + ", " + rhs + ") -> " + out + "\n"
         "    kiln.yield %m : " + out + "\n  }\n  return %0 : " + out + "\n}\n";
}

std::string layerNorm(int64_t rows, int64_t length, const std::string &type) {
  std::string t = "tensor<" + std::to_string(rows) + "x" + std::to_string(length) + "x" + type + ">";
  std::string v = "tensor<" + std::to_string(length) + "x" + type + ">";
  return "func.func @f(%x: " + t + ", %y: " + t + ", %g: " + v + ", %b: " + v + ") -> (" + t + ", " + t + ") {\n"
         "  %0:2 = kiln.fusion normalization ins(%x, %y, %g, %b : " + t + ", " + t + ", " + v + ", " + v + ") -> " + t + ", " + t + " {\n"
         "  ^bb0(%a: " + t + ", %c: " + t + ", %w: " + v + ", %d: " + v + "):\n"
         "    %h = kiln.add %a, %c : " + t + "\n"
         "    %n = kiln.layer_norm %h weight %w bias %d axis = 1 eps = 1.0e-05 : (" + t + ", " + v + ", " + v + ") -> " + t + "\n"
         "    %e = kiln.mul %n, %h : " + t + "\n"
         "    kiln.yield %h, %e : " + t + ", " + t + "\n  }\n  return %0#0, %0#1 : " + t + ", " + t + "\n}\n";
}

std::string softmax(int64_t rows, int64_t length, const std::string &type) {
  std::string t = "tensor<" + std::to_string(rows) + "x" + std::to_string(length) + "x" + type + ">";
  return "func.func @f(%x: " + t + ") -> " + t + " {\n"
         "  %0 = kiln.fusion normalization ins(%x : " + t + ") -> " + t + " {\n"
         "  ^bb0(%a: " + t + "):\n"
         "    %c = kiln.constant dense<3.0> : tensor<" + type + ">\n"
         "    %s = kiln.mul %a, %c : " + t + ", tensor<" + type + "> -> " + t + "\n"
         "    %p = kiln.softmax %s dim = 1 : " + t + "\n"
         "    kiln.yield %p : " + t + "\n  }\n  return %0 : " + t + "\n}\n";
}
} // namespace

TEST(KernelsGpu, ElementwiseBroadcastOddSizes) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(elementwise("5x8", "f16"));
  expectMatchesReference(elementwise("1001x1003", "f32"));
  expectMatchesReference(elementwise("37x129", "bf16"));
}

TEST(KernelsGpu, LinearEpilogueFp16OddSizes) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(linear(70, 300, 72, "f16"));  // vector loads
  expectMatchesReference(linear(129, 257, 75, "f16")); // K % 8 != 0: scalar edge loads
  expectMatchesReference(linear(512, 384, 1024, "f16"));
}

TEST(KernelsGpu, LinearEpilogueBf16AndFp32) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(linear(130, 200, 96, "bf16"));
  expectMatchesReference(linear(33, 65, 17, "f32"));
}

TEST(KernelsGpu, MatmulNMajorOperand) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(batchMatmul("tensor<130x200xf16>", "tensor<200x129xf16>",
                                     "tensor<130x129xf16>", "matmul"));
  expectMatchesReference(batchMatmul("tensor<3x5x8xf32>", "tensor<2x3x8x7xf32>",
                                     "tensor<2x3x5x7xf32>", "batch_matmul"));
  expectMatchesReference(batchMatmul("tensor<4x66x72xbf16>", "tensor<72x40xbf16>",
                                     "tensor<4x66x40xbf16>", "batch_matmul"));
}

TEST(KernelsGpu, LayerNormWithPrologueAndEpilogue) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(layerNorm(6, 20, "f32"));
  expectMatchesReference(layerNorm(4, 1000, "f16"));
  expectMatchesReference(layerNorm(3, 4096, "bf16"));
}

TEST(KernelsGpu, ScaledSoftmax) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(softmax(4, 9, "f32"));
  expectMatchesReference(softmax(2, 3000, "f16"));
}

//===----------------------------------------------------------------------===//
// Test models end to end
//===----------------------------------------------------------------------===//

namespace {
struct ModelCase {
  const char *model;
  const char *precision;
};
[[maybe_unused]] void PrintTo(const ModelCase &c, std::ostream *os) {
  *os << c.model << " at " << c.precision;
}

class ModelGpu : public ::testing::TestWithParam<ModelCase> {};
} // namespace

TEST_P(ModelGpu, MatchesLibTorch) {
  KILN_REQUIRE_GPU();
  const ModelCase &c = GetParam();
  const char *dir = std::getenv("KILN_TEST_MODELS");
  std::string path = std::string(dir ? dir : "models") + "/" + c.model + ".pt";
  std::string error;
  auto model = frontend::TorchScriptModule::load(path, error);
  ASSERT_TRUE(model) << error;
  std::vector<frontend::InputSpec> specs = model->tracedInputs();
  ASSERT_FALSE(specs.empty());
  ASSERT_TRUE(model->specialize(specs, error)) << error;
  MLIRContext context;
  auto module = frontend::importTorchScript(*model, context, error);
  ASSERT_TRUE(module) << error;
  PassManager pm(&context);
  GraphPipelineOptions options;
  options.precision = c.precision;
  buildGraphPipeline(pm, options);
  ASSERT_TRUE(succeeded(pm.run(*module)));
  auto fn = *module->getOps<func::FuncOp>().begin();

  std::vector<at::Tensor> inputs = randomInputs(fn, 7);
  auto reference = frontend::evaluateReference(fn, inputs, error);
  ASSERT_TRUE(reference) << error;
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  at::Tensor torchOut = model->state().frozen.forward(args).toTensor();
  std::vector<at::Tensor> gpu = kiln::testing::runOnGpu(fn, inputs);
  ASSERT_EQ(gpu.size(), 1u);
  double vsReference = kiln::testing::relativeL2(gpu[0], (*reference)[0]);
  double vsTorch = kiln::testing::relativeL2(gpu[0], torchOut);
  double tolerance = frontend::toleranceFor(c.precision);
  if (gpu[0].scalar_type() != c10::kFloat)
    tolerance = std::max(tolerance, 1e-2);
  std::printf("    %s @ %s: rel L2 %.3e vs the reference evaluator, %.3e vs "
              "LibTorch (tolerance %.0e)\n",
              c.model, c.precision, vsReference, vsTorch, tolerance);
  EXPECT_LE(vsReference, tolerance);
  EXPECT_LE(vsTorch, tolerance);
}

INSTANTIATE_TEST_SUITE_P(
    TestModels, ModelGpu,
    ::testing::Values(ModelCase{"mlp_f32", "fp32"}, ModelCase{"mlp_f16", "fp32"},
                      ModelCase{"ffn_f32", "fp32"}, ModelCase{"ffn_f16", "fp32"},
                      ModelCase{"ffn_tanh_f16", "fp32"},
                      ModelCase{"mlp_stack_f32", "fp32"},
                      ModelCase{"mlp_stack_f16", "fp32"},
                      ModelCase{"ffn_f32", "tf32"}, ModelCase{"ffn_f32", "fp16"},
                      ModelCase{"ffn_f32", "bf16"},
                      ModelCase{"mlp_stack_f32", "fp16"}),
    [](const ::testing::TestParamInfo<ModelCase> &info) {
      return std::string(info.param.model) + "_" + info.param.precision;
    });
