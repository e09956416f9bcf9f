//===- TorchScriptImporter.cpp - TorchScript graph -> kiln dialect --------===//
//
// 1. Refuse, in one message, every operator without a converter (with its
//    count and first Python line), before building anything.
// 2. Build `func.func @forward` from the specialized input and output types.
// 3. Convert the top-level nodes in order; prim::Constant inputs are
//    materialized when a converter first asks for them (tensors become
//    kiln.constant, dense_resource-backed for weights; numbers become rank-0
//    constants of the type the consumer needs).
// 4. Verify the module; every diagnostic names the node's Python line.
//
//===----------------------------------------------------------------------===//

#include "TorchScriptImporter.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "ImporterImpl.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/constants.h>

#include <cctype>
#include <cstring>
#include <map>
#include <set>

using namespace mlir;
using namespace kiln;
using namespace kiln::frontend;

//===----------------------------------------------------------------------===//
// Importer helpers
//===----------------------------------------------------------------------===//

/// An output's name as an artifact holds it (letters, digits, '_', '.' and
/// '-', not starting with '.', at most 200 bytes: it becomes a file name
/// under --save-outputs), unique among `taken`, which it joins.
static std::string tensorName(const std::string &name, std::set<std::string> &taken) {
  std::string clean;
  for (char c : name.substr(0, 200))
    clean += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'
                 ? c
                 : '_';
  if (clean.empty() || clean[0] == '.')
    clean = "output_" + clean;
  std::string candidate = clean;
  for (int suffix = 1; !taken.insert(candidate).second; ++suffix)
    candidate = clean + "_" + std::to_string(suffix);
  return candidate;
}

std::string kiln::frontend::converterKey(const torch::jit::Node *node) {
  if (const c10::FunctionSchema *schema = node->maybeSchema()) {
    const std::string &overload = schema->overload_name();
    return overload.empty() ? schema->name() : schema->name() + "." + overload;
  }
  return node->kind().toQualString();
}

Location Importer::locationOf(const torch::jit::Node *node) {
  std::string where = pythonSourceOf(node);
  size_t colon = where.rfind(':');
  if (colon == std::string::npos)
    return UnknownLoc::get(&context);
  unsigned line = std::strtoul(where.c_str() + colon + 1, nullptr, 10);
  return FileLineColLoc::get(&context, where.substr(0, colon), line, 0);
}

Type Importer::elementType(c10::ScalarType type) {
  switch (type) {
  case c10::kFloat: return builder.getF32Type();
  case c10::kHalf: return builder.getF16Type();
  case c10::kBFloat16: return builder.getBF16Type();
  case c10::kLong: return builder.getIntegerType(64);
  case c10::kInt: return builder.getIntegerType(32);
  case c10::kBool: return builder.getI1Type();
  default: return {};
  }
}

RankedTensorType Importer::tensorType(const torch::jit::Value *value,
                                      Location loc) {
  auto type = value->type()->cast<c10::TensorType>();
  if (!type) {
    emitError(loc) << "expected a tensor for '%" << value->debugName()
                   << "', got " << value->type()->str();
    return {};
  }
  auto sizes = type->sizes().concrete_sizes();
  auto scalar = type->scalarType();
  if (!sizes || !scalar) {
    emitError(loc) << "the shape of '%" << value->debugName()
                   << "' is unknown: it is computed where the specializing "
                      "run did not reach (inside control flow?)";
    return {};
  }
  Type element = elementType(*scalar);
  if (!element) {
    emitError(loc) << "'%" << value->debugName() << "' has dtype "
                   << c10::toString(*scalar)
                   << ", which kiln does not support (float32, float16, "
                      "bfloat16, int64, int32, bool)";
    return {};
  }
  return RankedTensorType::get(*sizes, element);
}

Value Importer::castTo(Value value, Type element, Location loc) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == element)
    return value;
  return CastOp::create(builder, loc, type.clone(element), value);
}

Value kiln::frontend::scalarConstant(OpBuilder &builder, Location loc, Type element,
                                    double number) {
  auto type = RankedTensorType::get({}, element);
  Attribute value;
  if (isa<FloatType>(element))
    value = FloatAttr::get(element, number);
  else
    value = IntegerAttr::get(element, static_cast<int64_t>(number));
  return ConstantOp::create(builder, loc, DenseElementsAttr::get(type, value));
}

Value Importer::constantTensor(const at::Tensor &original, const std::string &name,
                               Location loc) {
  at::Tensor tensor = original.contiguous();
  Type element = elementType(tensor.scalar_type());
  if (!element) {
    emitError(loc) << "constant '" << name << "' has dtype "
                   << c10::toString(tensor.scalar_type())
                   << ", which kiln does not support";
    return {};
  }
  auto type = RankedTensorType::get(tensor.sizes().vec(), element);
  // A splat holds one value throughout: compared bytewise against the
  // first element, stopping at the first difference (a weight's second
  // element, almost always; at::equal read every weight in full).
  const char *data = static_cast<const char *>(tensor.data_ptr());
  const size_t elementBytes = tensor.element_size(), count = tensor.numel();
  bool splat = count > 0;
  for (size_t i = 1; splat && i < count; ++i)
    splat = std::memcmp(data, data + i * elementBytes, elementBytes) == 0;
  if (splat) {
    double first = tensor.flatten()[0].item<double>();
    Attribute value = isa<FloatType>(element)
                          ? Attribute(FloatAttr::get(element, first))
                          : Attribute(IntegerAttr::get(element, static_cast<int64_t>(first)));
    return ConstantOp::create(builder, loc, DenseElementsAttr::get(type, value));
  }
  ArrayRef<char> bytes(data, tensor.nbytes());
  std::string blobName = name.empty() ? "weight" + std::to_string(blobCount++) : name;
  // The blob holds the tensor's own memory (kept alive by the deleter) where
  // it is aligned: a model's weights are hundreds of megabytes, and a copy
  // cost a pass over them and as many fresh pages.
  constexpr size_t kAlign = 64;
  AsmResourceBlob blob =
      reinterpret_cast<uintptr_t>(data) % kAlign == 0
          ? AsmResourceBlob(bytes, kAlign,
                            [keep = tensor](void *, size_t, size_t) mutable { keep.reset(); },
                            /*dataIsMutable=*/false)
          : HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, kAlign);
  auto attr = DenseResourceElementsAttr::get(type, blobName, std::move(blob));
  return ConstantOp::create(builder, loc, attr);
}

Value Importer::operand(const torch::jit::Value *value, Type element,
                        Location loc) {
  auto found = values.find(value);
  if (found != values.end())
    return castTo(found->second, element, loc);
  std::optional<c10::IValue> constant = torch::jit::toIValue(value);
  if (!constant) {
    emitError(loc) << "'%" << value->debugName() << "' ("
                   << value->node()->kind().toQualString()
                   << ") is neither a converted tensor nor a constant";
    return {};
  }
  if (constant->isTensor()) {
    at::Tensor tensor = constant->toTensor();
    Value result;
    // Traced Python numbers arrive as 0-dim (often Double) tensors; like
    // PyTorch, they take the type of the tensor they combine with.
    if (tensor.dim() == 0)
      return scalarConstant(builder, loc, element, tensor.item<double>());
    std::string name = value->debugName();
    if (name.rfind("self.", 0) == 0)
      name = name.substr(5);
    result = constantTensor(tensor, name, loc);
    if (!result)
      return {};
    values[value] = result;
    return castTo(result, element, loc);
  }
  if (constant->isDouble() || constant->isInt() || constant->isBool())
    return scalarConstant(builder, loc, element, constant->toScalar().toDouble());
  emitError(loc) << "'%" << value->debugName() << "' is a "
                 << value->type()->str() << " constant where a tensor is needed";
  return {};
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

namespace {
/// Every operator the registry cannot convert, in first-use order.
std::string listUnsupported(const torch::jit::Graph &graph) {
  struct Use {
    int count = 0;
    std::string where;
  };
  std::vector<std::string> order;
  std::map<std::string, Use> uses;
  const auto &registry = converterRegistry();
  std::vector<const torch::jit::Block *> blocks = {graph.block()};
  while (!blocks.empty()) {
    const torch::jit::Block *block = blocks.back();
    blocks.pop_back();
    for (const torch::jit::Node *node : block->nodes()) {
      if (node->kind() == c10::prim::Constant)
        continue;
      for (const torch::jit::Block *nested : node->blocks())
        blocks.push_back(nested);
      std::string key = converterKey(node);
      if (registry.count(key) && node->blocks().empty())
        continue;
      Use &use = uses[key];
      if (use.count++ == 0) {
        order.push_back(key);
        use.where = pythonSourceOf(node);
      }
    }
  }
  std::string text;
  for (const std::string &key : order) {
    const Use &use = uses[key];
    text += "\n  " + key + " (" + std::to_string(use.count) +
            (use.count == 1 ? " use" : " uses") +
            (use.where.empty() ? "" : ", first at " + use.where) + ")";
  }
  return text;
}
} // namespace

OwningOpRef<ModuleOp> kiln::frontend::importTorchScript(TorchScriptModule &module,
                                                        MLIRContext &context,
                                                        std::string &error) {
  TorchScriptModule::State &state = module.state();
  if (!state.specialized) {
    error = "internal error: import before shape specialization";
    return {};
  }
  if (std::string unsupported = listUnsupported(*state.graph); !unsupported.empty()) {
    error = "'" + state.path + "' uses operators kiln does not support:" + unsupported;
    return {};
  }

  context.loadDialect<KilnDialect, func::FuncDialect>();
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    std::string where;
    if (auto file = dyn_cast<FileLineColLoc>(diag.getLocation()))
      where = file.getFilename().str() + ":" + std::to_string(file.getLine()) + ": ";
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      diagnostics += (diagnostics.empty() ? "" : "\n") + where + diag.str();
    return success();
  });

  OpBuilder builder(&context);
  Importer importer(context, builder);
  Location unknown = UnknownLoc::get(&context);
  OwningOpRef<ModuleOp> result = ModuleOp::create(unknown);
  builder.setInsertionPointToEnd(result->getBody());

  SmallVector<Type> inputTypes, outputTypes;
  for (const torch::jit::Value *input : state.tensorInputs)
    inputTypes.push_back(importer.tensorType(input, unknown));
  for (const torch::jit::Value *output : state.graph->outputs())
    outputTypes.push_back(
        importer.tensorType(output, importer.locationOf(output->node())));
  if (!diagnostics.empty()) {
    error = diagnostics;
    return {};
  }
  auto func = func::FuncOp::create(builder, unknown, "forward",
                                   builder.getFunctionType(inputTypes, outputTypes));
  Block *entry = func.addEntryBlock();
  for (auto [index, input] : llvm::enumerate(state.tensorInputs)) {
    importer.values[input] = entry->getArgument(index);
    func.setArgAttr(index, attr::kName, builder.getStringAttr(inputBaseName(input)));
  }
  builder.setInsertionPointToEnd(entry);

  const auto &registry = converterRegistry();
  for (const torch::jit::Node *node : state.graph->nodes()) {
    if (node->kind() == c10::prim::Constant)
      continue;
    // A LibTorch assertion inside a converter (an argument of a type the
    // converter did not expect) is this node's error, not a crash.
    LogicalResult converted = failure();
    try {
      converted = registry.at(converterKey(node))(importer, node);
    } catch (const std::exception &e) {
      std::string what = e.what();
      emitError(importer.locationOf(node))
          << converterKey(node) << ": unexpected arguments ("
          << what.substr(0, what.find('\n')) << ")";
    }
    if (failed(converted) || !diagnostics.empty()) {
      if (diagnostics.empty())
        diagnostics = "cannot import " + converterKey(node);
      error = diagnostics;
      return {};
    }
  }
  SmallVector<Value> results;
  for (auto [index, output] : llvm::enumerate(state.graph->outputs()))
    results.push_back(importer.operand(
        output, cast<RankedTensorType>(outputTypes[index]).getElementType(),
        unknown));
  func::ReturnOp::create(builder, unknown, results);
  std::set<std::string> taken;
  for (const torch::jit::Value *input : state.tensorInputs)
    taken.insert(inputBaseName(input));
  // Positional names (output<i>) are what an unnamed result is called.
  for (auto [index, name] : llvm::enumerate(state.outputNames)) {
    std::string unique = tensorName(name, taken);
    if (index < func.getNumResults() && unique != "output" + std::to_string(index))
      func.setResultAttr(index, attr::kName, builder.getStringAttr(unique));
  }
  if (!diagnostics.empty() || failed(verify(*result))) {
    error = diagnostics.empty() ? "the imported module does not verify" : diagnostics;
    return {};
  }
  return result;
}
