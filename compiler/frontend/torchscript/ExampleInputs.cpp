//===- ExampleInputs.cpp - the values kiln runs a model on ----------------===//
//
// kiln runs each model once on the CPU to learn its shapes, and --verify runs
// it again against LibTorch. Random floats are fine; random integers are not:
// token ids past the vocabulary, a "mask" of 0..7, or position ids made from
// a cumulative sum of one index past their table. So integer inputs take the
// declared range, else ones for a mask. (A traced archive records its
// example inputs' shapes and dtypes but not their values.)
//
//===----------------------------------------------------------------------===//

#include "TorchScriptState.h"

#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/import_read.h>

#include <algorithm>
#include <cctype>

namespace kiln::frontend {

std::map<std::string, at::Tensor> readTracedInputs(const std::string &path,
                                                   const std::vector<std::string> &names) {
  std::map<std::string, at::Tensor> values;
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    if (!reader.hasRecord("traced_inputs.pkl"))
      return values;
    c10::IValue value = torch::jit::readArchiveAndTensors(
        "traced_inputs", "", "traced_inputs/", std::nullopt, std::nullopt,
        c10::Device(c10::kCPU), reader);
    // {method name: list (or tuple) of example inputs}
    if (!value.isGenericDict())
      return values;
    for (const auto &entry : value.toGenericDict()) {
      if (!entry.key().isString() || entry.key().toStringRef() != "forward")
        continue;
      std::vector<c10::IValue> elements;
      if (entry.value().isList())
        elements = entry.value().toList().vec();
      else if (entry.value().isTuple())
        elements = entry.value().toTupleRef().elements().vec();
      for (size_t i = 0; i < elements.size() && i < names.size(); ++i) {
        if (!elements[i].isTensor())
          return {};
        // The archive keeps the examples' shapes and dtypes, not their
        // values (their storage records are empty): only the metadata is
        // read.
        const at::Tensor &example = elements[i].toTensor();
        values[names[i]] = at::empty({0}, example.options()).resize_(example.sizes());
      }
    }
  } catch (const std::exception &) {
    // No readable example inputs: the user declares them.
    return {};
  }
  return values;
}

at::Tensor exampleInput(const TorchScriptModule::State &state, const InputSpec &spec,
                        bool &drawn) {
  c10::ScalarType type = *scalarTypeOf(spec.dtype);
  auto options = at::TensorOptions().dtype(type);
  drawn = false;
  if (at::isFloatingType(type))
    return at::randn(spec.shape, options);
  if (spec.range)
    return at::randint(spec.range->first, spec.range->second, spec.shape, options);
  std::string lower = spec.name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (lower.find("mask") != std::string::npos)
    return at::ones(spec.shape, options);
  drawn = true;
  return at::randint(0, type == c10::kBool ? 2 : 8, spec.shape, options);
}

} // namespace kiln::frontend
