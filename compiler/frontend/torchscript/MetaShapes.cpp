//===- MetaShapes.cpp - a model's shapes without running its arithmetic ---===//
//
// kiln learns every intermediate's shape by running the graph once. On CPU
// tensors that is the model's whole arithmetic: BERT-base at batch 32 took
// 8 s of a 12 s compile on two cores. On meta tensors (sizes, dtypes and
// strides, no data) it takes milliseconds, but C++ LibTorch lacks meta
// kernels for many ops (PyTorch registers theirs in Python): where,
// floor_divide, native_batch_norm, and convolutions, which end in the
// backend-specific convolution_overrideable. So:
//   - convolutions, layer norms, index_select, relu, hardswish,
//     scaled_dot_product_attention and nn.MultiheadAttention's fast path
//     get meta kernels here (output size formulas);
//   - any other op without one gets, the first time a run meets it, a
//     kernel that runs the CPU kernel on tensors of ones of the same shapes
//     (those ops are elementwise or cheaper: the costly contractions have
//     meta kernels of their own) and returns meta tensors of the results'
//     shapes. Ones, not zeros: a divisor or an index stays valid.
// A graph that needs a value (item(), data-dependent sizes) still fails on
// meta tensors; the caller then runs it on the CPU.
//
//===----------------------------------------------------------------------===//

#include "TorchScriptState.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/library.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>

namespace kiln::frontend {
namespace {

at::Tensor onesLike(const at::Tensor &meta) {
  return at::empty_strided(meta.sizes(), meta.strides(), meta.options().device(c10::kCPU))
      .fill_(1);
}

/// Meta arguments to CPU tensors of ones, in place on the stack.
void toCpu(c10::IValue &value) {
  if (value.isTensor()) {
    const at::Tensor &tensor = value.toTensor();
    if (tensor.defined() && tensor.is_meta())
      value = onesLike(tensor);
  } else if (value.isTensorList()) {
    c10::List<at::Tensor> list = value.toTensorList();
    for (size_t i = 0; i < list.size(); ++i)
      if (list.get(i).defined() && list.get(i).is_meta())
        list.set(i, onesLike(list.get(i)));
    value = list;
  } else if (value.isList()) {
    c10::List<c10::IValue> list = value.toList();
    for (size_t i = 0; i < list.size(); ++i) {
      c10::IValue element = list.get(i);
      toCpu(element);
      list.set(i, element);
    }
    value = list;
  }
}

void toMeta(c10::IValue &value) {
  if (value.isTensor()) {
    const at::Tensor &tensor = value.toTensor();
    if (tensor.defined() && !tensor.is_meta())
      value = tensor.to(c10::kMeta);
  } else if (value.isTensorList()) {
    c10::List<at::Tensor> list = value.toTensorList();
    for (size_t i = 0; i < list.size(); ++i)
      list.set(i, list.get(i).to(c10::kMeta));
    value = list;
  } else if (value.isTuple()) {
    std::vector<c10::IValue> elements = value.toTupleRef().elements().vec();
    for (c10::IValue &element : elements)
      toMeta(element);
    value = c10::ivalue::Tuple::create(std::move(elements));
  }
}

/// The ops run on CPU tensors of ones during the current runOnMeta call.
thread_local std::set<std::string> *ranOnCpu = nullptr;

void runOnCpuOnes(const c10::OperatorHandle &op, c10::DispatchKeySet,
                  torch::jit::Stack *stack) {
  if (ranOnCpu)
    ranOnCpu->insert(c10::toString(op.operator_name()));
  // An op whose only device is an argument (a factory given device=meta)
  // would dispatch back here.
  thread_local bool inside = false;
  TORCH_CHECK(!inside, "kiln's meta kernel for ", op.operator_name(), " has no CPU tensor");
  const auto &schema = op.schema();
  // A value computed from tensors of ones is fake: only tensors, whose
  // shapes are all that is kept, may come back.
  for (const c10::Argument &result : schema.returns()) {
    c10::TypePtr type = result.type();
    if (auto optional = type->cast<c10::OptionalType>())
      type = optional->getElementType();
    if (auto list = type->cast<c10::ListType>())
      type = list->getElementType();
    TORCH_CHECK(type->kind() == c10::TypeKind::TensorType, "kiln's meta kernel for ",
                op.operator_name(), ": it returns a value computed from the data");
  }
  const size_t arguments = schema.arguments().size(), first = stack->size() - arguments;
  // An out= or in-place op writes its result into a meta argument (abs
  // allocates an empty one and calls abs.out): that tensor takes the shape
  // the CPU result has, and stays the one returned.
  std::vector<std::pair<at::Tensor, at::Tensor>> written; // (meta, cpu)
  for (size_t i = 0; i < arguments; ++i) {
    c10::IValue &value = (*stack)[first + i];
    const c10::AliasInfo *alias = schema.arguments()[i].alias_info();
    at::Tensor meta = value.isTensor() ? value.toTensor() : at::Tensor();
    toCpu(value);
    if (alias && alias->isWrite() && meta.defined() && meta.is_meta())
      written.emplace_back(meta, value.toTensor());
  }
  {
    struct Inside {
      Inside() { inside = true; }
      ~Inside() { inside = false; }
    } guard;
    op.callBoxed(stack);
  }
  for (auto &[meta, cpu] : written) {
    meta.resize_(cpu.sizes());
    if (meta.strides() != cpu.strides())
      meta.as_strided_(cpu.sizes(), cpu.strides());
  }
  const size_t returns = schema.returns().size();
  for (size_t i = stack->size() - returns; i < stack->size(); ++i) {
    c10::IValue &value = (*stack)[i];
    auto same = value.isTensor()
                    ? std::find_if(written.begin(), written.end(),
                                   [&](const auto &pair) {
                                     return pair.second.is_same(value.toTensor());
                                   })
                    : written.end();
    if (same != written.end())
      value = same->first;
    else
      toMeta(value);
  }
}

/// Ends a shape kernel: the op's arguments off the stack, its results on.
void returnResults(const c10::OperatorHandle &op, torch::jit::Stack *stack,
                   std::initializer_list<at::Tensor> results) {
  torch::jit::drop(*stack, op.schema().arguments().size());
  for (const at::Tensor &result : results)
    stack->emplace_back(result);
}

/// aten::convolution and aten::_convolution share their first nine
/// arguments: input, weight, bias, stride, padding, dilation, transposed,
/// output_padding, groups.
void convolutionShape(const c10::OperatorHandle &op, c10::DispatchKeySet,
                      torch::jit::Stack *stack) {
  const size_t arguments = op.schema().arguments().size();
  auto args = torch::jit::last(*stack, arguments);
  const at::Tensor input = args[0].toTensor(), weight = args[1].toTensor();
  const std::vector<int64_t> stride = args[3].toIntVector(), padding = args[4].toIntVector(),
                             dilation = args[5].toIntVector(),
                             outputPadding = args[7].toIntVector();
  const bool transposed = args[6].toBool();
  const int64_t groups = args[8].toInt();
  TORCH_CHECK(input.dim() == weight.dim() && input.dim() >= 3,
              "kiln's meta convolution: input rank ", input.dim(), ", weight rank ",
              weight.dim());
  const int64_t spatial = input.dim() - 2;
  auto at = [&](const std::vector<int64_t> &list, int64_t d, int64_t fallback) {
    if (list.empty())
      return fallback;
    return list.size() == 1 ? list[0] : list.at(d);
  };
  std::vector<int64_t> shape = {input.size(0),
                                transposed ? weight.size(1) * groups : weight.size(0)};
  for (int64_t d = 0; d < spatial; ++d) {
    const int64_t in = input.size(2 + d), kernel = weight.size(2 + d);
    const int64_t s = at(stride, d, 1), p = at(padding, d, 0), dil = at(dilation, d, 1);
    shape.push_back(transposed
                        ? (in - 1) * s - 2 * p + dil * (kernel - 1) + at(outputPadding, d, 0) + 1
                        : (in + 2 * p - dil * (kernel - 1) - 1) / s + 1);
    TORCH_CHECK(shape.back() > 0, "kiln's meta convolution: empty output");
  }
  returnResults(op, stack, {at::empty(shape, input.options().memory_format(
                                                input.suggest_memory_format()))});
}

/// Elementwise ops of one tensor (relu, hardswish): the result is shaped
/// like the input. On ones they would cost a pass over every activation.
void sameShapeAsInput(const c10::OperatorHandle &op, c10::DispatchKeySet,
                      torch::jit::Stack *stack) {
  const size_t arguments = op.schema().arguments().size();
  returnResults(op, stack, {at::empty_like(torch::jit::peek(*stack, 0, arguments).toTensor())});
}

/// native_layer_norm(input, normalized_shape, weight?, bias?, eps) ->
/// (output, mean, rstd), the statistics shaped like the input with the
/// normalized dimensions kept as 1. Without it the composite runs
/// native_batch_norm on tensors of ones of the whole activation.
void layerNormShape(const c10::OperatorHandle &op, c10::DispatchKeySet,
                    torch::jit::Stack *stack) {
  const size_t arguments = op.schema().arguments().size();
  auto args = torch::jit::last(*stack, arguments);
  const at::Tensor input = args[0].toTensor();
  const int64_t normalized = static_cast<int64_t>(args[1].toIntVector().size());
  TORCH_CHECK(normalized <= input.dim(), "kiln's meta layer_norm: rank");
  std::vector<int64_t> statistics(input.sizes().begin(), input.sizes().end());
  for (int64_t d = input.dim() - normalized; d < input.dim(); ++d)
    statistics[d] = 1;
  at::ScalarType statisticsType =
      at::isReducedFloatingType(input.scalar_type()) ? at::kFloat : input.scalar_type();
  returnResults(op, stack,
                {at::empty_like(input, at::MemoryFormat::Contiguous),
                 at::empty(statistics, input.options().dtype(statisticsType)),
                 at::empty(statistics, input.options().dtype(statisticsType))});
}

/// index_select(self, dim, index): an embedding lookup. On ones it would
/// fill the whole table (GPT-2's is 50257 x 768) for every lookup.
void indexSelectShape(const c10::OperatorHandle &op, c10::DispatchKeySet keys,
                      torch::jit::Stack *stack) {
  const size_t arguments = op.schema().arguments().size();
  auto args = torch::jit::last(*stack, arguments);
  const at::Tensor self = args[0].toTensor(), index = args[2].toTensor();
  if (self.dim() == 0 || index.dim() > 1)
    return runOnCpuOnes(op, keys, stack);
  const int64_t dim = c10::maybe_wrap_dim(args[1].toInt(), self.dim());
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  shape[dim] = index.numel();
  returnResults(op, stack, {at::empty(shape, self.options())});
}

/// nn.MultiheadAttention's fast path: (query, key, value, embed_dim,
/// num_head, qkv_weight, qkv_bias, proj_weight, proj_bias, mask,
/// need_weights, average_attn_weights, mask_type) -> (output, weights).
/// On ones it is the whole attention (ViT-B/16 at batch 32: 3.5 s).
void multiHeadAttentionShape(const c10::OperatorHandle &op, c10::DispatchKeySet keys,
                             torch::jit::Stack *stack) {
  const size_t arguments = op.schema().arguments().size();
  auto args = torch::jit::last(*stack, arguments);
  const at::Tensor query = args[0].toTensor(), key = args[1].toTensor();
  if (query.dim() != 3 || key.dim() != 3)
    return runOnCpuOnes(op, keys, stack);
  const int64_t embed = args[3].toInt(), heads = args[4].toInt();
  const bool needWeights = args[10].toBool(), average = args[11].toBool();
  const int64_t batch = query.size(0), length = query.size(1), source = key.size(1);
  at::Tensor weights = !needWeights ? at::Tensor()
                       : average    ? at::empty({batch, length, source}, query.options())
                                    : at::empty({batch, heads, length, source}, query.options());
  returnResults(op, stack, {at::empty({batch, length, embed}, query.options()), weights});
}

/// scaled_dot_product_attention(query, key, value, ...): shaped like the
/// query with the value's head size, and laid out like the query, as
/// torch.export's fake kernel and LibTorch's CPU kernel lay it out. An
/// exported program relies on that layout: MultiheadAttention's
/// `permute(2, 0, 1, 3).contiguous().view(...)` was recorded without the
/// contiguous (a no-op there), and the composite's math path would give a
/// contiguous result that the view cannot take.
void attentionShape(const c10::OperatorHandle &op, c10::DispatchKeySet,
                    torch::jit::Stack *stack) {
  const size_t arguments = op.schema().arguments().size();
  auto args = torch::jit::last(*stack, arguments);
  const at::Tensor query = args[0].toTensor(), value = args[2].toTensor();
  TORCH_CHECK(query.dim() >= 2 && value.dim() >= 2,
              "kiln's meta scaled_dot_product_attention: rank ", query.dim());
  at::Tensor result;
  if (value.size(-1) == query.size(-1)) {
    result = at::empty_like(query);
  } else {
    std::vector<int64_t> shape(query.sizes().begin(), query.sizes().end());
    shape.back() = value.size(-1);
    result = at::empty(shape, query.options());
  }
  returnResults(op, stack, {result});
}

/// Registrations live as long as the process: LibTorch's dispatcher keeps
/// them in its tables.
struct MetaKernels {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<torch::Library>> byNamespace;
  std::set<std::string> delegated;

  /// The Meta implementations of namespace `ns`.
  torch::Library &library(const std::string &ns) {
    std::unique_ptr<torch::Library> &found = byNamespace[ns];
    if (!found)
      found = std::make_unique<torch::Library>(torch::Library::IMPL, ns, c10::DispatchKey::Meta,
                                               __FILE__, __LINE__);
    return *found;
  }

  MetaKernels() {
    torch::Library &aten = library("aten");
    aten.impl("convolution",
               torch::CppFunction::makeFromBoxedFunction<&convolutionShape>());
    aten.impl("_convolution",
               torch::CppFunction::makeFromBoxedFunction<&convolutionShape>());
    for (const char *unary : {"relu", "hardswish", "hardsigmoid"})
      aten.impl(unary, torch::CppFunction::makeFromBoxedFunction<&sameShapeAsInput>());
    aten.impl("_native_multi_head_attention",
               torch::CppFunction::makeFromBoxedFunction<&multiHeadAttentionShape>());
    aten.impl("scaled_dot_product_attention",
               torch::CppFunction::makeFromBoxedFunction<&attentionShape>());
    aten.impl("native_layer_norm",
               torch::CppFunction::makeFromBoxedFunction<&layerNormShape>());
    aten.impl("index_select",
               torch::CppFunction::makeFromBoxedFunction<&indexSelectShape>());
  }

  /// Gives `qualified` ("aten::where.self") the CPU-on-ones meta kernel.
  /// False when it has one already or is not an operator.
  bool delegate(const std::string &qualified) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!delegated.insert(qualified).second)
      return false;
    size_t colons = qualified.find("::");
    if (colons == std::string::npos)
      return false;
    std::string ns = qualified.substr(0, colons), name = qualified.substr(colons + 2);
    size_t dot = name.find('.');
    c10::OperatorName opName(ns + "::" + name.substr(0, dot),
                             dot == std::string::npos ? "" : name.substr(dot + 1));
    if (!c10::Dispatcher::singleton().findOp(opName))
      return false;
    library(ns).impl(name.c_str(), torch::CppFunction::makeFromBoxedFunction<&runOnCpuOnes>());
    return true;
  }
};

MetaKernels &metaKernels() {
  static MetaKernels *kernels = new MetaKernels();
  return *kernels;
}

/// The op named by LibTorch's "no meta kernel" error, or empty.
std::string opWithoutMetaKernel(const std::string &what) {
  static const std::string marker = ": attempted to run this operator with Meta tensors";
  size_t end = what.find(marker);
  if (end == std::string::npos)
    return {};
  size_t start = what.find_last_of(" \n", end);
  start = start == std::string::npos ? 0 : start + 1;
  return what.substr(start, end - start);
}

} // namespace

bool runOnMeta(const std::shared_ptr<torch::jit::Graph> &graph,
               const std::optional<c10::IValue> &self, const std::vector<at::Tensor> &inputs,
               torch::jit::Stack &stack, std::string &whyNot, std::string &onCpu) {
  std::shared_ptr<torch::jit::Graph> meta = graph->copy();
  std::vector<torch::jit::Block *> blocks = {meta->block()};
  while (!blocks.empty()) {
    torch::jit::Block *block = blocks.back();
    blocks.pop_back();
    for (torch::jit::Node *node : block->nodes()) {
      for (torch::jit::Block *inner : node->blocks())
        blocks.push_back(inner);
      if (node->kind() != c10::prim::Constant)
        continue;
      c10::TypeKind kind = node->output()->type()->kind();
      // A rank-0 constant is a number in arithmetic on sizes (ViT's patch
      // count is size // tensor(16)): it stays on the CPU, which any device
      // accepts for a scalar, so that the arithmetic keeps its values.
      if (kind == c10::TypeKind::TensorType && node->t(c10::attr::value).dim() > 0) {
        node->t_(c10::attr::value, node->t(c10::attr::value).to(c10::kMeta));
      } else if (kind == c10::TypeKind::DeviceObjType) {
        torch::jit::WithInsertPoint guard(node);
        node->output()->replaceAllUsesWith(meta->insertConstant(c10::Device(c10::kMeta)));
      }
    }
  }
  MetaKernels &kernels = metaKernels();
  torch::jit::Code code(meta, "forward");
  // The ops run on ones are small; on LibTorch's thread pool each would
  // leave its OpenMP threads spinning, on the cores the kernel compiles
  // need next (a quarter of a BERT-base compile's CPU time).
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  struct RestoreThreads {
    int threads;
    ~RestoreThreads() { at::set_num_threads(threads); }
  } restoreThreads{threads};
  std::set<std::string> delegated;
  ranOnCpu = &delegated;
  struct Reset {
    ~Reset() { ranOnCpu = nullptr; }
  } reset;
  // Each retry follows a new registration, so the loop ends; the bound
  // only keeps a pathological graph from retrying for long.
  for (int attempt = 0; attempt < 64; ++attempt) {
    stack.clear();
    if (self)
      stack.push_back(*self);
    for (const at::Tensor &tensor : inputs)
      stack.emplace_back(tensor.to(c10::kMeta));
    try {
      torch::jit::InterpreterState interpreter(code);
      interpreter.run(stack);
      for (const std::string &op : delegated)
        onCpu += (onCpu.empty() ? "" : ", ") + op;
      return true;
    } catch (const std::exception &e) {
      std::string op = opWithoutMetaKernel(e.what());
      if (op.empty() || !kernels.delegate(op)) {
        whyNot = summarizeInterpreterError(e.what());
        return false;
      }
    }
  }
  whyNot = "more than 64 ops without a meta kernel";
  return false;
}

} // namespace kiln::frontend
