//===- ModelOutputs.cpp - a model's outputs as a flat list of tensors -----===//
//
// Models return what their authors find convenient: a tensor, a tuple, a
// list, a dict (a Hugging Face ModelOutput traces to one), nested, with None
// for what was not asked for. kiln's function returns tensors, so the graph's
// outputs are flattened into named tensors, and LibTorch's result is
// flattened the same way for --verify. Names are the dict keys (joined by
// '.' when nested) or the positions (`output0`, `output1.2`); None entries
// are dropped. The importer makes them names an artifact can hold.
//
//===----------------------------------------------------------------------===//

#include "TorchScriptState.h"


namespace kiln::frontend {
namespace {

bool isNone(const torch::jit::Value *value) {
  return value->type()->kind() == c10::TypeKind::NoneType;
}

/// Appends the tensors under `value` with their names; `name` is empty at
/// the top of a single output, where a dict's entries take their keys alone
/// and a list's or tuple's their positions (`output0`, `output1`).
void flatten(torch::jit::Value *value, const std::string &name,
             std::vector<std::pair<torch::jit::Value *, std::string>> &out) {
  if (isNone(value))
    return;
  torch::jit::Node *node = value->node();
  if (node->kind() == c10::prim::DictConstruct) {
    for (size_t i = 0; i + 1 < node->inputs().size(); i += 2) {
      std::optional<std::string> key = torch::jit::constant_as<std::string>(node->input(i));
      std::string entry = key ? *key : std::to_string(i / 2);
      flatten(node->input(i + 1), name.empty() ? entry : name + "." + entry, out);
    }
    return;
  }
  if (node->kind() == c10::prim::ListConstruct || node->kind() == c10::prim::TupleConstruct) {
    for (size_t i = 0; i < node->inputs().size(); ++i)
      flatten(node->input(i),
              name.empty() ? "output" + std::to_string(i) : name + "." + std::to_string(i), out);
    return;
  }
  out.emplace_back(value, name.empty() ? "output0" : name);
}

void flattenValue(const c10::IValue &value, std::vector<at::Tensor> &out) {
  if (value.isNone())
    return;
  if (value.isGenericDict()) {
    for (const auto &entry : value.toGenericDict())
      flattenValue(entry.value(), out);
    return;
  }
  if (value.isTuple()) {
    for (const c10::IValue &element : value.toTupleRef().elements())
      flattenValue(element, out);
    return;
  }
  if (value.isList()) {
    for (const c10::IValue &element : value.toListRef())
      flattenValue(element, out);
    return;
  }
  if (value.isTensor())
    out.push_back(value.toTensor());
}

} // namespace

std::vector<std::string> flattenGraphOutputs(torch::jit::Graph &graph) {
  std::vector<std::pair<torch::jit::Value *, std::string>> flat;
  // Several outputs (a returned tuple, lowered) are named by position.
  const size_t count = graph.outputs().size();
  for (size_t i = 0; i < count; ++i)
    flatten(graph.outputs()[i], count == 1 ? "" : "output" + std::to_string(i), flat);
  while (!graph.outputs().empty())
    graph.eraseOutput(graph.outputs().size() - 1);
  std::vector<std::string> names;
  for (auto &[value, name] : flat) {
    graph.registerOutput(value);
    names.push_back(name);
  }
  return names;
}

std::vector<at::Tensor> flattenOutputValue(const c10::IValue &value) {
  std::vector<at::Tensor> out;
  flattenValue(value, out);
  return out;
}

} // namespace kiln::frontend
