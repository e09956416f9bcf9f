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

// The arithmetic a model is compiled to run in (kiln-set-precision, whose
// `precision` option and the tools' --precision take these names).
def Kiln_Precision : I32EnumAttr<"Precision",
    "the arithmetic a compiled model runs in", [
      // The model's own types.
      I32EnumAttrCase<"fp32", 0>,
      // fp32 data; GEMMs may round their operands to tf32 (tensor cores).
      I32EnumAttrCase<"tf32", 1>,
      // Floating-point values computed in fp16 / bf16 (statistics in fp32).
      I32EnumAttrCase<"fp16", 2>,
      I32EnumAttrCase<"bf16", 3>]> {
  let cppNamespace = "::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_PrecisionAttr : EnumAttr<Kiln_Dialect, Kiln_Precision, "precision"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Kernel configurations (kiln-select-kernels)
//===----------------------------------------------------------------------===//

def Kiln_KernelVariant : I32EnumAttr<"KernelVariant",
    "the kernel a fusion group runs as, within its family", [
      I32EnumAttrCase<"elementwise", 0>,
      I32EnumAttrCase<"reduction", 1>,
      I32EnumAttrCase<"normalization", 2>,
      I32EnumAttrCase<"pooling", 3>,
      // GEMMs (and 1x1 convolutions read as GEMMs).
      I32EnumAttrCase<"gemm_simt", 4>,
      I32EnumAttrCase<"gemm_mma", 5>,
      I32EnumAttrCase<"gemm_wgmma", 6>,
      I32EnumAttrCase<"gemm_split_k", 7>,
      // Implicit-GEMM and depthwise convolutions.
      I32EnumAttrCase<"conv_simt", 8>,
      I32EnumAttrCase<"conv_mma", 9>,
      I32EnumAttrCase<"conv_split_k", 10>,
      I32EnumAttrCase<"conv_depthwise", 11>,
      I32EnumAttrCase<"attention_mma", 12>,
      I32EnumAttrCase<"attention_simt", 13>,
      // A row per warp, held in registers (rows of up to 1024 elements).
      I32EnumAttrCase<"normalization_warp", 14>,
      // Implicit-GEMM convolution on Hopper: TMA boxes of NHWC pixels, wgmma.
      I32EnumAttrCase<"conv_wgmma", 15>,
      // Few input channels (a stem): the whole weight and an im2col tile in
      // shared memory, mma.sync over all of K.
      I32EnumAttrCase<"conv_stem", 16>,
      // fp32 data on tf32 tensor cores (mma.sync m16n8k8): GEMMs marked
      // kiln.tf32 (--precision tf32).
      I32EnumAttrCase<"gemm_tf32", 17>,
      // Few columns (N <= 64) and a short K (<= 128): a thread per row on
      // CUDA cores, the weight in shared memory (kiln_gemm_narrow.cuh).
      I32EnumAttrCase<"gemm_narrow", 18>,
      // At most 32 rows (a squeeze-and-excitation block's 1x1
      // convolutions, a batch-1 classifier): a block per output column, K
      // across a warp's lanes (kiln_gemm_gemv.cuh).
      I32EnumAttrCase<"gemm_gemv", 19>,
      // Attention on Hopper (kiln_attention_sm90.cuh): TMA loads of Q, K
      // and V through tensor maps of the projections, wgmma for both
      // products, a producer warp and a consumer warpgroup.
      I32EnumAttrCase<"attention_wgmma", 20>,
      // Bandwidth-bound GEMMs (a short K or few columns over many rows:
      // MobileNet's 1x1 convolutions): the weight in shared memory, tiles of
      // A streamed through a cp.async ring, mma.sync, two blocks a
      // multiprocessor (kiln_gemm_stream.cuh).
      I32EnumAttrCase<"gemm_stream", 21>,
      // Few rows on Hopper (a transformer layer at batch 1): the weight's
      // rows as wgmma's M side, 64 a block, the tokens as its N side (16 or
      // 32), all of K a block, clusters sharing the weight tile by TMA
      // multicast (kiln_gemm_swap_sm90.cuh).
      I32EnumAttrCase<"gemm_wgmma_swap", 22>]> {
  let cppNamespace = "::kiln";
  let genSpecializedAttr = 0;
}

def Kiln_WgmmaSchedule : I32EnumAttr<"WgmmaSchedule",
    "how the consumer warpgroups of a Hopper kernel order their work", [
      // GEMM/convolution: both multiply one tile, 64 rows each, then run its
      // epilogue together. Attention: each tile's products and softmax one
      // after another.
      I32EnumAttrCase<"cooperative", 0>,
      // Each owns every other tile; one's main loop overlaps the other's
      // epilogue.
      I32EnumAttrCase<"pingpong", 1>,
      // attention_wgmma: a tile's softmax runs while the previous tile's
      // P V is on the tensor cores.
      I32EnumAttrCase<"overlapped", 2>,
      // gemm_wgmma: the consumers run cooperative main loops only and hand
      // each tile's accumulators through shared memory to two more
      // warpgroups, whose epilogue runs beside the next main loop.
      I32EnumAttrCase<"epilogue_warpgroups", 3>]> {
  let cppNamespace = "::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_WgmmaScheduleParameter : EnumParameter<Kiln_WgmmaSchedule> {
  let defaultValue = "::kiln::WgmmaSchedule::cooperative";
}

// A tile as `[rows, columns, k]`.
def Kiln_TileParameter : OptionalArrayRefParameter<"int64_t"> {
  let printer = [{
    $_printer << '[';
    ::llvm::interleaveComma($_self, $_printer);
    $_printer << ']';
  }];
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::SmallVector<int64_t>> {
    ::llvm::SmallVector<int64_t> values;
    if (::mlir::failed($_parser.parseCommaSeparatedList(
            ::mlir::AsmParser::Delimiter::Square,
            [&]() { return $_parser.parseInteger(values.emplace_back()); })))
      return ::mlir::failure();
    return values;
  }() }];
}

def Kiln_KernelConfigAttr : AttrDef<Kiln_Dialect, "KernelConfig"> {
  let mnemonic = "kernel";
  let summary = "how a fusion group is lowered to a kernel";
  let description = [{
    Attached to a `kiln.fusion` op as `kiln.kernel` by `kiln-select-kernels`
    (which keeps one already there, so a test or a tuner can force it). The
    code generator makes no choice of its own: it emits `variant` with these
    parameters, or reports why the group cannot run as that variant.

    - `tile`: the output tile (rows, columns) and the k-tile width of the
      main loop, as the kernel template implements it.
    - `stages`: the depth of the shared-memory pipeline (0: the template's).
    - `split_k`: blocks of a thread-block cluster that split K (1: none).
      For `gemm_wgmma` and `conv_wgmma`, 2: both blocks of a cluster take
      the same cooperative tile (128 rows, at most 128 wide), each half of
      its k-steps; block r keeps rows 64r .. 64r + 63, adds the peer's
      partial sums of them from its shared memory and runs their epilogue.
    - `grid_limit`: the most blocks of a persistent or grid-stride launch
      (0: one block per tile).
    - `pixel_tile`: for `conv_wgmma`, the output pixels a tile's rows cover,
      as `[images, rows, columns]` (at most 128 in all): each k-step loads
      that box of input pixels, shifted by the filter tap, with one TMA copy.
    - `schedule`: for `gemm_wgmma` and `conv_wgmma`, `cooperative` (the
      default: both consumer warpgroups on one tile) or `pingpong` (each on
      its own tile, taking turns on the tensor cores; tiles 64 or 128 wide),
      and for `gemm_wgmma` `epilogue_warpgroups` (both on one tile's main
      loop, two more warpgroups on the previous tile's epilogue; 128 rows,
      64 or 128 wide); for `attention_wgmma`, `cooperative` (each tile's
      products and softmax in turn) or `overlapped` (tile t's softmax while
      tile t-1's P V runs).
    - `multicast`: for `gemm_wgmma` and `conv_wgmma`, the blocks of a
      thread-block cluster (1 or 2) that take consecutive row tiles of the
      same columns and share each B tile, every block loading its share and
      multicasting it to all of them (1: no cluster).
    - `multicast_a`: for `gemm_wgmma` with `multicast = 2`, the pair takes
      consecutive column tiles of the same rows instead and shares each A
      tile, every block loading half of its rows (a [N, K] B, no batch;
      cooperative or ping-pong, 128 or 192 rows; no split_k or stream_k).
    - `blocks_per_sm`: for `gemm_wgmma` and `conv_wgmma`, the blocks that
      share a multiprocessor (1 or 2): two give an epilogue-bound kernel
      twice the warps; they need their stages to fit in shared memory twice
      and, compiled within 80 registers a thread, cooperative 64-wide tiles.
      For `conv_stem` on input rows (tile [128, ...]), 1, 2 or 4: its
      launch bounds' minimum, within its shared memory.
      For `gemm_stream` (tile [128, 64, K padded to 16], 2 to 4 stages), 1
      to 4: its launch bounds' minimum. For `conv_depthwise`, 1 to 8: its
      launch bounds' minimum (8: 32 registers a thread).
    - `stream_k`: for `gemm_wgmma` and `conv_wgmma` (cooperative, no
      multicast, one block a multiprocessor), the blocks share the tiles of
      the last waves (or, under one wave, all of them) by
      k-iterations rather than by tiles, finishing split tiles through a
      workspace the launch reserves past the arena (kiln_gemm_sm90.cuh).
    - `runtime_sizes`: for `gemm_wgmma` and `gemm_split_k` without a
      batch, the kernel takes M, N and K as launch arguments instead of
      constants in its source, so that every GEMM of one configuration and
      epilogue, whatever its sizes, runs one kernel (one compile, one
      kernel-cache entry). Its epilogue may read only the bias by column
      and inputs of the result's shape at the element's own index; N is a
      multiple of 8. For `normalization` and `normalization_warp`, the row
      count alone (the row length stays in the source), where no input is
      indexed by the row.
    - `residual_ring`: for `gemm_wgmma` (cooperative; no cluster,
      stream-K or split K, one block a multiprocessor, sizes in the
      source), the epilogue's one 16-bit row input (a
      residual) comes through the main loop's ring by TMA after each
      tile's k-steps instead of being copied in by rows, where the
      epilogue runs on the accumulators' registers (a 16-bit result, N a
      multiple of 8, a [N, K] B, no batch); elsewhere it is copied. The
      staging then keeps only its results' half, and `stages` may count
      the stage that half makes room for (a kernel whose residual is
      copied is refused such a ring).

    `gemm_wgmma` and `conv_wgmma` run TMA + wgmma in an sm_90a image and, from the same
    source on the same persistent grid, the mma.sync loop in the other
    images, whose launches ask for no dynamic shared memory.

    Example: `#kiln.kernel<variant = gemm_split_k, tile = [64, 64, 64],
    stages = 3, split_k = 4>`.
  }];
  let parameters = (ins
    EnumParameter<Kiln_KernelVariant>:$variant,
    Kiln_TileParameter:$tile,
    DefaultValuedParameter<"int64_t", "0">:$stages,
    DefaultValuedParameter<"int64_t", "1">:$split_k,
    DefaultValuedParameter<"int64_t", "0">:$grid_limit,
    Kiln_TileParameter:$pixel_tile,
    Kiln_WgmmaScheduleParameter:$schedule,
    DefaultValuedParameter<"int64_t", "1">:$multicast,
    DefaultValuedParameter<"int64_t", "1">:$blocks_per_sm,
    DefaultValuedParameter<"bool", "false">:$stream_k,
    DefaultValuedParameter<"bool", "false">:$runtime_sizes,
    DefaultValuedParameter<"bool", "false">:$residual_ring,
    DefaultValuedParameter<"bool", "false">:$multicast_a);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Launches (kiln-lower-launches)
//===----------------------------------------------------------------------===//

def Kiln_TensorMapAttr : AttrDef<Kiln_Dialect, "TensorMap"> {
  let mnemonic = "tensor_map";
  let summary = "a TMA view of a launch input the runtime encodes";
  let description = [{
    Input `input` of the launch seen as a packed tensor of `dims` (innermost
    first, 2 to 5 of them), loaded in boxes of `box` elements traversed with
    `strides` (empty: all 1), 128-byte swizzle. The kernel takes it by value
    before its pointer parameters.

    Example: `#kiln.tensor_map<input = 0, dims = [768, 4096], box = [64, 128]>`.
  }];
  let parameters = (ins
    "int64_t":$input,
    Kiln_TileParameter:$dims,
    Kiln_TileParameter:$box,
    Kiln_TileParameter:$strides);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Kiln_LaunchConfigAttr : AttrDef<Kiln_Dialect, "LaunchConfig"> {
  let mnemonic = "launch";
  let summary = "how one target image launches a kernel";
  let description = [{
    One per target image of a `kiln.launch`: the `kiln.cuda_kernel` it runs
    in the image named `arch`, its grid, its block of `block` threads, its
    dynamic shared memory in bytes, the thread-block cluster its image
    compiles in (`cluster`, empty: none), the tensor maps it takes and the
    64-bit integers it passes after its pointers (`scalars`: the sizes of a
    kernel that takes them at run time, so that one image serves every
    shape of its configuration). Images
    differ where the kernel's code does: a Hopper kernel's sm_90a image runs
    a TMA pipeline in dynamic shared memory and clusters; its other images
    run the mma.sync loop of the same source with neither.

    Example: `#kiln.launch<arch = "sm_90a", kernel = @kiln_5A0C, grid = [132, 1, 1],
    block = 384, shared = 201728, tensor_maps = [#kiln.tensor_map<...>]>`.
  }];
  let parameters = (ins
    StringRefParameter<"the image's architecture">:$arch,
    "::mlir::FlatSymbolRefAttr":$kernel,
    Kiln_TileParameter:$grid,
    "int64_t":$block,
    DefaultValuedParameter<"int64_t", "0">:$shared,
    Kiln_TileParameter:$cluster,
    OptionalParameter<"::mlir::ArrayAttr">:$tensor_maps,
    Kiln_TileParameter:$scalars);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

#endif // KILN_DIALECT_KILN_KILNBASE_TD
