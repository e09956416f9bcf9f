// RUN: kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s

// Attention groups: one kiln.attention on group inputs plus elementwise ops
// on its result, which run in the epilogue. fp16/bf16 with D == Dv a
// multiple of 16 (<= 128) take flash_attention (mma.sync, 64 queries per
// block, dynamic shared memory for Q and double-buffered K/V; forced here
// where sm_90a would take attention_wgmma, attention-wgmma.mlir); fp32 and
// other head sizes take simt_attention (16 queries per block). The leading
// dimensions flatten into blockIdx.y; a boolean mask [B, 1, 1, Sk] is read
// at a per-batch base with a query stride of 0 (a value a load: 197 keys,
// an odd count), and the cast after the attention rounds through fp16
// first.
// CHECK-LABEL: // === kernel vit_k0 grid(4, 24, 1) block(128) shared(46080) inputs(4) outputs(1)
//       CHECK: #include "kiln_attention.cuh"
//       CHECK: static_assert(kiln::attention_shared_bytes(64, 4) == 46080,
//       CHECK:     const long long idx = base + (long long)i * 64LL + d;
//       CHECK:     const float v0 = kiln::to_float(kiln::from_float<__half>(acc));
//       CHECK:     return Values{v0};
//       CHECK:     out0[idx] = kiln::from_float<float>(values.r0);
//       CHECK: __launch_bounds__(128, 1) {{kiln_[0-9A-F]+}}(const __half *__restrict__ in0, const __half *__restrict__ in1, const __half *__restrict__ in2, const bool *__restrict__ in3, float *__restrict__ out0)
//       CHECK:   const {{kiln_[0-9A-F]+}}_epilogue epilogue{in0, in1, in2, in3, out0, (0LL + (long long)blockIdx.y * 12608LL), 0LL};
//       CHECK:   const kiln::TensorMask<bool> mask{in3, 0LL + (long long)(blockIdx.y / 12u % 2u) * 197LL, 0LL, 1LL};
//       CHECK:   kiln::flash_attention<__half, 64, false, 4>(in0 + (0LL + (long long)blockIdx.y * 12608LL), in1 + (0LL + (long long)blockIdx.y * 12608LL), in2 + (0LL + (long long)blockIdx.y * 12608LL), 64LL, 64LL, 64LL, 197, 197, 1.250000000e-01f, mask, epilogue);
func.func @vit(%q: tensor<2x12x197x64xf16>, %k: tensor<2x12x197x64xf16>, %v: tensor<2x12x197x64xf16>, %m: tensor<2x1x1x197xi1>) -> tensor<2x12x197x64xf32> {
  %0 = kiln.fusion attention ins(%q, %k, %v, %m : tensor<2x12x197x64xf16>, tensor<2x12x197x64xf16>, tensor<2x12x197x64xf16>, tensor<2x1x1x197xi1>) {kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [64, 64, 64]>} -> tensor<2x12x197x64xf32> {
  ^bb0(%a: tensor<2x12x197x64xf16>, %b: tensor<2x12x197x64xf16>, %c: tensor<2x12x197x64xf16>, %d: tensor<2x1x1x197xi1>):
    %o = kiln.attention %a, %b, %c mask %d scale = 0.125 : (tensor<2x12x197x64xf16>, tensor<2x12x197x64xf16>, tensor<2x12x197x64xf16>, tensor<2x1x1x197xi1>) -> tensor<2x12x197x64xf16>
    %f = kiln.cast %o : tensor<2x12x197x64xf16> to tensor<2x12x197x64xf32>
    kiln.yield %f : tensor<2x12x197x64xf32>
  }
  return %0 : tensor<2x12x197x64xf32>
}

// -----

// Causal bf16 with head size 128 and a float mask [Sq, Sk] shared by every
// (batch, head): base 0, a stride per query and per key. Its keys are
// contiguous and even in number (1000): two mask values a load.
// CHECK-LABEL: // === kernel gpt_k0 grid(16, 4, 1) block(128) shared(87040) inputs(4) outputs(1)
//       CHECK:   const kiln::TensorMask<__nv_bfloat16, true> mask{in3, 0LL, 1000LL, 1LL};
//       CHECK:   kiln::flash_attention<__nv_bfloat16, 128, true, 4>(
//  CHECK-SAME:     1000, 1000, 8.838834765e-02f, mask, epilogue);
func.func @gpt(%q: tensor<4x1000x128xbf16>, %k: tensor<4x1000x128xbf16>, %v: tensor<4x1000x128xbf16>, %m: tensor<1000x1000xbf16>) -> tensor<4x1000x128xbf16> {
  %0 = kiln.fusion attention ins(%q, %k, %v, %m : tensor<4x1000x128xbf16>, tensor<4x1000x128xbf16>, tensor<4x1000x128xbf16>, tensor<1000x1000xbf16>) {kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [64, 64, 128]>} -> tensor<4x1000x128xbf16> {
  ^bb0(%a: tensor<4x1000x128xbf16>, %b: tensor<4x1000x128xbf16>, %c: tensor<4x1000x128xbf16>, %d: tensor<1000x1000xbf16>):
    %o = kiln.attention %a, %b, %c mask %d scale = 0.08838834764831845 causal : (tensor<4x1000x128xbf16>, tensor<4x1000x128xbf16>, tensor<4x1000x128xbf16>, tensor<1000x1000xbf16>) -> tensor<4x1000x128xbf16>
    kiln.yield %o : tensor<4x1000x128xbf16>
  }
  return %0 : tensor<4x1000x128xbf16>
}

// -----

// fp32 takes the SIMT kernel (no dynamic shared memory); a residual add in
// the epilogue reads the other input at the element's index.
// CHECK-LABEL: // === kernel simt_k0 grid(1, 3, 1) block(128) shared(0) inputs(4) outputs(1)
//       CHECK:     const float v{{[0-9]+}} = kiln::to_float(in3_element);
//       CHECK:     return element(i, d, acc, in3[idx]);
//       CHECK:   const kiln::NoMask mask{};
//       CHECK:   kiln::simt_attention<float, 64, 64, false>(
//  CHECK-SAME:     7, 7, 1.250000000e-01f, mask, epilogue);
func.func @simt(%q: tensor<3x7x64xf32>, %k: tensor<3x7x64xf32>, %v: tensor<3x7x64xf32>, %r: tensor<3x7x64xf32>) -> tensor<3x7x64xf32> {
  %0 = kiln.fusion attention ins(%q, %k, %v, %r : tensor<3x7x64xf32>, tensor<3x7x64xf32>, tensor<3x7x64xf32>, tensor<3x7x64xf32>) -> tensor<3x7x64xf32> {
  ^bb0(%a: tensor<3x7x64xf32>, %b: tensor<3x7x64xf32>, %c: tensor<3x7x64xf32>, %d: tensor<3x7x64xf32>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<3x7x64xf32>, tensor<3x7x64xf32>, tensor<3x7x64xf32>) -> tensor<3x7x64xf32>
    %s = kiln.add %o, %d : tensor<3x7x64xf32>
    kiln.yield %s : tensor<3x7x64xf32>
  }
  return %0 : tensor<3x7x64xf32>
}

// -----

// fp16 with a head size that is no multiple of 16 (40) and Dv != D falls
// back to the SIMT kernel.
// CHECK-LABEL: // === kernel odd_k0 grid(1, 2, 1) block(128) shared(0) inputs(3) outputs(1)
//       CHECK:   kiln::simt_attention<__half, 40, 24, true>(
func.func @odd(%q: tensor<2x9x40xf16>, %k: tensor<2x5x40xf16>, %v: tensor<2x5x24xf16>) -> tensor<2x9x24xf16> {
  %0 = kiln.fusion attention ins(%q, %k, %v : tensor<2x9x40xf16>, tensor<2x5x40xf16>, tensor<2x5x24xf16>) -> tensor<2x9x24xf16> {
  ^bb0(%a: tensor<2x9x40xf16>, %b: tensor<2x5x40xf16>, %c: tensor<2x5x24xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.5 causal : (tensor<2x9x40xf16>, tensor<2x5x40xf16>, tensor<2x5x24xf16>) -> tensor<2x9x24xf16>
    kiln.yield %o : tensor<2x9x24xf16>
  }
  return %0 : tensor<2x9x24xf16>
}

// -----

// An odd value head size: a row's even columns alternate between even and
// odd indices, so no pairs.
// CHECK-LABEL: // === kernel odd_values_k0
//       CHECK:   static constexpr bool kPairs = false;
//   CHECK-NOT:   kiln::store_pair
//       CHECK:   kiln::simt_attention<__half, 16, 23, false>(
func.func @odd_values(%q: tensor<2x9x16xf16>, %k: tensor<2x5x16xf16>, %v: tensor<2x5x23xf16>) -> tensor<2x9x23xf16> {
  %0 = kiln.fusion attention ins(%q, %k, %v : tensor<2x9x16xf16>, tensor<2x5x16xf16>, tensor<2x5x23xf16>) -> tensor<2x9x23xf16> {
  ^bb0(%a: tensor<2x9x16xf16>, %b: tensor<2x5x16xf16>, %c: tensor<2x5x23xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.25 : (tensor<2x9x16xf16>, tensor<2x5x16xf16>, tensor<2x5x23xf16>) -> tensor<2x9x23xf16>
    kiln.yield %o : tensor<2x9x23xf16>
  }
  return %0 : tensor<2x9x23xf16>
}

// -----

// Split heads read in place: q, k and v are slices of one QKV projection
// [B, S, 3 * H * D] viewed as [B, H, S, D] (row stride 3 * H * D, offsets
// 0, H * D, 2 * H * D), and the merge-heads permute of the result is stored
// in place ([B, S, H, D], row stride H * D). No copy kernel on either side.
// CHECK-LABEL: // === kernel qkv_k0 grid(2, 24, 1) block(128) shared(46080) inputs(1) outputs(1)
//       CHECK:     const long long oidx = outBase + (long long)i * 768LL + d;
//       CHECK:     return Values{
//       CHECK:     out0[oidx] = kiln::from_float<__half>(values.r0);
// The merged heads' index is even at an even column (a row stride of 768,
// offsets in whole heads): two adjacent columns in one store.
//       CHECK:   static constexpr bool kPairs = true;
//       CHECK:     kiln::store_pair(out0 + oidx, first.r0, second.r0);
//       CHECK:   const {{kiln_[0-9A-F]+}}_epilogue epilogue{in0, out0, (0LL + (long long)blockIdx.y * 8192LL), (0LL + (long long)(blockIdx.y % 12u) * 64LL + (long long)(blockIdx.y / 12u) * 98304LL)};
//       CHECK:   kiln::flash_attention<__half, 64, false, 4>(in0 + (0LL + (long long)(blockIdx.y % 12u) * 64LL + (long long)(blockIdx.y / 12u) * 294912LL), in0 + (768LL + (long long)(blockIdx.y % 12u) * 64LL + (long long)(blockIdx.y / 12u) * 294912LL), in0 + (1536LL + (long long)(blockIdx.y % 12u) * 64LL + (long long)(blockIdx.y / 12u) * 294912LL), 2304LL, 2304LL, 2304LL, 128, 128,
func.func @qkv(%x: tensor<2x128x2304xf16>) -> tensor<2x128x12x64xf16> {
  %0 = kiln.fusion attention ins(%x : tensor<2x128x2304xf16>) {kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [64, 64, 64]>} -> tensor<2x128x12x64xf16> {
  ^bb0(%a: tensor<2x128x2304xf16>):
    %q0 = kiln.slice %a offsets = [0, 0, 0] strides = [1, 1, 1] : tensor<2x128x2304xf16> -> tensor<2x128x768xf16>
    %q1 = kiln.reshape %q0 : tensor<2x128x768xf16> -> tensor<2x128x12x64xf16>
    %q = kiln.permute %q1 [0, 2, 1, 3] : tensor<2x128x12x64xf16> -> tensor<2x12x128x64xf16>
    %k0 = kiln.slice %a offsets = [0, 0, 768] strides = [1, 1, 1] : tensor<2x128x2304xf16> -> tensor<2x128x768xf16>
    %k1 = kiln.reshape %k0 : tensor<2x128x768xf16> -> tensor<2x128x12x64xf16>
    %k = kiln.permute %k1 [0, 2, 1, 3] : tensor<2x128x12x64xf16> -> tensor<2x12x128x64xf16>
    %v0 = kiln.slice %a offsets = [0, 0, 1536] strides = [1, 1, 1] : tensor<2x128x2304xf16> -> tensor<2x128x768xf16>
    %v1 = kiln.reshape %v0 : tensor<2x128x768xf16> -> tensor<2x128x12x64xf16>
    %v = kiln.permute %v1 [0, 2, 1, 3] : tensor<2x128x12x64xf16> -> tensor<2x12x128x64xf16>
    %o = kiln.attention %q, %k, %v scale = 0.125 : (tensor<2x12x128x64xf16>, tensor<2x12x128x64xf16>, tensor<2x12x128x64xf16>) -> tensor<2x12x128x64xf16>
    %m = kiln.permute %o [0, 2, 1, 3] : tensor<2x12x128x64xf16> -> tensor<2x128x12x64xf16>
    kiln.yield %m : tensor<2x128x12x64xf16>
  }
  return %0 : tensor<2x128x12x64xf16>
}

