// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-persistent=false}))" | FileCheck %s --check-prefix=WGMMA
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{targets=sm_80}))" | FileCheck %s --check-prefix=SM80
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-wgmma=false explain=true}))" 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-overlap=false attention-persistent=false}))" | FileCheck %s --check-prefix=COOP
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-overlap=false targets=sm_80}))" | FileCheck %s --check-prefix=SM80
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{explain=true attention-persistent=false}))" 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{explain=true}))" 2>&1 | FileCheck %s --check-prefix=PERSISTENT
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{multiprocessors=114}))" | FileCheck %s --check-prefix=PCIE
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-stages=3 attention-persistent=false}))" | FileCheck %s --check-prefix=THREE
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-rows=128 attention-persistent=false explain=true}))" 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-rows=128}))" | FileCheck %s --check-prefix=TWOPERSISTENT
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-blocks-per-sm=4 explain=true}))" 2>&1 | FileCheck %s --check-prefix=FOUR
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-blocks-per-sm=3}))" 2>&1 | FileCheck %s --check-prefix=FOUR-ONLY
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-blocks-per-sm=4 attention-rows=128}))" 2>&1 | FileCheck %s --check-prefix=FOUR-ROWS
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{attention-blocks-per-sm=4 attention-stages=3}))" 2>&1 | FileCheck %s --check-prefix=FOUR-STAGES

// attention_wgmma with the overlapped schedule by default on sm_90 (its
// kernel's other images run the 4-warp mma.sync path), for head sizes 64
// and 128 whose q, k and v are rows of a matrix (here packed [B, H, S, D] and the column slices of one
// QKV projection); a head size of 32 keeps attention_mma, and so do other
// GPUs and --attention-wgmma=false (which the remark names). Runs with
// attention-persistent=false give a block each item (no grid_limit).
// WGMMA: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], schedule = overlapped>
// WGMMA: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 128], schedule = overlapped>
// WGMMA: kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [64, 64, 32]>
// SM80: kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [64, 64, 64]>
// SM80: kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [64, 64, 128]>
// SM80: kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [64, 64, 32]>
// --attention-overlap=false: the cooperative schedule (softmax and
// products in turn) where attention_wgmma is taken, nothing else changed.
// COOP: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64]>
// COOP: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 128]>
// COOP: kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [64, 64, 32]>
// OFF: remark: attention_mma: head size 64, 64 queries a block; not attention_wgmma: turned off (--attention-wgmma=false)
// OFF-NOT: kiln.kernel = #kiln.kernel<variant = attention_wgmma
// WHY: remark: attention_wgmma: head size 64, 64 queries a block, softmax overlapped with P V
// WHY: remark: attention_wgmma: head size 128, 64 queries a block, softmax overlapped with P V
// WHY: remark: attention_mma: head size 32, 64 queries a block; not attention_wgmma: head size 32 (64 or 128)
// By default (--attention-persistent) a grid of the blocks resident at
// once, three a multiprocessor at a head size of 64 and two at 128 (132 of
// them on an H100 or H200 SXM, 114 on an H100 PCIe); attention_mma is
// untouched.
// PERSISTENT: remark: attention_wgmma: head size 64, 64 queries a block, a persistent grid of 396, softmax overlapped with P V
// PERSISTENT: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], grid_limit = 396, schedule = overlapped>
// PERSISTENT: remark: attention_wgmma: head size 128, 64 queries a block, a persistent grid of 264, softmax overlapped with P V
// PERSISTENT: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 128], grid_limit = 264, schedule = overlapped>
// PERSISTENT: kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [64, 64, 32]>
// PCIE: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], grid_limit = 342, schedule = overlapped>
// PCIE: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 128], grid_limit = 228, schedule = overlapped>
// --attention-stages=3: a third K/V stage at a head size of 64; at 128 two
// blocks a multiprocessor hold only 2.
// THREE: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], stages = 3, schedule = overlapped>
// THREE: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 128], schedule = overlapped>
// --attention-rows=128: at a head size of 64, two consumer warpgroups of 64
// queries each over one K/V ring (128 queries a block), one block a
// multiprocessor when persistent; at 128 the 64-query kernel; a head size
// of 32 keeps attention_mma with 8 warps.
// TWO: remark: attention_wgmma: head size 64, 128 queries a block (two consumer warpgroups), softmax overlapped with P V
// TWO: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [128, 64, 64], schedule = overlapped>
// TWO: remark: attention_wgmma: head size 128, 64 queries a block, softmax overlapped with P V
// TWO: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 128], schedule = overlapped>
// TWO: kiln.kernel = #kiln.kernel<variant = attention_mma, tile = [128, 64, 32]>
// TWOPERSISTENT: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [128, 64, 64], grid_limit = 132, schedule = overlapped>
// TWOPERSISTENT: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 128], grid_limit = 264, schedule = overlapped>
// --attention-blocks-per-sm=4: at a head size of 64 without a mask, four
// blocks a multiprocessor with the cooperative schedule (a persistent grid
// of 4 x 132); at 128, or with a mask, the default kernel, and the remark
// says why not.
// FOUR: remark: attention_wgmma: head size 64, 64 queries a block, a persistent grid of 528, four blocks a multiprocessor (softmax and products in turn)
// FOUR: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], grid_limit = 528, blocks_per_sm = 4>
// FOUR: remark: attention_wgmma: head size 128, 64 queries a block, a persistent grid of 264, not four blocks a multiprocessor (a head size of 64 and 64 queries only), softmax overlapped with P V
// FOUR: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 128], grid_limit = 264, schedule = overlapped>
// FOUR: remark: attention_wgmma: head size 64, 64 queries a block, a persistent grid of 396, not four blocks a multiprocessor (with a mask they spill), softmax and products in turn
// FOUR-ONLY: error: --attention-blocks-per-sm must be 0 (the cost model's choice) or 4, got 3
// FOUR-ROWS: error: --attention-blocks-per-sm=4 takes 64 queries a block, not --attention-rows=128
// FOUR-STAGES: error: --attention-blocks-per-sm=4 takes 2 stages (four blocks' shared memory), not --attention-stages=3
func.func @attention(%q: tensor<32x12x128x64xf16>, %x: tensor<2x77x768xbf16>, %s: tensor<4x2x50x32xf16>) -> (tensor<32x12x128x64xf16>, tensor<2x2x77x128xbf16>, tensor<4x2x50x32xf16>) {
  %0 = kiln.fusion attention ins(%q, %q, %q : tensor<32x12x128x64xf16>, tensor<32x12x128x64xf16>, tensor<32x12x128x64xf16>) -> tensor<32x12x128x64xf16> {
  ^bb0(%a: tensor<32x12x128x64xf16>, %b: tensor<32x12x128x64xf16>, %c: tensor<32x12x128x64xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.125 : (tensor<32x12x128x64xf16>, tensor<32x12x128x64xf16>, tensor<32x12x128x64xf16>) -> tensor<32x12x128x64xf16>
    kiln.yield %o : tensor<32x12x128x64xf16>
  }
  %1 = kiln.fusion attention ins(%x : tensor<2x77x768xbf16>) -> tensor<2x2x77x128xbf16> {
  ^bb0(%a: tensor<2x77x768xbf16>):
    %s0 = kiln.slice %a offsets = [0, 0, 0] strides = [1, 1, 1] : tensor<2x77x768xbf16> -> tensor<2x77x256xbf16>
    %r0 = kiln.reshape %s0 : tensor<2x77x256xbf16> -> tensor<2x77x2x128xbf16>
    %p0 = kiln.permute %r0 [0, 2, 1, 3] : tensor<2x77x2x128xbf16> -> tensor<2x2x77x128xbf16>
    %s1 = kiln.slice %a offsets = [0, 0, 256] strides = [1, 1, 1] : tensor<2x77x768xbf16> -> tensor<2x77x256xbf16>
    %r1 = kiln.reshape %s1 : tensor<2x77x256xbf16> -> tensor<2x77x2x128xbf16>
    %p1 = kiln.permute %r1 [0, 2, 1, 3] : tensor<2x77x2x128xbf16> -> tensor<2x2x77x128xbf16>
    %s2 = kiln.slice %a offsets = [0, 0, 512] strides = [1, 1, 1] : tensor<2x77x768xbf16> -> tensor<2x77x256xbf16>
    %r2 = kiln.reshape %s2 : tensor<2x77x256xbf16> -> tensor<2x77x2x128xbf16>
    %p2 = kiln.permute %r2 [0, 2, 1, 3] : tensor<2x77x2x128xbf16> -> tensor<2x2x77x128xbf16>
    %o = kiln.attention %p0, %p1, %p2 scale = 0.08838834764831845 : (tensor<2x2x77x128xbf16>, tensor<2x2x77x128xbf16>, tensor<2x2x77x128xbf16>) -> tensor<2x2x77x128xbf16>
    kiln.yield %o : tensor<2x2x77x128xbf16>
  }
  %2 = kiln.fusion attention ins(%s, %s, %s : tensor<4x2x50x32xf16>, tensor<4x2x50x32xf16>, tensor<4x2x50x32xf16>) -> tensor<4x2x50x32xf16> {
  ^bb0(%a: tensor<4x2x50x32xf16>, %b: tensor<4x2x50x32xf16>, %c: tensor<4x2x50x32xf16>):
    %o = kiln.attention %a, %b, %c scale = 0.17677669529663687 : (tensor<4x2x50x32xf16>, tensor<4x2x50x32xf16>, tensor<4x2x50x32xf16>) -> tensor<4x2x50x32xf16>
    kiln.yield %o : tensor<4x2x50x32xf16>
  }
  return %0, %1, %2 : tensor<32x12x128x64xf16>, tensor<2x2x77x128xbf16>, tensor<4x2x50x32xf16>
}

// A float mask per score (a position bias as T5's or Swin's) keeps the
// cooperative schedule at both head sizes: the overlapped one spills with
// it (at 64, three blocks a multiprocessor; at 128, where the key count is
// a multiple of 64). A float padding mask, broadcast over the queries,
// stays overlapped.
// WGMMA-LABEL: func.func @masks(
//       WGMMA: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64]>
//       WGMMA: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 64], schedule = overlapped>
// WHY: remark: attention_wgmma: head size 64, 64 queries a block, softmax and products in turn (a float mask per score: the overlapped schedule spills with it)
// WHY: remark: attention_wgmma: head size 64, 64 queries a block, softmax overlapped with P V
//       WGMMA: kiln.kernel = #kiln.kernel<variant = attention_wgmma, tile = [64, 64, 128]>
// WHY: remark: attention_wgmma: head size 128, 64 queries a block, softmax and products in turn (a float mask per score: the overlapped schedule spills with it)
func.func @masks(%q: tensor<1x12x197x64xf16>, %bias: tensor<197x197xf16>, %pad: tensor<1x1x1x197xf16>, %q128: tensor<1x2x197x128xf16>) -> (tensor<1x12x197x64xf16>, tensor<1x12x197x64xf16>, tensor<1x2x197x128xf16>) {
  %0 = kiln.fusion attention ins(%q, %q, %q, %bias : tensor<1x12x197x64xf16>, tensor<1x12x197x64xf16>, tensor<1x12x197x64xf16>, tensor<197x197xf16>) -> tensor<1x12x197x64xf16> {
  ^bb0(%a: tensor<1x12x197x64xf16>, %b: tensor<1x12x197x64xf16>, %c: tensor<1x12x197x64xf16>, %m: tensor<197x197xf16>):
    %o = kiln.attention %a, %b, %c mask %m scale = 0.125 : (tensor<1x12x197x64xf16>, tensor<1x12x197x64xf16>, tensor<1x12x197x64xf16>, tensor<197x197xf16>) -> tensor<1x12x197x64xf16>
    kiln.yield %o : tensor<1x12x197x64xf16>
  }
  %1 = kiln.fusion attention ins(%q, %q, %q, %pad : tensor<1x12x197x64xf16>, tensor<1x12x197x64xf16>, tensor<1x12x197x64xf16>, tensor<1x1x1x197xf16>) -> tensor<1x12x197x64xf16> {
  ^bb0(%a: tensor<1x12x197x64xf16>, %b: tensor<1x12x197x64xf16>, %c: tensor<1x12x197x64xf16>, %m: tensor<1x1x1x197xf16>):
    %o = kiln.attention %a, %b, %c mask %m scale = 0.125 : (tensor<1x12x197x64xf16>, tensor<1x12x197x64xf16>, tensor<1x12x197x64xf16>, tensor<1x1x1x197xf16>) -> tensor<1x12x197x64xf16>
    kiln.yield %o : tensor<1x12x197x64xf16>
  }
  %2 = kiln.fusion attention ins(%q128, %q128, %q128, %bias : tensor<1x2x197x128xf16>, tensor<1x2x197x128xf16>, tensor<1x2x197x128xf16>, tensor<197x197xf16>) -> tensor<1x2x197x128xf16> {
  ^bb0(%a: tensor<1x2x197x128xf16>, %b: tensor<1x2x197x128xf16>, %c: tensor<1x2x197x128xf16>, %m: tensor<197x197xf16>):
    %o = kiln.attention %a, %b, %c mask %m scale = 0.08838834764831845 : (tensor<1x2x197x128xf16>, tensor<1x2x197x128xf16>, tensor<1x2x197x128xf16>, tensor<197x197xf16>) -> tensor<1x2x197x128xf16>
    kiln.yield %o : tensor<1x2x197x128xf16>
  }
  return %0, %1, %2 : tensor<1x12x197x64xf16>, tensor<1x12x197x64xf16>, tensor<1x2x197x128xf16>
}
