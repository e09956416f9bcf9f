//===- ConverterHelpers.h - what every op converter needs --------*- C++ -*-===//
//
// Reading a node's arguments (constants, optional tensors, dimensions) and
// its specialized result type, shared by the converter files.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_TORCHSCRIPT_CONVERTERHELPERS_H
#define KILN_FRONTEND_TORCHSCRIPT_CONVERTERHELPERS_H

#include "ImporterImpl.h"

#include <torch/csrc/jit/ir/constants.h>

#include <optional>

namespace kiln::frontend {
using Node = torch::jit::Node;

/// A constant argument, or an error naming it when it is not constant.
template <typename T>
inline std::optional<T> constantArg(Importer &im, const Node *node, size_t index) {
  std::optional<T> value = torch::jit::constant_as<T>(node->input(index));
  if (!value)
    mlir::emitError(im.locationOf(node))
        << node->kind().toQualString() << ": argument " << index
        << " must be a constant once shapes are known";
  return value;
}

inline bool isNone(const Node *node, size_t index) {
  return node->input(index)->type()->kind() == c10::TypeKind::NoneType;
}

/// Normalizes a possibly negative dimension index against `rank`.
inline std::optional<int64_t> normalizeDim(Importer &im, const Node *node, int64_t dim,
                                    int64_t rank) {
  int64_t normalized = dim < 0 ? dim + rank : dim;
  if (normalized < 0 || normalized >= std::max<int64_t>(rank, 1)) {
    mlir::emitError(im.locationOf(node)) << node->kind().toQualString() << ": dimension "
                                   << dim << " is out of range for rank " << rank;
    return std::nullopt;
  }
  return normalized;
}

inline mlir::Type elementOf(mlir::RankedTensorType type) { return type.getElementType(); }

/// What most converters start from: the node's specialized result type, its
/// location, and its first input as a tensor of the result's element type.
struct Primary {
  mlir::RankedTensorType type;
  mlir::Location loc;
  mlir::Value input;
};
inline std::optional<Primary> primaryOperand(Importer &im, const Node *node) {
  mlir::RankedTensorType type = im.resultType(node);
  if (!type)
    return std::nullopt;
  mlir::Location loc = im.locationOf(node);
  mlir::Value input = im.operand(node->input(0), elementOf(type), loc);
  if (!input)
    return std::nullopt;
  return Primary{type, loc, input};
}

inline llvm::SmallVector<int64_t> identityPermutation(int64_t rank) {
  llvm::SmallVector<int64_t> permutation(rank);
  for (int64_t i = 0; i < rank; ++i)
    permutation[i] = i;
  return permutation;
}

/// Builders and readers shared by several converter files.
inline mlir::RankedTensorType permutedType(mlir::RankedTensorType type,
                                            llvm::ArrayRef<int64_t> permutation) {
  llvm::SmallVector<int64_t> shape;
  for (int64_t d : permutation)
    shape.push_back(type.getShape()[d]);
  return mlir::RankedTensorType::get(shape, type.getElementType());
}

inline mlir::Value permuteValue(Importer &im, mlir::Location loc, mlir::Value value,
                               llvm::ArrayRef<int64_t> permutation) {
  auto type = mlir::cast<mlir::RankedTensorType>(value.getType());
  return PermuteOp::create(im.builder, loc, permutedType(type, permutation), value,
                           im.builder.getDenseI64ArrayAttr(permutation));
}

/// The constant tensor behind a node input, if it is one.
inline std::optional<at::Tensor> constantTensorArg(const Node *node, size_t index) {
  std::optional<c10::IValue> value = torch::jit::toIValue(node->input(index));
  if (!value || !value->isTensor())
    return std::nullopt;
  return value->toTensor();
}

inline std::string weightName(const Node *node, size_t index) {
  std::string name = node->input(index)->debugName();
  return name.rfind("self.", 0) == 0 ? name.substr(5) : name;
}

/// Every converter file adds its converters to the registry.
using ConverterMap = std::unordered_map<std::string, Converter>;
void addConvConverters(ConverterMap &map);
void addTransformerConverters(ConverterMap &map);
void addShapeConverters(ConverterMap &map);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_TORCHSCRIPT_CONVERTERHELPERS_H
