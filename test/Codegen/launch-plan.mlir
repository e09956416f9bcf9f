// RUN: kiln-opt %s --kiln-graph-pipeline="precision=fp16 targets=sm_90a,sm_80" --kiln-lower-launches="targets=sm_90a,sm_80" | FileCheck %s

// A small model's launch plan, from the imported IR through the graph
// pipeline to launches: an MLP block at batch 32 in fp16 with an fp32
// signature. Four kernels (the input's cast, two GEMMs with their bias,
// GELU and residual, the layer norm that casts back), each launched once,
// results in the arena at the memory plan's offsets (the last one is the
// function's result). The batch-32 GEMMs split K across clusters in the
// sm_90a image; the sm_80 image runs the same split without them.
// CHECK-LABEL: module {
// CHECK-COUNT-4: kiln.cuda_kernel @kiln_
//  CHECK-NOT: kiln.cuda_kernel
//      CHECK: func.func @mlp(%arg0: tensor<32x256xf32> {kiln.name = "x"}) -> tensor<32x256xf32> attributes {kiln.arena_bytes = 65536 : i64, kiln.intermediate_bytes = 65536 : i64, kiln.precision = #kiln.precision<fp16>}
//      CHECK:   %[[X:.*]] = kiln.launch elementwise ins(%arg0 : tensor<32x256xf32>) images [#kiln.launch<arch = "sm_90a", kernel = @[[CAST:kiln_[0-9A-F]+]], grid = [32, 1, 1], block = 256>, #kiln.launch<arch = "sm_80", kernel = @[[CAST]], grid = [32, 1, 1], block = 256>] {kiln.offsets = array<i64: 32768>} -> tensor<32x256xf16>
//      CHECK:   %[[H:.*]] = kiln.launch gemm_epilogue ins(%[[X]], %{{.*}}, %{{.*}} : tensor<32x256xf16>, tensor<512x256xf16>, tensor<512xf16>) images [#kiln.launch<arch = "sm_90a", kernel = @[[UP:kiln_[0-9A-F]+]], grid = [16, 1, 1], block = 128, shared = 55296, cluster = [2, 1, 1]>, #kiln.launch<arch = "sm_80", kernel = @[[UP]], grid = [16, 1, 1], block = 128, shared = 55296>] {kiln.offsets = array<i64: 0>} -> tensor<32x512xf16>
//      CHECK:   %[[O:.*]] = kiln.launch gemm_epilogue ins(%[[H]], %{{.*}}, %{{.*}}, %[[X]] : {{.*}}) images [#kiln.launch<arch = "sm_90a", kernel = @[[DOWN:kiln_[0-9A-F]+]], grid = [16, 1, 1], block = 128, shared = 55296, cluster = [4, 1, 1]>, #kiln.launch<arch = "sm_80", kernel = @[[DOWN]], grid = [16, 1, 1], block = 128, shared = 55296>] {kiln.offsets = array<i64: 49152>} -> tensor<32x256xf16>
//      CHECK:   %[[N:.*]] = kiln.launch normalization ins(%[[O]], {{.*}}) images [#kiln.launch<arch = "sm_90a", kernel = @[[NORM:kiln_[0-9A-F]+]], grid = [4, 1, 1], block = 256>, #kiln.launch<arch = "sm_80", kernel = @[[NORM]], grid = [4, 1, 1], block = 256>] {kiln.offsets = array<i64: -1>} -> tensor<32x256xf32>
//      CHECK:   return %[[N]] : tensor<32x256xf32>
func.func @mlp(%x: tensor<32x256xf32> {kiln.name = "x"}) -> tensor<32x256xf32> {
  %w1 = kiln.constant dense<0.01> : tensor<512x256xf32>
  %b1 = kiln.constant dense<0.1> : tensor<512xf32>
  %w2 = kiln.constant dense<0.02> : tensor<256x512xf32>
  %b2 = kiln.constant dense<0.2> : tensor<256xf32>
  %g = kiln.constant dense<1.0> : tensor<256xf32>
  %be = kiln.constant dense<0.0> : tensor<256xf32>
  %h = kiln.linear %x, %w1, %b1 : (tensor<32x256xf32>, tensor<512x256xf32>, tensor<512xf32>) -> tensor<32x512xf32>
  %a = kiln.gelu %h : tensor<32x512xf32>
  %o = kiln.linear %a, %w2, %b2 : (tensor<32x512xf32>, tensor<256x512xf32>, tensor<256xf32>) -> tensor<32x256xf32>
  %r = kiln.add %o, %x : tensor<32x256xf32>
  %n = kiln.layer_norm %r weight %g bias %be axis = 1 eps = 1.0e-05 : (tensor<32x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<32x256xf32>
  return %n : tensor<32x256xf32>
}
