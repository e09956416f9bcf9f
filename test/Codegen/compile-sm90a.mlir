// RUN: kiln-translate --kiln-to-sm90a-ptx %S/conv.mlir --split-input-file | FileCheck %s --check-prefix=CONV
// RUN: kiln-translate --kiln-to-sm90a-ptx %S/pooling.mlir --split-input-file | FileCheck %s --check-prefix=POOL
// RUN: kiln-translate --kiln-to-sm90a-ptx %S/reduction.mlir --split-input-file | FileCheck %s --check-prefix=REDUCE
// RUN: kiln-translate --kiln-to-sm90a-ptx %S/data-movement.mlir --split-input-file | FileCheck %s --check-prefix=MOVE

// Every convolution, pooling, reduction and data-movement kernel of the
// snapshot tests compiles with NVRTC for sm_90a without a stack frame, a
// spill or a ptxas performance warning (compileKernel rejects those). The
// implicit GEMMs multiply on mma.sync; the 1x1 convolution on wgmma.
// CONV-LABEL: // === ptx c3_k0
//       CONV: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CONV-LABEL: // === ptx pw_k0
//       CONV: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CONV-LABEL: // === ptx simt_k0
// CONV-LABEL: // === ptx dw_k0
// CONV-LABEL: // === ptx grp_k0
//       CONV: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CONV-LABEL: // === ptx nchw_k0
// The late-stage convolution's blocks form clusters of 8 that add their
// partial tiles through distributed shared memory.
// CONV-LABEL: // === ptx late_k0
//       CONV: .explicitcluster
//  CONV-NEXT: .reqnctapercluster 8, 1, 1
//       CONV: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
//       CONV: barrier.cluster.arrive.release.aligned
//       CONV: mapa.shared::cluster.u32
//       CONV: ld.shared::cluster.v4.f32
// The Hopper implicit GEMMs: 4-D TMA boxes of input pixels and 3-D boxes of
// filter taps feed wgmma (64 wide for 64 output channels).
// CONV-LABEL: // === ptx r3_k0
//   CONV-DAG: cp.async.bulk.tensor.4d
//   CONV-DAG: cp.async.bulk.tensor.3d
//   CONV-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CONV-LABEL: // === ptx s2_k0
//       CONV: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// The bias-free ping-pong convolution assembles without the wgmma
// serialization warning: its epilogue's first read of the accumulator is
// the add of -0.
// CONV-LABEL: // === ptx bias_free_pingpong_k0
//       CONV: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
//       CONV: add.rn.f32
// The merged shortcut: one 4-D TMA copy per part, wgmma over both.
// CONV-LABEL: // === ptx shortcut_k0
//   CONV-DAG: cp.async.bulk.tensor.4d
//   CONV-DAG: cp.async.bulk.tensor.3d
//   CONV-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// POOL-LABEL: // === ptx maxp_k0
// POOL-LABEL: // === ptx avgp_k0
// POOL-LABEL: // === ptx maxp8_k0
//       POOL: ld.global.nc.v4
// REDUCE-LABEL: // === ptx gap_k0
// REDUCE-LABEL: // === ptx rowsum_k0
//       REDUCE: shfl.sync.bfly.b32
// REDUCE-LABEL: // === ptx rowmax_k0
// MOVE-LABEL: // === ptx perm_k0
// MOVE-LABEL: // === ptx slicecat_k0
