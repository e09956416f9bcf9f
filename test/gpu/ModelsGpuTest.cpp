//===- ModelsGpuTest.cpp - the test models end to end on the GPU ----------===//
//
// Each test model (the slice's MLPs and FFNs, the convolutional and attention
// models) imported, optimized at a precision, run on the GPU and compared
// with the reference evaluator and with LibTorch running the frozen model on
// the CPU. Skips, with the reason, where no GPU is present.
//
//===----------------------------------------------------------------------===//

#include "GpuExecutor.h"
#include "GpuTestSupport.h"
#include "KilnVerify.h"
#include "ReferenceEvaluator.h"
#include "TorchScriptImporter.h"
#include "TorchScriptModule.h"
#include "TorchScriptState.h"

#include "kiln/Passes/Pipelines.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

using namespace mlir;
using namespace kiln;
using kiln::testing::randomInputs;

namespace {

struct ModelCase {
  const char *model;
  const char *precision;
  /// The graph pipeline's fold-layer-norm-bytes (-1, its default: none).
  int64_t foldLayerNormBytes = -1;
  /// Its merge-shortcut-bytes (-1, its default here: none).
  int64_t mergeShortcutBytes = -1;
  /// Its conv-global-pool (the pool summed in its 1x1 convolution's epilogue).
  bool convGlobalPool = false;
};
[[maybe_unused]] void PrintTo(const ModelCase &c, std::ostream *os) {
  *os << c.model << " at " << c.precision
      << (c.foldLayerNormBytes >= 0 ? ", layer norms folded" : "")
      << (c.mergeShortcutBytes >= 0 ? ", shortcuts merged" : "")
      << (c.convGlobalPool ? ", the pool in its convolution" : "");
}

class ModelGpu : public ::testing::TestWithParam<ModelCase> {};
} // namespace

namespace {
/// `c`'s model loaded from KILN_TEST_MODELS, imported at its traced shapes
/// and run through the graph pipeline at its precision and thresholds.
struct CompiledModel {
  std::unique_ptr<frontend::TorchScriptModule> model;
  OwningOpRef<ModuleOp> module;
  func::FuncOp fn;
  Precision precision;
};

void compileModel(const ModelCase &c, MLIRContext &context, CompiledModel &out) {
  const char *dir = std::getenv("KILN_TEST_MODELS");
  std::string path = std::string(dir ? dir : "models") + "/" + c.model + ".pt";
  std::string error;
  out.model = frontend::TorchScriptModule::load(path, error);
  ASSERT_TRUE(out.model) << error;
  std::vector<frontend::InputSpec> specs = out.model->tracedInputs();
  ASSERT_FALSE(specs.empty());
  ASSERT_TRUE(out.model->specialize(specs, error)) << error;
  out.module = frontend::importTorchScript(*out.model, context, error);
  ASSERT_TRUE(out.module) << error;
  PassManager pm(&context);
  GraphPipelineOptions options;
  std::optional<Precision> precision = symbolizePrecision(c.precision);
  ASSERT_TRUE(precision) << c.precision;
  out.precision = *precision;
  options.precision = *precision;
  options.foldLayerNormBytes = c.foldLayerNormBytes;
  options.mergeShortcutBytes = c.mergeShortcutBytes;
  options.convGlobalPool = c.convGlobalPool;
  // The test model's two row tiles of images take the pool where they fill
  // a quarter of the GPU: a GPU of 8 multiprocessors, whose grid limits
  // also have a block walk several tiles.
  if (c.convGlobalPool)
    options.multiprocessors = 8;
  buildGraphPipeline(pm, options);
  ASSERT_TRUE(succeeded(pm.run(*out.module)));
  out.fn = *out.module->getOps<func::FuncOp>().begin();
}
} // namespace

TEST_P(ModelGpu, MatchesLibTorch) {
  KILN_REQUIRE_GPU();
  const ModelCase &c = GetParam();
  MLIRContext context;
  CompiledModel compiled;
  ASSERT_NO_FATAL_FAILURE(compileModel(c, context, compiled));
  func::FuncOp fn = compiled.fn;
  auto &model = compiled.model;
  std::string error;

  std::vector<at::Tensor> inputs = randomInputs(fn, 7);
  auto reference = frontend::evaluateReference(fn, inputs, error);
  ASSERT_TRUE(reference) << error;
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  at::Tensor torchOut = model->state().frozen.forward(args).toTensor();
  std::vector<at::Tensor> gpu = kiln::testing::runOnGpu(fn, inputs);
  ASSERT_EQ(gpu.size(), 1u);
  double vsReference = kiln::testing::relativeL2(gpu[0], (*reference)[0]);
  double vsTorch = kiln::testing::relativeL2(gpu[0], torchOut);
  double tolerance = frontend::toleranceFor(compiled.precision);
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
                      ModelCase{"mlp_stack_f32", "fp16"},
                      // Convolutional and attention test models.
                      ModelCase{"resnet_basic_f32", "fp32"},
                      ModelCase{"resnet_small_f32", "fp32"},
                      ModelCase{"resnet_small_f16", "fp32"},
                      ModelCase{"resnet_small_f32", "fp16"},
                      ModelCase{"mobilenet_block_f32", "fp32"},
                      ModelCase{"mobilenet_block_f16", "fp32"},
                      ModelCase{"vit_tiny_f32", "fp32"}, ModelCase{"vit_tiny_f16", "fp32"},
                      ModelCase{"bert_tiny_f32", "fp32"}, ModelCase{"bert_tiny_f16", "fp32"},
                      ModelCase{"gpt2_block_f32", "fp32"},
                      ModelCase{"gpt2_block_f32", "fp16"},
                      // q, k and v sliced from one permuted projection (the
                      // attention kernel reads through the shared views).
                      ModelCase{"op_mha_slow_path", "fp32"},
                      ModelCase{"op_mha_slow_path", "fp16"},
                      ModelCase{"op_mha_slow_path_b3", "fp32"},
                      ModelCase{"op_mha_slow_path_b3", "fp16"},
                      // Pre-norm blocks with every layer norm folded into the
                      // linears it feeds, however small.
                      ModelCase{"vit_tiny_f32", "fp16", 0},
                      ModelCase{"gpt2_block_f32", "fp16", 0},
                      // A bottleneck's strided projection shortcut merged
                      // into its expand, read as a channel concat.
                      ModelCase{"resnet_projection_f32", "fp16"},
                      ModelCase{"resnet_projection_f32", "fp16", -1, 0},
                      ModelCase{"resnet_projection_f16", "fp32", -1, 0},
                      // ResNet-50's tail: the global average pool in the
                      // expand's epilogue, and not.
                      ModelCase{"resnet_head_f16", "fp32", -1, -1, true},
                      ModelCase{"resnet_head_f32", "fp16", -1, -1, true},
                      ModelCase{"resnet_head_f32", "fp16"}),
    [](const ::testing::TestParamInfo<ModelCase> &info) {
      return std::string(info.param.model) + "_" + info.param.precision +
             (info.param.foldLayerNormBytes >= 0 ? "_folded" : "") +
             (info.param.mergeShortcutBytes >= 0 ? "_merged" : "") +
             (info.param.convGlobalPool ? "_pooled" : "");
    });

// Needs no GPU: the pipeline's merged projection shortcut (a channel concat
// and a strided slice in the expand's group, the weights and biases joined)
// computes, on the reference evaluator, what LibTorch computes for the two
// convolutions apart.
TEST(ModelEvaluator, MergedShortcutMatchesLibTorch) {
  MLIRContext context;
  CompiledModel compiled;
  ASSERT_NO_FATAL_FAILURE(
      compileModel(ModelCase{"resnet_projection_f32", "fp16", -1, 0}, context, compiled));
  int concats = 0;
  compiled.fn.walk([&](FusionOp group) {
    group.walk([&](ConcatOp) { ++concats; });
  });
  EXPECT_EQ(concats, 1) << "the shortcut was not merged";
  std::vector<at::Tensor> inputs = randomInputs(compiled.fn, 7);
  std::string error;
  auto reference = frontend::evaluateReference(compiled.fn, inputs, error);
  ASSERT_TRUE(reference) << error;
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  at::Tensor torchOut = compiled.model->state().frozen.forward(args).toTensor();
  double err = kiln::testing::relativeL2((*reference)[0], torchOut);
  std::printf("    merged shortcut on the evaluator: rel L2 %.3e vs LibTorch\n", err);
  EXPECT_LE(err, 1e-2);
}
