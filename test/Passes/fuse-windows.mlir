// RUN: kiln-opt %s --split-input-file --kiln-fuse-windows | FileCheck %s

// A pool and a reduction each anchor a group with their elementwise
// consumers over the anchor's result shape.
// CHECK-LABEL: func.func @pool_and_mean(
//       CHECK:   %[[P:.+]] = kiln.fusion pooling ins(%arg0 :
//       CHECK:     kiln.pool2d
//       CHECK:     kiln.relu
//       CHECK:   kiln.fusion reduction ins(%[[P]] :
//       CHECK:     kiln.reduce_mean
//       CHECK:     kiln.sigmoid
func.func @pool_and_mean(%x: tensor<1x8x8x4xf32>) -> tensor<1x1x1x4xf32> {
  %0 = kiln.pool2d %x max kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] : tensor<1x8x8x4xf32> -> tensor<1x4x4x4xf32>
  %1 = kiln.relu %0 : tensor<1x4x4x4xf32>
  %2 = kiln.reduce_mean %1 dims = [1, 2] keepdim : tensor<1x4x4x4xf32> -> tensor<1x1x1x4xf32>
  %3 = kiln.sigmoid %2 : tensor<1x1x1x4xf32>
  return %3 : tensor<1x1x1x4xf32>
}

// -----

// Negative: producers stay out (no prologue), and so does a consumer that
// broadcasts the result to a larger shape (the squeeze-excite multiply).
// CHECK-LABEL: func.func @excite(
//       CHECK:   %[[T:.+]] = kiln.tanh %arg0
//       CHECK:   %[[S:.+]] = kiln.fusion reduction ins(%[[T]] :
//   CHECK-NOT:     kiln.mul
//       CHECK:     kiln.yield
//       CHECK:   kiln.mul %[[T]], %[[S]]
func.func @excite(%x: tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32> {
  %0 = kiln.tanh %x : tensor<1x8x8x4xf32>
  %1 = kiln.reduce_mean %0 dims = [1, 2] keepdim : tensor<1x8x8x4xf32> -> tensor<1x1x1x4xf32>
  %2 = kiln.mul %0, %1 : tensor<1x8x8x4xf32>, tensor<1x1x1x4xf32> -> tensor<1x8x8x4xf32>
  return %2 : tensor<1x8x8x4xf32>
}
