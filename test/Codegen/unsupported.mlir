// RUN: not kiln-translate --kiln-to-cuda %s --split-input-file 2>&1 | FileCheck %s

// What the code generator cannot lower yet fails with an error at the op,
// never with wrong code.

// CHECK: error: 'kiln.permute' op needs a kernel but is in no fusion group
func.func @standalone_permute(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = kiln.permute %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// CHECK: error: 'kiln.softmax' op softmax over a dimension other than the last is not supported by the code generator yet
func.func @softmax_dim0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kiln.fusion normalization ins(%x : tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %s = kiln.softmax %a dim = 0 : tensor<4x8xf32>
    kiln.yield %s : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK: error: 'kiln.add' op integer arithmetic in a fused kernel is not supported by kiln's code generator yet
func.func @integer_add(%x: tensor<4xi64>) -> tensor<4xi64> {
  %0 = kiln.fusion elementwise ins(%x : tensor<4xi64>) -> tensor<4xi64> {
  ^bb0(%a: tensor<4xi64>):
    %s = kiln.add %a, %a : tensor<4xi64>
    kiln.yield %s : tensor<4xi64>
  }
  return %0 : tensor<4xi64>
}

// -----

// CHECK: error: 'kiln.reduce_sum' op needs a kernel but is in no fusion group
func.func @reduction(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = kiln.reduce_sum %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
