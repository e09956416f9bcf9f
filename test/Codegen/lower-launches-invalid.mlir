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
