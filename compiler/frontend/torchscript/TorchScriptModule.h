//===- TorchScriptModule.h - load and clean a TorchScript archive ---------===//
//
// The frontend's entry: loads a `.pt` archive with LibTorch on the CPU, puts
// it in eval mode, freezes it (parameters become constants, calls inline,
// dropout goes) and runs the graph cleanups the importer relies on. Every
// failure (missing, corrupt or foreign file, a LibTorch exception) becomes one
// message; nothing here throws or aborts.
//
// This header is free of torch headers so the rest of kiln can include it;
// only this folder compiles against LibTorch.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_TORCHSCRIPT_TORCHSCRIPTMODULE_H
#define KILN_FRONTEND_TORCHSCRIPT_TORCHSCRIPTMODULE_H

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::frontend {

/// One operator kind of the frozen graph: how often it occurs and where it
/// first appears in the user's Python source ("model.py:12", or empty when the
/// archive carries no source ranges).
struct OperatorUse {
  std::string name; // e.g. "aten::linear"
  int count = 0;
  std::string firstSourceLine;
};

/// A model input as the user declares it: `x:64x256:f32`.
struct InputSpec {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype; // f32, f16, bf16, i64, i32, i1
  /// For an integer input: the example values are drawn from [first, second).
  std::optional<std::pair<int64_t, int64_t>> range;
};

/// Parses `NAME:DIMxDIMx...:DTYPE` (a scalar input is `NAME::DTYPE`), an
/// integer dtype optionally with the range of its values,
/// `ids:1x128:i64[0,30522)`; returns false with `error` set on malformed
/// text.
bool parseInputSpec(const std::string &text, InputSpec &spec, std::string &error);
std::string formatInputSpec(const InputSpec &spec);

/// The LibTorch version kiln was built against (e.g. "2.11.0").
std::string libtorchVersion();

class TorchScriptModule {
public:
  /// Loads, freezes and cleans `path`. On failure returns null and sets
  /// `error` to a message naming the file and the cause.
  static std::unique_ptr<TorchScriptModule> load(const std::string &path,
                                                 std::string &error);
  ~TorchScriptModule();

  /// The graph's tensor inputs (without `self`), by the names the user
  /// wrote in Python.
  std::vector<std::string> inputNames() const;

  /// The example inputs a traced archive recorded (`traced_inputs.pkl`), or
  /// nothing when it has none (scripted models, older archives).
  std::vector<InputSpec> tracedInputs() const;

  /// Runs the graph once on example inputs of `specs` (one per input,
  /// matched by name; see exampleInput) and records every intermediate's
  /// shape and dtype, then folds
  /// the shape arithmetic that became constant. Returns false with `error`
  /// naming the mismatch when the specs do not fit the model.
  bool specialize(const std::vector<InputSpec> &specs, std::string &error);
  /// How specialize() learned the shapes: "on meta tensors", or "on the
  /// CPU" with the reason the meta run failed (kiln-compile -v prints it: a
  /// CPU run costs the model's whole arithmetic at the declared batch).
  const std::string &shapeRun() const;
  /// Every operator kind in the frozen graph, in first-use order, constants
  /// and list/tuple plumbing included.
  std::vector<OperatorUse> operators() const;
  /// The frozen graph as LibTorch prints it (for --emit=torchscript,
  /// debugging).
  std::string graphText() const;

  struct State;
  State &state() { return *state_; }
  const std::string &path() const;

private:
  explicit TorchScriptModule(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

} // namespace kiln::frontend

#endif // KILN_FRONTEND_TORCHSCRIPT_TORCHSCRIPTMODULE_H
