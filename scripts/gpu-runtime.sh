#!/usr/bin/env bash
#===- scripts/gpu-runtime.sh - the production runtime's checks on the GPU --===#
#
# On the GPU machine (called by gpu-run.sh, after make-models):
#   1. builds the runtime alone with this machine's own CMake and toolkit
#      (-DKILN_RUNTIME_ONLY=ON) and checks the FFN with that kiln-run;
#   2. eight threads, a session each, on one shared FFN: bit-identical to
#      the single session;
#   3. batch 1: CUDA graph replay against plain launches, in one run;
#   4. host I/O from several sessions at once, profiled: how much copy time
#      overlaps other sessions' kernels; the Chrome trace goes to $OUT;
#   5. the public API's example: compile at load time, serve from threads.
#   gpu-runtime.sh BIN_DIR WORK_DIR
set -uo pipefail
bin=$1 work=$2
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$work}
status=0
models=$work/models
check() { echo "--- $1"; shift; "$@" || { echo "FAILED: $*"; status=1; }; }

# Compiles MODEL with an input spec into DIR, saves inputs, computes the
# fp32 PyTorch reference there.
prepare() {
  local model=$1 spec=$2 dir=$3
  mkdir -p "$dir"
  "$bin/kiln-compile" "$models/$model.pt" --input "$spec" -o "$dir/model.kiln" 2>&1 | tail -1 &&
    "$bin/kiln-run" "$dir/model.kiln" --save-inputs "$dir" > /dev/null &&
    python3 "$root/test/models/reference.py" "$models/$model.pt" "$dir" > /dev/null
}

echo "--- runtime-only build with the GPU machine's CMake and CUDA toolkit"
rt=$work/runtime-only
if cmake -S "$root" -B "$rt" -G Ninja -DKILN_RUNTIME_ONLY=ON -DKILN_BUILD_TESTS=OFF \
     > "$work/runtime-only.log" 2>&1 && ninja -C "$rt" >> "$work/runtime-only.log" 2>&1; then
  echo "built: $(ls "$rt/bin" | tr '\n' ' ')($(c++ --version | head -1))"
else
  tail -20 "$work/runtime-only.log"; status=1
fi

ffn=$work/rt-ffn
prepare ffn_large_f16 x:4096x1024:f16 "$ffn" || status=1
check "FFN 4096x1024 fp16 with the runtime-only kiln-run, 8 threads x 30 runs on one model" \
  "$rt/bin/kiln-run" "$ffn/model.kiln" --input "x=$ffn/x.npy" --check "$ffn/reference0.npy" \
  --tolerance 1e-2 --threads 8 --bench 30
check "FFN, device-resident I/O used in place, 8 threads" \
  "$bin/kiln-run" "$ffn/model.kiln" --input "x=$ffn/x.npy" --check "$ffn/reference0.npy" \
  --tolerance 1e-2 --device-io --threads 8 --bench 30

for entry in mlp_stack_f16:x:1x1x48:f16 ffn_large_f16:x:1x1024:f16; do
  model=${entry%%:*} spec=${entry#*:}
  dir=$work/rt-b1-$model
  prepare "$model" "$spec" "$dir" || { status=1; continue; }
  check "$model at batch 1 ($spec): graph replay against plain launches" \
    "$bin/kiln-run" "$dir/model.kiln" --input "x=$dir/x.npy" --check "$dir/reference0.npy" \
    --tolerance 1e-2 --bench 500
  check "$model at batch 1, wall time without graphs" \
    "$bin/kiln-run" "$dir/model.kiln" --input "x=$dir/x.npy" --no-graph --bench 500
done

check "FFN, host I/O, 4 profiled sessions at once: copies against other sessions' kernels" \
  "$bin/kiln-run" "$ffn/model.kiln" --input "x=$ffn/x.npy" --threads 4 --bench 20 \
  --trace "$out/ffn-4-sessions-trace.json"
check "mlp_stack at batch 1, profiled" \
  "$bin/kiln-run" "$work/rt-b1-mlp_stack_f16/model.kiln" --profile --bench 100

check "public API example (compile at load time, two sessions on two threads)" \
  "$bin/kiln-api-example" "$models/ffn_f16.pt"
exit $status
