// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=ONE
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{elementwise-unroll=8}))" | FileCheck %s --check-prefix=EIGHT
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{elementwise-unroll=3}))" 2>&1 | FileCheck %s --check-prefix=BAD

// An elementwise group (a squeeze-and-excitation multiply) takes one
// element a thread a step by default, eight with elementwise-unroll=8.
// ONE-LABEL: func.func @excite(
//       ONE:   #kiln.kernel<variant = elementwise, grid_limit = 2112>
// EIGHT-LABEL: func.func @excite(
//       EIGHT:   #kiln.kernel<variant = elementwise, tile = [1, 8, 1], grid_limit = 2112>
// BAD: error: --elementwise-unroll must be 1, 2, 4 or 8, got 3
func.func @excite(%a: tensor<32x7x7x1152xf16>, %b: tensor<32x1x1x1152xf16>) -> tensor<32x7x7x1152xf16> {
  %0 = kiln.fusion elementwise ins(%a, %b : tensor<32x7x7x1152xf16>, tensor<32x1x1x1152xf16>) -> tensor<32x7x7x1152xf16> {
  ^bb0(%x: tensor<32x7x7x1152xf16>, %y: tensor<32x1x1x1152xf16>):
    %m = kiln.mul %x, %y : tensor<32x7x7x1152xf16>, tensor<32x1x1x1152xf16> -> tensor<32x7x7x1152xf16>
    kiln.yield %m : tensor<32x7x7x1152xf16>
  }
  return %0 : tensor<32x7x7x1152xf16>
}
