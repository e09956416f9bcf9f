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
#include <string>
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

class TorchScriptModule {
public:
  /// Loads, freezes and cleans `path`. On failure returns null and sets
  /// `error` to a message naming the file and the cause.
  static std::unique_ptr<TorchScriptModule> load(const std::string &path,
                                                 std::string &error);
  ~TorchScriptModule();

  /// The graph's tensor inputs (without `self`), by their debug names.
  std::vector<std::string> inputNames() const;
  /// Every operator kind in the frozen graph, in first-use order, constants
  /// and list/tuple plumbing included.
  std::vector<OperatorUse> operators() const;
  /// The frozen graph as LibTorch prints it (for --emit=torchscript,
  /// debugging).
  std::string graphText() const;

private:
  struct State;
  explicit TorchScriptModule(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

} // namespace kiln::frontend

#endif // KILN_FRONTEND_TORCHSCRIPT_TORCHSCRIPTMODULE_H
