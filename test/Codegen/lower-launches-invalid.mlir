// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-lower-launches="targets=sm_90a,sm_80"
// RUN: not kiln-opt %s --split-input-file --kiln-lower-launches="targets=sm_99" 2>&1 | FileCheck %s --check-prefix=ARCH

// ARCH: error: unknown GPU architecture 'sm_99' (known: native, {{.*}})

// A group kiln-select-kernels has not seen: the code generator makes no
// choice of its own.
func.func @unselected(%x: tensor<1000xf32>) -> tensor<1000xf32> {
  // expected-error @+1 {{has no kernel configuration (run kiln-select-kernels first)}}
  %0 = kiln.fusion elementwise ins(%x : tensor<1000xf32>) {kiln.offsets = array<i64: -1>} -> tensor<1000xf32> {
  ^bb0(%a: tensor<1000xf32>):
    %r = kiln.relu %a : tensor<1000xf32>
    kiln.yield %r : tensor<1000xf32>
  }
  return %0 : tensor<1000xf32>
}

// -----

// An op outside any group has no kernel to launch.
func.func @loose(%x: tensor<1000xf32>) -> tensor<1000xf32> {
  // expected-error @+1 {{needs a kernel but is in no fusion group}}
  %0 = kiln.relu %x : tensor<1000xf32>
  return %0 : tensor<1000xf32>
}

// -----

// A variant the group cannot run as: the emitter's error, at the group.
func.func @wrong_variant(%x: tensor<1000xf32>) -> tensor<1000xf32> {
  // expected-error @+1 {{of kind 'elementwise' cannot run as gemm_wgmma}}
  %0 = kiln.fusion elementwise ins(%x : tensor<1000xf32>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64]>, kiln.offsets = array<i64: -1>} -> tensor<1000xf32> {
  ^bb0(%a: tensor<1000xf32>):
    %r = kiln.relu %a : tensor<1000xf32>
    kiln.yield %r : tensor<1000xf32>
  }
  return %0 : tensor<1000xf32>
}

// -----

// A Hopper GEMM's ring in as many stages as the image's shared memory
// holds: 5 stages of 128 x 192 need more than an sm_90a block may have.
func.func @wgmma_stages(%x: tensor<4096x768xf16>, %w: tensor<768x768xf16>) -> tensor<4096x768xf16> {
  // expected-error @+1 {{needs 242688 bytes of dynamic shared memory in its sm_90a image, which grants a block at most 232448}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 132>, kiln.offsets = array<i64: -1>} -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<768x768xf16>) -> tensor<4096x768xf16>
    kiln.yield %l : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}

// -----

// With a residual through the ring (residual_ring, as the selection stage
// sizes it) the same ring fits: the staging keeps its results' half alone.
func.func @wgmma_stages_residual(%x: tensor<4096x768xf16>, %w: tensor<768x768xf16>, %r: tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<4096x768xf16>, tensor<768x768xf16>, tensor<4096x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 132, residual_ring = true>, kiln.offsets = array<i64: -1>} -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x768xf16>, %br: tensor<4096x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<768x768xf16>) -> tensor<4096x768xf16>
    %t = kiln.add %l, %br : tensor<4096x768xf16>
    kiln.yield %t : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}

// -----

// The residual copied by rows needs the whole staging: 5 stages do not fit.
func.func @wgmma_stages_residual_copied(%x: tensor<4096x768xf16>, %w: tensor<768x768xf16>, %r: tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  // expected-error @+1 {{needs 242688 bytes of dynamic shared memory in its sm_90a image, which grants a block at most 232448}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r : tensor<4096x768xf16>, tensor<768x768xf16>, tensor<4096x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 132>, kiln.offsets = array<i64: -1>} -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x768xf16>, %br: tensor<4096x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<768x768xf16>) -> tensor<4096x768xf16>
    %t = kiln.add %l, %br : tensor<4096x768xf16>
    kiln.yield %t : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}

// -----

// Two row inputs: the ring carries one, so both are copied by rows, and 5
// stages do not fit beside them.
func.func @wgmma_stages_two_residuals(%x: tensor<4096x768xf16>, %w: tensor<768x768xf16>, %r: tensor<4096x768xf16>, %q: tensor<4096x768xf16>) -> tensor<4096x768xf16> {
  // expected-error @+1 {{needs 242688 bytes of dynamic shared memory in its sm_90a image, which grants a block at most 232448}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w, %r, %q : tensor<4096x768xf16>, tensor<768x768xf16>, tensor<4096x768xf16>, tensor<4096x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 192, 64], stages = 5, grid_limit = 132, residual_ring = true>, kiln.offsets = array<i64: -1>} -> tensor<4096x768xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<768x768xf16>, %br: tensor<4096x768xf16>, %bq: tensor<4096x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<768x768xf16>) -> tensor<4096x768xf16>
    %t = kiln.add %l, %br : tensor<4096x768xf16>
    %u = kiln.add %t, %bq : tensor<4096x768xf16>
    kiln.yield %u : tensor<4096x768xf16>
  }
  return %0 : tensor<4096x768xf16>
}
