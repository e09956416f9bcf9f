//===- TorchScriptModuleTest.cpp - loading TorchScript archives -----------===//
//
// The fixtures come from test/models/make_models.py, run by ctest before this
// test (KILN_TEST_MODELS names their folder).

#include "TorchScriptModule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

using kiln::frontend::OperatorUse;
using kiln::frontend::TorchScriptModule;

namespace {
std::string fixture(const std::string &name) {
  const char *dir = std::getenv("KILN_TEST_MODELS");
  return std::string(dir ? dir : "models") + "/" + name;
}

const OperatorUse *findOp(const std::vector<OperatorUse> &ops,
                          const std::string &name) {
  auto it = std::find_if(ops.begin(), ops.end(), [&](const OperatorUse &op) {
    return op.name == name;
  });
  return it == ops.end() ? nullptr : &*it;
}

std::string loadError(const std::string &path) {
  std::string error;
  EXPECT_EQ(TorchScriptModule::load(path, error), nullptr) << path;
  return error;
}
} // namespace

TEST(TorchScriptModule, TracedMlpFreezesToLinearAndRelu) {
  std::string error;
  auto module = TorchScriptModule::load(fixture("mlp_f32.pt"), error);
  ASSERT_NE(module, nullptr) << error;
  auto ops = module->operators();
  const OperatorUse *linear = findOp(ops, "aten::linear");
  ASSERT_NE(linear, nullptr) << module->graphText();
  EXPECT_EQ(linear->count, 2);
  ASSERT_NE(findOp(ops, "aten::relu"), nullptr) << module->graphText();
  // Freezing in eval mode removes dropout and every attribute access.
  EXPECT_EQ(findOp(ops, "aten::dropout"), nullptr) << module->graphText();
  EXPECT_EQ(findOp(ops, "prim::GetAttr"), nullptr) << module->graphText();
  EXPECT_EQ(module->inputNames().size(), 1u);
}

TEST(TorchScriptModule, OperatorsCarryThePythonSourceLine) {
  std::string error;
  auto module = TorchScriptModule::load(fixture("mlp_scripted.pt"), error);
  ASSERT_NE(module, nullptr) << error;
  const OperatorUse *relu = findOp(module->operators(), "aten::relu");
  ASSERT_NE(relu, nullptr) << module->graphText();
  EXPECT_NE(relu->firstSourceLine.find("make_models.py:"), std::string::npos)
      << relu->firstSourceLine;
}

TEST(TorchScriptModule, MissingFileIsNamed) {
  std::string error = loadError(fixture("does_not_exist.pt"));
  EXPECT_NE(error.find("does_not_exist.pt"), std::string::npos) << error;
  EXPECT_NE(error.find("no such file"), std::string::npos) << error;
}

TEST(TorchScriptModule, DirectoryIsRejected) {
  std::string error = loadError(fixture(""));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
}

TEST(TorchScriptModule, NonZipFileIsNotAnArchive) {
  std::string error = loadError(fixture("not_a_model.pt"));
  EXPECT_NE(error.find("is not a TorchScript or torch.export archive (not a zip file)"), std::string::npos)
      << error;
}

TEST(TorchScriptModule, StateDictIsRecognized) {
  std::string error = loadError(fixture("mlp_state_dict.pt"));
  EXPECT_NE(error.find("torch.save"), std::string::npos) << error;
}

TEST(TorchScriptModule, TruncatedArchiveIsAnErrorNotACrash) {
  std::string error = loadError(fixture("truncated.pt"));
  EXPECT_NE(error.find("truncated.pt"), std::string::npos) << error;
  EXPECT_EQ(error.find("Exception raised from"), std::string::npos)
      << "backtrace leaked into the message: " << error;
}

// Shapes come from a run on meta tensors (no arithmetic); a graph that reads
// a value from its data (a slice bounded by int(tensor)) runs on the CPU,
// and says why.
TEST(TorchScriptModule, ShapesAreLearnedOnMetaTensorsUnlessAValueIsNeeded) {
  std::string error;
  auto resnet = TorchScriptModule::load(fixture("resnet_small_f32.pt"), error);
  ASSERT_NE(resnet, nullptr) << error;
  ASSERT_TRUE(resnet->specialize(resnet->tracedInputs(), error)) << error;
  EXPECT_EQ(resnet->shapeRun().rfind("on meta tensors", 0), 0u) << resnet->shapeRun();

  auto reads = TorchScriptModule::load(fixture("value_dependent_scripted.pt"), error);
  ASSERT_NE(reads, nullptr) << error;
  ASSERT_TRUE(reads->specialize({{"a", {5, 3}, "f32", std::nullopt}}, error)) << error;
  EXPECT_EQ(reads->shapeRun().rfind("on the CPU (on meta tensors: ", 0), 0u) << reads->shapeRun();
  // int() reads _local_scalar_dense, which C++ LibTorch has no meta kernel
  // for; running it on tensors of ones would give a made-up size.
  EXPECT_NE(reads->shapeRun().find("returns a value computed from the data"), std::string::npos)
      << reads->shapeRun();
}
