#!/usr/bin/env bash
#===- scripts/example.sh - kiln's main job on the bundled example model ---===#
#
# Makes the bundled transformer FFN (test/models/make_models.py: LayerNorm(x +
# W2 gelu(W1 x + b1) + b2), traced with torch, fixed seed), compiles it with
# kiln-compile in fp16: checks the optimized IR against LibTorch on random
# inputs (--verify), prints the kernel report, and writes a .kiln artifact
# with every kernel compiled by NVRTC for Hopper (sm_90a) and Ampere (sm_80).
# Where a GPU is present, kiln-run runs the artifact and checks it against
# PyTorch's fp32 result on the same inputs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
build=${KILN_BUILD_DIR:-$root/build}
work=$build/example
mkdir -p "$work"
python3 "$root/test/models/make_models.py" "$work" ffn_f32 >&2
"$build/bin/kiln-compile" "$work/ffn_f32.pt" --precision fp16 --verify --report \
  -o "$work/ffn_fp16.kiln"
echo "artifact: $work/ffn_fp16.kiln"
if "$build/bin/kiln-device-smoke" > /dev/null 2>&1; then
  "$build/bin/kiln-run" "$work/ffn_fp16.kiln" --save-inputs "$work" > /dev/null
  python3 "$root/test/models/reference.py" "$work/ffn_f32.pt" "$work"
  "$build/bin/kiln-run" "$work/ffn_fp16.kiln" --input "x=$work/x.npy" \
    --check "$work/reference0.npy" --tolerance 1e-2 --bench 100
else
  echo "no GPU here: the artifact was built and its kernels compiled, but not run"
fi
