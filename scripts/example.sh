#!/usr/bin/env bash
#===- scripts/example.sh - kiln's main job on the bundled example model ---===#
#
# Makes the bundled transformer FFN (test/models/make_models.py: LayerNorm(x +
# W2 gelu(W1 x + b1) + b2), traced with torch, fixed seed), compiles it with
# kiln-compile in fp16, checks the result against LibTorch on random inputs
# (--verify), prints the kernel report, and compiles every kernel with NVRTC
# for Hopper (sm_90a) and Ampere (sm_80). Where a GPU is present it also runs
# the kernels on the device and compares with LibTorch.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
build=${KILN_BUILD_DIR:-$root/build}
work=$build/example
mkdir -p "$work"
python3 "$root/test/models/make_models.py" "$work" ffn_f32 >&2
"$build/bin/kiln-compile" "$work/ffn_f32.pt" --precision fp16 --verify --report \
  --kernels-arch=sm_90a,sm_80 -o "$work/ffn_fp16.mlir"
echo "kiln IR with its fusion groups: $work/ffn_fp16.mlir"
if "$build/bin/kiln-device-smoke" > /dev/null 2>&1; then
  KILN_TEST_MODELS=$work "$build/bin/kiln-kernels-gpu-tests" \
    --gtest_filter='TestModels/ModelGpu.MatchesLibTorch/ffn_f32_fp16'
else
  echo "no GPU here: the kernels were compiled but not run"
fi
