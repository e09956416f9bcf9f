//===- ImporterImpl.h - state and helpers shared by the converters -*- C++ -*-===//
//
// The importer walks the graph's top-level nodes in order; each node kind
// (operator name + overload) has one converter that builds kiln ops from the
// node's inputs and the shape and dtype specialization observed for its
// outputs. Converters report problems through MLIR diagnostics at the node's
// Python location.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_TORCHSCRIPT_IMPORTERIMPL_H
#define KILN_FRONTEND_TORCHSCRIPT_IMPORTERIMPL_H

#include "TorchScriptState.h"

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <string>
#include <unordered_map>

namespace kiln::frontend {

class Importer {
public:
  Importer(mlir::MLIRContext &context, mlir::OpBuilder &builder)
      : context(context), builder(builder) {}

  mlir::MLIRContext &context;
  mlir::OpBuilder &builder;
  llvm::DenseMap<const torch::jit::Value *, mlir::Value> values;

  mlir::Location locationOf(const torch::jit::Node *node);
  /// The observed (specialized) type of a tensor value; emits an error and
  /// returns null when it is unknown or of a dtype kiln lacks.
  mlir::RankedTensorType tensorType(const torch::jit::Value *value,
                                    mlir::Location loc);
  mlir::Type elementType(c10::ScalarType type);

  /// The kiln value for a tensor or number input, as a tensor of
  /// `elementType` (cast when the tensor's own type differs; numbers become
  /// rank-0 constants). Null after emitting an error.
  mlir::Value operand(const torch::jit::Value *value, mlir::Type elementType,
                      mlir::Location loc);
  /// A constant tensor, backed by a dense_resource blob unless it is a splat
  /// or a scalar.
  mlir::Value constantTensor(const at::Tensor &tensor, const std::string &name,
                             mlir::Location loc);
  mlir::Value castTo(mlir::Value value, mlir::Type elementType, mlir::Location loc);

  /// The node's first output's observed type, or null (error emitted).
  mlir::RankedTensorType resultType(const torch::jit::Node *node) {
    return tensorType(node->output(0), locationOf(node));
  }
  void bind(const torch::jit::Node *node, mlir::Value value) {
    values[node->output(0)] = value;
  }

private:
  unsigned blobCount = 0;
};

/// A rank-0 constant of `element` holding `number`.
mlir::Value scalarConstant(mlir::OpBuilder &builder, mlir::Location loc, mlir::Type element,
                           double number);

using Converter =
    std::function<mlir::LogicalResult(Importer &, const torch::jit::Node *)>;

/// Converters by `name.overload` (e.g. `aten::add.Tensor`) or by bare kind
/// for ops without a schema.
const std::unordered_map<std::string, Converter> &converterRegistry();

/// The registry key of a node.
std::string converterKey(const torch::jit::Node *node);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_TORCHSCRIPT_IMPORTERIMPL_H
