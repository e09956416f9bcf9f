// RUN: rm -rf %t && split-file %s %t
// RUN: kiln-opt %t/groups.mlir --mlir-disable-threading --pass-pipeline="builtin.module(func.func(kiln-apply-kernel-tuning{file=%t/tuned.json explain=true},kiln-select-kernels))" 2>%t/remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t/remarks
// RUN: not kiln-opt %t/groups.mlir --pass-pipeline="builtin.module(func.func(kiln-apply-kernel-tuning{file=%t/tuned.json targets=sm_80}))" 2>&1 | FileCheck %s --check-prefix=OTHER-ARCH
// RUN: not kiln-opt %t/groups.mlir --pass-pipeline="builtin.module(func.func(kiln-apply-kernel-tuning{file=%t/tuned.json multiprocessors=114}))" 2>&1 | FileCheck %s --check-prefix=OTHER-GPU
// RUN: not kiln-opt %t/groups.mlir --pass-pipeline="builtin.module(func.func(kiln-apply-kernel-tuning{file=%t/missing.json}))" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not kiln-opt %t/groups.mlir --pass-pipeline="builtin.module(func.func(kiln-apply-kernel-tuning{file=%t/truncated.json}))" 2>&1 | FileCheck %s --check-prefix=NOT-JSON
// RUN: not kiln-opt %t/groups.mlir --pass-pipeline="builtin.module(func.func(kiln-apply-kernel-tuning{file=%t/format.json}))" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not kiln-opt %t/groups.mlir --pass-pipeline="builtin.module(func.func(kiln-apply-kernel-tuning{file=%t/bad-kernel.json}))" 2>&1 | FileCheck %s --check-prefix=BAD-KERNEL
// RUN: not kiln-opt %t/groups.mlir --pass-pipeline="builtin.module(func.func(kiln-apply-kernel-tuning{file=%t/repeated.json}))" 2>&1 | FileCheck %s --check-prefix=REPEATED
// RUN: not kiln-opt %t/groups.mlir --pass-pipeline="builtin.module(func.func(kiln-apply-kernel-tuning{file=%t/bad-key.json}))" 2>&1 | FileCheck %s --check-prefix=BAD-KEY

// A group's key names what it computes: the same projection in another
// function, at another location and with memory offsets, takes the same
// tuned kernel; the selection keeps it. Another shape is the cost model's,
// and a configuration written in the input stays. (One thread: the
// functions' remarks in their order.)
// CHECK-LABEL: func.func @projection(
//       CHECK:   kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 4, grid_limit = 132>
// CHECK-LABEL: func.func @projection_elsewhere(
//       CHECK:   kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 4, grid_limit = 132>
// CHECK-LABEL: func.func @other_shape(
//   CHECK-NOT:   tile = [128, 256, 64], stages = 4, grid_limit = 132>
//       CHECK:   kiln.kernel = #kiln.kernel<variant = gemm_wgmma
// CHECK-LABEL: func.func @written(
//       CHECK:   kiln.kernel = #kiln.kernel<variant = gemm_mma, tile = [128, 128, 32]>

// REMARK: remark: tuning key 521ac76809993389: #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 4, grid_limit = 132>
// REMARK: remark: tuning key 521ac76809993389: #kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 4, grid_limit = 132>
// REMARK: remark: tuning key {{[0-9a-f]+}}: not in the file
// REMARK: remark: kept the configuration written in the input

// OTHER-ARCH: error: kernel tuning file {{.*}}tuned.json was measured on sm_90a with 132 multiprocessors; this compile's primary target is sm_80 with 108
// OTHER-GPU: error: kernel tuning file {{.*}}tuned.json was measured on sm_90a with 132 multiprocessors; this compile's primary target is sm_90a with 114
// MISSING: error: kernel tuning file {{.*}}missing.json: cannot be read
// NOT-JSON: error: kernel tuning file {{.*}}truncated.json: not JSON
// FORMAT: error: kernel tuning file {{.*}}format.json: "format" is not "kiln-kernel-tuning 1"
// BAD-KERNEL: error: kernel tuning file {{.*}}bad-kernel.json: group 0 (521ac76809993389): "#kiln.kernel<variant = gemm_wgmma, tile = [128, 256]" is not a #kiln.kernel<...> configuration
// REPEATED: error: kernel tuning file {{.*}}repeated.json: group 1 repeats key 521ac76809993389
// BAD-KEY: error: kernel tuning file {{.*}}bad-key.json: group 0 has no "key" of 16 hex digits

//--- tuned.json
{"format": "kiln-kernel-tuning 1", "arch": "sm_90a", "multiprocessors": 132,
 "groups": [{"key": "521ac76809993389", "ops": "linear", "result": "4096x3072xf16",
             "kernel": "#kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 4, grid_limit = 132>",
             "us": 30.1, "default_us": 31.0}]}
//--- truncated.json
{"format": "kiln-kernel-tuning 1", "arch": "sm_90a",
//--- format.json
{"format": "kiln-kernel-tuning 0", "arch": "sm_90a", "multiprocessors": 132, "groups": []}
//--- bad-kernel.json
{"format": "kiln-kernel-tuning 1", "arch": "sm_90a", "multiprocessors": 132,
 "groups": [{"key": "521ac76809993389", "kernel": "#kiln.kernel<variant = gemm_wgmma, tile = [128, 256]"}]}
//--- repeated.json
{"format": "kiln-kernel-tuning 1", "arch": "sm_90a", "multiprocessors": 132,
 "groups": [{"key": "521ac76809993389", "kernel": "#kiln.kernel<variant = gemm_mma, tile = [128, 128, 32]>"},
            {"key": "521ac76809993389", "kernel": "#kiln.kernel<variant = gemm_mma, tile = [128, 128, 32]>"}]}
//--- bad-key.json
{"format": "kiln-kernel-tuning 1", "arch": "sm_90a", "multiprocessors": 132,
 "groups": [{"key": "521ac768", "kernel": "#kiln.kernel<variant = gemm_mma, tile = [128, 128, 32]>"}]}
//--- groups.mlir
func.func @projection(%x: tensor<4096x768xf16>, %w: tensor<3072x768xf16>) -> tensor<4096x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<3072x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16>
    kiln.yield %l : tensor<4096x3072xf16>
  }
  return %0 : tensor<4096x3072xf16>
}

func.func @projection_elsewhere(%input: tensor<4096x768xf16>, %weight: tensor<3072x768xf16>) -> tensor<4096x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%input, %weight : tensor<4096x768xf16>, tensor<3072x768xf16>) {kiln.offsets = array<i64: 0>} -> tensor<4096x3072xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<3072x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16> loc("model.py":12:0)
    kiln.yield %l : tensor<4096x3072xf16>
  } loc("model.py":12:0)
  return %0 : tensor<4096x3072xf16>
}

func.func @other_shape(%x: tensor<4096x768xf16>, %w: tensor<2304x768xf16>) -> tensor<4096x2304xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<2304x768xf16>) -> tensor<4096x2304xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<2304x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<2304x768xf16>) -> tensor<4096x2304xf16>
    kiln.yield %l : tensor<4096x2304xf16>
  }
  return %0 : tensor<4096x2304xf16>
}

func.func @written(%x: tensor<4096x768xf16>, %w: tensor<3072x768xf16>) -> tensor<4096x3072xf16> {
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<4096x768xf16>, tensor<3072x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_mma, tile = [128, 128, 32]>} -> tensor<4096x3072xf16> {
  ^bb0(%a: tensor<4096x768xf16>, %bw: tensor<3072x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16>
    kiln.yield %l : tensor<4096x3072xf16>
  }
  return %0 : tensor<4096x3072xf16>
}
