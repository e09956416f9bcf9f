//===- KilnOps.td - the kiln dialect's ops -----------------*- tablegen -*-===//
//
// Graph-level ops in four groups: constants, elementwise (unary, binary with
// broadcasting, select, cast), structured compute (linear, matmul, reductions,
// softmax, layer norm), data movement (reshape, permute, concat, slice), and
// the `kiln.fusion` region op that groups ops into one kernel.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_KILNOPS_TD
#define KILN_DIALECT_KILN_KILNOPS_TD

include "kiln/Dialect/Kiln/KilnBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Kiln_ConstantOp : Kiln_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor (weights, folded scalars)";
  let description = [{
    Weights are `dense_resource` blobs so that printing a large model stays
    small and the blob is never copied through the printer; small constants
    (scalars from traced Python numbers, splats) may be plain `dense`.

    ```mlir
    %w = kiln.constant dense_resource<fc1_weight> : tensor<1024x256xf16>
    %s = kiln.constant dense<0.5> : tensor<f32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

class Kiln_UnaryOp<string mnemonic, Type tensorType, string doc,
                   list<Trait> traits = []>
    : Kiln_Op<mnemonic,
              !listconcat(traits, [Pure, SameOperandsAndResultType,
                                   Kiln_Elementwise])> {
  let summary = doc;
  let description = "Elementwise: `" # doc # "`.\n\n```mlir\n%y = kiln." #
      mnemonic # " %x : tensor<4x8xf32>\n```";
  let arguments = (ins tensorType:$input);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Kiln_NegOp : Kiln_UnaryOp<"neg", Kiln_NumericTensor, "y = -x">;
def Kiln_AbsOp : Kiln_UnaryOp<"abs", Kiln_NumericTensor, "y = |x|">;
def Kiln_ReluOp : Kiln_UnaryOp<"relu", Kiln_NumericTensor, "y = max(x, 0)">;
def Kiln_ExpOp : Kiln_UnaryOp<"exp", Kiln_FloatTensor, "y = e^x">;
def Kiln_LogOp : Kiln_UnaryOp<"log", Kiln_FloatTensor, "y = ln(x)">;
def Kiln_SqrtOp : Kiln_UnaryOp<"sqrt", Kiln_FloatTensor, "y = sqrt(x)">;
def Kiln_RsqrtOp : Kiln_UnaryOp<"rsqrt", Kiln_FloatTensor, "y = 1 / sqrt(x)">;
def Kiln_TanhOp : Kiln_UnaryOp<"tanh", Kiln_FloatTensor, "y = tanh(x)">;
def Kiln_SigmoidOp
    : Kiln_UnaryOp<"sigmoid", Kiln_FloatTensor, "y = 1 / (1 + e^-x)">;
def Kiln_ErfOp : Kiln_UnaryOp<"erf", Kiln_FloatTensor, "y = erf(x)">;
def Kiln_SiluOp : Kiln_UnaryOp<"silu", Kiln_FloatTensor, "y = x * sigmoid(x)">;

def Kiln_GeluOp : Kiln_Op<"gelu",
    [Pure, SameOperandsAndResultType, Kiln_Elementwise]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `approximate = none` (the default, PyTorch's `gelu`) is
    `x * 0.5 * (1 + erf(x / sqrt(2)))`; `approximate = tanh` is
    `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))`.

    ```mlir
    %y = kiln.gelu %x approximate = tanh : tensor<4x8xf16>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input,
      DefaultValuedAttr<Kiln_GeluApproximationAttr,
                        "::kiln::GeluApproximation::none">:$approximate);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat =
      "$input (`approximate` `=` `` $approximate^)? attr-dict `:` type($result)";
}

def Kiln_ClampOp : Kiln_Op<"clamp",
    [Pure, SameOperandsAndResultType, Kiln_Elementwise]> {
  let summary = "clamps every element into [min, max]";
  let description = [{
    Either bound may be absent (PyTorch's `clamp(min=)` / `clamp(max=)`), not
    both. `relu6` is `clamp min = 0.0 max = 6.0`.

    ```mlir
    %y = kiln.clamp %x min = 0.0 max = 6.0 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input,
                       OptionalAttr<F64Attr>:$min, OptionalAttr<F64Attr>:$max);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat =
      "$input (`min` `=` $min^)? (`max` `=` $max^)? attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Kiln_CastOp : Kiln_Op<"cast", [Pure, Kiln_Elementwise]> {
  let summary = "converts every element to another element type";
  let description = [{
    Float to float rounds to nearest even; float to integer truncates toward
    zero (PyTorch's `to(dtype)`); to `i1` tests for non-zero.

    ```mlir
    %h = kiln.cast %x : tensor<4x8xf32> to tensor<4x8xf16>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise binary and select, with broadcasting
//===----------------------------------------------------------------------===//

class Kiln_BinaryOp<string mnemonic, Type tensorType, string doc>
    : Kiln_Op<mnemonic, [Pure, Kiln_Elementwise]> {
  let summary = doc;
  let description = "Elementwise with broadcasting: `" # doc # "`. The short " #
      "type form applies when both operands and the result share one type.\n\n" #
      "```mlir\n%z = kiln." # mnemonic # " %x, %y : tensor<4x8xf32>\n" #
      "%w = kiln." # mnemonic # " %x, %b : tensor<4x8xf32>, tensor<8xf32> -> " #
      "tensor<4x8xf32>\n```";
  let arguments = (ins tensorType:$lhs, tensorType:$rhs);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` "
      "custom<BroadcastTypes>(type($lhs), type($rhs), type($result))";
  let hasVerifier = 1;
}

def Kiln_AddOp : Kiln_BinaryOp<"add", Kiln_NumericTensor, "z = x + y">;
def Kiln_SubOp : Kiln_BinaryOp<"sub", Kiln_NumericTensor, "z = x - y">;
def Kiln_MulOp : Kiln_BinaryOp<"mul", Kiln_NumericTensor, "z = x * y">;
def Kiln_DivOp : Kiln_BinaryOp<"div", Kiln_NumericTensor,
                               "z = x / y (integers truncate toward zero)">;
def Kiln_MaxOp : Kiln_BinaryOp<"max", Kiln_NumericTensor, "z = max(x, y)">;
def Kiln_MinOp : Kiln_BinaryOp<"min", Kiln_NumericTensor, "z = min(x, y)">;
def Kiln_PowOp : Kiln_BinaryOp<"pow", Kiln_NumericTensor, "z = x ^ y">;

class Kiln_CompareOp<string mnemonic, string doc>
    : Kiln_Op<mnemonic, [Pure, Kiln_Elementwise]> {
  let summary = doc;
  let description = "Elementwise comparison with broadcasting, `" # doc #
      "`, giving booleans.\n\n```mlir\n%m = kiln." # mnemonic #
      " %x, %y : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xi1>\n```";
  let arguments = (ins Kiln_Tensor:$lhs, Kiln_Tensor:$rhs);
  let results = (outs Kiln_BoolTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` "
      "type($result)";
  let hasVerifier = 1;
}

def Kiln_EqOp : Kiln_CompareOp<"eq", "z = x == y">;
def Kiln_NeOp : Kiln_CompareOp<"ne", "z = x != y">;
def Kiln_LtOp : Kiln_CompareOp<"lt", "z = x < y">;
def Kiln_LeOp : Kiln_CompareOp<"le", "z = x <= y">;
def Kiln_GtOp : Kiln_CompareOp<"gt", "z = x > y">;
def Kiln_GeOp : Kiln_CompareOp<"ge", "z = x >= y">;

def Kiln_BroadcastOp : Kiln_Op<"broadcast", [Pure, Kiln_Elementwise]> {
  let summary = "stretches a tensor to a larger broadcast-compatible shape";
  let description = [{
    PyTorch's `expand`: the input's dimensions of size 1 (and missing leading
    ones) repeat to the result's sizes.

    ```mlir
    %y = kiln.broadcast %x : tensor<1x8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_WhereOp : Kiln_Op<"where", [Pure, Kiln_Elementwise]> {
  let summary = "selects between two tensors by a boolean mask";
  let description = [{
    `z = condition ? on_true : on_false`, the three operands broadcast together.

    ```mlir
    %z = kiln.where %mask, %x, %y : tensor<1x8xi1>, tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$condition, Kiln_Tensor:$on_true,
                       Kiln_Tensor:$on_false);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$condition `,` $on_true `,` $on_false attr-dict `:` "
      "type($condition) `,` type($on_true) `,` type($on_false) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Kiln_LinearOp : Kiln_Op<"linear", [Pure]> {
  let summary = "y = x W^T + b (PyTorch's nn.Linear)";
  let description = [{
    `input` is `[..., K]`, `weight` `[N, K]`, the optional `bias` `[N]`; the
    result is `[..., N]`. Products accumulate in fp32 at least; the result
    has the operands' element type or, for f16 and bf16 operands, f32: the
    accumulators unrounded.

    ```mlir
    %y = kiln.linear %x, %w, %b : (tensor<64x256xf16>, tensor<1024x256xf16>, tensor<1024xf16>) -> tensor<64x1024xf16>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$weight,
                       Optional<Kiln_FloatTensor>:$bias);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` "
      "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_MatmulOp : Kiln_Op<"matmul", [Pure]> {
  let summary = "matrix product of two 2-D tensors";
  let description = [{
    `[M, K] x [K, N] -> [M, N]`.

    ```mlir
    %c = kiln.matmul %a, %b : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$lhs, Kiln_FloatTensor:$rhs);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_BatchMatmulOp : Kiln_Op<"batch_matmul", [Pure]> {
  let summary = "batched matrix product with broadcast batch dimensions";
  let description = [{
    `[..., M, K] x [..., K, N] -> [..., M, N]`; the leading (batch) dimensions
    broadcast as in `torch.matmul`, and the result has at least one.

    ```mlir
    %c = kiln.batch_matmul %q, %k : (tensor<2x12x128x64xf16>, tensor<2x12x64x128xf16>) -> tensor<2x12x128x128xf16>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$lhs, Kiln_FloatTensor:$rhs);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_Conv2dOp : Kiln_Op<"conv2d", [Pure]> {
  let summary = "2-D convolution on channels-last (NHWC) tensors";
  let description = [{
    `input` is `[N, H, W, C]`, `weight` `[O, KH, KW, C / groups]` (channels
    last too), the optional `bias` `[O]`; the result is `[N, OH, OW, O]` with
    `OH = (H + top + bottom - dilation_h * (KH - 1) - 1) / stride_h + 1` (and
    likewise OW). `padding` is `[top, left, bottom, right]`: PyTorch's
    symmetric and `"same"` paddings both fit. The frontend imports PyTorch's
    NCHW convolutions as this op between permutes; the layout pass removes
    the permutes between convolutions.

    ```mlir
    %y = kiln.conv2d %x, %w, %b strides = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] groups = 1 : (tensor<1x224x224x3xf16>, tensor<64x7x7x3xf16>, tensor<64xf16>) -> tensor<1x112x112x64xf16>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$weight,
                       Optional<Kiln_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? `strides` `=` $strides "
      "`padding` `=` $padding `dilation` `=` $dilation `groups` `=` $groups "
      "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_Pool2dOp : Kiln_Op<"pool2d", [Pure]> {
  let summary = "2-D max or average pooling on channels-last (NHWC) tensors";
  let description = [{
    Windows of `kernel` at `strides` over `[N, H, W, C]`, padded by
    `padding = [top, left, bottom, right]` (padding never wins a max). With
    `ceil_mode` the last window may start past the input's end as long as it
    starts inside the padding (PyTorch's rule). An average divides by the
    window's size clipped to the padded input with `count_include_pad`, else
    by the number of input elements it covers.

    ```mlir
    %y = kiln.pool2d %x max kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] : tensor<1x112x112x64xf16> -> tensor<1x56x56x64xf16>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_PoolKindAttr:$kind,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$padding, UnitAttr:$ceil_mode,
                       UnitAttr:$count_include_pad);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input $kind `kernel` `=` $kernel `strides` `=` $strides "
      "`padding` `=` $padding (`ceil_mode` $ceil_mode^)? "
      "(`count_include_pad` $count_include_pad^)? attr-dict `:` type($input) `->` "
      "type($result)";
  let hasVerifier = 1;
}

def Kiln_AttentionOp : Kiln_Op<"attention", [Pure]> {
  let summary = "scaled dot-product attention";
  let description = [{
    `softmax(q k^T * scale + mask) v` over the last two dimensions, the
    leading (batch, head) dimensions equal for `q`, `k` and `v`: `q` is
    `[..., Sq, D]`, `k` `[..., Sk, D]`, `v` `[..., Sk, Dv]`, the result
    `[..., Sq, Dv]`. The optional `mask` broadcasts to `[..., Sq, Sk]`: a
    float mask is added to the scores, a boolean mask keeps the scores where
    it is true (PyTorch's `scaled_dot_product_attention`). With `causal`,
    query `i` sees keys `j <= i` (top-left aligned). Statistics and
    accumulation are fp32 whatever the element type.

    ```mlir
    %o = kiln.attention %q, %k, %v mask %m scale = 1.250000e-01 : (tensor<2x12x128x64xf16>, tensor<2x12x128x64xf16>, tensor<2x12x128x64xf16>, tensor<2x1x1x128xf16>) -> tensor<2x12x128x64xf16>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$query, Kiln_FloatTensor:$key,
                       Kiln_FloatTensor:$value, Optional<Kiln_Tensor>:$mask,
                       F64Attr:$scale, UnitAttr:$causal);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$query `,` $key `,` $value (`mask` $mask^)? `scale` `=` $scale "
      "(`causal` $causal^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  // A constant mask that is exactly causal becomes the causal flag
  // (AttentionMasks.cpp): GPT-2's and Llama's, as Hugging Face passes them.
  let hasCanonicalizer = 1;
}

def Kiln_GatherOp : Kiln_Op<"gather", [Pure]> {
  let summary = "rows of a table picked by integer indices (embedding lookup)";
  let description = [{
    `table` is `[V, D...]`, `indices` any shape of i64/i32; the result is
    `indices.shape + [D...]` with row `indices[i]` of the table. An index
    outside `[0, V)` is an error in PyTorch; kiln's kernel clamps it.

    ```mlir
    %e = kiln.gather %table, %ids : (tensor<30522x768xf16>, tensor<2x128xi64>) -> tensor<2x128x768xf16>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$table, StaticShapeTensorOf<[I64, I32]>:$indices);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$table `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
  // Rows 0, 1, 2, ... in order: a reshape (IdentityGather.cpp).
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

class Kiln_ReduceOp<string mnemonic, Type tensorType, string doc>
    : Kiln_Op<mnemonic, [Pure]> {
  let summary = doc;
  let description = doc # " over `dims` (sorted, distinct, non-negative); " #
      "with `keepdim` the reduced dimensions stay as size 1.\n\n```mlir\n" #
      "%s = kiln." # mnemonic # " %x dims = [1] keepdim : tensor<4x8xf32> -> " #
      "tensor<4x1xf32>\n```";
  let arguments = (ins tensorType:$input, DenseI64ArrayAttr:$dims,
                       UnitAttr:$keepdim);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input `dims` `=` $dims (`keepdim` $keepdim^)? "
      "attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_ReduceSumOp : Kiln_ReduceOp<"reduce_sum", Kiln_NumericTensor, "sum">;
def Kiln_ReduceMeanOp
    : Kiln_ReduceOp<"reduce_mean", Kiln_FloatTensor, "arithmetic mean">;
def Kiln_ReduceMaxOp : Kiln_ReduceOp<"reduce_max", Kiln_NumericTensor, "maximum">;

def Kiln_SoftmaxOp : Kiln_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "softmax (or log-softmax) along one dimension";
  let description = [{
    `y_i = exp(x_i - max(x)) / sum_j exp(x_j - max(x))` along `dim`; with
    `log`, `y_i = x_i - max(x) - log(sum_j exp(x_j - max(x)))`.

    ```mlir
    %p = kiln.softmax %s dim = 3 : tensor<2x12x128x128xf16>
    %l = kiln.softmax %s dim = 3 log : tensor<2x12x128x128xf16>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, I64Attr:$dim, UnitAttr:$log);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input `dim` `=` $dim (`log` $log^)? attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Kiln_LayerNormOp : Kiln_Op<"layer_norm", [Pure, AttrSizedOperandSegments]> {
  let summary = "layer normalization over the trailing dimensions";
  let description = [{
    Normalizes over the dimensions from `axis` to the last (PyTorch's
    `normalized_shape`), then scales by `weight` and shifts by `bias`, both
    optional and shaped like those trailing dimensions. Statistics are computed
    in fp32 whatever the element type.

    With `rms`, the root-mean-square normalization of RMSNorm (Llama, T5):
    `x * rsqrt(mean(x^2) + eps) * weight`, no mean subtracted and no bias.

    ```mlir
    %y = kiln.layer_norm %x weight %g bias %b axis = 1 eps = 1.0e-05 : (tensor<64x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
    %z = kiln.layer_norm %x weight %g axis = 1 eps = 1.0e-06 rms : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input,
                       Optional<Kiln_FloatTensor>:$weight,
                       Optional<Kiln_FloatTensor>:$bias,
                       I64Attr:$axis, F64Attr:$eps, UnitAttr:$rms);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input (`weight` $weight^)? (`bias` $bias^)? "
      "`axis` `=` $axis `eps` `=` $eps (`rms` $rms^)? attr-dict `:` "
      "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_RowMomentsOp : Kiln_Op<"row_moments", [Pure, AllTypesMatch<["mean", "rstd"]>]> {
  let summary = "a layer norm's statistics of each row: mean and 1 / sqrt(variance + eps)";
  let description = [{
    Over the last dimension, in fp32 whatever the input's element type: `mean`
    and `rstd = rsqrt(var + eps)` (the biased variance, as `layer_norm`'s),
    each shaped like the input with its last dimension 1. With `rms`,
    RMSNorm's: `rstd = rsqrt(mean(x^2) + eps)`, nothing subtracted (`mean`
    is still the row's mean). What is left of a layer norm whose
    normalization moved into the linears it feeds (see
    `kiln-fold-layer-norm`).

    ```mlir
    %mean, %rstd = kiln.row_moments %x eps = 1.0e-05 : tensor<64x768xf16> -> tensor<64x1xf32>
    %m, %r = kiln.row_moments %x eps = 1.0e-06 rms : tensor<64x4096xbf16> -> tensor<64x1xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, F64Attr:$eps, UnitAttr:$rms);
  let results = (outs StaticShapeTensorOf<[F32]>:$mean, StaticShapeTensorOf<[F32]>:$rstd);
  let assemblyFormat =
      "$input `eps` `=` $eps (`rms` $rms^)? attr-dict `:` type($input) `->` type($mean)";
  let builders = [OpBuilder<(ins "mlir::Value":$input, "double":$eps, "bool":$rms)>];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Kiln_ReshapeOp : Kiln_Op<"reshape", [Pure]> {
  let summary = "reinterprets the elements (row-major) with a new shape";
  let description = [{
    PyTorch's `view`, `reshape` and `flatten`; element count and type stay.

    ```mlir
    %y = kiln.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  // reshape(linear(reshape(x))) that only flattens and restores the rows
  // is linear(x) (GPT-2's Conv1D: view, addmm, view).
  let hasCanonicalizer = 1;
}

def Kiln_PermuteOp : Kiln_Op<"permute", [Pure]> {
  let summary = "reorders dimensions (transpose, permute)";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]`.

    ```mlir
    %y = kiln.permute %x [0, 2, 1, 3] : tensor<2x128x12x64xf16> -> tensor<2x12x128x64xf16>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat =
      "$input $permutation attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  // A permute/reshape chain that lands back in row-major order is a
  // reshape; a permute of a cast function argument moves onto the argument.
  let hasCanonicalizer = 1;
}

def Kiln_ConcatOp : Kiln_Op<"concat", [Pure]> {
  let summary = "joins tensors along one dimension";
  let description = [{
    ```mlir
    %y = kiln.concat %a, %b dim = 1 : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat =
      "$inputs `dim` `=` $dim attr-dict `:` functional-type($inputs, $result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Kiln_CumsumOp : Kiln_Op<"cumsum", [Pure]> {
  let summary = "running sums along one dimension";
  let description = [{
    Result element `i` along `dim` is the sum of input elements `0..i` along
    it (PyTorch's `cumsum`), in the result's element type: integers exactly
    (an integer or bool input gives i64 by default), floats accumulated in
    fp32. It runs in elementwise kernels on a group input, each element
    summing its prefix (dimensions are short where models use it: position
    ids from an attention mask).

    ```mlir
    %p = kiln.cumsum %mask dim = 1 : tensor<2x128xi32> -> tensor<2x128xi64>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input, I64Attr:$dim);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$input `dim` `=` $dim attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_SliceOp : Kiln_Op<"slice", [Pure]> {
  let summary = "a strided window of a tensor";
  let description = [{
    Result element `r` is input element `offsets + r * strides` (per
    dimension); the result shape gives the window's size. Covers PyTorch's
    `x[a:b:s]`, `narrow`, `select` (with a following reshape) and `chunk`.

    ```mlir
    %y = kiln.slice %x offsets = [0, 256] strides = [1, 1] : tensor<64x768xf32> -> tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$strides);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input `offsets` `=` $offsets `strides` `=` $strides "
      "attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Fusion groups
//===----------------------------------------------------------------------===//

def Kiln_FusionOp : Kiln_Op<"fusion",
    [IsolatedFromAbove, RecursiveMemoryEffects]> {
  let summary = "a group of ops compiled into one kernel";
  let description = [{
    The body is ordinary kiln ops on the block arguments (one per input, same
    types) and ends in `kiln.yield` of the results. The body sees nothing from
    outside (isolated from above), so codegen can emit it on its own. `kind`
    names the kernel family; an `elementwise` group holds only elementwise ops
    and constants.

    ```mlir
    %r = kiln.fusion elementwise ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%x: tensor<4x8xf32>, %y: tensor<8xf32>):
      %s = kiln.add %x, %y : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
      %t = kiln.relu %s : tensor<4x8xf32>
      kiln.yield %t : tensor<4x8xf32>
    }
    ```
  }];
  let arguments = (ins Kiln_FusionKindAttr:$kind, Variadic<Kiln_Tensor>:$inputs);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "`` $kind (`ins` `(` $inputs^ `:` type($inputs) `)`)? "
      "attr-dict `->` type($results) $body";
  let hasRegionVerifier = 1;
}

def Kiln_YieldOp : Kiln_Op<"yield",
    [Pure, ReturnLike, Terminator, HasParent<"FusionOp">]> {
  let summary = "returns a fusion group's results";
  let description = [{
    ```mlir
    kiln.yield %t, %u : tensor<4x8xf32>, tensor<4x8xf16>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

//===----------------------------------------------------------------------===//
// Kernels and launches (kiln-lower-launches)
//===----------------------------------------------------------------------===//

def Kiln_CudaKernelOp : Kiln_Op<"cuda_kernel",
    [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "the CUDA source of one kernel";
  let description = [{
    One distinct kernel of the module: its CUDA C++ source (one
    `extern "C" __global__` function named like the symbol, compiled by NVRTC
    for every image that launches it) and the fusion kind it implements.
    Identical fusion groups (the blocks of a layer stack) share one; the
    symbol is named after the source's hash.

    ```mlir
    kiln.cuda_kernel @kiln_1F2E3D4C5B6A7988 elementwise source "#include ..."
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Kiln_FusionKindAttr:$kind, StrAttr:$source);
  let assemblyFormat = "$sym_name `` $kind attr-dict `source` $source";
  let hasVerifier = 1;
}

def Kiln_LaunchOp : Kiln_Op<"launch",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a kernel launch: what a fusion group became";
  let description = [{
    Runs one kernel over `inputs` (function arguments: the model's inputs;
    `kiln.constant`s: weights; other launches' results: the arena at the
    offsets `kiln.offsets` gives, or the function's results) and defines its
    results. `images` holds one `#kiln.launch` per target image, in the
    order of the artifact's architectures: each names the kernel and the
    launch configuration for that image. The artifact's launch plan is these
    ops in program order, and nothing else.

    ```mlir
    %0 = kiln.launch gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<3072x768xf16>)
           images [#kiln.launch<arch = "sm_90a", kernel = @kiln_5A0C, grid = [132, 1, 1],
                                block = 384, shared = 201728>,
                   #kiln.launch<arch = "sm_80", kernel = @kiln_5A0C, grid = [132, 1, 1],
                                block = 384>]
           {kiln.offsets = array<i64: 0>} -> tensor<4096x3072xf16>
    ```
  }];
  let arguments = (ins Kiln_FusionKindAttr:$kind, Variadic<Kiln_Tensor>:$inputs,
                       TypedArrayAttrBase<Kiln_LaunchConfigAttr, "launch configurations">:$images);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let assemblyFormat = "`` $kind (`ins` `(` $inputs^ `:` type($inputs) `)`)? "
      "`images` $images attr-dict `->` type($results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The configuration for the image `arch`, or null.
    LaunchConfigAttr imageFor(::llvm::StringRef arch);
  }];
}

#endif // KILN_DIALECT_KILN_KILNOPS_TD
