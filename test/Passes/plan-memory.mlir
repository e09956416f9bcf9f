// RUN: kiln-opt %s --split-input-file --kiln-plan-memory | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-plan-memory="alignment=1024" | FileCheck %s --check-prefix=ALIGN
// RUN: not kiln-opt %s --split-input-file --kiln-plan-memory="alignment=100" 2>&1 | FileCheck %s --check-prefix=BAD

// Intermediates get offsets in one arena: a buffer lives from its writer to
// its last reader, and buffers alive at different times share memory.

// A chain of four kernels: buffers 0 and 2 never live together and share
// offset 0; buffer 1 overlaps both; the last result is the function's.
// CHECK-LABEL: func.func @chain(
//  CHECK-SAME:     kiln.arena_bytes = 8192 : i64, kiln.intermediate_bytes = 12288 : i64
//       CHECK:   kiln.exp {{.*}} {kiln.offsets = array<i64: 0>}
//       CHECK:   kiln.tanh {{.*}} {kiln.offsets = array<i64: 4096>}
//       CHECK:   kiln.neg {{.*}} {kiln.offsets = array<i64: 0>}
//       CHECK:   kiln.relu {{.*}} {kiln.offsets = array<i64: -1>}
// ALIGN-LABEL: func.func @chain(
//  ALIGN-SAME:     kiln.arena_bytes = 8192 : i64
// BAD: error: alignment must be a power of two, got 100
func.func @chain(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %0 = kiln.exp %x : tensor<32x32xf32>
  %1 = kiln.tanh %0 : tensor<32x32xf32>
  %2 = kiln.neg %1 : tensor<32x32xf32>
  %3 = kiln.relu %2 : tensor<32x32xf32>
  return %3 : tensor<32x32xf32>
}

// -----

// A reshape is a view: its source stays alive until the view's last reader,
// so the residual's buffer is not reused while the view is still read.
// CHECK-LABEL: func.func @views_extend_life(
//  CHECK-SAME:     kiln.arena_bytes = 512 : i64
//       CHECK:   kiln.exp {{.*}} {kiln.offsets = array<i64: 0>}
//       CHECK:   kiln.reshape
//   CHECK-NOT:   kiln.offsets
//       CHECK:   kiln.tanh {{.*}} {kiln.offsets = array<i64: 256>}
// ALIGN-LABEL: func.func @views_extend_life(
//  ALIGN-SAME:     kiln.arena_bytes = 2048 : i64
//       CHECK:   kiln.add
func.func @views_extend_life(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %0 = kiln.exp %x : tensor<4x8xf32>
  %1 = kiln.reshape %0 : tensor<4x8xf32> -> tensor<32xf32>
  %2 = kiln.tanh %1 : tensor<32xf32>
  %3 = kiln.add %1, %2 : tensor<32xf32>
  return %3 : tensor<32xf32>
}

// -----

// A residual branch (ResNet's skip connection): the block's input stays
// alive, and its memory unshared, until the add that reads it last.
// CHECK-LABEL: func.func @residual_branch(
//       CHECK:   kiln.exp {{.*}} {kiln.offsets = array<i64: 0>}
//       CHECK:   kiln.tanh {{.*}} {kiln.offsets = array<i64: 4096>}
//       CHECK:   kiln.neg {{.*}} {kiln.offsets = array<i64: 8192>}
//       CHECK:   kiln.add {{.*}} {kiln.offsets = array<i64: -1>}
func.func @residual_branch(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = kiln.exp %x : tensor<32x32xf32>
  %b = kiln.tanh %a : tensor<32x32xf32>
  %c = kiln.neg %b : tensor<32x32xf32>
  %d = kiln.add %c, %a : tensor<32x32xf32>
  return %d : tensor<32x32xf32>
}
