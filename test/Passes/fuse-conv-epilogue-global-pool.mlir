// RUN: kiln-opt %s --split-input-file --kiln-fuse-conv-epilogue='global-pool=true targets=sm_90a,sm_80 multiprocessors=4' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-fuse-conv-epilogue='global-pool=true targets=sm_90a,sm_80' | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --kiln-fuse-conv-epilogue | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --kiln-fuse-conv-epilogue='global-pool=true targets=sm_80 multiprocessors=4' | FileCheck %s --check-prefix=OFF

// ResNet-50's last block: the 1x1 expand, its residual add and ReLU, then
// the global average pool, which joins the group and ends it (the group's
// result is the pool's), on a GPU of 4 multiprocessors. Off by default, on
// a target without wgmma, and where its one row tile of two images would
// not fill a quarter of 132 multiprocessors.
// CHECK-LABEL: func.func @resnet_tail(
//       CHECK:   %[[P:.+]] = kiln.fusion conv_epilogue ins(%arg0, %arg1, %arg2 : {{.*}}) -> tensor<2x1x1x32xf16>
//       CHECK:     kiln.conv2d
//       CHECK:     kiln.add
//       CHECK:     kiln.relu
//       CHECK:     %[[M:.+]] = kiln.reduce_mean %{{.*}} dims = [1, 2] keepdim
//       CHECK:     kiln.yield %[[M]]
//       CHECK:   kiln.reshape %[[P]]
// OFF-LABEL: func.func @resnet_tail(
//       OFF:   kiln.fusion conv_epilogue {{.*}} -> tensor<2x7x7x32xf16>
//   OFF-NOT:     kiln.reduce_mean
//       OFF:     kiln.yield
//       OFF:   kiln.reduce_mean
func.func @resnet_tail(%x: tensor<2x7x7x16xf16>, %w: tensor<32x1x1x16xf16>, %skip: tensor<2x7x7x32xf16>) -> tensor<2x32xf16> {
  %0 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<2x7x7x16xf16>, tensor<32x1x1x16xf16>) -> tensor<2x7x7x32xf16>
  %1 = kiln.add %0, %skip : tensor<2x7x7x32xf16>
  %2 = kiln.relu %1 : tensor<2x7x7x32xf16>
  %3 = kiln.reduce_mean %2 dims = [1, 2] keepdim : tensor<2x7x7x32xf16> -> tensor<2x1x1x32xf16>
  %4 = kiln.reshape %3 : tensor<2x1x1x32xf16> -> tensor<2x32xf16>
  return %4 : tensor<2x32xf16>
}

// -----

// Negative: the pool stays out where its convolution is not a plain GEMM
// (3x3), where something else reads what it pools, where an image has more
// than 128 pixels (12 x 12), where the pool is not over H and W, and for
// fp32.
// CHECK-LABEL: func.func @stays_out(
//       CHECK:   kiln.fusion conv_epilogue
//   CHECK-NOT:     kiln.reduce_mean
//       CHECK:   kiln.reduce_mean
//       CHECK:   kiln.fusion conv_epilogue
//   CHECK-NOT:     kiln.reduce_mean
//       CHECK:   kiln.reduce_mean
//       CHECK:   kiln.fusion conv_epilogue
//   CHECK-NOT:     kiln.reduce_mean
//       CHECK:   kiln.reduce_mean
//       CHECK:   kiln.fusion conv_epilogue
//   CHECK-NOT:     kiln.reduce_mean
//       CHECK:   kiln.reduce_mean
//       CHECK:   kiln.fusion conv_epilogue
//   CHECK-NOT:     kiln.reduce_mean
//       CHECK:   kiln.reduce_mean
func.func @stays_out(%x: tensor<2x7x7x16xf16>, %w3: tensor<32x3x3x16xf16>, %w: tensor<32x1x1x16xf16>, %big: tensor<2x12x12x16xf16>, %x32: tensor<2x7x7x16xf32>, %w32: tensor<32x1x1x16xf32>) -> (tensor<2x1x1x32xf16>, tensor<2x1x1x32xf16>, tensor<2x7x7x32xf16>, tensor<2x1x1x32xf16>, tensor<2x7x1x32xf16>, tensor<2x1x1x32xf32>) {
  %0 = kiln.conv2d %x, %w3 strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<2x7x7x16xf16>, tensor<32x3x3x16xf16>) -> tensor<2x7x7x32xf16>
  %1 = kiln.reduce_mean %0 dims = [1, 2] keepdim : tensor<2x7x7x32xf16> -> tensor<2x1x1x32xf16>
  %2 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<2x7x7x16xf16>, tensor<32x1x1x16xf16>) -> tensor<2x7x7x32xf16>
  %3 = kiln.reduce_mean %2 dims = [1, 2] keepdim : tensor<2x7x7x32xf16> -> tensor<2x1x1x32xf16>
  %4 = kiln.conv2d %big, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<2x12x12x16xf16>, tensor<32x1x1x16xf16>) -> tensor<2x12x12x32xf16>
  %5 = kiln.reduce_mean %4 dims = [1, 2] keepdim : tensor<2x12x12x32xf16> -> tensor<2x1x1x32xf16>
  %6 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<2x7x7x16xf16>, tensor<32x1x1x16xf16>) -> tensor<2x7x7x32xf16>
  %7 = kiln.reduce_mean %6 dims = [2] keepdim : tensor<2x7x7x32xf16> -> tensor<2x7x1x32xf16>
  %8 = kiln.conv2d %x32, %w32 strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<2x7x7x16xf32>, tensor<32x1x1x16xf32>) -> tensor<2x7x7x32xf32>
  %9 = kiln.reduce_mean %8 dims = [1, 2] keepdim : tensor<2x7x7x32xf32> -> tensor<2x1x1x32xf32>
  return %1, %3, %2, %5, %7, %9 : tensor<2x1x1x32xf16>, tensor<2x1x1x32xf16>, tensor<2x7x7x32xf16>, tensor<2x1x1x32xf16>, tensor<2x7x1x32xf16>, tensor<2x1x1x32xf32>
}
