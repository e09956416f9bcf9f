//===- ConstantWrites.cpp - tensors built by writing into slices ----------===//
//
// Models build masks by writing into slices of a tensor they make: Swin's
// shifted-window mask is `zeros` filled region by region (`mask[h0:h1,
// w0:w1] = count`); Swin V2 zeroes the middle third of a clone of its qkv
// bias (`bias[n:2n].zero_()`). The writes are in-place ops on views, which TorchScript's
// mutation removal leaves alone, so the graph keeps `aten::fill_` that kiln
// cannot import. When the tensor's shape, the views and the values are all
// constants (true once shapes are specialized), the whole sequence is
// computed here with ATen and the tensor becomes a constant; constant
// propagation then folds whatever the model computes from it.
//
//===----------------------------------------------------------------------===//

#include "TorchScriptState.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <functional>

namespace kiln::frontend {
namespace {

using torch::jit::Node;
using torch::jit::Value;

std::optional<c10::IValue> constant(const Value *value) { return torch::jit::toIValue(value); }

/// The tensor a factory node makes, when every argument that matters is a
/// constant: zeros, ones, full, their new_* forms (dtype from `self` unless
/// given).
std::optional<at::Tensor> evaluateFactory(const Node *node) {
  std::string kind = node->kind().toQualString();
  if (kind == "aten::clone") {
    auto source = constant(node->input(0));
    if (!source || !source->isTensor())
      return std::nullopt;
    return source->toTensor().clone(at::MemoryFormat::Contiguous);
  }
  bool isNew = kind.rfind("aten::new_", 0) == 0;
  size_t sizeIndex = isNew ? 1 : 0;
  auto sizes = constant(node->input(sizeIndex));
  if (!sizes || !sizes->isIntList())
    return std::nullopt;
  double fill = 0;
  size_t dtypeIndex = sizeIndex + 1;
  if (kind == "aten::ones" || kind == "aten::new_ones") {
    fill = 1;
  } else if (kind == "aten::full" || kind == "aten::new_full") {
    auto value = constant(node->input(sizeIndex + 1));
    if (!value || !(value->isDouble() || value->isInt() || value->isBool()))
      return std::nullopt;
    fill = value->toScalar().toDouble();
    dtypeIndex = sizeIndex + 2;
  } else if (kind != "aten::zeros" && kind != "aten::new_zeros") {
    return std::nullopt;
  }
  std::optional<c10::ScalarType> dtype;
  if (dtypeIndex < node->inputs().size()) {
    auto given = constant(node->input(dtypeIndex));
    if (given && given->isInt())
      dtype = static_cast<c10::ScalarType>(given->toInt());
  }
  if (!dtype && isNew)
    if (auto type = node->input(0)->type()->cast<c10::TensorType>())
      dtype = type->scalarType();
  if (!dtype)
    dtype = node->output()->type()->cast<c10::TensorType>()
                ? node->output()->type()->cast<c10::TensorType>()->scalarType()
                : std::nullopt;
  if (!dtype)
    return std::nullopt;
  return at::full(sizes->toIntVector(), fill, at::TensorOptions().dtype(*dtype));
}

/// `view` of `base` as the slice or select node computes it, when its
/// arguments are constants.
std::optional<at::Tensor> evaluateView(const Node *node, const at::Tensor &base) {
  std::string kind = node->kind().toQualString();
  auto dim = constant(node->input(1));
  if (!dim || !dim->isInt())
    return std::nullopt;
  if (kind == "aten::select") {
    auto index = constant(node->input(2));
    if (!index || !index->isInt())
      return std::nullopt;
    return base.select(dim->toInt(), index->toInt());
  }
  if (kind != "aten::slice")
    return std::nullopt;
  auto start = constant(node->input(2)), end = constant(node->input(3)),
       step = constant(node->input(4));
  if (!start || !end || !step || !step->isInt())
    return std::nullopt;
  std::optional<int64_t> from = start->isNone() ? std::nullopt : std::optional(start->toInt());
  std::optional<int64_t> to = end->isNone() ? std::nullopt : std::optional(end->toInt());
  return base.slice(dim->toInt(), from, to, step->toInt());
}

/// Writes into views of the tensor `factory` makes, followed only by reads of
/// the tensor itself: computed, and the tensor replaced by a constant.
bool foldOne(torch::jit::Graph &graph, Node *factory) {
  std::optional<at::Tensor> tensor = evaluateFactory(factory);
  if (!tensor)
    return false;
  Value *base = factory->output();
  // Every use is a view chain ending in one fill_, or a read after the last
  // fill (in node order: the graph is one block here).
  std::vector<Node *> writes, removed;
  std::function<bool(Value *, const at::Tensor &)> walk = [&](Value *value,
                                                              const at::Tensor &view) {
    for (const torch::jit::Use &use : value->uses()) {
      Node *user = use.user;
      std::string kind = user->kind().toQualString();
      if (kind == "aten::zero_" && use.offset == 0) {
        if (user->output()->hasUses())
          return false;
        view.zero_();
        writes.push_back(user);
        removed.push_back(user);
      } else if (kind == "aten::fill_" && use.offset == 0) {
        auto fill = constant(user->input(1));
        if (!fill || user->output()->hasUses())
          return false;
        if (fill->isTensor())
          view.fill_(fill->toTensor());
        else if (fill->isDouble() || fill->isInt() || fill->isBool())
          view.fill_(fill->toScalar());
        else
          return false;
        writes.push_back(user);
        removed.push_back(user);
      } else if ((kind == "aten::slice" || kind == "aten::select") && use.offset == 0 &&
                 value != base) {
        // A view of a view: only ever written through.
        std::optional<at::Tensor> inner = evaluateView(user, view);
        if (!inner || !walk(user->output(), *inner))
          return false;
        removed.push_back(user);
      } else if (!kind.empty() && kind.back() == '_') {
        // Another in-place op (copy_, add_, ...): not computed here.
        return false;
      } else if ((kind == "aten::slice" || kind == "aten::select") && use.offset == 0) {
        std::optional<at::Tensor> inner = evaluateView(user, view);
        if (!inner)
          return false;
        // A view of the base used only by writes below it.
        bool onlyWritten = true;
        for (const torch::jit::Use &u : user->output()->uses()) {
          std::string k = u.user->kind().toQualString();
          onlyWritten &= k == "aten::fill_" || k == "aten::zero_" || k == "aten::slice" ||
                         k == "aten::select";
        }
        if (!onlyWritten)
          continue; // a read of the base through a view: checked below
        if (!walk(user->output(), *inner))
          return false;
        removed.push_back(user);
      }
    }
    return true;
  };
  if (!walk(base, *tensor) || writes.empty())
    return false;
  // Reads must all come after the last write.
  Node *last = writes.front();
  for (Node *write : writes)
    if (last->isBefore(write))
      last = write;
  for (const torch::jit::Use &use : base->uses())
    if (std::find(removed.begin(), removed.end(), use.user) == removed.end() &&
        use.user->isBefore(last))
      return false;
  torch::jit::WithInsertPoint guard(factory);
  Value *folded = graph.insertConstant(*tensor);
  folded->setType(c10::TensorType::create(*tensor));
  // Writes first (they hold the views), then the views, then the factory.
  for (Node *write : writes)
    write->destroy();
  for (Node *node : removed)
    if (std::find(writes.begin(), writes.end(), node) == writes.end() &&
        !node->output()->hasUses())
      node->destroy();
  base->replaceAllUsesWith(folded);
  factory->destroy();
  return true;
}

} // namespace

int foldConstantWrites(torch::jit::Graph &graph) {
  std::vector<Node *> factories;
  for (Node *node : graph.nodes()) {
    std::string kind = node->kind().toQualString();
    if (kind == "aten::zeros" || kind == "aten::new_zeros" || kind == "aten::ones" ||
        kind == "aten::new_ones" || kind == "aten::full" || kind == "aten::new_full" ||
        kind == "aten::clone")
      factories.push_back(node);
  }
  int folded = 0;
  for (Node *factory : factories)
    folded += foldOne(graph, factory);
  return folded;
}

} // namespace kiln::frontend
