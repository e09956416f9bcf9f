//===- Passes.td - kiln's graph passes -------------------*- tablegen -*-===//
//
// Every kiln pass, grouped by phase under banners, alphabetical within a
// group. Arguments carry the `kiln-` prefix.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PASSES_TD
#define KILN_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Precision
//===----------------------------------------------------------------------===//

def KilnSetPrecision : Pass<"kiln-set-precision", "mlir::func::FuncOp"> {
  let summary = "computes the function in fp32, tf32, fp16 or bf16";
  let description = [{
    `fp16` / `bf16`: every floating-point tensor inside the function takes
    the target type. Weights are converted at compile time (the constant's
    data is rewritten, rounding to nearest even); floating-point arguments
    are cast on entry and results cast back to their declared types on exit,
    so the function's signature does not change. Integer and boolean tensors
    are untouched. Kernels still accumulate GEMMs and normalization
    statistics in fp32.

    `tf32`: types stay fp32; GEMMs are marked `kiln.tf32`, allowing tensor
    cores to round their operands to tf32 (10-bit mantissa).

    `fp32`: nothing changes.

    `io-dtype=f16` (or `bf16`, with the matching precision): the function's
    floating-point arguments and results take the compute type instead, so
    a caller that holds fp16 data passes it as is and no cast kernel runs
    at either end. The default, `declared`, keeps the signature.

    Before (`precision=fp16`):
    ```mlir
    func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %0 = kiln.relu %x : tensor<4x8xf32>
      return %0 : tensor<4x8xf32>
    }
    ```
    After:
    ```mlir
    func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %0 = kiln.cast %x : tensor<4x8xf32> to tensor<4x8xf16>
      %1 = kiln.relu %0 : tensor<4x8xf16>
      %2 = kiln.cast %1 : tensor<4x8xf16> to tensor<4x8xf32>
      return %2 : tensor<4x8xf32>
    }
    ```
  }];
  let options = [
    Option<"precision", "precision", "::kiln::Precision",
           /*default=*/"::kiln::Precision::fp32", "the arithmetic to compute in",
           [{::llvm::cl::values(
               clEnumValN(::kiln::Precision::fp32, "fp32", "the model's types"),
               clEnumValN(::kiln::Precision::tf32, "tf32",
                          "fp32, GEMM operands rounded to tf32 (tensor cores)"),
               clEnumValN(::kiln::Precision::fp16, "fp16", "fp16, statistics in fp32"),
               clEnumValN(::kiln::Precision::bf16, "bf16", "bf16, statistics in fp32"))}]>,
    Option<"ioDtype", "io-dtype", "std::string", /*default=*/"\"declared\"",
           "the floating-point inputs' and outputs' type: declared (the "
           "model's), or f16 / bf16 (the compute type of fp16 / bf16)">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

def KilnPropagateLayout : Pass<"kiln-propagate-layout", "mlir::func::FuncOp"> {
  let summary = "keeps convolutional regions channels-last (NHWC)";
  let description = [{
    kiln's convolutions and pools are channels-last; the frontend imports
    PyTorch's NCHW ops between permutes (`[0, 2, 3, 1]` in, `[0, 3, 1, 2]`
    out). This pass sinks every channels-first permute (`[0, 3, 1, 2]` of a
    4-D tensor) towards its users: through elementwise ops (their other
    operands are brought to channels-last: per-channel constants by a free
    reshape, full-size tensors by a permute, reused when one exists) and
    through reductions (the reduced dimensions are renamed). When it meets
    the channels-last permute of the next convolution the two cancel, so
    layout changes remain only at the model's boundary and where an op needs
    them (a reshape, a GEMM, a result), never between two convolutions. A
    permute that only moves dimensions of size 1 becomes a reshape.

    Before:
    ```mlir
    %1 = kiln.permute %0 [0, 3, 1, 2] : tensor<1x8x8x16xf32> -> tensor<1x16x8x8xf32>
    %2 = kiln.relu %1 : tensor<1x16x8x8xf32>
    %3 = kiln.permute %2 [0, 2, 3, 1] : tensor<1x16x8x8xf32> -> tensor<1x8x8x16xf32>
    ```
    After:
    ```mlir
    %3 = kiln.relu %0 : tensor<1x8x8x16xf32>
    ```
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnPatchify : Pass<"kiln-patchify", "mlir::func::FuncOp"> {
  let summary = "turns a convolution over non-overlapping patches into a GEMM";
  let description = [{
    A channels-last convolution whose kernel equals its stride, without
    padding, dilation or groups (ViT's patch embedding: 16 x 16 patches,
    stride 16), reads every input element exactly once: its im2col is a
    reshape and a permute of the input, and the convolution a linear layer
    over the flattened patches. The rewrite exposes that permute to the
    view canonicalizations (it composes with the NCHW -> NHWC permute and
    joins the input's cast kernel) and hands the product to the GEMM
    kernels, which need no gather: the 3-channel input of a patch embedding
    would otherwise take the convolution kernel's element-by-element path.
    The spatial size must divide by the kernel size; the weight must be a
    constant.

    Before:
    ```mlir
    %y = kiln.conv2d %x, %w, %b strides = [16, 16] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x224x224x3xf32>, tensor<768x16x16x3xf32>, tensor<768xf32>) -> tensor<1x14x14x768xf32>
    ```
    After: reshape to [1, 14, 16, 14, 16, 3], permute to
    [1, 14, 14, 16, 16, 3], reshape to [1, 14, 14, 768], kiln.linear with
    the weight as [768, 768].
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnRaiseGelu : Pass<"kiln-raise-gelu", "mlir::func::FuncOp"> {
  let summary = "turns GELU written out in elementwise ops into kiln.gelu";
  let description = [{
    GPT-2's NewGELU, FastGELU and the erf GELU of older Hugging Face code
    trace to scalar arithmetic around one `tanh` or `erf`. The kernels run
    such a chain op by op (a libdevice `tanhf` among them); `kiln.gelu`
    gets the closed form, which for half results needs one exp and one
    reciprocal. The argument of tanh (erf) is read as a polynomial in x,
    so `pow(x, 3)` and `x * x * x`, `c * (x + k x^3)` and `x * c * (1 + k
    x^2)`, and `x / sqrt(2)` and `x * 0.7071` all match; its coefficients,
    the outer 0.5 and the 1 must be the exact ones to within a bf16
    constant's rounding. Ops of the chain that something else reads stay.
    Runs before kiln-set-precision, on the model's own constants.

    Before:
    ```mlir
    %h = kiln.mul %x, %half : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
    %c = kiln.pow %x, %three : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
    %k = kiln.mul %c, %kappa : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
    %s = kiln.add %x, %k : tensor<4x8xf32>
    %u = kiln.mul %s, %sqrt2pi : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
    %t = kiln.tanh %u : tensor<4x8xf32>
    %g = kiln.add %t, %one : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
    %y = kiln.mul %h, %g : tensor<4x8xf32>
    ```
    After:
    ```mlir
    %y = kiln.gelu %x approximate = tanh : tensor<4x8xf32>
    ```
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnRaiseRmsNorm : Pass<"kiln-raise-rms-norm", "mlir::func::FuncOp"> {
  let summary = "turns RMSNorm written out in elementwise ops into kiln.layer_norm rms";
  let description = [{
    Llama's, T5's and Mistral's RMSNorm is traced as `pow(x, 2)`, a mean over
    the trailing dimensions, `+ eps`, `rsqrt` and `x *` that result: a
    reduction kernel, an elementwise kernel, and a tensor of squares
    written by the producer. As `kiln.layer_norm ... rms` it is one row
    kernel (FuseNormalization adds the weight's mul and its neighbours) with
    fp32 statistics. Matched when the squares, the mean, the sum and the
    rsqrt have no other use and eps is a positive scalar constant. Runs
    before kiln-set-precision, so eps is the model's.

    Before:
    ```mlir
    %p = kiln.pow %x, %two : tensor<2x16x64xf32>, tensor<f32> -> tensor<2x16x64xf32>
    %m = kiln.reduce_mean %p dims = [2] keepdim : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
    %a = kiln.add %m, %eps : tensor<2x16x1xf32>, tensor<f32> -> tensor<2x16x1xf32>
    %r = kiln.rsqrt %a : tensor<2x16x1xf32>
    %y = kiln.mul %x, %r : tensor<2x16x64xf32>, tensor<2x16x1xf32> -> tensor<2x16x64xf32>
    ```
    After:
    ```mlir
    %y = kiln.layer_norm %x axis = 2 eps = 1.0e-06 rms : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
    ```
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnFoldConstants : Pass<"kiln-fold-constants", "mlir::func::FuncOp"> {
  let summary = "computes integer and boolean elementwise ops on constants at compile time";
  let description = [{
    Models build index tensors from constants: Hugging Face's mask
    utilities compare, add, multiply and select `arange` results traced into
    constants, then gather the mask with them. Such an op, whose operands
    are all constants and whose result holds integers or booleans, becomes
    a constant computed here with exact integer arithmetic (wrapping at the
    result's width, as PyTorch does); the kernels then never compute
    integers. Folded: add, sub, mul, max, min, neg, abs, the comparisons,
    where, cast, broadcast and reshape. Results over `max-elements` and
    float results are left alone.

    Before:
    ```mlir
    %i = kiln.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
    %k = kiln.constant dense<2> : tensor<i64>
    %l = kiln.lt %i, %k : tensor<4xi64>, tensor<i64> -> tensor<4xi1>
    ```
    After: `%l = kiln.constant dense<[true, true, false, false]> : tensor<4xi1>`.
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", "65536",
           "fold results of at most this many elements">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnFoldAffine : Pass<"kiln-fold-affine", "mlir::func::FuncOp"> {
  let summary = "folds per-channel scales and shifts into convolution and linear weights";
  let description = [{
    A BatchNorm that freezing did not fold arrives as `x * scale + shift`
    with per-channel constants. When `x` is a convolution or linear layer
    with constant weights whose only user is that multiply (or add), the
    scale multiplies the weights and bias of each output channel and the
    shift adds to the bias, at compile time; the elementwise ops disappear.
    A constant broadcasting over anything but the output channels (the last
    dimension, after kiln-propagate-layout) is left alone.

    Before:
    ```mlir
    %0 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (...) -> tensor<1x8x8x16xf32>
    %1 = kiln.mul %0, %scale : tensor<1x8x8x16xf32>, tensor<1x1x1x16xf32> -> tensor<1x8x8x16xf32>
    %2 = kiln.add %1, %shift : tensor<1x8x8x16xf32>, tensor<1x1x1x16xf32> -> tensor<1x8x8x16xf32>
    ```
    After: one kiln.conv2d with new constant weights and bias.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def KilnFuseGemmEpilogue : Pass<"kiln-fuse-gemm-epilogue", "mlir::func::FuncOp"> {
  let summary = "fuses elementwise consumers of a GEMM into its epilogue";
  let description = [{
    Each kiln.linear / kiln.matmul / kiln.batch_matmul becomes the anchor of
    a `kiln.fusion gemm_epilogue` group that also holds every elementwise op
    computing over the GEMM's result shape downstream of it: activation,
    residual add, scale, cast, in any chain. The GEMM kernel applies them to
    its accumulator tile before the single store. A GEMM result used outside
    the group stays a result of the group (written once, never recomputed).

    Before:
    ```mlir
    %0 = kiln.linear %x, %w, %b : (tensor<64x256xf16>, tensor<1024x256xf16>, tensor<1024xf16>) -> tensor<64x1024xf16>
    %1 = kiln.gelu %0 : tensor<64x1024xf16>
    ```
    After:
    ```mlir
    %1 = kiln.fusion gemm_epilogue ins(%x, %w, %b : ...) -> tensor<64x1024xf16> {
    ^bb0(%a: tensor<64x256xf16>, %b: tensor<1024x256xf16>, %c: tensor<1024xf16>):
      %2 = kiln.linear %a, %b, %c : ...
      %3 = kiln.gelu %2 : tensor<64x1024xf16>
      kiln.yield %3 : tensor<64x1024xf16>
    }
    ```
    Ops marked `kiln.no_fuse` stay out (test hook).
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnFuseConvEpilogue : Pass<"kiln-fuse-conv-epilogue", "mlir::func::FuncOp"> {
  let summary = "fuses a convolution's elementwise consumers into its epilogue";
  let description = [{
    Each kiln.conv2d anchors a `kiln.fusion conv_epilogue` group with every
    elementwise op computing over the convolution's result shape downstream
    of it: bias, activation, the residual add of a ResNet block (whose other
    operand enters as an input), scale, cast. The implicit-GEMM kernel applies
    them to its accumulators before the single store. A channels-last permute
    of a function argument feeding the convolution (the model's NCHW input)
    joins the group too, so the kernel reads NCHW directly and the layout
    change costs no kernel of its own.

    Before:
    ```mlir
    %0 = kiln.conv2d %x, %w, %b strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (...) -> tensor<1x8x8x16xf16>
    %1 = kiln.add %0, %skip : tensor<1x8x8x16xf16>
    %2 = kiln.relu %1 : tensor<1x8x8x16xf16>
    ```
    After: one group holding all three, with `%skip` as an input.

    With `global-pool`, a mean over H and W (the global average pool before
    a classifier) that alone reads such a group's result joins it too, where
    the primary target (`targets`) runs it as gemm_wgmma with row tiles of
    whole images whose epilogue sums each image's columns: a 1x1 convolution
    with stride 1, no padding and one group, fp16/bf16, K % 8 == 0, an even
    channel count, images of at most 128 pixels, and row tiles of whole
    images that as 128 x 64 tiles fill a quarter of the primary target's
    multiprocessors (`multiprocessors`), as the Hopper GEMM's few-row rule
    asks (at batch 1 one row tile would walk all of K on 32 blocks where K
    split four ways takes 128). The convolution's result is then never
    stored, and the pool costs no launch.
  }];
  let options = [
    Option<"globalPool", "global-pool", "bool", /*default=*/"false",
           "fuse a global average pool into the 1x1 convolution it reads">,
    ListOption<"targets", "targets", "std::string",
               "GPU architectures of the artifact, newest first (default sm_90a,sm_80)">,
    Option<"multiprocessors", "multiprocessors", "int64_t", /*default=*/"0",
           "the primary target's multiprocessors (0: the architecture's)">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnFuseAttention : Pass<"kiln-fuse-attention", "mlir::func::FuncOp"> {
  let summary = "turns the attention pattern into kiln.attention groups";
  let description = [{
    The explicit attention of eager models, `softmax(q k^T * scale + mask) v`
    as batch_matmul, a scalar multiply or divide, an additive mask (or a
    `where` that fills masked scores with a large negative constant: a
    boolean mask), softmax over the last dimension and batch_matmul, becomes
    one kiln.attention, so the scores never reach memory. Every
    kiln.attention (also those imported from scaled_dot_product_attention)
    then anchors a `kiln.fusion attention` group with its elementwise
    consumers over its result shape. The group also takes the split-heads
    views of q, k and v (permute/slice/reshape chains with no other user
    that keep the head dimension contiguous, e.g. three slices of one QKV
    projection) and a merge-heads permute of its result: the kernel reads
    and writes them in place, so no layout kernel is left around attention.

    Only the exact pattern is taken: each intermediate used once, `k^T` a
    transpose of the last two dimensions of `k`, the softmax a plain one
    over the last dimension, constants scalar. A near miss (probabilities
    used elsewhere, a log-softmax, a softmax over another dimension) stays
    as it was.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnMergeProjections : Pass<"kiln-merge-projections", "mlir::func::FuncOp"> {
  let summary = "merges the q, k and v projections of one input into one GEMM";
  let description = [{
    Linear layers that read the same input with constant weights of the same
    inner size and whose results only reach a kiln.attention's query, key
    or value (through single-use permute, slice or reshape ops: the split
    heads) become one linear with the weights and biases concatenated along
    the output dimension, followed by a slice per original result. The
    slices are views the attention kernel reads in place
    (kiln-fuse-attention takes them into its group), so three GEMM launches
    become one and no copy is added.

    A projection whose result has any other user stays as it was: its slice
    would cost a kernel of its own.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnMergeShortcutConv : Pass<"kiln-merge-shortcut-conv", "mlir::func::FuncOp"> {
  let summary = "merges a bottleneck's projection shortcut into its last convolution";
  let description = [{
    A ResNet bottleneck that changes its width ends in
    `relu(conv_c(h) + downsample(x))`: two 1x1 convolutions whose results
    are added. Apart, the shortcut's result is written whole and read back
    by the other's epilogue (ResNet-50 at batch 32: 51 MB each way in its
    first stage). They are one GEMM over the two inputs side by side along
    channels:

      conv_c(h) + downsample(x) = conv1x1([h | x_s], [W_c | W_d], b_c + b_d)

    where x_s is the strided slice of x that a strided shortcut reads. The
    merged convolution reads its input as a `kiln.concat` of `h` and that
    slice, marked `kiln.read_in_place`, which kiln-fuse-conv-epilogue takes
    into its group and conv_wgmma reads in place: one tensor map per part,
    the weight's channels in the same order. Nothing is copied.

    Numerics: both products accumulate in one fp32 sum and round once,
    where apart each rounded to 16 bits before the add; the bias sum rounds
    once to the element type.

    Policy: 16-bit operands, constant weights and biases, both inputs'
    channels a multiple of 8 (TMA's 16-byte strides), a result of at least
    `min-bytes` (at batch 1 the shortcut runs beside the main path's
    launches and its bytes are few), and a primary target whose
    convolutions run as conv_wgmma (`targets`, `conv-wgmma`): no other main
    loop reads a channel concat in place, and a copied concat would cost
    more than it saves.

    Before:
    ```mlir
    %c = kiln.conv2d %h, %wc, %bc strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x28x28x128xf16>, tensor<512x1x1x128xf16>, tensor<512xf16>) -> tensor<32x28x28x512xf16>
    %d = kiln.conv2d %x, %wd, %bd strides = [2, 2] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x56x56x256xf16>, tensor<512x1x1x256xf16>, tensor<512xf16>) -> tensor<32x28x28x512xf16>
    %y = kiln.add %c, %d : tensor<32x28x28x512xf16>
    ```
    After:
    ```mlir
    %s = kiln.slice %x offsets = [0, 0, 0, 0] strides = [1, 2, 2, 1] : tensor<32x56x56x256xf16> -> tensor<32x28x28x256xf16>
    %i = kiln.concat %h, %s dim = 3 {kiln.read_in_place} : (tensor<32x28x28x128xf16>, tensor<32x28x28x256xf16>) -> tensor<32x28x28x384xf16>
    %y = kiln.conv2d %i, %w, %b strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x28x28x384xf16>, tensor<512x1x1x384xf16>, tensor<512xf16>) -> tensor<32x28x28x512xf16>
    ```
  }];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"::kiln::kMergeShortcutBytes",
           "merge shortcuts whose result has at least this many bytes (-1: none)">,
    ListOption<"targets", "targets", "std::string",
               "GPU architectures of the artifact, newest first (default sm_90a,sm_80)">,
    Option<"convWgmma", "conv-wgmma", "bool", /*default=*/"true",
           "whether kiln-select-kernels may run convolutions as conv_wgmma">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnFoldLayerNorm : Pass<"kiln-fold-layer-norm", "mlir::func::FuncOp"> {
  let summary = "moves a layer norm's normalization into the linears it feeds";
  let description = [{
    A pre-norm transformer's layer norm feeds linears and nothing else (the
    attention's packed projection, the FFN's up-projection; a gated MLP's
    gate and up-projection). Its output is written and read back whole;
    folded, only its statistics are:

      LN(x) W^T + b = rstd (x W'^T - mean c) + d

    with W' = W diag(gamma) rounded to the weight's type, c = the row sums
    of W' (so that x W'^T - mean c is exactly (x - mean) W'^T before the
    accumulators' rounding) and d = W beta + b, computed at compile time.
    Each linear then returns its fp32 accumulators unrounded, the
    correction runs on them in its epilogue, and one `kiln.row_moments`
    kernel reads x once for the statistics of them all.

    An RMSNorm folds the same way without the mean: rstd x W'^T + b, its
    rstd the root mean square's (`row_moments ... rms`). A norm without a
    weight whose only user multiplies it by a constant along the last
    dimension (Hugging Face's RMSNorm, which scales after rounding back to
    the model's type) takes that constant as gamma. A d that is all zeros
    (no beta, no bias) is not added.

    Numerics: the normalized input is no longer rounded to 16 bits, and
    gamma is rounded into W' instead (one rounding of a product either way);
    the correction's cancellation costs fp32 bits, not 16-bit ones.

    Policy: linears with constant weights are the norm's only readers (any
    other reader needs the output stored anyway), 16-bit operands only (an
    fp32 model's tolerance leaves no room for the cancellation), a
    normalization over the last dimension, and a layer-norm output of at
    least `min-bytes`: below that the norm is launch-bound and folding
    saves nothing.

    Before:
    ```mlir
    %y = kiln.layer_norm %x weight %g bias %b axis = 1 eps = 1.0e-05 : (...) -> tensor<4096x768xf16>
    %z = kiln.linear %y, %w, %bias : (...) -> tensor<4096x2304xf16>
    ```
    After:
    ```mlir
    %mean, %rstd = kiln.row_moments %x eps = 1.0e-05 : tensor<4096x768xf16> -> tensor<4096x1xf32>
    %acc = kiln.linear %x, %w_folded : (...) -> tensor<4096x2304xf32>
    %0 = kiln.mul %mean, %c : tensor<4096x1xf32>, tensor<2304xf32> -> tensor<4096x2304xf32>
    %1 = kiln.sub %acc, %0 : tensor<4096x2304xf32>
    %2 = kiln.mul %1, %rstd : tensor<4096x2304xf32>, tensor<4096x1xf32> -> tensor<4096x2304xf32>
    %3 = kiln.add %2, %d : tensor<4096x2304xf32>, tensor<2304xf32> -> tensor<4096x2304xf32>
    %z = kiln.cast %3 : tensor<4096x2304xf32> to tensor<4096x2304xf16>
    ```
  }];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"::kiln::kFoldLayerNormBytes",
           "fold layer norms whose output has at least this many bytes (-1: none)">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnFuseWindows : Pass<"kiln-fuse-windows", "mlir::func::FuncOp"> {
  let summary = "groups pools and reductions with their elementwise consumers";
  let description = [{
    Each kiln.pool2d anchors a `kiln.fusion pooling` group and each
    kiln.reduce_{sum,mean,max} a `kiln.fusion reduction` group, holding the
    elementwise ops that compute over the anchor's result shape downstream
    of it (the squeeze-and-excite path's activation after its mean, a scale
    after a sum). Every pool and reduction thereby becomes a kernel.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnFuseNormalization : Pass<"kiln-fuse-normalization", "mlir::func::FuncOp"> {
  let summary = "fuses layer norm and softmax with their elementwise neighbours";
  let description = [{
    Each kiln.layer_norm / kiln.softmax anchors a `kiln.fusion normalization`
    group holding its elementwise producers (the residual add feeding a layer
    norm, a scale before a softmax) and consumers over the same shape. The
    row kernel computes producers on load and consumers before the store; a
    producer used elsewhere (the residual stream) becomes an extra result.
  }];
  let options = [
    Option<"prologue", "prologue", "bool", /*default=*/"true",
           "absorb elementwise producers of the normalized input">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnFuseElementwise : Pass<"kiln-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "groups chains of elementwise ops into kiln.fusion regions";
  let description = [{
    Elementwise ops that compute over the same index space (equal result
    shapes) and feed one another become one `kiln.fusion elementwise` group,
    which codegen turns into one kernel. Operands of other shapes enter the
    group as broadcast inputs. A producer whose result is also used outside
    the group joins it and becomes an extra result of the group, so nothing
    is computed twice. Scalar and splat constants are cloned into the body.
    A merge that would make a cycle through an op outside the group (A -> X
    -> B with A and B grouped, X not) is refused.

    Before:
    ```mlir
    %0 = kiln.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %1 = kiln.relu %0 : tensor<4x8xf32>
    ```
    After:
    ```mlir
    %1 = kiln.fusion elementwise ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%x: tensor<4x8xf32>, %y: tensor<8xf32>):
      %2 = kiln.add %x, %y : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
      %3 = kiln.relu %2 : tensor<4x8xf32>
      kiln.yield %3 : tensor<4x8xf32>
    }
    ```

    An op carrying the unit attribute `kiln.no_fuse` is kept out of every
    group: tests use it to exercise the mechanics apart from the policy.
  }];
  let options = [
    Option<"fuseMultiUse", "fuse-multi-use", "bool", /*default=*/"true",
           "let a producer with uses outside the group join it as an extra "
           "result (off: such producers end a group)">,
    Option<"wrapSingleOps", "wrap-single-ops", "bool", /*default=*/"true",
           "wrap an elementwise op that fuses with nothing in a group of its "
           "own, so that every kernel is a fusion group">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

//===----------------------------------------------------------------------===//
// Kernel selection
//===----------------------------------------------------------------------===//

def KilnSelectKernels : Pass<"kiln-select-kernels", "mlir::func::FuncOp"> {
  let summary = "chooses each fusion group's kernel variant for the target GPUs";
  let description = [{
    Every fusion group gets `kiln.kernel`, a `#kiln.kernel<...>` attribute
    naming the kernel variant and its parameters; the code generator makes
    no choice of its own. A group that already has one keeps it, so a test
    or a tuner can force a variant. The choice is made for the primary
    (first, newest) target image; the others run the same kernel.

    - GEMMs (and 1x1 convolutions) on fp16/bf16: when their 128 x 256 tiles
      would fill under a quarter of the multiprocessors (a transformer at
      batch 1), `gemm_split_k`: 64 x 64 tiles with K split across a cluster
      of 2, 4 or 8 blocks (the largest that keeps the blocks within
      `split-k-max-blocks` and each split at `split-k-min-k` or more; no
      split without clusters). Otherwise `gemm_wgmma` where the image has
      wgmma and B is [N, K] with K % 8 == 0 (persistent, at most one block
      per multiprocessor), else `gemm_mma`. fp32: `gemm_simt`.
    - Convolutions: `conv_depthwise`; fp16/bf16 implicit GEMMs whose
      128 x 128 tiles would not fill the GPU once `conv_split_k` (NHWC input,
      Cin per group % 8 == 0), else `conv_mma`; fp32 `conv_simt`.
    - Attention: `attention_mma` for fp16/bf16 with equal head sizes that
      are multiples of 16 and 16-byte aligned rows, else `attention_simt`.
    - Elementwise, reduction, normalization and pooling groups have one
      variant each.

    With `explain`, each group gets a remark saying what was taken and why
    the other variants were not (also under `-debug-only=kiln-select-kernels`
    in builds with assertions).

    Before (`targets=sm_90a`):
    ```mlir
    %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<1x768xf16>, tensor<768x768xf16>) ...
    ```
    After:
    ```mlir
    %0 = kiln.fusion gemm_epilogue ins(...) ... {kiln.kernel =
      #kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64], stages = 3,
      split_k = 2>}
    ```
  }];
  let options = [
    ListOption<"targets", "targets", "std::string",
               "GPU architectures of the artifact, newest first (default sm_90a,sm_80)">,
    Option<"multiprocessors", "multiprocessors", "int64_t", /*default=*/"0",
           "the primary GPU's multiprocessor count (0: the architecture's)">,
    Option<"splitKMaxBlocks", "split-k-max-blocks", "int64_t", /*default=*/"0",
           "most blocks a split-K GEMM may launch (0: two per multiprocessor)">,
    Option<"splitKMinK", "split-k-min-k", "int64_t", /*default=*/"::kiln::kSplitKMinK",
           "least K each block of a split walks">,
    Option<"splitKTile", "split-k-k-tile", "int64_t", /*default=*/"::kiln::kSplitKTile",
           "k-tile width of the split-K pipeline (a multiple of 16)">,
    Option<"splitKStages", "split-k-stages", "int64_t", /*default=*/"::kiln::kSplitKStages",
           "depth of the split-K pipeline (2 or more)">,
    Option<"convWgmma", "conv-wgmma", "bool", /*default=*/"true",
           "choose conv_wgmma (the Hopper implicit-GEMM convolution) where it "
           "applies">,
    Option<"gemmNarrowFmas", "gemm-narrow-fmas", "int64_t", /*default=*/"256",
           "fp16/bf16 GEMMs over many rows with K <= 128 and at most this many "
           "FMAs a row (K x N; 0: none) run as gemm_narrow, a thread per row on "
           "CUDA cores">,
    Option<"gemmStreamIntensity", "gemm-stream-intensity", "int64_t", /*default=*/"32",
           "fp16/bf16 GEMMs over many rows with K and N at most 256 whose FLOPs a "
           "byte moved (K N / (K + N)) are at most this (0: none) run as "
           "gemm_stream, A streamed past a weight in shared memory">,
    Option<"gemmStreamBlocks", "gemm-stream-blocks", "int64_t", /*default=*/"2",
           "blocks of gemm_stream a multiprocessor runs (2 to 4), each with the "
           "deepest ring of 2 to 4 stages that fits them; fewer (down to 2) "
           "where none does">,
    Option<"gemmGemvRows", "gemm-gemv-rows", "int64_t", /*default=*/"8",
           "fp16/bf16 GEMMs of at most this many rows (0 to 32; 0: none) run as "
           "gemm_gemv (a block per column, K across a warp's lanes)">,
    Option<"depthwiseColumns", "depthwise-columns", "int64_t", /*default=*/"1",
           "adjacent output columns (1, 2 or 4) a thread of the vectorized "
           "depthwise convolution takes, each input column loaded once for "
           "all of them; 1 until more are measured on the GPU">,
    Option<"depthwisePatches", "depthwise-patches", "bool", /*default=*/"false",
           "run vectorized depthwise convolutions of one column a thread over 2-D "
           "patches of outputs whose input window a block stages in shared "
           "memory (pixel_tile [1, rows, columns]); off: slower on the GPU "
           "machine">,
    Option<"wgmmaMatmul", "wgmma-matmul", "bool", /*default=*/"true",
           "run matmul and bmm (a [K, N] B, a batch) as gemm_wgmma where TMA takes "
           "them: K % 8 == 0, N % 8 == 0, each operand batched whole or not at "
           "all (false: mma.sync or split K)">,
    Option<"runtimeSizes", "runtime-sizes", "bool", /*default=*/"false",
           "give gemm_split_k and 128-row gemm_wgmma kernels without a batch whose "
           "epilogue reads only a bias and inputs of the result's shape their M, N "
           "and K at launch, and normalizations over rows and row vectors their "
           "row count (runtime_sizes), so that one kernel serves every size of its "
           "configuration; off: 1-2% slower GEMMs at batch 32 on the GPU machine">,
    Option<"elementwiseUnroll", "elementwise-unroll", "int64_t", /*default=*/"1",
           "elements (1, 2, 4 or 8) an elementwise kernel's thread takes a step "
           "of its grid-stride loop, every load before the first store; 1 until "
           "more are measured on the GPU">,
    Option<"poolVector", "pool-vector", "bool", /*default=*/"true",
           "pool fp16/bf16 NHWC tensors with C % 8 == 0 eight channels a thread "
           "(tile [1, 8, 1]); false keeps a thread per element">,
    Option<"wgmmaSchedule", "wgmma-schedule", "std::string", /*default=*/"\"auto\"",
           "how gemm_wgmma and conv_wgmma share tiles between their consumer "
           "warpgroups: auto (the cost model), cooperative, pingpong or "
           "epilogue_warpgroups (GEMMs; convolutions take auto)">,
    Option<"wgmmaMulticast", "wgmma-multicast", "int64_t", /*default=*/"0",
           "blocks of a cluster that share gemm_wgmma's and conv_wgmma's B tiles "
           "by TMA multicast: 0 (the cost model), 1 or 2">,
    Option<"wgmmaBlocksPerSM", "wgmma-blocks-per-sm", "int64_t", /*default=*/"0",
           "blocks of gemm_wgmma and conv_wgmma a multiprocessor runs at once: 0 (the "
           "cost model), 1 or 2">,
    Option<"wgmmaRows", "wgmma-rows", "int64_t", /*default=*/"0",
           "rows of gemm_wgmma's tiles: 0 (the cost model: 128, or 192-row "
           "cooperative tiles with three consumer warpgroups), 128 or 192; "
           "implicit-GEMM convolutions keep 128">,
    Option<"wgmmaStreamK", "wgmma-stream-k", "bool", /*default=*/"false",
           "gemm_wgmma shares the tiles of its last waves by k-iterations where "
           "they fill the GPU partly (stream_k); false: slower on ResNet-50 at batch 32 "
           "and even on ViT's down-projection (2026-12-03)">,
    Option<"wgmmaSplitK", "wgmma-split-k", "bool", /*default=*/"false",
           "where gemm_wgmma's or conv_wgmma's tiles fill at most half the "
           "multiprocessors, clusters of two blocks split each cooperative tile's "
           "k-steps and add their partial sums in shared memory (split_k = 2); "
           "false: about 3 us slower a launch on the CNNs at batch 32 (2026-12-05)">,
    Option<"wgmmaFewRows", "wgmma-few-rows", "bool", /*default=*/"true",
           "GEMMs of one to three 128-row tiles (a transformer layer at batch 1) "
           "take gemm_wgmma's tiles where those of 128 x 64 fill a quarter of the "
           "multiprocessors, instead of gemm_split_k's mma.sync; false: GPT-2, BERT "
           "and ViT-B/16 at batch 1 took 1.18-1.31x as long on the H100 (2026-12-07)">,
    Option<"wgmmaFewRowsTiles", "wgmma-few-rows-tiles", "int64_t", /*default=*/"0",
           "the fewest 128 x 64 tiles that take wgmma-few-rows: 0 (a quarter of the "
           "multiprocessors: 768-wide projections at batch 1, 12 tiles, keep "
           "gemm_split_k) or a count">,
    Option<"wgmmaSwap", "wgmma-swap", "bool", /*default=*/"false",
           "the few-row GEMMs that wgmma-few-rows leaves to gemm_split_k (768-wide "
           "projections at batch 1) take gemm_wgmma_swap: the weight's rows as "
           "wgmma's M side, 64 a block, by 16 or 32 tokens, all of K a block, "
           "clusters of up to 4 blocks sharing each weight tile by TMA multicast "
           "(N % 64 == 0, a [N, K] B, no batch); false: its third build (two "
           "consumer warpgroups) is still slower on the 16-token tiles, 2026-12-07 "
           "(GPT-2's down-projection at batch 1 8.9 -> 11.2 us on the H100)">,
    Option<"wgmmaNarrow", "wgmma-narrow", "bool", /*default=*/"false",
           "gemm_wgmma's tiles (GEMMs and 1x1 convolutions, a [N, K] B, no "
           "batch) become 128 x 56 (wgmma m64n56k16) where that leaves the "
           "busiest block fewer outputs: ResNet-50's 2048 -> 512 at 7 x 7 in "
           "130 tiles where 128 x 64 makes 104 on 132 multiprocessors (false "
           "until timed on the GPU machine)">,
    Option<"wgmmaMulticastA", "wgmma-multicast-a", "bool", /*default=*/"false",
           "gemm_wgmma's tiles (GEMMs and 1x1 convolutions, a [N, K] B, no "
           "batch, two column tiles or more, no stream-K or split K) run in "
           "clusters of two blocks on consecutive column tiles of the same "
           "rows, each loading half of the shared A tile by TMA multicast "
           "(multicast_a), as cuBLAS's 1 x 2 clusters do on BERT's and ViT's "
           "batch-32 GEMMs; false: 0.4-1.9 us slower on every transformer "
           "GEMM at batch 32 and 9.6 -> 10.9 us on ResNet-50's 2048 -> 512, "
           "on the H100, 2026-12-08">,
    Option<"wgmmaSwapWide", "wgmma-swap-wide", "bool", /*default=*/"true",
           "GEMMs of 4 row tiles or more and K >= 512 that would split K over "
           "mma.sync (128 x 64 tiles under half the GPU) take gemm_wgmma_swap's "
           "wide token tiles (64 weight rows by 64 to 128 tokens) where those "
           "fill one wave with no more multiply-adds a multiprocessor "
           "(EfficientNet-B0's 7 x 7 projections at batch 32: 8.5-11.5 -> "
           "5.5-7.9 us on the H100, 2026-12-07)">,
    Option<"wgmmaResidualPrefetch", "wgmma-residual-prefetch", "bool", /*default=*/"false",
           "ping-pong 64-wide gemm_wgmma tiles that read a residual give up a "
           "stage (6 -> 5) so that each tile's residual slices are copied a tile "
           "ahead; false: slower on ResNet-50 at batch 32 (2026-12-04)">,
    Option<"wgmmaResidualRing", "wgmma-residual-ring", "bool", /*default=*/"true",
           "a cooperative gemm_wgmma tile whose epilogue reads "
           "one 16-bit residual takes it through the main loop's ring by TMA "
           "(residual_ring) and gives the staging's row-input half to one more "
           "stage where that makes room; false: the residual copied by rows, ViT's "
           "FFN down-projection 42.9 -> 48.0 us on the H100 (2026-12-05)">,
    Option<"attentionWgmma", "attention-wgmma", "bool", /*default=*/"true",
           "attention on Hopper with TMA and wgmma (attention_wgmma) where the head "
           "size is 64 or 128 and q, k and v are rows of their projections; false: "
           "attention_mma there too">,
    Option<"attentionOverlap", "attention-overlap", "bool", /*default=*/"true",
           "attention_wgmma runs each tile's softmax while the previous tile's "
           "P V is on the tensor cores (schedule overlapped); false: the "
           "cooperative schedule, softmax and products in turn">,
    Option<"attentionStages", "attention-stages", "int64_t", /*default=*/"0",
           "attention_wgmma's K/V ring: 0 (2 stages), 2, or 3 at a head size of 64 "
           "(a third tile of K and V in flight, 57 KiB a block)">,
    Option<"attentionPersistent", "attention-persistent", "bool", /*default=*/"true",
           "attention_wgmma on a persistent grid (grid_limit: the blocks resident at "
           "once), each block walking query blocks of heads with the next one's Q "
           "and first K/V tiles loading during this one's last; false: a block "
           "for each 64 queries of a head">,
    Option<"attentionRows", "attention-rows", "int64_t", /*default=*/"0",
           "queries a block of attention_mma or attention_wgmma takes: 0 (the cost "
           "model), 64 (4 warps; one consumer warpgroup) or 128 (8 warps; two "
           "consumer warpgroups: each K/V tile read once for twice the queries)">,
    Option<"attentionBlocksPerSM", "attention-blocks-per-sm", "int64_t", /*default=*/"0",
           "attention_wgmma's blocks a multiprocessor: 0 (three at a head size of "
           "64, two at 128) or 4 (at a head size of 64 and 64 queries: a fourth "
           "consumer warpgroup, with the cooperative schedule, which fits 96 "
           "registers a thread where the overlapped one spills)">,
    Option<"wgmmaCandidate", "wgmma-candidate", "int64_t", /*default=*/"-1",
           "-1: gemm_wgmma's and conv_wgmma's tile from the cost model; N >= 0: "
           "the N-th tile the cost model considered for each group (its own "
           "choice first, then the rest cheapest first; past the last, its own), "
           "so that a tuner compiling N = 0, 1, 2, ... times every group's "
           "candidates, each launch alone; with a residual through the ring, "
           "128 x 256 tiles too, which the cost model never takes unmeasured; "
           "for a GEMM, 192-row tiles narrower than 192 last">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "a remark per group: the variant taken and why the others were not">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnApplyKernelTuning : Pass<"kiln-apply-kernel-tuning", "mlir::func::FuncOp"> {
  let summary = "gives fusion groups the kernels a tuning file measured fastest";
  let description = [{
    A tuning file (`bench/tune_layers.py` writes one on the GPU machine)
    maps fusion groups, each named by a hash of its kind, its inputs' and
    results' types and its body (KernelTuning.h), to the `#kiln.kernel`
    configuration that was timed fastest for it. Each group whose key the
    file holds, and that has no `kiln.kernel` yet, gets that configuration;
    kiln-select-kernels, after this pass, keeps it. Other groups are left to
    the selection's cost model.

    The file records the primary target it was measured on (architecture
    and multiprocessors): a file of another target is an error, not a
    silent mismatch, as is a file that cannot be read or parsed, or an
    entry whose kernel is not a `#kiln.kernel` configuration.
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"\"",
           "the tuning file (JSON); empty: nothing to apply">,
    ListOption<"targets", "targets", "std::string",
               "the artifact's architectures (the first is the primary one the "
               "file must have been measured on); default sm_90a,sm_80">,
    Option<"multiprocessors", "multiprocessors", "int64_t", /*default=*/"0",
           "the primary target's multiprocessors (0: the architecture's)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "a remark per group that takes the file's configuration">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def KilnPlanMemory : Pass<"kiln-plan-memory", "mlir::func::FuncOp"> {
  let summary = "places every intermediate tensor in one arena, reusing space";
  let description = [{
    Each kernel result that is neither a function result (written straight
    into the caller's buffer) nor a constant (uploaded once with the
    weights) gets a byte offset in one device arena. A buffer lives from the
    kernel that writes it to its last reader; a reshape is a view and
    extends its source's life. Buffers are placed largest first at the
    lowest 256-byte-aligned offset that overlaps no buffer alive at the same
    time, so buffers with disjoint lifetimes share memory.

    Each kernel gets `kiln.offsets` (one per result, -1 for function
    results); the function gets `kiln.arena_bytes` (the peak) and
    `kiln.intermediate_bytes` (what no reuse would need).
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"256",
           "byte alignment of every buffer">,
  ];
}

#endif // KILN_PASSES_PASSES_TD
