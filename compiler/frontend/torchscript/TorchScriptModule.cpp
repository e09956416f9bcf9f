//===- TorchScriptModule.cpp - load and clean a TorchScript archive -------===//
//
// load -> eval -> freeze -> (on a copy of forward's graph) mutation removal,
// tuple lowering, peephole, constant propagation and pooling, CSE, DCE. See
// shared/docs/TORCHSCRIPT.md for why these passes and not
// optimize_for_inference (MKLDNN ops) or FrozenLinearTranspose (splits linear).
//
//===----------------------------------------------------------------------===//

#include "TorchScriptModule.h"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/passes/common_subexpression_elimination.h>
#include <torch/csrc/jit/passes/constant_pooling.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/passes/peephole.h>
#include <torch/csrc/jit/passes/remove_mutation.h>
#include <torch/csrc/jit/serialization/import.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace kiln::frontend;

struct TorchScriptModule::State {
  torch::jit::Module frozen;
  std::shared_ptr<torch::jit::Graph> graph;
};

TorchScriptModule::TorchScriptModule(std::unique_ptr<State> state)
    : state_(std::move(state)) {}
TorchScriptModule::~TorchScriptModule() = default;

namespace {
/// c10::Error messages carry a C++ backtrace after the first line(s); users
/// need only the message itself.
std::string firstLines(const std::string &message) {
  std::string text = message.substr(0, message.find("\nException raised from"));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

bool looksLikeZip(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  char magic[4] = {};
  file.read(magic, 4);
  return file.gcount() == 4 && magic[0] == 'P' && magic[1] == 'K' &&
         magic[2] == 3 && magic[3] == 4;
}

std::string sourceLineOf(const torch::jit::Node *node) {
  // Prefer the user's Python frame; fall back to the node's own range.
  auto range = node->sourceRange();
  if (auto original = range.findSourceRangeThatGenerated())
    range = *original;
  auto file = range.file_line_col();
  if (!file)
    return {};
  auto [name, line, column] = *file;
  (void)column;
  return name + ":" + std::to_string(line);
}
} // namespace

std::unique_ptr<TorchScriptModule>
TorchScriptModule::load(const std::string &path, std::string &error) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    error = "cannot read '" + path + "': " +
            (std::filesystem::exists(path, ec) ? "not a regular file"
                                               : "no such file");
    return nullptr;
  }
  // TorchScript archives are zip files; anything else (a pickled state_dict
  // is also a zip, an ONNX file is not) gets a precise message up front.
  if (!looksLikeZip(path)) {
    error = "'" + path +
            "' is not a TorchScript archive (not a zip file); "
            "export the model with torch.jit.trace or torch.jit.script and "
            "torch.jit.save";
    return nullptr;
  }
  try {
    auto state = std::make_unique<State>();
    torch::jit::Module module = torch::jit::load(path, c10::Device(c10::kCPU));
    module.eval();
    state->frozen = torch::jit::freeze(module);
    if (!state->frozen.find_method("forward")) {
      error = "'" + path + "' has no forward method";
      return nullptr;
    }
    state->graph = state->frozen.get_method("forward").graph()->copy();
    auto &graph = state->graph;
    torch::jit::RemoveListMutation(graph);
    torch::jit::RemoveTensorMutation(graph);
    torch::jit::LowerAllTuples(graph);
    torch::jit::PeepholeOptimize(graph);
    torch::jit::ConstantPropagation(graph);
    torch::jit::ConstantPooling(graph);
    torch::jit::EliminateCommonSubexpression(graph);
    torch::jit::EliminateDeadCode(graph);
    return std::unique_ptr<TorchScriptModule>(
        new TorchScriptModule(std::move(state)));
  } catch (const c10::Error &e) {
    std::string what = firstLines(e.what_without_backtrace());
    // torch::jit::load reports a non-TorchScript zip (e.g. a torch.save'd
    // state_dict) as a missing constants/code record.
    if (what.find("constants.pkl") != std::string::npos ||
        what.find("code/") != std::string::npos)
      error = "'" + path +
              "' is a zip but not a TorchScript archive (was it "
              "written by torch.save instead of torch.jit.save?): " +
              what;
    else
      error = "LibTorch could not load '" + path + "': " + what;
  } catch (const std::exception &e) {
    error = "LibTorch could not load '" + path + "': " + firstLines(e.what());
  }
  return nullptr;
}

std::vector<std::string> TorchScriptModule::inputNames() const {
  std::vector<std::string> names;
  for (const torch::jit::Value *input : state_->graph->inputs())
    if (input->type()->kind() != c10::TypeKind::ClassType)
      names.push_back(input->debugName());
  return names;
}

std::vector<OperatorUse> TorchScriptModule::operators() const {
  std::vector<OperatorUse> uses;
  std::map<std::string, size_t> index;
  // Nodes inside prim::If / prim::Loop blocks count too: an unsupported op
  // there must still be reported.
  std::vector<torch::jit::Block *> blocks = {state_->graph->block()};
  while (!blocks.empty()) {
    torch::jit::Block *block = blocks.back();
    blocks.pop_back();
    for (torch::jit::Node *node : block->nodes()) {
      std::string name = node->kind().toQualString();
      auto [it, inserted] = index.emplace(name, uses.size());
      if (inserted)
        uses.push_back({name, 0, sourceLineOf(node)});
      ++uses[it->second].count;
      for (torch::jit::Block *nested : node->blocks())
        blocks.push_back(nested);
    }
  }
  return uses;
}

std::string TorchScriptModule::graphText() const {
  std::ostringstream out;
  out << *state_->graph;
  return out.str();
}
