// RUN: kiln-opt %s --kiln-graph-pipeline="precision=fp16 merge-shortcut-bytes=0" | FileCheck %s
// RUN: kiln-opt %s --kiln-graph-pipeline="precision=fp16" | FileCheck %s --check-prefix=DEFAULT
// RUN: kiln-opt %s --kiln-graph-pipeline="precision=fp16 merge-shortcut-bytes=0 targets=sm_80" | FileCheck %s --check-prefix=DEFAULT

// A bottleneck's end, relu(conv_c(h) + downsample(x)), through the graph
// pipeline: merged, one conv_epilogue group reads h and x's stride-2 slice
// as a channel concat on conv_wgmma, the relu in its epilogue. By default
// (a result of 4 KiB, under the 4 MiB the merge takes) and on a target
// without wgmma, two groups, the add in the second's epilogue.
// CHECK-LABEL: func.func @bottleneck_end(
//       CHECK:   kiln.fusion conv_epilogue
//  CHECK-SAME:     variant = conv_wgmma
//       CHECK:     kiln.slice {{.*}} strides = [1, 2, 2, 1]
//       CHECK:     kiln.concat {{.*}} dim = 3 {kiln.read_in_place}
//       CHECK:     kiln.conv2d
//       CHECK:     kiln.relu
//   CHECK-NOT:   kiln.fusion
//       CHECK:   return
// DEFAULT-LABEL: func.func @bottleneck_end(
//   DEFAULT-NOT:   kiln.concat
//       DEFAULT:   kiln.fusion conv_epilogue
//       DEFAULT:   kiln.fusion conv_epilogue
//       DEFAULT:     kiln.add
//       DEFAULT:     kiln.relu
func.func @bottleneck_end(%h: tensor<2x4x4x16xf32>, %x: tensor<2x8x8x32xf32>) -> tensor<2x4x4x64xf32> {
  %wc = kiln.constant dense<0.5> : tensor<64x1x1x16xf32>
  %bc = kiln.constant dense<0.25> : tensor<64xf32>
  %wd = kiln.constant dense<0.125> : tensor<64x1x1x32xf32>
  %bd = kiln.constant dense<0.5> : tensor<64xf32>
  %c = kiln.conv2d %h, %wc, %bc strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<2x4x4x16xf32>, tensor<64x1x1x16xf32>, tensor<64xf32>) -> tensor<2x4x4x64xf32>
  %d = kiln.conv2d %x, %wd, %bd strides = [2, 2] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<2x8x8x32xf32>, tensor<64x1x1x32xf32>, tensor<64xf32>) -> tensor<2x4x4x64xf32>
  %s = kiln.add %c, %d : tensor<2x4x4x64xf32>
  %r = kiln.relu %s : tensor<2x4x4x64xf32>
  return %r : tensor<2x4x4x64xf32>
}
