// RUN: not kiln-translate --kiln-to-cuda %s --split-input-file 2>&1 | FileCheck %s

// What the attention emitter refuses, with an error at the op.

// A query computed inside the group (here scaled) is not read in place.
// CHECK: error: 'kiln.attention' op the attention's query, key and value must be inputs of the group or views of them (permute, slice, reshape) that keep the head dimension contiguous, and the mask an input; the code generator computes none of them
func.func @computed_query(%q: tensor<1x8x64xf16>, %k: tensor<1x8x64xf16>, %v: tensor<1x8x64xf16>) -> tensor<1x8x64xf16> {
  %0 = kiln.fusion attention ins(%q, %k, %v : tensor<1x8x64xf16>, tensor<1x8x64xf16>, tensor<1x8x64xf16>) -> tensor<1x8x64xf16> {
  ^bb0(%a: tensor<1x8x64xf16>, %b: tensor<1x8x64xf16>, %c: tensor<1x8x64xf16>):
    %n = kiln.neg %a : tensor<1x8x64xf16>
    %o = kiln.attention %n, %b, %c scale = 0.125 : (tensor<1x8x64xf16>, tensor<1x8x64xf16>, tensor<1x8x64xf16>) -> tensor<1x8x64xf16>
    kiln.yield %o : tensor<1x8x64xf16>
  }
  return %0 : tensor<1x8x64xf16>
}

// -----

// CHECK: error: 'kiln.attention' op head sizes past 128 are not supported by the attention kernel yet, got 256 and 256
func.func @head_256(%q: tensor<1x8x256xf16>, %k: tensor<1x8x256xf16>, %v: tensor<1x8x256xf16>) -> tensor<1x8x256xf16> {
  %0 = kiln.fusion attention ins(%q, %k, %v : tensor<1x8x256xf16>, tensor<1x8x256xf16>, tensor<1x8x256xf16>) -> tensor<1x8x256xf16> {
  ^bb0(%a: tensor<1x8x256xf16>, %b: tensor<1x8x256xf16>, %c: tensor<1x8x256xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.0625 : (tensor<1x8x256xf16>, tensor<1x8x256xf16>, tensor<1x8x256xf16>) -> tensor<1x8x256xf16>
    kiln.yield %o : tensor<1x8x256xf16>
  }
  return %0 : tensor<1x8x256xf16>
}

// -----

// The kernel stores values of the attention's shape only.
// CHECK: error: 'kiln.fusion' op an attention kernel stores results of the attention's shape or a permute of it that keeps the head dimension last; result 1 differs
func.func @other_shape_result(%q: tensor<1x8x64xf16>, %k: tensor<1x8x64xf16>, %v: tensor<1x8x64xf16>, %x: tensor<64xf16>) -> (tensor<1x8x64xf16>, tensor<64xf16>) {
  %0:2 = kiln.fusion attention ins(%q, %k, %v, %x : tensor<1x8x64xf16>, tensor<1x8x64xf16>, tensor<1x8x64xf16>, tensor<64xf16>) -> tensor<1x8x64xf16>, tensor<64xf16> {
  ^bb0(%a: tensor<1x8x64xf16>, %b: tensor<1x8x64xf16>, %c: tensor<1x8x64xf16>, %d: tensor<64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<1x8x64xf16>, tensor<1x8x64xf16>, tensor<1x8x64xf16>) -> tensor<1x8x64xf16>
    %r = kiln.relu %d : tensor<64xf16>
    kiln.yield %o, %r : tensor<1x8x64xf16>, tensor<64xf16>
  }
  return %0#0, %0#1 : tensor<1x8x64xf16>, tensor<64xf16>
}

// -----

// A view that moves the head dimension (its elements 64 apart) cannot be
// read row by row in place.
// CHECK: error: 'kiln.attention' op the attention's query, key and value must be inputs of the group or views of them
func.func @strided_head(%q: tensor<1x64x8xf16>, %k: tensor<1x8x64xf16>, %v: tensor<1x8x64xf16>) -> tensor<1x8x64xf16> {
  %0 = kiln.fusion attention ins(%q, %k, %v : tensor<1x64x8xf16>, tensor<1x8x64xf16>, tensor<1x8x64xf16>) -> tensor<1x8x64xf16> {
  ^bb0(%a: tensor<1x64x8xf16>, %b: tensor<1x8x64xf16>, %c: tensor<1x8x64xf16>):
    %t = kiln.permute %a [0, 2, 1] : tensor<1x64x8xf16> -> tensor<1x8x64xf16>
    %o = kiln.attention %t, %b, %c scale = 0.125 : (tensor<1x8x64xf16>, tensor<1x8x64xf16>, tensor<1x8x64xf16>) -> tensor<1x8x64xf16>
    kiln.yield %o : tensor<1x8x64xf16>
  }
  return %0 : tensor<1x8x64xf16>
}
