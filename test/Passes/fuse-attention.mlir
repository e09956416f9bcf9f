// RUN: kiln-opt %s --split-input-file --kiln-fuse-attention --canonicalize | FileCheck %s

// BERT's eager attention: q k^T / sqrt(d) + mask, softmax, times v.
// CHECK-LABEL: func.func @bert_pattern(
//       CHECK:   %[[A:.+]] = kiln.fusion attention ins(%arg0, %arg1, %arg2, %arg3 :
//       CHECK:     kiln.attention %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}} scale = 1.250000e-01 : (tensor<2x4x9x64xf16>, tensor<2x4x9x64xf16>, tensor<2x4x9x64xf16>, tensor<2x1x1x9xf16>) -> tensor<2x4x9x64xf16>
//   CHECK-NOT:   kiln.softmax
//   CHECK-NOT:   kiln.batch_matmul
//       CHECK:   return %[[A]]
func.func @bert_pattern(%q: tensor<2x4x9x64xf16>, %k: tensor<2x4x9x64xf16>, %v: tensor<2x4x9x64xf16>, %mask: tensor<2x1x1x9xf16>) -> tensor<2x4x9x64xf16> {
  %kt = kiln.permute %k [0, 1, 3, 2] : tensor<2x4x9x64xf16> -> tensor<2x4x64x9xf16>
  %s = kiln.batch_matmul %q, %kt : (tensor<2x4x9x64xf16>, tensor<2x4x64x9xf16>) -> tensor<2x4x9x9xf16>
  %c = kiln.constant dense<8.0> : tensor<f16>
  %d = kiln.div %s, %c : tensor<2x4x9x9xf16>, tensor<f16> -> tensor<2x4x9x9xf16>
  %m = kiln.add %d, %mask : tensor<2x4x9x9xf16>, tensor<2x1x1x9xf16> -> tensor<2x4x9x9xf16>
  %p = kiln.softmax %m dim = 3 : tensor<2x4x9x9xf16>
  %o = kiln.batch_matmul %p, %v : (tensor<2x4x9x9xf16>, tensor<2x4x9x64xf16>) -> tensor<2x4x9x64xf16>
  return %o : tensor<2x4x9x64xf16>
}

// -----

// A boolean mask applied with where(mask, scores, -inf-ish), scale as a
// multiply on the left; and an imported attention with a cast after it,
// which joins its group.
// CHECK-LABEL: func.func @where_mask(
//       CHECK:   kiln.fusion attention
//       CHECK:     kiln.attention %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}} scale = 2.500000e-01 : (tensor<3x5x16xf32>, tensor<3x5x16xf32>, tensor<3x5x16xf32>, tensor<5x5xi1>) -> tensor<3x5x16xf32>
//       CHECK:   kiln.fusion attention
//       CHECK:     kiln.attention
//  CHECK-SAME:       causal
//       CHECK:     kiln.cast
func.func @where_mask(%q: tensor<3x5x16xf32>, %k: tensor<3x5x16xf32>, %v: tensor<3x5x16xf32>, %keep: tensor<5x5xi1>) -> (tensor<3x5x16xf32>, tensor<3x5x16xf16>) {
  %kt = kiln.permute %k [0, 2, 1] : tensor<3x5x16xf32> -> tensor<3x16x5xf32>
  %s = kiln.batch_matmul %q, %kt : (tensor<3x5x16xf32>, tensor<3x16x5xf32>) -> tensor<3x5x5xf32>
  %c = kiln.constant dense<0.25> : tensor<f32>
  %d = kiln.mul %c, %s : tensor<f32>, tensor<3x5x5xf32> -> tensor<3x5x5xf32>
  %fill = kiln.constant dense<-3.4e38> : tensor<f32>
  %w = kiln.where %keep, %d, %fill : tensor<5x5xi1>, tensor<3x5x5xf32>, tensor<f32> -> tensor<3x5x5xf32>
  %p = kiln.softmax %w dim = 2 : tensor<3x5x5xf32>
  %o = kiln.batch_matmul %p, %v : (tensor<3x5x5xf32>, tensor<3x5x16xf32>) -> tensor<3x5x16xf32>
  %a = kiln.attention %q, %k, %v scale = 0.25 causal : (tensor<3x5x16xf32>, tensor<3x5x16xf32>, tensor<3x5x16xf32>) -> tensor<3x5x16xf32>
  %h = kiln.cast %a : tensor<3x5x16xf32> to tensor<3x5x16xf16>
  return %o, %h : tensor<3x5x16xf32>, tensor<3x5x16xf16>
}

// -----

// Near misses stay as they are: the probabilities are also returned; a
// log-softmax; a softmax over another dimension; a fill that is not large
// and negative (not a mask).
// CHECK-LABEL: func.func @near_misses(
//   CHECK-NOT:   kiln.attention
//   CHECK-NOT:   kiln.fusion
func.func @near_misses(%q: tensor<3x5x16xf32>, %k: tensor<3x5x16xf32>, %v: tensor<3x5x16xf32>, %keep: tensor<5x5xi1>) -> (tensor<3x5x16xf32>, tensor<3x5x5xf32>, tensor<3x5x16xf32>, tensor<3x5x16xf32>, tensor<3x5x16xf32>) {
  %kt = kiln.permute %k [0, 2, 1] : tensor<3x5x16xf32> -> tensor<3x16x5xf32>
  %s = kiln.batch_matmul %q, %kt : (tensor<3x5x16xf32>, tensor<3x16x5xf32>) -> tensor<3x5x5xf32>
  %p = kiln.softmax %s dim = 2 : tensor<3x5x5xf32>
  %o = kiln.batch_matmul %p, %v : (tensor<3x5x5xf32>, tensor<3x5x16xf32>) -> tensor<3x5x16xf32>
  %s2 = kiln.batch_matmul %q, %kt : (tensor<3x5x16xf32>, tensor<3x16x5xf32>) -> tensor<3x5x5xf32>
  %l = kiln.softmax %s2 dim = 2 log : tensor<3x5x5xf32>
  %o2 = kiln.batch_matmul %l, %v : (tensor<3x5x5xf32>, tensor<3x5x16xf32>) -> tensor<3x5x16xf32>
  %s3 = kiln.batch_matmul %q, %kt : (tensor<3x5x16xf32>, tensor<3x16x5xf32>) -> tensor<3x5x5xf32>
  %c = kiln.softmax %s3 dim = 1 : tensor<3x5x5xf32>
  %o3 = kiln.batch_matmul %c, %v : (tensor<3x5x5xf32>, tensor<3x5x16xf32>) -> tensor<3x5x16xf32>
  %s4 = kiln.batch_matmul %q, %kt : (tensor<3x5x16xf32>, tensor<3x16x5xf32>) -> tensor<3x5x5xf32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %w = kiln.where %keep, %s4, %zero : tensor<5x5xi1>, tensor<3x5x5xf32>, tensor<f32> -> tensor<3x5x5xf32>
  %p4 = kiln.softmax %w dim = 2 : tensor<3x5x5xf32>
  %o4 = kiln.batch_matmul %p4, %v : (tensor<3x5x5xf32>, tensor<3x5x16xf32>) -> tensor<3x5x16xf32>
  return %o, %p, %o2, %o3, %o4 : tensor<3x5x16xf32>, tensor<3x5x5xf32>, tensor<3x5x16xf32>, tensor<3x5x16xf32>, tensor<3x5x16xf32>
}

// -----

// masked_fill(drop, -inf): the condition marks what to drop, so the mask is
// its negation.
// CHECK-LABEL: func.func @masked_fill(
//       CHECK:   %[[KEEP:.+]] = kiln.eq %arg3, %{{.+}} : tensor<1x5xi1>, tensor<i1> -> tensor<1x5xi1>
//       CHECK:   kiln.fusion attention ins(%arg0, %arg1, %arg2, %[[KEEP]] :
func.func @masked_fill(%q: tensor<3x5x16xf32>, %k: tensor<3x5x16xf32>, %v: tensor<3x5x16xf32>, %drop: tensor<1x5xi1>) -> tensor<3x5x16xf32> {
  %kt = kiln.permute %k [0, 2, 1] : tensor<3x5x16xf32> -> tensor<3x16x5xf32>
  %s = kiln.batch_matmul %q, %kt : (tensor<3x5x16xf32>, tensor<3x16x5xf32>) -> tensor<3x5x5xf32>
  %fill = kiln.constant dense<-1.0e9> : tensor<f32>
  %w = kiln.where %drop, %fill, %s : tensor<1x5xi1>, tensor<f32>, tensor<3x5x5xf32> -> tensor<3x5x5xf32>
  %p = kiln.softmax %w dim = 2 : tensor<3x5x5xf32>
  %o = kiln.batch_matmul %p, %v : (tensor<3x5x5xf32>, tensor<3x5x16xf32>) -> tensor<3x5x16xf32>
  return %o : tensor<3x5x16xf32>
}
