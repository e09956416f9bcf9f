// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s --check-prefix=ON
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-select-kernels{pool-vector=false}))" | FileCheck %s --check-prefix=OFF

// ResNet's max pool at batch 32: eight channels a thread by default, a
// thread per element with pool-vector=false; fp32, or 12 channels, a thread
// per element either way.
// ON-LABEL: func.func @pools(
//       ON:   #kiln.kernel<variant = pooling, tile = [1, 8, 1], grid_limit = 2112>
//       ON:   #kiln.kernel<variant = pooling, grid_limit = 2112>
//       ON:   #kiln.kernel<variant = pooling, grid_limit = 2112>
// OFF-LABEL: func.func @pools(
//       OFF:   #kiln.kernel<variant = pooling, grid_limit = 2112>
//       OFF:   #kiln.kernel<variant = pooling, grid_limit = 2112>
//       OFF:   #kiln.kernel<variant = pooling, grid_limit = 2112>
func.func @pools(%x: tensor<32x112x112x64xf16>, %y: tensor<2x9x9x16xf32>, %z: tensor<2x9x9x12xf16>)
    -> (tensor<32x56x56x64xf16>, tensor<2x5x5x16xf32>, tensor<2x5x5x12xf16>) {
  %0 = kiln.fusion pooling ins(%x : tensor<32x112x112x64xf16>) -> tensor<32x56x56x64xf16> {
  ^bb0(%a: tensor<32x112x112x64xf16>):
    %p = kiln.pool2d %a max kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] : tensor<32x112x112x64xf16> -> tensor<32x56x56x64xf16>
    kiln.yield %p : tensor<32x56x56x64xf16>
  }
  %1 = kiln.fusion pooling ins(%y : tensor<2x9x9x16xf32>) -> tensor<2x5x5x16xf32> {
  ^bb0(%a: tensor<2x9x9x16xf32>):
    %p = kiln.pool2d %a max kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] : tensor<2x9x9x16xf32> -> tensor<2x5x5x16xf32>
    kiln.yield %p : tensor<2x5x5x16xf32>
  }
  %2 = kiln.fusion pooling ins(%z : tensor<2x9x9x12xf16>) -> tensor<2x5x5x12xf16> {
  ^bb0(%a: tensor<2x9x9x12xf16>):
    %p = kiln.pool2d %a avg kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] : tensor<2x9x9x12xf16> -> tensor<2x5x5x12xf16>
    kiln.yield %p : tensor<2x5x5x12xf16>
  }
  return %0, %1, %2 : tensor<32x56x56x64xf16>, tensor<2x5x5x16xf32>, tensor<2x5x5x12xf16>
}
