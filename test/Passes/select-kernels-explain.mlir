// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{explain=true}))" -verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{explain=true split-k-min-k=512}))" 2>&1 | FileCheck %s --check-prefix=KNOB
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{explain=true wgmma-matmul=false}))" 2>&1 | FileCheck %s --check-prefix=NOMATMUL
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{targets=sm_75}))" 2>&1 | FileCheck %s --check-prefix=SM75
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{targets=sm90}))" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{split-k-k-tile=40}))" 2>&1 | FileCheck %s --check-prefix=TILE

// With `explain`, each group says what was taken and why the others were
// not; a written configuration says it was kept.

// CHECK-LABEL: func.func @split
// The split-K knobs are the pass's options: with 512 of K per split at
// least, 768 of K is not split.
//  KNOB: split 1
// fp16 needs tensor cores, which sm_75 lacks: an error naming both.
// SM75: error: 'kiln.fusion' op fp16/bf16 GEMMs need tensor cores (sm_80 or newer); sm_75 has none
// UNKNOWN: error: unknown GPU architecture 'sm90' (known: native, sm_100a
// TILE: error: split-K options: --split-k-k-tile must be a positive multiple of 16
func.func @split(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  // expected-remark @+1 {{gemm_split_k: 128 x 768 x 768 is 3 tiles of 128 x 256, under a quarter of 132 multiprocessors; split 4 (24 tiles of 64 x 64, at most 264 blocks, K / split >= 128)}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// A matmul's [K, N] B feeds TMA + wgmma as an MN-major operand (mma.sync
// with wgmma-matmul=false).
// CHECK-LABEL: func.func @matmul
// NOMATMUL: remark: gemm_mma: 4096 x 3072 x 768; not gemm_split_k: 384 tiles of 128 x 256 fill a quarter of 132 multiprocessors; not gemm_wgmma: wgmma-matmul is off
func.func @matmul(%x: tensor<4096x768xf16>, %w: tensor<768x3072xf16>) -> tensor<4096x3072xf16> {
  // expected-remark @+1 {{gemm_wgmma: 4096 x 3072 x 768 on sm_90a; pingpong 128 x 128 tiles, 5 stages}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<768x3072xf16>) -> tensor<4096x3072xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x3072xf16>):
    %l = kiln.matmul %a, %bw : (tensor<4096x768xf16>, tensor<768x3072xf16>) -> tensor<4096x3072xf16>
    kiln.yield %l : tensor<4096x3072xf16>
  }
  return %0 : tensor<4096x3072xf16>
}

// -----

// Not with N % 8 != 0 (B's rows are not 16-byte strides): mma.sync, and why.
// CHECK-LABEL: func.func @ragged_matmul
func.func @ragged_matmul(%x: tensor<4096x768xf16>, %w: tensor<768x3070xf16>) -> tensor<4096x3070xf16> {
  // expected-remark @+1 {{gemm_mma: 4096 x 3070 x 768; not gemm_split_k: K % 8 (or N % 8 for a [K, N] B) is not 0; not gemm_wgmma: it needs K % 8 == 0 and, for a [K, N] B, N % 8 == 0 (TMA's 16-byte strides)}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<768x3070xf16>) -> tensor<4096x3070xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x3070xf16>):
    %l = kiln.matmul %a, %bw : (tensor<4096x768xf16>, tensor<768x3070xf16>) -> tensor<4096x3070xf16>
    kiln.yield %l : tensor<4096x3070xf16>
  }
  return %0 : tensor<4096x3070xf16>
}

// -----

// A batch of attention-like products, each operand batched whole: wgmma,
// every batch's tiles on one grid (mma.sync with wgmma-matmul=false). Broadcast along
// one batch dimension of two: mma.sync either way.
// CHECK-LABEL: func.func @bmm
// NOMATMUL: remark: gemm_mma: 128 x 128 x 64 (batch 384); {{.*}}; not gemm_wgmma: wgmma-matmul is off
// NOMATMUL: remark: gemm_mma: 128 x 128 x 64 (batch 384); {{.*}}; not gemm_wgmma: an operand broadcast along some batch dimensions and not others
func.func @bmm(%x: tensor<32x12x128x64xf16>, %w: tensor<32x12x64x128xf16>) -> tensor<32x12x128x128xf16> {
  // expected-remark @+1 {{gemm_wgmma: 128 x 128 x 64 (batch 384) on sm_90a}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<32x12x128x64xf16>, tensor<32x12x64x128xf16>) -> tensor<32x12x128x128xf16> {
  ^bb0(%a: tensor<32x12x128x64xf16>, %bw: tensor<32x12x64x128xf16>):
    %l = kiln.batch_matmul %a, %bw : (tensor<32x12x128x64xf16>, tensor<32x12x64x128xf16>) -> tensor<32x12x128x128xf16>
    kiln.yield %l : tensor<32x12x128x128xf16>
  }
  return %0 : tensor<32x12x128x128xf16>
}

// -----

// CHECK-LABEL: func.func @partly_broadcast_bmm
func.func @partly_broadcast_bmm(%x: tensor<32x1x128x64xf16>, %w: tensor<32x12x64x128xf16>) -> tensor<32x12x128x128xf16> {
  // expected-remark @+1 {{not gemm_wgmma: an operand broadcast along some batch dimensions and not others}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<32x1x128x64xf16>, tensor<32x12x64x128xf16>) -> tensor<32x12x128x128xf16> {
  ^bb0(%a: tensor<32x1x128x64xf16>, %bw: tensor<32x12x64x128xf16>):
    %l = kiln.batch_matmul %a, %bw : (tensor<32x1x128x64xf16>, tensor<32x12x64x128xf16>) -> tensor<32x12x128x128xf16>
    kiln.yield %l : tensor<32x12x128x128xf16>
  }
  return %0 : tensor<32x12x128x128xf16>
}

// -----

// CHECK-LABEL: func.func @kept
func.func @kept(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  // expected-remark @+1 {{kept the configuration written in the input}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_mma, tile = [128, 128, 32]>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}
