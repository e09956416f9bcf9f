// RUN: kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s
// RUN: kiln-translate --kiln-to-sm90a-ptx %s --split-input-file | FileCheck %s --check-prefixes=PTX,PTXHALF2
// RUN: env KILN_EPILOGUE_FRAGMENTS=0 kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s --check-prefix=OFF
// RUN: env KILN_EPILOGUE_FRAGMENTS=columns kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s --check-prefix=COLUMNS
// RUN: env KILN_EPILOGUE_FRAGMENTS=late-residual kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s --check-prefix=LATE
// RUN: env KILN_EPILOGUE_FRAGMENTS=late-residual kiln-translate --kiln-to-sm90a-ptx %s --split-input-file | FileCheck %s --check-prefix=LATEPTX
// RUN: env KILN_GELU_ERF=tail kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s --check-prefix=TAIL
// RUN: env KILN_GELU_ERF=tail kiln-translate --kiln-to-sm90a-ptx %s --split-input-file | FileCheck %s --check-prefix=PTX
// RUN: env KILN_EPILOGUE_HALF2=0 kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s --check-prefix=FLOAT

// The Hopper main loop runs an epilogue on the accumulators' registers
// (kFragments) where it has one 16-bit result at its own index, rows of
// whole 16-byte chunks (N % 8 == 0) and at most one row-varying input, of
// 16 bits: each pair of columns is rounded into a register, stmatrix
// gathers them in shared memory, and 16-byte stores write rows; the row
// input comes in by 16-byte row copies and ldmatrix. Anything else keeps
// the staged fp32 epilogue (kFragments = false).

// A transformer's FFN up-projection: bias + GELU, N = 200 (ragged in the
// 128-wide tile, a multiple of 8). The fragments take the erf GELU on each
// rounded pair in half2 arithmetic (packed_base() is element() up to the
// GELU); KILN_EPILOGUE_HALF2=0 keeps the fp32 GELU of element(), and
// KILN_GELU_ERF=tail its tail form (diagnostics for timing and checking).
// CHECK-LABEL: // === kernel up_k0
//   CHECK-NOT:   accumulator_value
//       CHECK:   kiln::approx::gelu_erf(
// TAIL-LABEL: // === kernel up_k0
//       TAIL:   kiln::approx::gelu_erf_tail(
//       TAIL:     compute_pair(m, n, acc0, acc1, first, second);
//       CHECK:   static constexpr bool kFragments = true;
//  CHECK-NEXT:   static constexpr bool kRowInput = false;
//  CHECK-NEXT:   static constexpr bool kRowInputEarly = false;
//  CHECK-NEXT:   float packed_base(int m, int n, float acc) const {
//       CHECK:     return (acc + kiln::to_float(in2[n]));
//       CHECK:   unsigned compute_packed(int m, int n, float acc0, float acc1, unsigned inputs) const {
//  CHECK-NEXT:     const float first = packed_base(m, n, acc0), second = packed_base(m, n + 1, acc1);
//  CHECK-NEXT:     unsigned packed = kiln::pack_pair<__half>(first, second);
//  CHECK-NEXT:     packed = kiln::approx::gelu_erf_half2(packed);
//  CHECK-NEXT:     return packed;
//       CHECK:   void store_chunk(int m, int n, uint4 chunk) const {
//       CHECK:     *reinterpret_cast<uint4 *>(out0 + idx) = chunk;
//       CHECK:   kiln::sm90::wgmma_gemm<__half, 128, 5
// FLOAT-LABEL: // === kernel up_k0
//   FLOAT-NOT:   packed_base
//       FLOAT:   unsigned compute_packed(int m, int n, float acc0, float acc1, unsigned inputs) const {
//       FLOAT:     compute_pair(m, n, acc0, acc1, first, second);
//       FLOAT:     unsigned packed = kiln::pack_pair<__half>(first.r0, second.r0);
//  FLOAT-NEXT:     return packed;
// PTX-LABEL: // === ptx up_k0
//  PTXHALF2: ex2.approx.f16x2
//       PTX: stmatrix.sync.aligned.m8n8.x4.shared.b16
//       PTX: st.global.v4
// OFF-LABEL: // === kernel up_k0
//       OFF:   static constexpr bool kFragments = false;
//   OFF-NOT:   compute_packed
func.func @up(%x: tensor<300x64xf16>, %w: tensor<200x64xf16>, %b: tensor<200xf16>) -> tensor<300x200xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<300x64xf16>, tensor<200x64xf16>, tensor<200xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 4>} -> tensor<300x200xf16> {
  ^bb0(%a: tensor<300x64xf16>, %bw: tensor<200x64xf16>, %bb: tensor<200xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<300x64xf16>, tensor<200x64xf16>, tensor<200xf16>) -> tensor<300x200xf16>
    %g = kiln.gelu %l : tensor<300x200xf16>
    kiln.yield %g : tensor<300x200xf16>
  }
  return %0 : tensor<300x200xf16>
}

// -----

// A convolution with bias and ReLU, 72 output channels: rows found by
// shuffles, the same fragments.
// CHECK-LABEL: // === kernel conv_k0
//       CHECK:   static constexpr bool kFragments = true;
//       CHECK:     unsigned packed = kiln::pack_pair<__nv_bfloat16>(first.r0, second.r0);
//       CHECK:   kiln::conv::conv_wgmma<
// PTX-LABEL: // === ptx conv_k0
//       PTX: stmatrix.sync.aligned.m8n8.x4.shared.b16
func.func @conv(%x: tensor<2x9x9x16xbf16>, %w: tensor<72x3x3x16xbf16>, %b: tensor<72xbf16>) -> tensor<2x9x9x72xbf16> {
  %0 = kiln.fusion conv_epilogue ins(%x, %w, %b : tensor<2x9x9x16xbf16>, tensor<72x3x3x16xbf16>, tensor<72xbf16>) {kiln.kernel = #kiln.kernel<variant = conv_wgmma, tile = [128, 128, 64], stages = 4, grid_limit = 132, pixel_tile = [1, 4, 8]>} -> tensor<2x9x9x72xbf16> {
  ^bb0(%ax: tensor<2x9x9x16xbf16>, %aw: tensor<72x3x3x16xbf16>, %ab: tensor<72xbf16>):
    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<2x9x9x16xbf16>, tensor<72x3x3x16xbf16>, tensor<72xbf16>) -> tensor<2x9x9x72xbf16>
    %r = kiln.relu %y : tensor<2x9x9x72xbf16>
    kiln.yield %r : tensor<2x9x9x72xbf16>
  }
  return %0 : tensor<2x9x9x72xbf16>
}

// -----

// N = 204 is even but not a multiple of 8: its rows do not split into
// 16-byte chunks, so the staged epilogue in column pairs stays.
// CHECK-LABEL: // === kernel ragged_k0
//       CHECK:   static constexpr bool kPairs = true;
//       CHECK:   static constexpr bool kFragments = false;
//   CHECK-NOT:   compute_packed
//       CHECK:   kiln::sm90::wgmma_gemm<
func.func @ragged(%x: tensor<300x64xf16>, %w: tensor<204x64xf16>, %b: tensor<204xf16>) -> tensor<300x204xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<300x64xf16>, tensor<204x64xf16>, tensor<204xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 4>} -> tensor<300x204xf16> {
  ^bb0(%a: tensor<300x64xf16>, %bw: tensor<204x64xf16>, %bb: tensor<204xf16>):
    %l = kiln.linear %a, %bw, %bb : (tensor<300x64xf16>, tensor<204x64xf16>, tensor<204xf16>) -> tensor<300x204xf16>
    kiln.yield %l : tensor<300x204xf16>
  }
  return %0 : tensor<300x204xf16>
}

// -----

// A residual is a row-varying input: copied in by rows (row_input_at) and
// handed over two at a time, the first slice copied before the main loop's
// wgmmas (none between them and the epilogue's first ldmatrix);
// KILN_EPILOGUE_FRAGMENTS=columns keeps it staged, =late-residual copies
// the first slice when the epilogue starts, after the wgmmas.
// CHECK-LABEL: // === kernel residual_k0
//       CHECK:   static constexpr bool kFragments = true;
//  CHECK-NEXT:   static constexpr bool kRowInput = true;
//  CHECK-NEXT:   static constexpr bool kRowInputEarly = true;
//       CHECK:   const void *row_input_at(int m, int n) const {
//       CHECK:     return in2 + idx;
//       CHECK:   unsigned compute_packed(int m, int n, float acc0, float acc1, unsigned inputs) const {
//       CHECK:     const kiln::Pair<__half> pair = *reinterpret_cast<const kiln::Pair<__half> *>(&inputs);
//  CHECK-NEXT:     const float first = packed_base(m, n, acc0, pair.x), second = packed_base(m, n + 1, acc1, pair.y);
//  CHECK-NEXT:     unsigned packed = kiln::pack_pair<__half>(first, second);
//  CHECK-NEXT:     packed = kiln::add_half2(packed, inputs);
//  CHECK-NEXT:     return packed;
// FLOAT-LABEL: // === kernel residual_k0
//       FLOAT:     const Values first = element(m, n, acc0, pair.x), second = element(m, n + 1, acc1, pair.y);
//  FLOAT-NEXT:     unsigned packed = kiln::pack_pair<__half>(first.r0, second.r0);
//  FLOAT-NEXT:     return packed;
// PTX-LABEL: // === ptx residual_k0
//       PTX: cp.async.cg.shared.global
//       PTX: wgmma.mma_async
//   PTX-NOT: cp.async.cg.shared.global
//       PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
//       PTX: stmatrix.sync.aligned.m8n8.x4.shared.b16
// LATE-LABEL: // === kernel residual_k0
//       LATE:   static constexpr bool kRowInputEarly = false;
// LATEPTX-LABEL: // === ptx residual_k0
//   LATEPTX-NOT: cp.async.cg.shared.global
//       LATEPTX: wgmma.mma_async
//       LATEPTX: cp.async.cg.shared.global
//       LATEPTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// COLUMNS-LABEL: // === kernel residual_k0
//       COLUMNS:   static constexpr bool kFragments = false;
func.func @residual(%x: tensor<300x64xf16>, %w: tensor<256x64xf16>, %r: tensor<300x256xf16>) -> tensor<300x256xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<300x64xf16>, tensor<256x64xf16>, tensor<300x256xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 4>} -> tensor<300x256xf16> {
  ^bb0(%a: tensor<300x64xf16>, %bw: tensor<256x64xf16>, %br: tensor<300x256xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x64xf16>, tensor<256x64xf16>) -> tensor<300x256xf16>
    %s = kiln.add %l, %br : tensor<300x256xf16>
    kiln.yield %s : tensor<300x256xf16>
  }
  return %0 : tensor<300x256xf16>
}

// -----

// Ping-pong over 64-wide tiles (ResNet's 1x1 convolutions with a residual):
// a row half's epilogue is one slice, so both halves' first slices are
// copied before the wgmmas (4 copies a half), the second into a slice of
// its own past the staging (2304 bytes a consumer warp), and none after.
// CHECK-LABEL: // === kernel pingpong_residual_k0 grid(4, 1, 1) block(384) shared(203776)
//       CHECK: static_assert(kiln::sm90::shared_bytes(64, 6, false, 128, true) == 203776,
// PTX-LABEL: // === ptx pingpong_residual_k0
// PTX-COUNT-8: cp.async.cg.shared.global
//   PTX-NOT: cp.async.cg.shared.global
//       PTX: wgmma.mma_async
//   PTX-NOT: cp.async.cg.shared.global
//       PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
//   PTX-NOT: cp.async.cg.shared.global
//       PTX: // === ptx
func.func @pingpong_residual(%x: tensor<300x64xf16>, %w: tensor<256x64xf16>, %r: tensor<300x256xf16>) -> tensor<300x256xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<300x64xf16>, tensor<256x64xf16>, tensor<300x256xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 4, schedule = pingpong>} -> tensor<300x256xf16> {
  ^bb0(%a: tensor<300x64xf16>, %bw: tensor<256x64xf16>, %br: tensor<300x256xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x64xf16>, tensor<256x64xf16>) -> tensor<300x256xf16>
    %s = kiln.add %l, %br : tensor<300x256xf16>
    kiln.yield %s : tensor<300x256xf16>
  }
  return %0 : tensor<300x256xf16>
}

// -----

// Two row-varying inputs: staged.
// CHECK-LABEL: // === kernel two_inputs_k0
//       CHECK:   static constexpr bool kFragments = false;
func.func @two_inputs(%x: tensor<300x64xf16>, %w: tensor<256x64xf16>, %r: tensor<300x256xf16>, %q: tensor<300x256xf16>) -> tensor<300x256xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r, %q : tensor<300x64xf16>, tensor<256x64xf16>, tensor<300x256xf16>, tensor<300x256xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 4>} -> tensor<300x256xf16> {
  ^bb0(%a: tensor<300x64xf16>, %bw: tensor<256x64xf16>, %br: tensor<300x256xf16>, %bq: tensor<300x256xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x64xf16>, tensor<256x64xf16>) -> tensor<300x256xf16>
    %s = kiln.add %l, %br : tensor<300x256xf16>
    %t = kiln.mul %s, %bq : tensor<300x256xf16>
    kiln.yield %t : tensor<300x256xf16>
  }
  return %0 : tensor<300x256xf16>
}

// -----

// An fp32 result has no 16-bit pairs to round: staged.
// CHECK-LABEL: // === kernel wide_result_k0
//       CHECK:   static constexpr bool kFragments = false;
func.func @wide_result(%x: tensor<300x64xf16>, %w: tensor<256x64xf16>) -> tensor<300x256xf32> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<300x64xf16>, tensor<256x64xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 3, grid_limit = 4>} -> tensor<300x256xf32> {
  ^bb0(%a: tensor<300x64xf16>, %bw: tensor<256x64xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x64xf16>, tensor<256x64xf16>) -> tensor<300x256xf16>
    %c = kiln.cast %l : tensor<300x256xf16> to tensor<300x256xf32>
    kiln.yield %c : tensor<300x256xf32>
  }
  return %0 : tensor<300x256xf32>
}

// -----

// A bias-free linear whose result the epilogue rounds before its bias input
// and GELU (LLaMA's projections, a bias added as an op of its own): the
// first instruction to read the accumulator is an add of -0
// (accumulator_value), not the conversion, which made ptxas serialize the
// ping-pong kernel's wgmmas (C7514) and kiln reject the kernel.
// CHECK-LABEL: // === kernel bias_free_k0
//       CHECK:     (kiln::to_float(kiln::from_float<__half>(kiln::accumulator_value(acc))) + v
//       CHECK:   kiln::sm90::wgmma_gemm<__half, 128, 5, kiln::sm90::Schedule::pingpong
// PTX-LABEL: // === ptx bias_free_k0
//       PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
//       PTX: add.rn.f32
func.func @bias_free(%x: tensor<300x64xf16>, %w: tensor<200x64xf16>, %b: tensor<200xf16>) -> tensor<300x200xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<300x64xf16>, tensor<200x64xf16>, tensor<200xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 4, schedule = pingpong>} -> tensor<300x200xf16> {
  ^bb0(%a: tensor<300x64xf16>, %bw: tensor<200x64xf16>, %bb: tensor<200xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x64xf16>, tensor<200x64xf16>) -> tensor<300x200xf16>
    %c = kiln.broadcast %bb : tensor<200xf16> -> tensor<300x200xf16>
    %s = kiln.add %l, %c : tensor<300x200xf16>
    %g = kiln.gelu %s : tensor<300x200xf16>
    kiln.yield %g : tensor<300x200xf16>
  }
  return %0 : tensor<300x200xf16>
}

// -----

// The epilogue warpgroups' schedule: five warpgroups in the sm_90a image
// (the producer, two consumers running cooperative main loops, two running
// the epilogues from the 64 KiB handoff), three elsewhere, whose mma.sync
// loop keeps its registers; the consumers claim 112 registers a thread
// and the epilogue warpgroups 104, within the 96 a thread that 640 threads
// start with (the producer gives back 56).
// CHECK-LABEL: // === kernel epilogue_warpgroups_k0 grid(4, 1, 1) block(640) shared(201728)
//       CHECK: static_assert(kiln::sm90::shared_bytes(128, 3, true) == 201728
//       CHECK: #define KILN_WGMMA_THREADS 640
//       CHECK: #define KILN_WGMMA_THREADS 384
//       CHECK: __launch_bounds__(KILN_WGMMA_THREADS, 1)
//       CHECK: kiln::sm90::wgmma_gemm<__half, 128, 3, kiln::sm90::Schedule::epilogue_warpgroups, 1, 1>
// PTX-LABEL: // === ptx epilogue_warpgroups_k0
//       PTX: .maxntid 640, 1, 1
//   PTX-DAG: setmaxnreg.inc.sync.aligned.u32 112
//   PTX-DAG: setmaxnreg.inc.sync.aligned.u32 104
//   PTX-DAG: setmaxnreg.dec.sync.aligned.u32 40
//   PTX-DAG: bar.arrive
//       PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
func.func @epilogue_warpgroups(%x: tensor<300x64xf16>, %w: tensor<200x64xf16>, %b: tensor<200xf16>) -> tensor<300x200xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %b : tensor<300x64xf16>, tensor<200x64xf16>, tensor<200xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 3, grid_limit = 4, schedule = epilogue_warpgroups>} -> tensor<300x200xf16> {
  ^bb0(%a: tensor<300x64xf16>, %bw: tensor<200x64xf16>, %bb: tensor<200xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x64xf16>, tensor<200x64xf16>) -> tensor<300x200xf16>
    %c = kiln.broadcast %bb : tensor<200xf16> -> tensor<300x200xf16>
    %s = kiln.add %l, %c : tensor<300x200xf16>
    %g = kiln.gelu %s : tensor<300x200xf16>
    kiln.yield %g : tensor<300x200xf16>
  }
  return %0 : tensor<300x200xf16>
}

