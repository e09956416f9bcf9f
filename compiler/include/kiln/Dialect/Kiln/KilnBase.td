//===- KilnBase.td - the kiln dialect, its types and attributes -----------===//
//
// The kiln dialect describes a model at graph level: value-semantics ops on
// ranked, statically shaped tensors. Element types are the ones the first model
// families need (f32, f16, bf16, i64, i32, i1); every other type is rejected by
// the op constraints so that codegen never meets a type it cannot lower.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_KILNBASE_TD
#define KILN_DIALECT_KILN_KILNBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Graph-level tensor ops that kiln fuses and compiles to CUDA";
  let description = [{
    Ops take and return ranked tensors with static shapes. Broadcasting follows
    NumPy/PyTorch: shapes are aligned at their last dimension and a dimension
    of size 1 stretches to match the other operand. Element types never
    promote implicitly: mixed-precision code spells out `kiln.cast`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Kiln_Tensor : StaticShapeTensorOf<[F32, F16, BF16, I64, I32, I1]>;
def Kiln_NumericTensor : StaticShapeTensorOf<[F32, F16, BF16, I64, I32]>;
def Kiln_FloatTensor : StaticShapeTensorOf<[F32, F16, BF16]>;
def Kiln_BoolTensor : StaticShapeTensorOf<[I1]>;

//===----------------------------------------------------------------------===//
// Traits
//===----------------------------------------------------------------------===//

// Marks ops that compute each output element from the elements at the same
// (broadcast) index of their operands; fusion treats them as one family.
def Kiln_Elementwise : NativeOpTrait<"KilnElementwise"> {
  let cppNamespace = "::kiln::OpTrait";
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Kiln_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how gelu evaluates the Gaussian CDF", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_GeluApproximationAttr
    : EnumAttr<Kiln_Dialect, Kiln_GeluApproximation, "gelu_approximation">;

def Kiln_PoolKind : I32EnumAttr<"PoolKind", "how a pooling window combines", [
      I32EnumAttrCase<"max", 0>,
      I32EnumAttrCase<"avg", 1>]> {
  let cppNamespace = "::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_PoolKindAttr : EnumAttr<Kiln_Dialect, Kiln_PoolKind, "pool_kind">;

def Kiln_FusionKind : I32EnumAttr<"FusionKind",
    "the kernel family a fusion group is lowered to", [
      I32EnumAttrCase<"elementwise", 0>,
      I32EnumAttrCase<"reduction", 1>,
      I32EnumAttrCase<"normalization", 2>,
      I32EnumAttrCase<"gemm_epilogue", 3>,
      I32EnumAttrCase<"conv_epilogue", 4>,
      I32EnumAttrCase<"attention", 5>,
      I32EnumAttrCase<"pooling", 6>]> {
  let cppNamespace = "::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_FusionKindAttr
    : EnumAttr<Kiln_Dialect, Kiln_FusionKind, "fusion_kind">;

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

#endif // KILN_DIALECT_KILN_KILNBASE_TD
