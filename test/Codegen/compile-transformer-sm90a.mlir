// RUN: kiln-translate --kiln-to-sm90a-ptx %S/attention.mlir --split-input-file | FileCheck %s --check-prefix=ATTN
// RUN: kiln-translate --kiln-to-sm90a-ptx %S/transformer-elementwise.mlir --split-input-file | FileCheck %s --check-prefix=EW

// Every attention and transformer-elementwise kernel of the snapshot tests
// compiles with NVRTC for sm_90a without a stack frame, a spill or a ptxas
// performance warning (compileKernel rejects those). The flash kernels
// stream K/V with cp.async and multiply on mma.sync (fp16 and bf16).
// ATTN-LABEL: // === ptx vit_k0
//       ATTN: cp.async.cg.shared.global
//       ATTN: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
//       ATTN: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// ATTN-LABEL: // === ptx gpt_k0
//       ATTN: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// ATTN-LABEL: // === ptx simt_k0
// ATTN-LABEL: // === ptx odd_k0
// EW-LABEL: // === ptx cmp_k0
// EW-LABEL: // === ptx sel_k0
// EW-LABEL: // === ptx embed_k0
// EW-LABEL: // === ptx lsm_k0
