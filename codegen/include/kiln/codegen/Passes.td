//===- Passes.td - kiln's code generation passes -----------*- tablegen -*-===//

#ifndef KILN_CODEGEN_PASSES_TD
#define KILN_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnLowerLaunches : Pass<"kiln-lower-launches", "mlir::ModuleOp"> {
  let summary = "lowers fusion groups to kernels and their launches, per target image";
  let description = [{
    The last stage before the artifact. Each `kiln.fusion` (with the
    `kiln.kernel` configuration kiln-select-kernels gave it) becomes a
    `kiln.launch` with the same operands and results, its memory plan
    (`kiln.offsets`) and one `#kiln.launch` configuration per target image;
    the kernel's CUDA source becomes a `kiln.cuda_kernel` of the module,
    named after the source's hash and shared by identical groups. The
    artifact writer serializes these ops and nothing else; `kiln-compile
    --emit=launches` prints them.

    An image's configuration differs where its code does: a Hopper kernel's
    TMA pipeline (dynamic shared memory) and its thread-block cluster exist
    in the wgmma image only; the other images run the mma.sync loop of the
    same source without them.

    Before (`targets=sm_90a,sm_80`):
    ```mlir
    %0 = kiln.fusion elementwise ins(%a : tensor<1024xf32>) {kiln.kernel = ...,
      kiln.offsets = array<i64: 0>} -> tensor<1024xf32> { ... }
    ```
    After:
    ```mlir
    kiln.cuda_kernel @kiln_0123456789ABCDEF elementwise source "..."
    ...
    %0 = kiln.launch elementwise ins(%a : tensor<1024xf32>)
      images [#kiln.launch<arch = "sm_90a", kernel = @kiln_0123456789ABCDEF,
                           grid = [4, 1, 1], block = 256>,
              #kiln.launch<arch = "sm_80", kernel = @kiln_0123456789ABCDEF,
                           grid = [4, 1, 1], block = 256>]
      {kiln.offsets = array<i64: 0>} -> tensor<1024xf32>
    ```
  }];
  let options = [
    ListOption<"targets", "targets", "std::string",
               "GPU architectures of the artifact, newest first (default sm_90a,sm_80)">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

#endif // KILN_CODEGEN_PASSES_TD
