// RUN: kiln-opt %s --split-input-file | kiln-opt --split-input-file | FileCheck %s
// RUN: kiln-opt %s --split-input-file --mlir-print-op-generic | kiln-opt --split-input-file | FileCheck %s

// Every kiln op prints in its custom form and parses back to the same op,
// both from the custom form and from the generic form.

// CHECK-LABEL: func.func @constants
//       CHECK:   kiln.constant dense<5.000000e-01> : tensor<f32>
//       CHECK:   kiln.constant dense_resource<fc_weight> : tensor<2x2xf16>
//       CHECK:   kiln.constant dense<[1, 2, 3]> : tensor<3xi64>
//       CHECK:   kiln.constant dense<true> : tensor<2xi1>
func.func @constants() -> (tensor<f32>, tensor<2x2xf16>, tensor<3xi64>, tensor<2xi1>) {
  %0 = kiln.constant dense<0.5> : tensor<f32>
  %1 = kiln.constant dense_resource<fc_weight> : tensor<2x2xf16>
  %2 = kiln.constant dense<[1, 2, 3]> : tensor<3xi64>
  %3 = kiln.constant dense<true> : tensor<2xi1>
  return %0, %1, %2, %3 : tensor<f32>, tensor<2x2xf16>, tensor<3xi64>, tensor<2xi1>
}
{-#
  dialect_resources: {
    builtin: {
      fc_weight: "0x02000000003C004000420044"
    }
  }
#-}

// -----

// CHECK-LABEL: func.func @unary(
//  CHECK-SAME:     %[[X:.+]]: tensor<4x8xf32>, %[[I:.+]]: tensor<4xi32>
//       CHECK:   kiln.neg %[[X]] : tensor<4x8xf32>
//       CHECK:   kiln.abs %[[I]] : tensor<4xi32>
//       CHECK:   kiln.relu %[[X]] : tensor<4x8xf32>
//       CHECK:   kiln.exp %[[X]] : tensor<4x8xf32>
//       CHECK:   kiln.log %[[X]] : tensor<4x8xf32>
//       CHECK:   kiln.sqrt %[[X]] : tensor<4x8xf32>
//       CHECK:   kiln.rsqrt %[[X]] : tensor<4x8xf32>
//       CHECK:   kiln.tanh %[[X]] : tensor<4x8xf32>
//       CHECK:   kiln.sigmoid %[[X]] : tensor<4x8xf32>
//       CHECK:   kiln.erf %[[X]] : tensor<4x8xf32>
//       CHECK:   kiln.silu %[[X]] : tensor<4x8xf32>
//       CHECK:   kiln.gelu %[[X]] : tensor<4x8xf32>
//       CHECK:   kiln.gelu %[[X]] approximate = tanh : tensor<4x8xf32>
//       CHECK:   kiln.clamp %[[X]] min = 0.000000e+00 max = 6.000000e+00 : tensor<4x8xf32>
//       CHECK:   kiln.clamp %[[X]] min = -1.000000e+00 : tensor<4x8xf32>
//       CHECK:   kiln.clamp %[[I]] max = 3.000000e+00 : tensor<4xi32>
//       CHECK:   kiln.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xbf16>
func.func @unary(%x: tensor<4x8xf32>, %i: tensor<4xi32>) {
  %0 = kiln.neg %x : tensor<4x8xf32>
  %1 = kiln.abs %i : tensor<4xi32>
  %2 = kiln.relu %x : tensor<4x8xf32>
  %3 = kiln.exp %x : tensor<4x8xf32>
  %4 = kiln.log %x : tensor<4x8xf32>
  %5 = kiln.sqrt %x : tensor<4x8xf32>
  %6 = kiln.rsqrt %x : tensor<4x8xf32>
  %7 = kiln.tanh %x : tensor<4x8xf32>
  %8 = kiln.sigmoid %x : tensor<4x8xf32>
  %9 = kiln.erf %x : tensor<4x8xf32>
  %10 = kiln.silu %x : tensor<4x8xf32>
  %11 = kiln.gelu %x approximate = none : tensor<4x8xf32>
  %12 = kiln.gelu %x approximate = tanh : tensor<4x8xf32>
  %13 = kiln.clamp %x min = 0.0 max = 6.0 : tensor<4x8xf32>
  %14 = kiln.clamp %x min = -1.0 : tensor<4x8xf32>
  %15 = kiln.clamp %i max = 3.0 : tensor<4xi32>
  %16 = kiln.cast %x : tensor<4x8xf32> to tensor<4x8xbf16>
  return
}

// -----

// The short type form is used exactly when operands and result share a type.
// CHECK-LABEL: func.func @binary(
//  CHECK-SAME:     %[[A:.+]]: tensor<4x8xf16>, %[[B:.+]]: tensor<8xf16>, %[[S:.+]]: tensor<f16>
//       CHECK:   kiln.add %[[A]], %[[A]] : tensor<4x8xf16>
//       CHECK:   kiln.add %[[A]], %[[B]] : tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
//       CHECK:   kiln.sub %[[S]], %[[A]] : tensor<f16>, tensor<4x8xf16> -> tensor<4x8xf16>
//       CHECK:   kiln.mul %[[A]], %[[S]] : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
//       CHECK:   kiln.div %[[A]], %[[B]] : tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
//       CHECK:   kiln.max %[[A]], %[[A]] : tensor<4x8xf16>
//       CHECK:   kiln.min %[[B]], %[[B]] : tensor<8xf16>
//       CHECK:   kiln.pow %[[A]], %[[S]] : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
func.func @binary(%a: tensor<4x8xf16>, %b: tensor<8xf16>, %s: tensor<f16>) {
  %0 = kiln.add %a, %a : tensor<4x8xf16>
  %1 = kiln.add %a, %b : tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
  %2 = kiln.sub %s, %a : tensor<f16>, tensor<4x8xf16> -> tensor<4x8xf16>
  %3 = kiln.mul %a, %s : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
  %4 = kiln.div %a, %b : tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
  %5 = kiln.max %a, %a : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  %6 = kiln.min %b, %b : tensor<8xf16>
  %7 = kiln.pow %a, %s : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
  return
}

// -----

// CHECK-LABEL: func.func @where(
//       CHECK:   kiln.where %{{.+}}, %{{.+}}, %{{.+}} : tensor<1x8xi1>, tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
func.func @where(%m: tensor<1x8xi1>, %x: tensor<4x8xf32>, %fill: tensor<f32>) -> tensor<4x8xf32> {
  %0 = kiln.where %m, %x, %fill : tensor<1x8xi1>, tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @contractions(
//       CHECK:   kiln.linear %{{.+}}, %{{.+}}, %{{.+}} : (tensor<2x64x256xbf16>, tensor<1024x256xbf16>, tensor<1024xbf16>) -> tensor<2x64x1024xbf16>
//       CHECK:   kiln.linear %{{.+}}, %{{.+}} : (tensor<2x64x256xbf16>, tensor<1024x256xbf16>) -> tensor<2x64x1024xbf16>
//       CHECK:   kiln.matmul %{{.+}}, %{{.+}} : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
//       CHECK:   kiln.batch_matmul %{{.+}}, %{{.+}} : (tensor<2x12x128x64xf32>, tensor<2x12x64x128xf32>) -> tensor<2x12x128x128xf32>
//       CHECK:   kiln.batch_matmul %{{.+}}, %{{.+}} : (tensor<5x1x3x4xf32>, tensor<6x4x2xf32>) -> tensor<5x6x3x2xf32>
func.func @contractions(%x: tensor<2x64x256xbf16>, %w: tensor<1024x256xbf16>, %b: tensor<1024xbf16>,
                        %a: tensor<64x32xf32>, %c: tensor<32x16xf32>,
                        %q: tensor<2x12x128x64xf32>, %k: tensor<2x12x64x128xf32>,
                        %u: tensor<5x1x3x4xf32>, %v: tensor<6x4x2xf32>) {
  %0 = kiln.linear %x, %w, %b : (tensor<2x64x256xbf16>, tensor<1024x256xbf16>, tensor<1024xbf16>) -> tensor<2x64x1024xbf16>
  %1 = kiln.linear %x, %w : (tensor<2x64x256xbf16>, tensor<1024x256xbf16>) -> tensor<2x64x1024xbf16>
  %2 = kiln.matmul %a, %c : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %3 = kiln.batch_matmul %q, %k : (tensor<2x12x128x64xf32>, tensor<2x12x64x128xf32>) -> tensor<2x12x128x128xf32>
  %4 = kiln.batch_matmul %u, %v : (tensor<5x1x3x4xf32>, tensor<6x4x2xf32>) -> tensor<5x6x3x2xf32>
  return
}

// -----

// CHECK-LABEL: func.func @reductions(
//       CHECK:   kiln.reduce_sum %{{.+}} dims = [1] keepdim : tensor<4x8x16xf32> -> tensor<4x1x16xf32>
//       CHECK:   kiln.reduce_mean %{{.+}} dims = [1, 2] : tensor<4x8x16xf32> -> tensor<4xf32>
//       CHECK:   kiln.reduce_max %{{.+}} dims = [0, 1, 2] : tensor<4x8x16xf32> -> tensor<f32>
//       CHECK:   kiln.reduce_sum %{{.+}} dims = [0] : tensor<5xi64> -> tensor<i64>
//       CHECK:   kiln.softmax %{{.+}} dim = 2 : tensor<4x8x16xf32>
//       CHECK:   kiln.layer_norm %{{.+}} weight %{{.+}} bias %{{.+}} axis = 2 eps = 1.000000e-05 : (tensor<4x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
//       CHECK:   kiln.layer_norm %{{.+}} bias %{{.+}} axis = 2 eps = 9.9999999999999995E-7 : (tensor<4x8x16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
//       CHECK:   kiln.layer_norm %{{.+}} axis = 1 eps = 1.000000e-05 : (tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
//       CHECK:   kiln.layer_norm %{{.+}} weight %{{.+}} axis = 2 eps = 9.9999999999999995E-7 rms : (tensor<4x8x16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
func.func @reductions(%x: tensor<4x8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>, %i: tensor<5xi64>) {
  %0 = kiln.reduce_sum %x dims = [1] keepdim : tensor<4x8x16xf32> -> tensor<4x1x16xf32>
  %1 = kiln.reduce_mean %x dims = [1, 2] : tensor<4x8x16xf32> -> tensor<4xf32>
  %2 = kiln.reduce_max %x dims = [0, 1, 2] : tensor<4x8x16xf32> -> tensor<f32>
  %3 = kiln.reduce_sum %i dims = [0] : tensor<5xi64> -> tensor<i64>
  %4 = kiln.softmax %x dim = 2 : tensor<4x8x16xf32>
  %5 = kiln.layer_norm %x weight %g bias %b axis = 2 eps = 1.0e-05 : (tensor<4x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
  %6 = kiln.layer_norm %x bias %b axis = 2 eps = 1.0e-06 : (tensor<4x8x16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
  %7 = kiln.layer_norm %x axis = 1 eps = 1.0e-05 : (tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %8 = kiln.layer_norm %x weight %g axis = 2 eps = 1.0e-06 rms : (tensor<4x8x16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
  return
}

// -----

// CHECK-LABEL: func.func @data_movement(
//       CHECK:   kiln.reshape %{{.+}} : tensor<2x3x4xf32> -> tensor<6x4xf32>
//       CHECK:   kiln.permute %{{.+}} [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
//       CHECK:   kiln.concat %{{.+}}, %{{.+}} dim = 1 : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
//       CHECK:   kiln.slice %{{.+}} offsets = [0, 1, 0] strides = [1, 2, 3] : tensor<2x3x4xf32> -> tensor<2x1x2xf32>
//       CHECK:   kiln.reshape %{{.+}} : tensor<2x3x4xi1> -> tensor<24xi1>
func.func @data_movement(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>, %m: tensor<2x3x4xi1>) {
  %0 = kiln.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = kiln.permute %x [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %2 = kiln.concat %x, %y dim = 1 : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  %3 = kiln.slice %x offsets = [0, 1, 0] strides = [1, 2, 3] : tensor<2x3x4xf32> -> tensor<2x1x2xf32>
  %4 = kiln.reshape %m : tensor<2x3x4xi1> -> tensor<24xi1>
  return
}

// -----

// CHECK-LABEL: func.func @fusion(
//  CHECK-SAME:     %[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8xf32>
//       CHECK:   %[[R:.+]]:2 = kiln.fusion elementwise ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>, tensor<4x8xf16> {
//       CHECK:   ^bb0(%[[X:.+]]: tensor<4x8xf32>, %[[Y:.+]]: tensor<8xf32>):
//       CHECK:     %[[S:.+]] = kiln.add %[[X]], %[[Y]]
//       CHECK:     %[[T:.+]] = kiln.relu %[[S]]
//       CHECK:     %[[H:.+]] = kiln.cast %[[T]]
//       CHECK:     kiln.yield %[[T]], %[[H]] : tensor<4x8xf32>, tensor<4x8xf16>
//       CHECK:   kiln.fusion gemm_epilogue ins(
//       CHECK:     kiln.linear
//       CHECK:   kiln.fusion normalization ins(
//       CHECK:   kiln.fusion reduction ins(
//       CHECK:   kiln.fusion attention ins(
//       CHECK:   kiln.fusion conv_epilogue ins(
//       CHECK:     kiln.conv2d
//       CHECK:   kiln.fusion pooling ins(
//       CHECK:     kiln.pool2d
func.func @fusion(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %w: tensor<8x8xf32>) {
  %0:2 = kiln.fusion elementwise ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>, tensor<4x8xf16> {
  ^bb0(%x: tensor<4x8xf32>, %y: tensor<8xf32>):
    %s = kiln.add %x, %y : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %t = kiln.relu %s : tensor<4x8xf32>
    %h = kiln.cast %t : tensor<4x8xf32> to tensor<4x8xf16>
    kiln.yield %t, %h : tensor<4x8xf32>, tensor<4x8xf16>
  }
  %1 = kiln.fusion gemm_epilogue ins(%a, %w, %b : tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>, %y: tensor<8x8xf32>, %z: tensor<8xf32>):
    %l = kiln.linear %x, %y, %z : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %g = kiln.gelu %l : tensor<4x8xf32>
    kiln.yield %g : tensor<4x8xf32>
  }
  %2 = kiln.fusion normalization ins(%a : tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>):
    %n = kiln.layer_norm %x axis = 1 eps = 1.0e-05 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    kiln.yield %n : tensor<4x8xf32>
  }
  %3 = kiln.fusion reduction ins(%a : tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4x8xf32>):
    %r = kiln.reduce_sum %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
    kiln.yield %r : tensor<4xf32>
  }
  %q = kiln.reshape %a : tensor<4x8xf32> -> tensor<1x4x8xf32>
  %4 = kiln.fusion attention ins(%q : tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%x: tensor<1x4x8xf32>):
    %p = kiln.attention %x, %x, %x scale = 5.000000e-01 causal : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    kiln.yield %p : tensor<1x4x8xf32>
  }
  %img = kiln.constant dense<1.0> : tensor<1x6x6x4xf32>
  %k = kiln.constant dense<0.5> : tensor<8x3x3x4xf32>
  %5 = kiln.fusion conv_epilogue ins(%img, %k : tensor<1x6x6x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x6x6x8xf32> {
  ^bb0(%x: tensor<1x6x6x4xf32>, %y: tensor<8x3x3x4xf32>):
    %c = kiln.conv2d %x, %y strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<1x6x6x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x6x6x8xf32>
    %r = kiln.relu %c : tensor<1x6x6x8xf32>
    kiln.yield %r : tensor<1x6x6x8xf32>
  }
  %6 = kiln.fusion pooling ins(%img : tensor<1x6x6x4xf32>) -> tensor<1x3x3x4xf32> {
  ^bb0(%x: tensor<1x6x6x4xf32>):
    %p = kiln.pool2d %x max kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] : tensor<1x6x6x4xf32> -> tensor<1x3x3x4xf32>
    kiln.yield %p : tensor<1x3x3x4xf32>
  }
  return
}

// -----

// Convolution and pooling, channels-last.
// CHECK-LABEL: func.func @windows
//       CHECK:   kiln.conv2d %{{.*}}, %{{.*}}, %{{.*}} strides = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] groups = 1 : (tensor<1x32x32x3xf16>, tensor<16x7x7x3xf16>, tensor<16xf16>) -> tensor<1x16x16x16xf16>
//       CHECK:   kiln.conv2d %{{.*}}, %{{.*}} strides = [1, 1] padding = [2, 2, 2, 2] dilation = [2, 2] groups = 16 : (tensor<1x16x16x16xf16>, tensor<16x3x3x1xf16>) -> tensor<1x16x16x16xf16>
//       CHECK:   kiln.pool2d %{{.*}} max kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] : tensor<1x16x16x16xf16> -> tensor<1x8x8x16xf16>
//       CHECK:   kiln.pool2d %{{.*}} avg kernel = [3, 3] strides = [2, 2] padding = [0, 0, 0, 0] ceil_mode count_include_pad : tensor<1x16x16x16xf16> -> tensor<1x8x8x16xf16>
func.func @windows(%x: tensor<1x32x32x3xf16>, %w: tensor<16x7x7x3xf16>, %b: tensor<16xf16>, %dw: tensor<16x3x3x1xf16>) -> tensor<1x8x8x16xf16> {
  %0 = kiln.conv2d %x, %w, %b strides = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] groups = 1 : (tensor<1x32x32x3xf16>, tensor<16x7x7x3xf16>, tensor<16xf16>) -> tensor<1x16x16x16xf16>
  %1 = kiln.conv2d %0, %dw strides = [1, 1] padding = [2, 2, 2, 2] dilation = [2, 2] groups = 16 : (tensor<1x16x16x16xf16>, tensor<16x3x3x1xf16>) -> tensor<1x16x16x16xf16>
  %2 = kiln.pool2d %1 max kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] : tensor<1x16x16x16xf16> -> tensor<1x8x8x16xf16>
  %3 = kiln.pool2d %1 avg kernel = [3, 3] strides = [2, 2] padding = [0, 0, 0, 0] ceil_mode count_include_pad : tensor<1x16x16x16xf16> -> tensor<1x8x8x16xf16>
  return %3 : tensor<1x8x8x16xf16>
}

// -----

// Data movement that kernels fold into their loads: permute, slice and
// concat of inputs in an elementwise group; the NCHW -> NHWC permute of a
// convolution's input in a conv_epilogue group.
// CHECK-LABEL: func.func @moves_in_groups
//       CHECK:   kiln.fusion elementwise ins(
//       CHECK:     kiln.permute
//       CHECK:     kiln.slice
//       CHECK:     kiln.concat
//       CHECK:   kiln.fusion conv_epilogue ins(
//       CHECK:     kiln.permute %{{.*}} [0, 2, 3, 1]
//       CHECK:     kiln.conv2d
func.func @moves_in_groups(%a: tensor<8x4xf32>, %b: tensor<4x10xf32>, %img: tensor<1x3x6x6xf32>, %k: tensor<8x3x3x3xf32>) {
  %0 = kiln.fusion elementwise ins(%a, %b : tensor<8x4xf32>, tensor<4x10xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<8x4xf32>, %y: tensor<4x10xf32>):
    %p = kiln.permute %x [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
    %s = kiln.slice %y offsets = [0, 1] strides = [1, 2] : tensor<4x10xf32> -> tensor<4x4xf32>
    %c = kiln.concat %y, %y dim = 1 : (tensor<4x10xf32>, tensor<4x10xf32>) -> tensor<4x20xf32>
    kiln.yield %p : tensor<4x8xf32>
  }
  %1 = kiln.fusion conv_epilogue ins(%img, %k : tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x4x4x8xf32> {
  ^bb0(%x: tensor<1x3x6x6xf32>, %w: tensor<8x3x3x3xf32>):
    %n = kiln.permute %x [0, 2, 3, 1] : tensor<1x3x6x6xf32> -> tensor<1x6x6x3xf32>
    %c = kiln.conv2d %n, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x6x6x3xf32>, tensor<8x3x3x3xf32>) -> tensor<1x4x4x8xf32>
    kiln.yield %c : tensor<1x4x4x8xf32>
  }
  return
}

// -----

// Transformer ops: attention with masks, gather, comparisons, broadcast,
// log-softmax.
// CHECK-LABEL: func.func @transformer_ops
//       CHECK:   kiln.attention %arg0, %arg1, %arg2 mask %arg3 scale = 1.250000e-01 : (tensor<2x4x7x64xf16>, tensor<2x4x9x64xf16>, tensor<2x4x9x32xf16>, tensor<2x1x1x9xf16>) -> tensor<2x4x7x32xf16>
//       CHECK:   kiln.broadcast %{{.+}} : tensor<1x9xi1> -> tensor<7x9xi1>
//       CHECK:   kiln.attention %arg0, %arg1, %arg2 mask %{{.+}} scale = 1.250000e-01 causal : (tensor<2x4x7x64xf16>, tensor<2x4x9x64xf16>, tensor<2x4x9x32xf16>, tensor<7x9xi1>) -> tensor<2x4x7x32xf16>
//       CHECK:   kiln.gather %arg4, %arg5 : (tensor<100x16xf16>, tensor<2x5xi64>) -> tensor<2x5x16xf16>
//       CHECK:   kiln.eq %arg5, %{{.+}} : tensor<2x5xi64>, tensor<i64> -> tensor<2x5xi1>
//       CHECK:   kiln.softmax %arg4 dim = 1 log : tensor<100x16xf16>
func.func @transformer_ops(%q: tensor<2x4x7x64xf16>, %k: tensor<2x4x9x64xf16>, %v: tensor<2x4x9x32xf16>, %m: tensor<2x1x1x9xf16>, %table: tensor<100x16xf16>, %ids: tensor<2x5xi64>) {
  %0 = kiln.attention %q, %k, %v mask %m scale = 0.125 : (tensor<2x4x7x64xf16>, tensor<2x4x9x64xf16>, tensor<2x4x9x32xf16>, tensor<2x1x1x9xf16>) -> tensor<2x4x7x32xf16>
  %keep = kiln.constant dense<true> : tensor<1x9xi1>
  %b = kiln.broadcast %keep : tensor<1x9xi1> -> tensor<7x9xi1>
  %1 = kiln.attention %q, %k, %v mask %b scale = 0.125 causal : (tensor<2x4x7x64xf16>, tensor<2x4x9x64xf16>, tensor<2x4x9x32xf16>, tensor<7x9xi1>) -> tensor<2x4x7x32xf16>
  %2 = kiln.gather %table, %ids : (tensor<100x16xf16>, tensor<2x5xi64>) -> tensor<2x5x16xf16>
  %zero = kiln.constant dense<0> : tensor<i64>
  %3 = kiln.eq %ids, %zero : tensor<2x5xi64>, tensor<i64> -> tensor<2x5xi1>
  %4 = kiln.softmax %table dim = 1 log : tensor<100x16xf16>
  return
}

// -----

// CHECK-LABEL: func.func @running_sums(
//       CHECK:   kiln.cumsum %arg0 dim = 1 : tensor<2x128xi32> -> tensor<2x128xi64>
//       CHECK:   kiln.cumsum %arg1 dim = 0 : tensor<5x3xf16> -> tensor<5x3xf16>
func.func @running_sums(%m: tensor<2x128xi32>, %x: tensor<5x3xf16>) {
  %0 = kiln.cumsum %m dim = 1 : tensor<2x128xi32> -> tensor<2x128xi64>
  %1 = kiln.cumsum %x dim = 0 : tensor<5x3xf16> -> tensor<5x3xf16>
  return
}

// -----

// The launch plan: a kernel's source and a launch with one configuration per
// image (the sm_80 image without the Hopper pipeline's shared memory or
// cluster).
// CHECK-LABEL: module {
//       CHECK:   kiln.cuda_kernel @kiln_0A gemm_epilogue source "extern \22C\22 __global__ void kiln_0A(const __half *a, __half *y) {}"
//       CHECK:   func.func @launches(
//       CHECK:     %[[Y:.*]] = kiln.launch gemm_epilogue ins(%arg0 : tensor<128x64xf16>) images [#kiln.launch<arch = "sm_90a", kernel = @kiln_0A, grid = [2, 1, 1], block = 384, shared = 1024, cluster = [2, 1, 1], tensor_maps = [#kiln.tensor_map<input = 0, dims = [64, 128], box = [64, 64], strides = [1, 1]>]>, #kiln.launch<arch = "sm_80", kernel = @kiln_0A, grid = [2, 1, 1], block = 384>] {kiln.offsets = array<i64: -1>} -> tensor<128x64xf16>
//       CHECK:     return %[[Y]]
module {
  kiln.cuda_kernel @kiln_0A gemm_epilogue source "extern \"C\" __global__ void kiln_0A(const __half *a, __half *y) {}"
  func.func @launches(%a: tensor<128x64xf16>) -> tensor<128x64xf16> {
    %0 = kiln.launch gemm_epilogue ins(%a : tensor<128x64xf16>) images [#kiln.launch<arch = "sm_90a", kernel = @kiln_0A, grid = [2, 1, 1], block = 384, shared = 1024, cluster = [2, 1, 1], tensor_maps = [#kiln.tensor_map<input = 0, dims = [64, 128], box = [64, 64], strides = [1, 1]>]>, #kiln.launch<arch = "sm_80", kernel = @kiln_0A, grid = [2, 1, 1], block = 384>] {kiln.offsets = array<i64: -1>} -> tensor<128x64xf16>
    return %0 : tensor<128x64xf16>
  }
}
