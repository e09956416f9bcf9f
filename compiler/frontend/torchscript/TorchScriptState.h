//===- TorchScriptState.h - the LibTorch side of a loaded module -*- C++ -*-===//
//
// Shared by the files of this folder only (it includes torch headers): the
// frozen module and the cleaned, possibly shape-specialized forward graph.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_TORCHSCRIPT_TORCHSCRIPTSTATE_H
#define KILN_FRONTEND_TORCHSCRIPT_TORCHSCRIPTSTATE_H

#include "TorchScriptModule.h"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <string>

namespace kiln::frontend {

struct TorchScriptModule::State {
  std::string path;
  torch::jit::Module frozen;
  std::shared_ptr<torch::jit::Graph> graph;
  /// The graph's tensor inputs (the module `self` excluded), in order.
  std::vector<torch::jit::Value *> tensorInputs;
  /// Whether every top-level tensor carries a complete TensorType.
  bool specialized = false;
  /// How specialize() learned the shapes (TorchScriptModule::shapeRun).
  std::string shapeRun;
  /// The graph outputs' names (flattenGraphOutputs).
  std::vector<std::string> outputNames;

  /// A torch.export archive (Pt2Archive.cpp): there is no module, so
  /// --verify runs this copy of the graph as built; each user input's
  /// sizes as exported (a symbol's hint, and its range).
  std::shared_ptr<torch::jit::Graph> exportedGraph;
  struct ExportedDim {
    int64_t hint = 0;
    std::string symbol; // empty: a static size
    int64_t min = 0, max = 0;
  };
  struct ExportedInput {
    std::string name, dtype;
    std::vector<ExportedDim> dims;
  };
  std::vector<ExportedInput> exportedInputs;
};

/// Whether `path` is a zip with the layout torch.export.save writes
/// (archive_format, models/model.json).
bool isPt2Archive(const std::string &path);
/// Builds `state.graph` (and exportedGraph, tensorInputs, exportedInputs,
/// outputNames) from a torch.export archive; false with `error` naming the
/// file and the cause.
bool loadPt2Archive(const std::string &path, TorchScriptModule::State &state,
                    std::string &error);

/// Computes tensors a model builds by writing constants into slices of a
/// zeros/ones/full tensor of constant shape (Swin's window mask), replacing
/// each by a constant; returns how many.
int foldConstantWrites(torch::jit::Graph &graph);
/// An example value of `spec` for running the model on the CPU: floats are
/// normal; integers come from the declared range, else all ones for an
/// input named like a mask (so a padding mask keeps every token), else
/// uniform in [0, 8) (booleans: 0 or 1). `drawn` says whether an integer
/// input was drawn at random (the hint an error gives).
at::Tensor exampleInput(const InputSpec &spec, bool &drawn);
/// The lines an error about running the model adds for each input that took
/// random integers: how to declare their range. Empty when none did.
std::string drawnIntegersHint(const std::vector<std::string> &drawnInputs);

/// Runs `graph` on meta tensors (MetaShapes.cpp): every tensor's sizes,
/// dtype and strides on `stack` as a CPU run would give them, without the
/// arithmetic. False (with `whyNot`) when the graph needs a value; then only
/// a CPU run can tell its shapes. `onCpu` lists the ops that ran on CPU
/// tensors of ones for want of a meta kernel.
bool runOnMeta(const std::shared_ptr<torch::jit::Graph> &graph,
               const std::optional<c10::IValue> &self, const std::vector<at::Tensor> &inputs,
               torch::jit::Stack &stack, std::string &whyNot, std::string &onCpu);

/// An interpreter error (two tracebacks, then the message) as the message
/// and the user's innermost Python frame.
std::string summarizeInterpreterError(const std::string &what);

/// Replaces the graph's outputs by the tensors under them (dicts, lists and
/// tuples flattened, None dropped) and returns their names: dict keys
/// (joined by '.' when nested) or positions (`output0`, `output1.2`).
std::vector<std::string> flattenGraphOutputs(torch::jit::Graph &graph);
/// LibTorch's result flattened in the same order.
std::vector<at::Tensor> flattenOutputValue(const c10::IValue &value);

/// `file:line` of the Python source a node came from. Traced graphs record a
/// Python stack per node; the innermost frame outside torch's own package is
/// the user's line.
std::string pythonSourceOf(const torch::jit::Node *node);

/// c10::ScalarType -> "f32", "f16", ...; empty for types kiln lacks.
std::string dtypeName(c10::ScalarType type);
std::optional<c10::ScalarType> scalarTypeOf(const std::string &dtype);

/// The name a user would use for a graph input (`x` for `x.1`).
std::string inputBaseName(const torch::jit::Value *value);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_TORCHSCRIPT_TORCHSCRIPTSTATE_H
