// RUN: kiln-translate --kiln-to-cuda %s --split-input-file | FileCheck %s

// Transformer-side elementwise ops. Comparisons give 1.0f / 0.0f and store
// as 1-byte bools; an fp16 operand computed in the kernel is rounded to fp16
// before it is compared (as the reference holds it); integer inputs and
// integer constants compare exactly, as integers.
// CHECK-LABEL: // === kernel cmp_k0 grid(1, 1, 1) block(256) shared(0) inputs(3) outputs(2)
//       CHECK:     const float v{{[0-9]+}} = ((kiln::to_float(kiln::from_float<__half>(v{{[0-9]+}})) > v{{[0-9]+}}) ? 1.0f : 0.0f);
//       CHECK:     const float v{{[0-9]+}} = (((long long)in2[c1_{{[0-9]+}}] != (0LL)) ? 1.0f : 0.0f);
//       CHECK:     out0[idx] = kiln::from_float<bool>(
//       CHECK:     out1[idx] = kiln::from_float<bool>(
func.func @cmp(%a: tensor<4x8xf16>, %b: tensor<4x8xf16>, %ids: tensor<8xi64>) -> (tensor<4x8xi1>, tensor<4x8xi1>) {
  %0:2 = kiln.fusion elementwise ins(%a, %b, %ids : tensor<4x8xf16>, tensor<4x8xf16>, tensor<8xi64>) -> tensor<4x8xi1>, tensor<4x8xi1> {
  ^bb0(%x: tensor<4x8xf16>, %y: tensor<4x8xf16>, %i: tensor<8xi64>):
    %s = kiln.add %x, %y : tensor<4x8xf16>
    %g = kiln.gt %s, %y : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xi1>
    %z = kiln.constant dense<0> : tensor<i64>
    %n = kiln.ne %i, %z : tensor<8xi64>, tensor<i64> -> tensor<8xi1>
    %e = kiln.broadcast %n : tensor<8xi1> -> tensor<4x8xi1>
    kiln.yield %g, %e : tensor<4x8xi1>, tensor<4x8xi1>
  }
  return %0#0, %0#1 : tensor<4x8xi1>, tensor<4x8xi1>
}

// -----

// A boolean condition (a group input) selects; the broadcast of a [1, 8]
// input to the iteration shape is the identity on its broadcast load.
// CHECK-LABEL: // === kernel sel_k0 grid(1, 1, 1) block(256) shared(0) inputs(3) outputs(1)
//       CHECK:     const float v{{[0-9]+}} = kiln::to_float(in2[c1_{{[0-9]+}}]);
//       CHECK:     const float v{{[0-9]+}} = kiln::to_float(in0[c1_{{[0-9]+}}]);
//       CHECK:     = (v{{[0-9]+}} != 0.0f ? v{{[0-9]+}} : -INFINITY);
func.func @sel(%m: tensor<1x8xi1>, %s: tensor<4x8xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %0 = kiln.fusion elementwise ins(%m, %s, %b : tensor<1x8xi1>, tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<1x8xi1>, %y: tensor<4x8xf32>, %z: tensor<1x8xf32>):
    %n = kiln.constant dense<0xFF800000> : tensor<f32>
    %e = kiln.broadcast %z : tensor<1x8xf32> -> tensor<4x8xf32>
    %a = kiln.add %y, %e : tensor<4x8xf32>
    %w = kiln.where %x, %a, %n : tensor<1x8xi1>, tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
    kiln.yield %w : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

// -----

// An embedding lookup plus position embedding: the id is read as an integer,
// clamped to [0, V), and the row's element loaded from the table.
// CHECK-LABEL: // === kernel embed_k0 grid(2, 1, 1) block(256) shared(0) inputs(3) outputs(1)
//       CHECK:     const long long c0_{{[0-9]+}} = (long long)(((unsigned)idx / 192u) % 2u);
//       CHECK:     const long long c1_{{[0-9]+}} = (long long)(((unsigned)idx / 24u) % 8u);
//       CHECK:     const long long c2_{{[0-9]+}} = (long long)(((unsigned)idx / 1u) % 24u);
//       CHECK:     const long long [[ROW:g[0-9]+]] = min(max((long long)in1[(c0_{{[0-9]+}}) * 8LL + (c1_{{[0-9]+}})], 0LL), 99LL);
//       CHECK:     const float v{{[0-9]+}} = kiln::to_float(in0[([[ROW]]) * 24LL + (c2_{{[0-9]+}})]);
func.func @embed(%t: tensor<100x24xf16>, %ids: tensor<2x8xi64>, %p: tensor<8x24xf16>) -> tensor<2x8x24xf16> {
  %0 = kiln.fusion elementwise ins(%t, %ids, %p : tensor<100x24xf16>, tensor<2x8xi64>, tensor<8x24xf16>) -> tensor<2x8x24xf16> {
  ^bb0(%a: tensor<100x24xf16>, %b: tensor<2x8xi64>, %c: tensor<8x24xf16>):
    %g = kiln.gather %a, %b : (tensor<100x24xf16>, tensor<2x8xi64>) -> tensor<2x8x24xf16>
    %s = kiln.add %g, %c : tensor<2x8x24xf16>, tensor<8x24xf16> -> tensor<2x8x24xf16>
    kiln.yield %s : tensor<2x8x24xf16>
  }
  return %0 : tensor<2x8x24xf16>
}

// -----

// Log-softmax: x - max - log(sum exp(x - max)), statistics in fp32, a
// row to a warp.
// CHECK-LABEL: // === kernel lsm_k0 grid(1, 1, 1) block(256) shared(0) inputs(1) outputs(1)
//       CHECK:   const float rowMax = kiln::warp_max(localMax);
//       CHECK:   const float logSum = logf(kiln::warp_sum(sum));
//       CHECK:     (row[t] - rowMax - logSum)
func.func @lsm(%x: tensor<4x9xf32>) -> tensor<4x9xf32> {
  %0 = kiln.fusion normalization ins(%x : tensor<4x9xf32>) -> tensor<4x9xf32> {
  ^bb0(%a: tensor<4x9xf32>):
    %s = kiln.softmax %a dim = 1 log : tensor<4x9xf32>
    kiln.yield %s : tensor<4x9xf32>
  }
  return %0 : tensor<4x9xf32>
}

// -----

// Rows longer than a warp holds in registers (1024) run one to a block,
// cached in shared memory as fp32.
// CHECK-LABEL: // === kernel long_k0 grid(3, 1, 1) block(512) shared(8000) inputs(1) outputs(1)
//       CHECK:   extern __shared__ float row[];
//       CHECK:   const float rowMax = kiln::block_max(localMax, scratch);
//       CHECK:   const float invSum = 1.0f / kiln::block_sum(sum, scratch);
//       CHECK:     (expf(row[j] - rowMax) * invSum)
func.func @long(%x: tensor<3x2000xf32>) -> tensor<3x2000xf32> {
  %0 = kiln.fusion normalization ins(%x : tensor<3x2000xf32>) -> tensor<3x2000xf32> {
  ^bb0(%a: tensor<3x2000xf32>):
    %s = kiln.softmax %a dim = 1 : tensor<3x2000xf32>
    kiln.yield %s : tensor<3x2000xf32>
  }
  return %0 : tensor<3x2000xf32>
}

// -----

// A constant exponent of 3 (GPT-2's GELU) or 0.5 is a product or a square
// root, as in ATen; any other stays powf.
// CHECK-LABEL: // === kernel cube_k0
//       CHECK:     const float v{{[0-9]+}} = (v[[X:[0-9]+]] * v[[X]] * v[[X]]);
//       CHECK:     const float v{{[0-9]+}} = sqrtf(v[[X]]);
//       CHECK:     const float v{{[0-9]+}} = powf(v[[X]], 2.500000000e+00f);
func.func @cube(%x: tensor<4x9xf32>) -> tensor<4x9xf32> {
  %0 = kiln.fusion elementwise ins(%x : tensor<4x9xf32>) -> tensor<4x9xf32> {
  ^bb0(%a: tensor<4x9xf32>):
    %three = kiln.constant dense<3.0> : tensor<f32>
    %half = kiln.constant dense<0.5> : tensor<f32>
    %other = kiln.constant dense<2.5> : tensor<f32>
    %c = kiln.pow %a, %three : tensor<4x9xf32>, tensor<f32> -> tensor<4x9xf32>
    %s = kiln.pow %a, %half : tensor<4x9xf32>, tensor<f32> -> tensor<4x9xf32>
    %p = kiln.pow %a, %other : tensor<4x9xf32>, tensor<f32> -> tensor<4x9xf32>
    %t = kiln.add %c, %s : tensor<4x9xf32>
    %u = kiln.add %t, %p : tensor<4x9xf32>
    kiln.yield %u : tensor<4x9xf32>
  }
  return %0 : tensor<4x9xf32>
}

// -----

// Integer tensors are held as exact `long long` values, not floats (exact
// only below 2^24): RoBERTa's position ids, (cumsum(mask) + 0) * mask +
// padding_idx, with the mask from ids != pad as i32. i32 arithmetic wraps
// at 32 bits as PyTorch's does; a bool becomes 1 or 0; an integer stores
// exactly, and a float cast from it converts once.
// CHECK-LABEL: // === kernel posids_k0
//       CHECK:     const long long v[[PAD:[0-9]+]] = (1LL);
//       CHECK:     const float v[[NE:[0-9]+]] = (((long long)in0[idx] != (1LL)) ? 1.0f : 0.0f);
//       CHECK:     const long long v[[M:[0-9]+]] = (v[[NE]] != 0.0f ? 1LL : 0LL);
//       CHECK:     const long long v[[C:[0-9]+]] = (long long)in1[idx];
//       CHECK:     const long long v[[P:[0-9]+]] = (long long)(int)((v[[C]] * v[[M]]));
//       CHECK:     const long long v[[L:[0-9]+]] = v[[P]];
//       CHECK:     const long long v[[Q:[0-9]+]] = (v[[L]] + v[[PAD]]);
//       CHECK:     const float v[[F:[0-9]+]] = ((float)v[[Q]]);
//       CHECK:     out0[idx] = kiln::from_float<long long>(v[[Q]]);
//       CHECK:     out1[idx] = kiln::from_float<float>(v[[F]]);
func.func @posids(%ids: tensor<2x8xi64>, %cum: tensor<2x8xi32>) -> (tensor<2x8xi64>, tensor<2x8xf32>) {
  %0:2 = kiln.fusion elementwise ins(%ids, %cum : tensor<2x8xi64>, tensor<2x8xi32>) -> tensor<2x8xi64>, tensor<2x8xf32> {
  ^bb0(%i: tensor<2x8xi64>, %c: tensor<2x8xi32>):
    %pad = kiln.constant dense<1> : tensor<i64>
    %ne = kiln.ne %i, %pad : tensor<2x8xi64>, tensor<i64> -> tensor<2x8xi1>
    %m = kiln.cast %ne : tensor<2x8xi1> to tensor<2x8xi32>
    %p = kiln.mul %c, %m : tensor<2x8xi32>
    %l = kiln.cast %p : tensor<2x8xi32> to tensor<2x8xi64>
    %q = kiln.add %l, %pad : tensor<2x8xi64>, tensor<i64> -> tensor<2x8xi64>
    %f = kiln.cast %q : tensor<2x8xi64> to tensor<2x8xf32>
    kiln.yield %q, %f : tensor<2x8xi64>, tensor<2x8xf32>
  }
  return %0#0, %0#1 : tensor<2x8xi64>, tensor<2x8xf32>
}

// -----

// cumsum on a group input: each element sums its prefix along the
// dimension, an i32 mask into exact i64 sums.
// CHECK-LABEL: // === kernel running_k0
//       CHECK:     const long long c1_{{[0-9]+}} = (long long)(((unsigned)idx / 1u) % 16u);
//       CHECK:     long long s{{[0-9]+}} = 0;
//       CHECK:     for (long long j = 0; j <= c1_{{[0-9]+}}; ++j)
//       CHECK:       s{{[0-9]+}} += (long long)in0[idx - (c1_{{[0-9]+}} - j) * 1LL];
func.func @running(%m: tensor<2x16xi32>) -> tensor<2x16xi64> {
  %0 = kiln.fusion elementwise ins(%m : tensor<2x16xi32>) -> tensor<2x16xi64> {
  ^bb0(%a: tensor<2x16xi32>):
    %s = kiln.cumsum %a dim = 1 : tensor<2x16xi32> -> tensor<2x16xi64>
    kiln.yield %s : tensor<2x16xi64>
  }
  return %0 : tensor<2x16xi64>
}
