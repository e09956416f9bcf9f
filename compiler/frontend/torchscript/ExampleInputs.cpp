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

#include <algorithm>
#include <cctype>

namespace kiln::frontend {

at::Tensor exampleInput(const InputSpec &spec, bool &drawn) {
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

std::string drawnIntegersHint(const std::vector<std::string> &drawnInputs) {
  std::string hint;
  for (const std::string &name : drawnInputs)
    hint += "\n  input '" + name + "' took random integers in [0, 8); if they mean "
            "something to the model (token ids, positions), give their range, e.g. " +
            name + ":SHAPE:i64[0,30522)";
  return hint;
}

} // namespace kiln::frontend
