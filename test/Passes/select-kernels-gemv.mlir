// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=DEFAULT
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{gemm-gemv-rows=32}))" | FileCheck %s --check-prefix=ON
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{gemm-gemv-rows=0}))" | FileCheck %s --check-prefix=OFF
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{gemm-gemv-rows=33}))" 2>&1 | FileCheck %s --check-prefix=BAD

// gemm_gemv, a block per column with K across a warp's lanes, for GEMMs of
// at most gemm-gemv-rows rows (8 by default): a batch-1 classifier (1 x
// 1000 x 1280, 2.5 MiB of reads) by default; with 32 rows also
// EfficientNet-B0's squeeze-and-excitation pair at batch 32 (240 -> 10,
// then 10 -> 240: K not a multiple of 8 takes it too). With 0, none.
// DEFAULT-LABEL: func.func @squeeze_excite(
//       DEFAULT:   #kiln.kernel<variant = gemm_split_k
//       DEFAULT:   #kiln.kernel<variant = gemm_mma
//       DEFAULT:   #kiln.kernel<variant = gemm_gemv>
// ON-LABEL: func.func @squeeze_excite(
//       ON:   #kiln.kernel<variant = gemm_gemv>
//       ON:   #kiln.kernel<variant = gemm_gemv>
//       ON:   #kiln.kernel<variant = gemm_gemv>
// OFF-LABEL: func.func @squeeze_excite(
//   OFF-NOT:   gemm_gemv
// BAD: error: --gemm-gemv-rows must be 0 (never) to 32 (the kernel's most), got 33
func.func @squeeze_excite(%x: tensor<32x1x1x240xf16>, %w: tensor<10x1x1x240xf16>, %b: tensor<10xf16>,
                          %v: tensor<240x1x1x10xf16>, %c: tensor<240xf16>,
                          %f: tensor<1x1280xf16>, %fw: tensor<1000x1280xf16>)
    -> (tensor<32x1x1x240xf16>, tensor<1x1000xf16>) {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<32x1x1x240xf16>, tensor<10x1x1x240xf16>, tensor<10xf16>) -> tensor<32x1x1x10xf16> {
  ^bb0(%a: tensor<32x1x1x240xf16>, %aw: tensor<10x1x1x240xf16>, %ab: tensor<10xf16>):
    %y = kiln.conv2d %a, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x1x1x240xf16>, tensor<10x1x1x240xf16>, tensor<10xf16>) -> tensor<32x1x1x10xf16>
    %s = kiln.silu %y : tensor<32x1x1x10xf16>
    kiln.yield %s : tensor<32x1x1x10xf16>
  }
  %1 = kiln.fusion conv_epilogue ins(%0, %v, %c : tensor<32x1x1x10xf16>, tensor<240x1x1x10xf16>, tensor<240xf16>) -> tensor<32x1x1x240xf16> {
  ^bb0(%a: tensor<32x1x1x10xf16>, %av: tensor<240x1x1x10xf16>, %ac: tensor<240xf16>):
    %y = kiln.conv2d %a, %av, %ac strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<32x1x1x10xf16>, tensor<240x1x1x10xf16>, tensor<240xf16>) -> tensor<32x1x1x240xf16>
    %s = kiln.sigmoid %y : tensor<32x1x1x240xf16>
    kiln.yield %s : tensor<32x1x1x240xf16>
  }
  %2 = kiln.fusion gemm_epilogue ins(%f, %fw : tensor<1x1280xf16>, tensor<1000x1280xf16>) -> tensor<1x1000xf16> {
  ^bb0(%a: tensor<1x1280xf16>, %aw: tensor<1000x1280xf16>):
    %l = kiln.linear %a, %aw : (tensor<1x1280xf16>, tensor<1000x1280xf16>) -> tensor<1x1000xf16>
    kiln.yield %l : tensor<1x1000xf16>
  }
  return %1, %2 : tensor<32x1x1x240xf16>, tensor<1x1000xf16>
}

// -----

// Not gemv: 33 rows; a batch-32 classifier (1000 x 32 x 2048 x 2 bytes:
// 125 MiB of reads of A); a [K, N] weight (matmul).
// ON-LABEL: func.func @not_gemv(
//   ON-NOT:   gemm_gemv
func.func @not_gemv(%x: tensor<33x240xf16>, %w: tensor<10x240xf16>,
                    %f: tensor<32x2048xf16>, %fw: tensor<1000x2048xf16>,
                    %m: tensor<8x64xf16>, %mw: tensor<64x32xf16>)
    -> (tensor<33x10xf16>, tensor<32x1000xf16>, tensor<8x32xf16>) {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<33x240xf16>, tensor<10x240xf16>) -> tensor<33x10xf16> {
  ^bb0(%a: tensor<33x240xf16>, %aw: tensor<10x240xf16>):
    %l = kiln.linear %a, %aw : (tensor<33x240xf16>, tensor<10x240xf16>) -> tensor<33x10xf16>
    kiln.yield %l : tensor<33x10xf16>
  }
  %1 = kiln.fusion gemm_epilogue ins(%f, %fw : tensor<32x2048xf16>, tensor<1000x2048xf16>) -> tensor<32x1000xf16> {
  ^bb0(%a: tensor<32x2048xf16>, %aw: tensor<1000x2048xf16>):
    %l = kiln.linear %a, %aw : (tensor<32x2048xf16>, tensor<1000x2048xf16>) -> tensor<32x1000xf16>
    kiln.yield %l : tensor<32x1000xf16>
  }
  %2 = kiln.fusion gemm_epilogue ins(%m, %mw : tensor<8x64xf16>, tensor<64x32xf16>) -> tensor<8x32xf16> {
  ^bb0(%a: tensor<8x64xf16>, %aw: tensor<64x32xf16>):
    %l = kiln.matmul %a, %aw : (tensor<8x64xf16>, tensor<64x32xf16>) -> tensor<8x32xf16>
    kiln.yield %l : tensor<8x32xf16>
  }
  return %0, %1, %2 : tensor<33x10xf16>, tensor<32x1000xf16>, tensor<8x32xf16>
}
