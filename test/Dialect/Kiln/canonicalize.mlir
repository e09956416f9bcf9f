// RUN: kiln-opt %s --split-input-file --canonicalize | FileCheck %s

// The kiln folders: ops that do nothing disappear, chains of reshapes and
// permutes collapse into one op, and reshaping a dense constant folds.

// CHECK-LABEL: func.func @noop_data_movement(
//  CHECK-SAME:     %[[X:.+]]: tensor<4x8xf32>
//   CHECK-NOT:   kiln.
//       CHECK:   return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @noop_data_movement(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = kiln.reshape %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = kiln.permute %x [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = kiln.cast %x : tensor<4x8xf32> to tensor<4x8xf32>
  %3 = kiln.concat %x dim = 0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = kiln.slice %x offsets = [0, 0] strides = [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0, %1, %2, %3, %4 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_chain(
//  CHECK-SAME:     %[[X:.+]]: tensor<2x3x4xf32>
//       CHECK:   %[[R:.+]] = kiln.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<4x6xf32>
//       CHECK:   return %[[R]]
func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = kiln.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %1 = kiln.reshape %0 : tensor<24xf32> -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// A view round trip cancels entirely.
// CHECK-LABEL: func.func @reshape_round_trip(
//  CHECK-SAME:     %[[X:.+]]: tensor<2x3xf32>
//   CHECK-NOT:   kiln.reshape
//       CHECK:   return %[[X]]
func.func @reshape_round_trip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = kiln.reshape %0 : tensor<6xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_constant(
//       CHECK:   %[[C:.+]] = kiln.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
//       CHECK:   return %[[C]]
func.func @reshape_constant() -> tensor<2x2xf32> {
  %c = kiln.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = kiln.reshape %c : tensor<4xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// permute(permute(x, [1, 2, 0]), [2, 0, 1]) is the identity; a chain that is
// not composes into one permute.
// CHECK-LABEL: func.func @permute_chains(
//  CHECK-SAME:     %[[X:.+]]: tensor<2x3x4xf32>
//       CHECK:   %[[P:.+]] = kiln.permute %[[X]] [2, 1, 0] : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
//       CHECK:   return %[[X]], %[[P]]
func.func @permute_chains(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x3x2xf32>) {
  %0 = kiln.permute %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = kiln.permute %0 [2, 0, 1] : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
  %2 = kiln.permute %x [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %3 = kiln.permute %2 [2, 0, 1] : tensor<3x2x4xf32> -> tensor<4x3x2xf32>
  return %1, %3 : tensor<2x3x4xf32>, tensor<4x3x2xf32>
}

// -----

// Ops that do change the data stay.
// CHECK-LABEL: func.func @no_fold(
//       CHECK:   kiln.reshape
//       CHECK:   kiln.permute
//       CHECK:   kiln.cast
//       CHECK:   kiln.slice
func.func @no_fold(%x: tensor<4x8xf32>) -> (tensor<32xf32>, tensor<8x4xf32>, tensor<4x8xf16>, tensor<4x4xf32>) {
  %0 = kiln.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %1 = kiln.permute %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %2 = kiln.cast %x : tensor<4x8xf32> to tensor<4x8xf16>
  %3 = kiln.slice %x offsets = [0, 1] strides = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0, %1, %2, %3 : tensor<32xf32>, tensor<8x4xf32>, tensor<4x8xf16>, tensor<4x4xf32>
}

// -----

// ViT's patch embedding back to tokens: NHWC -> NCHW, flatten, transpose is
// the NHWC tensor reshaped; no data moves.
// CHECK-LABEL: func.func @contiguous_view(
//  CHECK-NEXT:   %[[R:.+]] = kiln.reshape %arg0 : tensor<1x14x14x768xf32> -> tensor<1x196x768xf32>
//  CHECK-NEXT:   return %[[R]]
func.func @contiguous_view(%x: tensor<1x14x14x768xf32>) -> tensor<1x196x768xf32> {
  %0 = kiln.permute %x [0, 3, 1, 2] : tensor<1x14x14x768xf32> -> tensor<1x768x14x14xf32>
  %1 = kiln.reshape %0 : tensor<1x768x14x14xf32> -> tensor<1x768x196xf32>
  %2 = kiln.permute %1 [0, 2, 1] : tensor<1x768x196xf32> -> tensor<1x196x768xf32>
  return %2 : tensor<1x196x768xf32>
}

// -----

// A chain that really reorders elements stays.
// CHECK-LABEL: func.func @reordering_view(
//       CHECK:   kiln.permute
//       CHECK:   kiln.reshape
//       CHECK:   kiln.permute
func.func @reordering_view(%x: tensor<2x3x4x5xf32>) -> tensor<2x20x3xf32> {
  %0 = kiln.permute %x [0, 1, 3, 2] : tensor<2x3x4x5xf32> -> tensor<2x3x5x4xf32>
  %1 = kiln.reshape %0 : tensor<2x3x5x4xf32> -> tensor<2x3x20xf32>
  %2 = kiln.permute %1 [0, 2, 1] : tensor<2x3x20xf32> -> tensor<2x20x3xf32>
  return %2 : tensor<2x20x3xf32>
}

// -----

// The entry cast of a model compiled below its traced precision moves after
// the input's layout permute, so both run in one kernel.
// CHECK-LABEL: func.func @permute_before_entry_cast(
//  CHECK-NEXT:   %[[P:.+]] = kiln.permute %arg0 [0, 2, 3, 1] : tensor<1x3x4x5xf32> -> tensor<1x4x5x3xf32>
//  CHECK-NEXT:   %[[C:.+]] = kiln.cast %[[P]] : tensor<1x4x5x3xf32> to tensor<1x4x5x3xf16>
//  CHECK-NEXT:   return %[[C]]
func.func @permute_before_entry_cast(%x: tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf16> {
  %0 = kiln.cast %x : tensor<1x3x4x5xf32> to tensor<1x3x4x5xf16>
  %1 = kiln.permute %0 [0, 2, 3, 1] : tensor<1x3x4x5xf16> -> tensor<1x4x5x3xf16>
  return %1 : tensor<1x4x5x3xf16>
}

// -----

// GPT-2's Conv1D: view to rows, addmm, view back is one linear on the
// original shape. With another user of the linear, or an outer reshape that
// does not restore the rows, it stays.
// CHECK-LABEL: func.func @linear_over_rows(
//       CHECK:   %[[F:.+]] = kiln.reshape %arg0 : tensor<2x8x16xf32> -> tensor<16x16xf32>
//       CHECK:   %[[L:.+]] = kiln.linear %arg0, %arg1, %arg2 : (tensor<2x8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
//       CHECK:   kiln.linear %[[F]]
//       CHECK:   kiln.reshape %{{.+}} : tensor<16x32xf32> -> tensor<4x4x32xf32>
//       CHECK:   return %[[L]]
func.func @linear_over_rows(%x: tensor<2x8x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> (tensor<2x8x32xf32>, tensor<4x4x32xf32>) {
  %0 = kiln.reshape %x : tensor<2x8x16xf32> -> tensor<16x16xf32>
  %1 = kiln.linear %0, %w, %b : (tensor<16x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %2 = kiln.reshape %1 : tensor<16x32xf32> -> tensor<2x8x32xf32>
  %3 = kiln.linear %0, %w, %b : (tensor<16x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %4 = kiln.reshape %3 : tensor<16x32xf32> -> tensor<4x4x32xf32>
  return %2, %4 : tensor<2x8x32xf32>, tensor<4x4x32xf32>
}

// -----

// ViT's input path after kiln-patchify: NCHW -> NHWC, the entry cast, patch
// im2col. The cast moves after the views (a reshape lets it pass only on
// the way to a permute), and the two permutes compose into one of a reshape
// of the argument, so one kernel gathers and casts.
// CHECK-LABEL: func.func @compose_patch_chain(
//  CHECK-NEXT:   %[[R:.+]] = kiln.reshape %arg0 : tensor<1x3x8x8xf32> -> tensor<3x2x4x2x4x1xf32>
//  CHECK-NEXT:   %[[P:.+]] = kiln.permute %[[R]] [5, 1, 3, 2, 4, 0] : tensor<3x2x4x2x4x1xf32> -> tensor<1x2x2x4x4x3xf32>
//  CHECK-NEXT:   %[[C:.+]] = kiln.cast %[[P]] : tensor<1x2x2x4x4x3xf32> to tensor<1x2x2x4x4x3xf16>
//  CHECK-NEXT:   %[[F:.+]] = kiln.reshape %[[C]] : tensor<1x2x2x4x4x3xf16> -> tensor<1x2x2x48xf16>
//  CHECK-NEXT:   return %[[F]]
func.func @compose_patch_chain(%x: tensor<1x3x8x8xf32>) -> tensor<1x2x2x48xf16> {
  %0 = kiln.permute %x [0, 2, 3, 1] : tensor<1x3x8x8xf32> -> tensor<1x8x8x3xf32>
  %1 = kiln.cast %0 : tensor<1x8x8x3xf32> to tensor<1x8x8x3xf16>
  %2 = kiln.reshape %1 : tensor<1x8x8x3xf16> -> tensor<1x2x4x2x4x3xf16>
  %3 = kiln.permute %2 [0, 1, 3, 2, 4, 5] : tensor<1x2x4x2x4x3xf16> -> tensor<1x2x2x4x4x3xf16>
  %4 = kiln.reshape %3 : tensor<1x2x2x4x4x3xf16> -> tensor<1x2x2x48xf16>
  return %4 : tensor<1x2x2x48xf16>
}

// -----

// A cast of a computed value stays before its views (its producer's kernel
// may write the narrow type), and a reshape not bound for a permute keeps
// the cast before it.
// CHECK-LABEL: func.func @casts_that_stay(
//       CHECK:   %[[N:.+]] = kiln.neg %arg0
//       CHECK:   %[[C:.+]] = kiln.cast %[[N]]
//       CHECK:   kiln.permute %[[C]]
//       CHECK:   %[[D:.+]] = kiln.cast %arg0
//       CHECK:   kiln.reshape %[[D]]
func.func @casts_that_stay(%x: tensor<2x3xf32>) -> (tensor<3x2xf16>, tensor<6xf16>) {
  %n = kiln.neg %x : tensor<2x3xf32>
  %c = kiln.cast %n : tensor<2x3xf32> to tensor<2x3xf16>
  %p = kiln.permute %c [1, 0] : tensor<2x3xf16> -> tensor<3x2xf16>
  %d = kiln.cast %x : tensor<2x3xf32> to tensor<2x3xf16>
  %r = kiln.reshape %d : tensor<2x3xf16> -> tensor<6xf16>
  return %p, %r : tensor<3x2xf16>, tensor<6xf16>
}

// -----

// A concat of a concat along the same dimension, used only there, is one
// concat of the pieces.
// CHECK-LABEL: func.func @nested_concat(
//  CHECK-SAME:   %[[A:[a-z0-9]+]]: tensor<1x2x4x4xf32>, %[[B:[a-z0-9]+]]: tensor<1x3x4x4xf32>, %[[C:[a-z0-9]+]]: tensor<1x5x4x4xf32>
//       CHECK:   %[[R:.+]] = kiln.concat %[[A]], %[[B]], %[[C]], %[[A]] dim = 1
//  CHECK-NEXT:   return %[[R]]
func.func @nested_concat(%a: tensor<1x2x4x4xf32>, %b: tensor<1x3x4x4xf32>, %c: tensor<1x5x4x4xf32>) -> tensor<1x12x4x4xf32> {
  %0 = kiln.concat %b, %c dim = 1 : (tensor<1x3x4x4xf32>, tensor<1x5x4x4xf32>) -> tensor<1x8x4x4xf32>
  %1 = kiln.concat %a, %0, %a dim = 1 : (tensor<1x2x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x12x4x4xf32>
  return %1 : tensor<1x12x4x4xf32>
}

// -----

// Kept: an inner concat along another dimension, or one used elsewhere too
// (its copy is needed anyway).
// CHECK-LABEL: func.func @nested_concat_kept(
//  CHECK-SAME:   %[[A:[a-z0-9]+]]: tensor<1x2x4x4xf32>, %[[B:[a-z0-9]+]]: tensor<1x2x4x4xf32>, %[[C:[a-z0-9]+]]: tensor<1x2x8x4xf32>
//       CHECK:   %[[W:.+]] = kiln.concat %[[A]], %[[B]] dim = 2
//       CHECK:   %[[X:.+]] = kiln.concat %[[W]], %[[C]] dim = 1
//       CHECK:   %[[Y:.+]] = kiln.concat %[[A]], %[[B]] dim = 1
//       CHECK:   %[[Z:.+]] = kiln.concat %[[Y]], %[[A]] dim = 1
//       CHECK:   return %[[X]], %[[Z]], %[[Y]]
func.func @nested_concat_kept(%a: tensor<1x2x4x4xf32>, %b: tensor<1x2x4x4xf32>, %c: tensor<1x2x8x4xf32>) -> (tensor<1x4x8x4xf32>, tensor<1x6x4x4xf32>, tensor<1x4x4x4xf32>) {
  %0 = kiln.concat %a, %b dim = 2 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x8x4xf32>
  %1 = kiln.concat %0, %c dim = 1 : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x4x8x4xf32>
  %2 = kiln.concat %a, %b dim = 1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32>
  %3 = kiln.concat %2, %a dim = 1 : (tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x6x4x4xf32>
  return %1, %3, %2 : tensor<1x4x8x4xf32>, tensor<1x6x4x4xf32>, tensor<1x4x4x4xf32>
}

// -----

// GPT-2's causal mask as Hugging Face passes it, folded to a constant: 0 at
// and below the diagonal, fp16's lowest value above. It becomes the causal
// flag, and the constant goes.
// CHECK-LABEL: func.func @additive_causal_mask(
//   CHECK-NOT:   kiln.constant
//       CHECK:   %[[O:.+]] = kiln.attention %arg0, %arg1, %arg2 scale = 1.250000e-01 causal :
//  CHECK-SAME:     (tensor<2x4x3x8xf16>, tensor<2x4x3x8xf16>, tensor<2x4x3x8xf16>) -> tensor<2x4x3x8xf16>
//  CHECK-NEXT:   return %[[O]]
func.func @additive_causal_mask(%q: tensor<2x4x3x8xf16>, %k: tensor<2x4x3x8xf16>, %v: tensor<2x4x3x8xf16>) -> tensor<2x4x3x8xf16> {
  %m = kiln.constant dense<[[[[0.0, -65504.0, -65504.0], [0.0, 0.0, -65504.0], [0.0, 0.0, 0.0]]]]> : tensor<1x1x3x3xf16>
  %o = kiln.attention %q, %k, %v mask %m scale = 0.125 : (tensor<2x4x3x8xf16>, tensor<2x4x3x8xf16>, tensor<2x4x3x8xf16>, tensor<1x1x3x3xf16>) -> tensor<2x4x3x8xf16>
  return %o : tensor<2x4x3x8xf16>
}

// -----

// A boolean tril of rank 2 and an fp32 mask of -inf: both causal.
// CHECK-LABEL: func.func @boolean_and_infinite_causal_masks(
//   CHECK-NOT:   mask
//       CHECK:   kiln.attention %arg0, %arg0, %arg0 scale = 5.000000e-01 causal
//       CHECK:   kiln.attention %arg0, %arg0, %arg0 scale = 5.000000e-01 causal
func.func @boolean_and_infinite_causal_masks(%x: tensor<1x2x2x4xf32>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) {
  %b = kiln.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %o = kiln.attention %x, %x, %x mask %b scale = 0.5 : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>, tensor<2x2xi1>) -> tensor<1x2x2x4xf32>
  %f = kiln.constant dense<[[0.0, 0xFF800000], [0.0, 0.0]]> : tensor<2x2xf32>
  %p = kiln.attention %x, %x, %x mask %f scale = 0.5 : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>, tensor<2x2xf32>) -> tensor<1x2x2x4xf32>
  return %o, %p : tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>
}

// -----

// Hugging Face's GPT-2 called with input ids alone: a boolean tril expanded
// over the batch, [2, 1, S, S].
// CHECK-LABEL: func.func @causal_mask_per_batch(
//   CHECK-NOT:   mask
//       CHECK:   kiln.attention %arg0, %arg0, %arg0 scale = 5.000000e-01 causal
func.func @causal_mask_per_batch(%x: tensor<2x1x2x4xf32>) -> tensor<2x1x2x4xf32> {
  %m = kiln.constant dense<[[[[true, false], [true, true]]], [[[true, false], [true, true]]]]> : tensor<2x1x2x2xi1>
  %o = kiln.attention %x, %x, %x mask %m scale = 0.5 : (tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>, tensor<2x1x2x2xi1>) -> tensor<2x1x2x4xf32>
  return %o : tensor<2x1x2x4xf32>
}

// -----

// Kept: a mask whose removed entries are only -100 (a bias, not a
// removal), one with a padded key below the diagonal, one that is causal
// in one batch only, and a causal pattern where queries and keys differ in
// number.
// CHECK-LABEL: func.func @masks_that_stay(
//   CHECK-NOT:   causal
//       CHECK:   return
func.func @masks_that_stay(%x: tensor<2x1x2x4xf32>, %y: tensor<2x1x3x4xf32>) -> (tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>) {
  %soft = kiln.constant dense<[[0.0, -100.0], [0.0, 0.0]]> : tensor<2x2xf32>
  %a = kiln.attention %x, %x, %x mask %soft scale = 0.5 : (tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>, tensor<2x2xf32>) -> tensor<2x1x2x4xf32>
  %padded = kiln.constant dense<[[true, false], [false, true]]> : tensor<2x2xi1>
  %b = kiln.attention %x, %x, %x mask %padded scale = 0.5 : (tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>, tensor<2x2xi1>) -> tensor<2x1x2x4xf32>
  %batched = kiln.constant dense<[[[[true, false], [true, true]]], [[[true, true], [true, true]]]]> : tensor<2x1x2x2xi1>
  %c = kiln.attention %x, %x, %x mask %batched scale = 0.5 : (tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>, tensor<2x1x2x2xi1>) -> tensor<2x1x2x4xf32>
  %wide = kiln.constant dense<[[true, false, false], [true, true, false]]> : tensor<2x3xi1>
  %d = kiln.attention %x, %y, %y mask %wide scale = 0.5 : (tensor<2x1x2x4xf32>, tensor<2x1x3x4xf32>, tensor<2x1x3x4xf32>, tensor<2x3xi1>) -> tensor<2x1x2x4xf32>
  return %a, %b, %c, %d : tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>
}

// -----

// BERT's padding mask as transformers builds it: a where whose condition is
// all true, broadcasting the keys' mask over the queries. The attention
// reads the keys' mask itself.
// CHECK-LABEL: func.func @mask_through_constant_where(
//  CHECK-SAME:   %[[X:[a-z0-9]+]]: tensor<2x1x4x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x1x1x4xi1>
//   CHECK-NOT:   kiln.where
//       CHECK:   kiln.attention %[[X]], %[[X]], %[[X]] mask %[[K]] scale
func.func @mask_through_constant_where(%x: tensor<2x1x4x8xf32>, %keys: tensor<2x1x1x4xi1>) -> tensor<2x1x4x8xf32> {
  %all = kiln.constant dense<true> : tensor<1x1x4x1xi1>
  %none = kiln.constant dense<false> : tensor<i1>
  %m = kiln.where %all, %keys, %none : tensor<1x1x4x1xi1>, tensor<2x1x1x4xi1>, tensor<i1> -> tensor<2x1x4x4xi1>
  %o = kiln.attention %x, %x, %x mask %m scale = 0.5 : (tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>, tensor<2x1x4x4xi1>) -> tensor<2x1x4x8xf32>
  return %o : tensor<2x1x4x8xf32>
}

// -----

// Kept: a where whose condition varies with the query (a real choice).
// CHECK-LABEL: func.func @mask_through_varying_where(
//       CHECK:   %[[M:.+]] = kiln.where
//       CHECK:   kiln.attention %{{.+}} mask %[[M]]
func.func @mask_through_varying_where(%x: tensor<2x1x4x8xf32>, %keys: tensor<2x1x1x4xi1>) -> tensor<2x1x4x8xf32> {
  %rows = kiln.constant dense<[[[[true], [false], [true], [true]]]]> : tensor<1x1x4x1xi1>
  %none = kiln.constant dense<false> : tensor<i1>
  %m = kiln.where %rows, %keys, %none : tensor<1x1x4x1xi1>, tensor<2x1x1x4xi1>, tensor<i1> -> tensor<2x1x4x4xi1>
  %o = kiln.attention %x, %x, %x mask %m scale = 0.5 : (tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>, tensor<2x1x4x4xi1>) -> tensor<2x1x4x8xf32>
  return %o : tensor<2x1x4x8xf32>
}

// -----

// A gather of rows 0, 1, 2, ... in order is the table reshaped; rows out of
// order stay a gather.
// CHECK-LABEL: func.func @identity_gather(
//  CHECK-SAME:   %[[T:[a-z0-9]+]]: tensor<6xi1>, %[[U:[a-z0-9]+]]: tensor<3x2xf32>
//       CHECK:   %[[R:.+]] = kiln.reshape %[[T]] : tensor<6xi1> -> tensor<2x1x3xi1>
//       CHECK:   %[[G:.+]] = kiln.gather %[[U]]
//       CHECK:   return %[[R]], %[[G]]
func.func @identity_gather(%t: tensor<6xi1>, %u: tensor<3x2xf32>) -> (tensor<2x1x3xi1>, tensor<3x2xf32>) {
  %i = kiln.constant dense<[[[0, 1, 2]], [[3, 4, 5]]]> : tensor<2x1x3xi64>
  %g = kiln.gather %t, %i : (tensor<6xi1>, tensor<2x1x3xi64>) -> tensor<2x1x3xi1>
  %j = kiln.constant dense<[0, 2, 1]> : tensor<3xi64>
  %h = kiln.gather %u, %j : (tensor<3x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  return %g, %h : tensor<2x1x3xi1>, tensor<3x2xf32>
}

// -----

// GPT-2's mask with padding: where(causal tril, keys, false) is the keys'
// mask with the causal flag. Kept when the other operand does not remove
// every key.
// CHECK-LABEL: func.func @causal_where_with_padding(
//  CHECK-SAME:   %[[X:[a-z0-9]+]]: tensor<2x1x3x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x1x1x3xi1>
//       CHECK:   kiln.attention %[[X]], %[[X]], %[[X]] mask %[[K]] scale = 5.000000e-01 causal
//       CHECK:   %[[KEEP:.+]] = kiln.where
//       CHECK:   kiln.attention %[[X]], %[[X]], %[[X]] mask %[[KEEP]] scale = 5.000000e-01 :
func.func @causal_where_with_padding(%x: tensor<2x1x3x8xf32>, %keys: tensor<2x1x1x3xi1>) -> (tensor<2x1x3x8xf32>, tensor<2x1x3x8xf32>) {
  %tril = kiln.constant dense<[[[[true, false, false], [true, true, false], [true, true, true]]]]> : tensor<1x1x3x3xi1>
  %none = kiln.constant dense<false> : tensor<i1>
  %m = kiln.where %tril, %keys, %none : tensor<1x1x3x3xi1>, tensor<2x1x1x3xi1>, tensor<i1> -> tensor<2x1x3x3xi1>
  %o = kiln.attention %x, %x, %x mask %m scale = 0.5 : (tensor<2x1x3x8xf32>, tensor<2x1x3x8xf32>, tensor<2x1x3x8xf32>, tensor<2x1x3x3xi1>) -> tensor<2x1x3x8xf32>
  %all = kiln.constant dense<true> : tensor<i1>
  %n = kiln.where %tril, %keys, %all : tensor<1x1x3x3xi1>, tensor<2x1x1x3xi1>, tensor<i1> -> tensor<2x1x3x3xi1>
  %p = kiln.attention %x, %x, %x mask %n scale = 0.5 : (tensor<2x1x3x8xf32>, tensor<2x1x3x8xf32>, tensor<2x1x3x8xf32>, tensor<2x1x3x3xi1>) -> tensor<2x1x3x8xf32>
  return %o, %p : tensor<2x1x3x8xf32>, tensor<2x1x3x8xf32>
}
