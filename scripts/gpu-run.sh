#!/usr/bin/env bash
#===- scripts/gpu-run.sh - run kiln's GPU checks on the GPU machine -------===#
#
# Runs from the repository root on the GPU machine, over gpu-bundle/ made by
# scripts/gpu-pack.sh. Uses the machine's own NVRTC (the CUDA toolkit, else
# torch's nvidia wheels). Logs go to $OUT when set, each step's in its own
# file and all of them in $OUT/gpu-run-logs.tar.gz at the end (one file to
# copy back from a remote machine). Exit status: non-zero if
# any check failed. Each step is stopped after STEP_TIMEOUT seconds (default
# 300): a kernel that hangs (a barrier never completed) fails its step
# instead of the whole run. STEPS="name ..." runs only the named steps (the
# names the log prints after ===; the machine and the test models are always
# made), so that a run longer than one sitting on the GPU machine can be split.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$root/gpu-bundle
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
[ -d "$bundle/bin" ] || { echo "gpu-run: $bundle missing: run scripts/gpu-pack.sh here first" >&2; exit 2; }
"$root/scripts/gpu-unpack.sh"

torch_dir=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))' 2>/dev/null || true)
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${torch_dir:+:$torch_dir/../nvidia/cu13/lib:$torch_dir/lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$bundle/bin:$PATH"

status=0
step() {
  local name=$1; shift
  if [ -n "${STEPS:-}" ] && [[ " machine make-models $STEPS " != *" $name "* ]]; then return 0; fi
  echo "=== $name"
  if timeout "${STEP_TIMEOUT:-300}" "$@" > "$out/$name.log" 2>&1; then
    echo "    PASS"; tail -n "${TAIL:-4}" "$out/$name.log" | sed 's/^/    /'
  else
    local code=$?
    echo "    FAIL (exit $code$([ $code = 124 ] && echo ": timed out"))"
    tail -n 40 "$out/$name.log" | sed 's/^/    /'; status=1
  fi
}

step machine bash -c 'nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; uname -r; ldd gpu-bundle/bin/kiln-opt'
step device-smoke kiln-device-smoke
# Large work files stay out of $OUT, which only carries logs back.
work=${KILN_GPU_WORK:-/tmp/kiln-gpu-work}
mkdir -p "$work"
step make-models python3 test/models/make_models.py "$work/models"
export KILN_TEST_MODELS="$work/models"
step kiln-opt-roundtrip bash -c 'kiln-opt test/Dialect/Kiln/ops.mlir --split-input-file | kiln-opt --split-input-file > /dev/null && kiln-opt test/examples/ffn_block.mlir --canonicalize | head -16'
# FileCheck's libz3 travels xz-compressed (scripts/gpu-pack.sh).
libs="$work/lib"
mkdir -p "$libs"
for packed in "$bundle"/lib/*.xz; do
  [ -e "$packed" ] && python3 -c 'import lzma, sys; open(sys.argv[2], "wb").write(lzma.open(sys.argv[1]).read())' \
    "$packed" "$libs/$(basename "$packed" .xz)"
done
step lit env PYTHONPATH="$bundle/lit" LD_LIBRARY_PATH="$libs:$bundle/lib:$LD_LIBRARY_PATH" python3 -c "from lit.main import main; main()" -sv test --param kiln_tools_dir="$bundle/bin" \
  --param llvm_tools_dir="$bundle/bin" --param kiln_obj_root="$work/lit"
for t in kiln-runtime-gpu-tests kiln-runtime-tests kiln-codegen-tests; do
  step "$t" "$bundle/bin/$t"
done
# Kernel families and test models against the reference: print every error.
# Its own limit: with the kernel cache cold, NVRTC compiles every kernel
# first (over 300 s on the H100, 2026-12-06; under 100 s warm).
STEP_TIMEOUT=${KERNEL_TESTS_TIMEOUT:-600} step kernels-gpu "$bundle/bin/kiln-kernels-gpu-tests"
grep -E "rel L2|OK|FAILED|Failure|Expected|Which is" "$out/kernels-gpu.log" 2>/dev/null | head -80
# The images other GPUs get, run on this one: the mma.sync fallbacks of the
# Hopper kernel families, on the Hopper launch shapes.
step kernels-gpu-sm80-images env KILN_GPU_TEST_ARCH=sm_80 "$bundle/bin/kiln-kernels-gpu-tests" \
  --gtest_filter='*ConvHopper*:*Conv1x1*:*Wgmma*:*Linear*'
grep -E "OK|FAILED|Failure" "$out/kernels-gpu-sm80-images.log" 2>/dev/null | head -20
# The test models through the artifact and kiln-run, checked against PyTorch.
TAIL=2 step models-kiln-run "$root/scripts/gpu-check-models.sh" "$bundle/bin" "$work" \
  mlp_f32 mlp_f16 ffn_f32 ffn_f16 ffn_tanh_f16 mlp_stack_f32 mlp_stack_f16 \
  ffn_f32@tf32 ffn_f32@fp16 mlp_stack_f32@bf16 ffn_large_f16
grep -E "^---|check|bench|torch eager|error" "$out/models-kiln-run.log" 2>/dev/null
# The production runtime: runtime-only build, threads, graphs, overlap, API.
TAIL=200 step runtime "$root/scripts/gpu-runtime.sh" "$bundle/bin" "$work"
# kiln's GEMM kernels against cuBLAS through torch, on the FFN's shapes.
TAIL=12 step gemm-bench python3 "$root/bench/gemm_vs_torch.py" "$bundle/bin" "$work/gemm"
tar czf "$out/gpu-run-logs.tar.gz" -C "$out" $(cd "$out" && ls -- *.log *.json 2>/dev/null)
echo "=== overall: $([ $status -eq 0 ] && echo PASS || echo FAIL) (logs: $out/gpu-run-logs.tar.gz)"
exit $status
