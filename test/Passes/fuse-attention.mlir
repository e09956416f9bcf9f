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

// -----

// Split heads of one QKV projection (GPT-2's c_attn, ViT's in_proj): the
// slice/reshape/permute views join the group, which reads the projection
// in place, and so does the merge-heads permute of the result. The reshape
// after it stays outside: it moves no data.
// CHECK-LABEL: func.func @qkv_views(
//       CHECK:   %[[G:.+]] = kiln.fusion attention ins(%arg0 : tensor<2x8x96xf16>) -> tensor<2x8x4x8xf16>
//   CHECK-COUNT-3:     kiln.slice
//       CHECK:     kiln.attention
//       CHECK:     %[[M:.+]] = kiln.permute
//       CHECK:     kiln.yield %[[M]]
//       CHECK:   kiln.reshape %[[G]] : tensor<2x8x4x8xf16> -> tensor<2x8x32xf16>
func.func @qkv_views(%x: tensor<2x8x96xf16>) -> tensor<2x8x32xf16> {
  %q0 = kiln.slice %x offsets = [0, 0, 0] strides = [1, 1, 1] : tensor<2x8x96xf16> -> tensor<2x8x32xf16>
  %q1 = kiln.reshape %q0 : tensor<2x8x32xf16> -> tensor<2x8x4x8xf16>
  %q = kiln.permute %q1 [0, 2, 1, 3] : tensor<2x8x4x8xf16> -> tensor<2x4x8x8xf16>
  %k0 = kiln.slice %x offsets = [0, 0, 32] strides = [1, 1, 1] : tensor<2x8x96xf16> -> tensor<2x8x32xf16>
  %k1 = kiln.reshape %k0 : tensor<2x8x32xf16> -> tensor<2x8x4x8xf16>
  %k = kiln.permute %k1 [0, 2, 1, 3] : tensor<2x8x4x8xf16> -> tensor<2x4x8x8xf16>
  %v0 = kiln.slice %x offsets = [0, 0, 64] strides = [1, 1, 1] : tensor<2x8x96xf16> -> tensor<2x8x32xf16>
  %v1 = kiln.reshape %v0 : tensor<2x8x32xf16> -> tensor<2x8x4x8xf16>
  %v = kiln.permute %v1 [0, 2, 1, 3] : tensor<2x8x4x8xf16> -> tensor<2x4x8x8xf16>
  %o = kiln.attention %q, %k, %v scale = 0.35 : (tensor<2x4x8x8xf16>, tensor<2x4x8x8xf16>, tensor<2x4x8x8xf16>) -> tensor<2x4x8x8xf16>
  %m = kiln.permute %o [0, 2, 1, 3] : tensor<2x4x8x8xf16> -> tensor<2x8x4x8xf16>
  %r = kiln.reshape %m : tensor<2x8x4x8xf16> -> tensor<2x8x32xf16>
  return %r : tensor<2x8x32xf16>
}

// -----

// Near misses stay outside: a view whose result is also used elsewhere, a
// view moving the head dimension (the kernel needs it contiguous), and a
// permute of the result that moves the head dimension.
// CHECK-LABEL: func.func @views_left_outside(
//       CHECK:   %[[Q:.+]] = kiln.permute %arg0 [0, 2, 1, 3]
//       CHECK:   %[[K:.+]] = kiln.permute %arg1 [0, 1, 3, 2]
//       CHECK:   %[[G:.+]] = kiln.fusion attention ins(%[[Q]], %[[K]], %arg2 :
//   CHECK-NOT:     kiln.permute
//       CHECK:     kiln.yield
//       CHECK:   kiln.permute %[[G]] [0, 1, 3, 2]
func.func @views_left_outside(%x: tensor<2x8x4x8xf16>, %y: tensor<2x4x8x8xf16>, %v: tensor<2x4x8x8xf16>) -> (tensor<2x4x8x8xf16>, tensor<2x4x8x8xf16>) {
  %q = kiln.permute %x [0, 2, 1, 3] : tensor<2x8x4x8xf16> -> tensor<2x4x8x8xf16>
  %k = kiln.permute %y [0, 1, 3, 2] : tensor<2x4x8x8xf16> -> tensor<2x4x8x8xf16>
  %o = kiln.attention %q, %k, %v scale = 0.35 : (tensor<2x4x8x8xf16>, tensor<2x4x8x8xf16>, tensor<2x4x8x8xf16>) -> tensor<2x4x8x8xf16>
  %t = kiln.permute %o [0, 1, 3, 2] : tensor<2x4x8x8xf16> -> tensor<2x4x8x8xf16>
  return %t, %q : tensor<2x4x8x8xf16>, tensor<2x4x8x8xf16>
}

// -----

// nn.MultiheadAttention's slow path: the packed projection is reshaped,
// permuted so that q, k and v lead, and sliced three ways. The shared
// permute is read only by the three slices, so it joins the attention
// group with them and the kernel reads the projection in place.
// CHECK-LABEL: func.func @mha_slow_path(
//       CHECK:   kiln.fusion attention ins(%arg0 : tensor<10x1x192xf32>)
//       CHECK:     kiln.permute
//       CHECK:     kiln.slice
//       CHECK:     kiln.attention
//   CHECK-NOT:   kiln.permute
//       CHECK:   return
func.func @mha_slow_path(%p: tensor<10x1x192xf32>) -> tensor<1x4x10x16xf32> {
  %r = kiln.reshape %p : tensor<10x1x192xf32> -> tensor<1x10x1x3x64xf32>
  %t = kiln.permute %r [3, 1, 2, 0, 4] : tensor<1x10x1x3x64xf32> -> tensor<3x10x1x1x64xf32>
  %v3 = kiln.reshape %t : tensor<3x10x1x1x64xf32> -> tensor<3x10x1x64xf32>
  %q0 = kiln.slice %v3 offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<3x10x1x64xf32> -> tensor<1x10x1x64xf32>
  %k0 = kiln.slice %v3 offsets = [1, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<3x10x1x64xf32> -> tensor<1x10x1x64xf32>
  %w0 = kiln.slice %v3 offsets = [2, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<3x10x1x64xf32> -> tensor<1x10x1x64xf32>
  %q1 = kiln.reshape %q0 : tensor<1x10x1x64xf32> -> tensor<10x4x16xf32>
  %k1 = kiln.reshape %k0 : tensor<1x10x1x64xf32> -> tensor<10x4x16xf32>
  %w1 = kiln.reshape %w0 : tensor<1x10x1x64xf32> -> tensor<10x4x16xf32>
  %q2 = kiln.permute %q1 [1, 0, 2] : tensor<10x4x16xf32> -> tensor<4x10x16xf32>
  %k2 = kiln.permute %k1 [1, 0, 2] : tensor<10x4x16xf32> -> tensor<4x10x16xf32>
  %w2 = kiln.permute %w1 [1, 0, 2] : tensor<10x4x16xf32> -> tensor<4x10x16xf32>
  %q = kiln.reshape %q2 : tensor<4x10x16xf32> -> tensor<1x4x10x16xf32>
  %k = kiln.reshape %k2 : tensor<4x10x16xf32> -> tensor<1x4x10x16xf32>
  %w = kiln.reshape %w2 : tensor<4x10x16xf32> -> tensor<1x4x10x16xf32>
  %a = kiln.attention %q, %k, %w scale = 2.500000e-01 : (tensor<1x4x10x16xf32>, tensor<1x4x10x16xf32>, tensor<1x4x10x16xf32>) -> tensor<1x4x10x16xf32>
  return %a : tensor<1x4x10x16xf32>
}

// -----

// The same permute with a user outside the attention (here, a result) stays
// a kernel of its own: the group reads it as an input.
// CHECK-LABEL: func.func @shared_permute_escapes(
//       CHECK:   %[[T:.+]] = kiln.permute %{{.+}} [3, 1, 2, 0, 4]
//       CHECK:   kiln.fusion attention ins(%[[T]] : tensor<3x10x1x1x64xf32>)
func.func @shared_permute_escapes(%p: tensor<10x1x192xf32>) -> (tensor<1x4x10x16xf32>, tensor<3x10x1x1x64xf32>) {
  %r = kiln.reshape %p : tensor<10x1x192xf32> -> tensor<1x10x1x3x64xf32>
  %t = kiln.permute %r [3, 1, 2, 0, 4] : tensor<1x10x1x3x64xf32> -> tensor<3x10x1x1x64xf32>
  %v3 = kiln.reshape %t : tensor<3x10x1x1x64xf32> -> tensor<3x10x1x64xf32>
  %q0 = kiln.slice %v3 offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<3x10x1x64xf32> -> tensor<1x10x1x64xf32>
  %k0 = kiln.slice %v3 offsets = [1, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<3x10x1x64xf32> -> tensor<1x10x1x64xf32>
  %w0 = kiln.slice %v3 offsets = [2, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<3x10x1x64xf32> -> tensor<1x10x1x64xf32>
  %q = kiln.reshape %q0 : tensor<1x10x1x64xf32> -> tensor<1x1x10x64xf32>
  %k = kiln.reshape %k0 : tensor<1x10x1x64xf32> -> tensor<1x1x10x64xf32>
  %w = kiln.reshape %w0 : tensor<1x10x1x64xf32> -> tensor<1x1x10x64xf32>
  %a = kiln.attention %q, %k, %w scale = 1.250000e-01 : (tensor<1x1x10x64xf32>, tensor<1x1x10x64xf32>, tensor<1x1x10x64xf32>) -> tensor<1x1x10x64xf32>
  %o = kiln.reshape %a : tensor<1x1x10x64xf32> -> tensor<1x4x10x16xf32>
  return %o, %t : tensor<1x4x10x16xf32>, tensor<3x10x1x1x64xf32>
}

// -----

// nn.MultiheadAttention's slow path (torch.export never takes the fast
// one): sequence-first, batch and heads merged into one dimension before
// the split. The input transpose moves behind the packed in-projection and
// the attention reads q, k and v through the whole view chain; the output
// transpose moves before the out-projection, so the attention writes its
// result batch-first and the projection reads it with a free reshape. No
// permute is left outside the group.
// CHECK-LABEL: func.func @mha_slow_path(
//       CHECK:   %[[QKV:.+]] = kiln.linear %arg0, %arg1, %arg2 : (tensor<2x3x8xf32>, tensor<24x8xf32>, tensor<24xf32>) -> tensor<2x3x24xf32>
//       CHECK:   %[[A:.+]] = kiln.fusion attention ins(%[[QKV]] : tensor<2x3x24xf32>) -> tensor<2x3x2x4xf32>
//       CHECK:     kiln.attention
//  CHECK-NEXT:     kiln.permute %{{.+}} [0, 2, 1, 3]
//       CHECK:   %[[R:.+]] = kiln.reshape %[[A]] : tensor<2x3x2x4xf32> -> tensor<2x3x8xf32>
//  CHECK-NEXT:   %[[O:.+]] = kiln.linear %[[R]], %arg3, %arg4 : (tensor<2x3x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
//  CHECK-NEXT:   return %[[O]]
func.func @mha_slow_path(%x: tensor<2x3x8xf32>, %wi: tensor<24x8xf32>, %bi: tensor<24xf32>, %wo: tensor<8x8xf32>, %bo: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %t = kiln.permute %x [1, 0, 2] : tensor<2x3x8xf32> -> tensor<3x2x8xf32>
  %qkv = kiln.linear %t, %wi, %bi : (tensor<3x2x8xf32>, tensor<24x8xf32>, tensor<24xf32>) -> tensor<3x2x24xf32>
  %u = kiln.reshape %qkv : tensor<3x2x24xf32> -> tensor<1x3x2x3x8xf32>
  %p = kiln.permute %u [3, 1, 2, 0, 4] : tensor<1x3x2x3x8xf32> -> tensor<3x3x2x1x8xf32>
  %r = kiln.reshape %p : tensor<3x3x2x1x8xf32> -> tensor<3x3x2x8xf32>
  %q0 = kiln.slice %r offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<3x3x2x8xf32> -> tensor<1x3x2x8xf32>
  %k0 = kiln.slice %r offsets = [1, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<3x3x2x8xf32> -> tensor<1x3x2x8xf32>
  %v0 = kiln.slice %r offsets = [2, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<3x3x2x8xf32> -> tensor<1x3x2x8xf32>
  %qm = kiln.reshape %q0 : tensor<1x3x2x8xf32> -> tensor<3x4x4xf32>
  %km = kiln.reshape %k0 : tensor<1x3x2x8xf32> -> tensor<3x4x4xf32>
  %vm = kiln.reshape %v0 : tensor<1x3x2x8xf32> -> tensor<3x4x4xf32>
  %qt = kiln.permute %qm [1, 0, 2] : tensor<3x4x4xf32> -> tensor<4x3x4xf32>
  %kt = kiln.permute %km [1, 0, 2] : tensor<3x4x4xf32> -> tensor<4x3x4xf32>
  %vt = kiln.permute %vm [1, 0, 2] : tensor<3x4x4xf32> -> tensor<4x3x4xf32>
  %q = kiln.reshape %qt : tensor<4x3x4xf32> -> tensor<2x2x3x4xf32>
  %k = kiln.reshape %kt : tensor<4x3x4xf32> -> tensor<2x2x3x4xf32>
  %v = kiln.reshape %vt : tensor<4x3x4xf32> -> tensor<2x2x3x4xf32>
  %a = kiln.attention %q, %k, %v scale = 5.000000e-01 : (tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>) -> tensor<2x2x3x4xf32>
  %ap = kiln.permute %a [2, 0, 1, 3] : tensor<2x2x3x4xf32> -> tensor<3x2x2x4xf32>
  %am = kiln.reshape %ap : tensor<3x2x2x4xf32> -> tensor<6x8xf32>
  %o = kiln.linear %am, %wo, %bo : (tensor<6x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<6x8xf32>
  %or = kiln.reshape %o : tensor<6x8xf32> -> tensor<3x2x8xf32>
  %ob = kiln.permute %or [1, 0, 2] : tensor<3x2x8xf32> -> tensor<2x3x8xf32>
  return %ob : tensor<2x3x8xf32>
}

// -----

// The packed projection is also a result: its input transpose stays (the
// projection's rows are needed sequence-first), and q, k and v are read
// through the views as before.
// CHECK-LABEL: func.func @projection_used_elsewhere(
//       CHECK:   %[[T:.+]] = kiln.permute %arg0 [1, 0, 2]
//       CHECK:   %[[QKV:.+]] = kiln.linear %[[T]], %arg1, %arg2 : (tensor<3x2x8xf32>, tensor<24x8xf32>, tensor<24xf32>) -> tensor<3x2x24xf32>
//       CHECK:   kiln.fusion attention ins(%[[QKV]] : tensor<3x2x24xf32>)
func.func @projection_used_elsewhere(%x: tensor<2x3x8xf32>, %wi: tensor<24x8xf32>, %bi: tensor<24xf32>, %wo: tensor<8x8xf32>, %bo: tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<3x2x24xf32>) {
  %t = kiln.permute %x [1, 0, 2] : tensor<2x3x8xf32> -> tensor<3x2x8xf32>
  %qkv = kiln.linear %t, %wi, %bi : (tensor<3x2x8xf32>, tensor<24x8xf32>, tensor<24xf32>) -> tensor<3x2x24xf32>
  %u = kiln.reshape %qkv : tensor<3x2x24xf32> -> tensor<1x3x2x3x8xf32>
  %p = kiln.permute %u [3, 1, 2, 0, 4] : tensor<1x3x2x3x8xf32> -> tensor<3x3x2x1x8xf32>
  %r = kiln.reshape %p : tensor<3x3x2x1x8xf32> -> tensor<3x3x2x8xf32>
  %q0 = kiln.slice %r offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<3x3x2x8xf32> -> tensor<1x3x2x8xf32>
  %k0 = kiln.slice %r offsets = [1, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<3x3x2x8xf32> -> tensor<1x3x2x8xf32>
  %v0 = kiln.slice %r offsets = [2, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<3x3x2x8xf32> -> tensor<1x3x2x8xf32>
  %qm = kiln.reshape %q0 : tensor<1x3x2x8xf32> -> tensor<3x4x4xf32>
  %km = kiln.reshape %k0 : tensor<1x3x2x8xf32> -> tensor<3x4x4xf32>
  %vm = kiln.reshape %v0 : tensor<1x3x2x8xf32> -> tensor<3x4x4xf32>
  %qt = kiln.permute %qm [1, 0, 2] : tensor<3x4x4xf32> -> tensor<4x3x4xf32>
  %kt = kiln.permute %km [1, 0, 2] : tensor<3x4x4xf32> -> tensor<4x3x4xf32>
  %vt = kiln.permute %vm [1, 0, 2] : tensor<3x4x4xf32> -> tensor<4x3x4xf32>
  %q = kiln.reshape %qt : tensor<4x3x4xf32> -> tensor<2x2x3x4xf32>
  %k = kiln.reshape %kt : tensor<4x3x4xf32> -> tensor<2x2x3x4xf32>
  %v = kiln.reshape %vt : tensor<4x3x4xf32> -> tensor<2x2x3x4xf32>
  %a = kiln.attention %q, %k, %v scale = 5.000000e-01 : (tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>) -> tensor<2x2x3x4xf32>
  %ap = kiln.permute %a [2, 0, 1, 3] : tensor<2x2x3x4xf32> -> tensor<3x2x2x4xf32>
  %am = kiln.reshape %ap : tensor<3x2x2x4xf32> -> tensor<6x8xf32>
  %o = kiln.linear %am, %wo, %bo : (tensor<6x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<6x8xf32>
  %or = kiln.reshape %o : tensor<6x8xf32> -> tensor<3x2x8xf32>
  %ob = kiln.permute %or [1, 0, 2] : tensor<3x2x8xf32> -> tensor<2x3x8xf32>
  return %ob, %qkv : tensor<2x3x8xf32>, tensor<3x2x24xf32>
}
