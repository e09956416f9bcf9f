#!/usr/bin/env bash
#===- scripts/gpu-bench.sh - the zoo against every PyTorch peer -----------===#
#
# On the GPU machine, after scripts/gpu-pack.sh here (which puts the tools,
# and kiln-torch-peers when it was built here, into gpu-bundle/):
#   scripts/gpu-bench.sh PART...
#   PART: cnn (= resnet mobilenet efficientnet) | resnet | mobilenet | efficientnet
#         | vit | bert | gpt2 | gpt2_block | ffn | small (= gpt2_block ffn)
# Each part checks and times its models at batch 1 and 32 in fp16 against
# eager, TorchScript (Python and C++), torch.compile (default and
# reduce-overhead) and AOTInductor run from C++ (bench/peers), with CUDA
# graphs where a C++ user would capture them, in ROUNDS rounds (default 3)
# that alternate kiln and the peers (RUNS calls each, default 50;
# DEFAULT_COMPILE=0 leaves out torch.compile's default mode, which
# reduce-overhead has beaten on every row so far); MAX_AUTOTUNE=1 adds torch.compile
# max-autotune and AOTInductor max_autotune (about a minute or two of
# autotuning per model and batch); MAX_AUTOTUNE=only times kiln against those
# two alone, a supplement that report.py merges into a full run's rows
# (bench-PART-max-autotune.json). KILN_FLAGS adds kiln-compile flags (e.g.
# KILN_FLAGS=--conv-wgmma=false); KILN_TUNING=DIR compiles each model whose
# tuning file (DIR/MODEL_bBATCH.json, bench/tune_layers.py's) is there with
# it, and its row says so; EXPORT=pt2 gives kiln the torch.export archive
# instead of the traced one (bench-PART-pt2.json). Writes $OUT/bench-PART.json after every
# row, with kiln's profile. Back on the development machine, merge the parts:
#   python3 bench/report.py bench/RESULTS.md bench/results/DATE/bench-*.json
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$root/gpu-bundle
torch_dir=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:$torch_dir/../nvidia/cu13/lib:$torch_dir/lib"
[ $# -gt 0 ] || { echo "usage: gpu-bench.sh PART... (cnn vit bert gpt2 gpt2_block ffn small)" >&2; exit 2; }
out=${OUT:-$root/gpu-out}
mkdir -p "$out"

# The C++ peers' harness: the bundle's when it runs here, else built here
# against this machine's LibTorch.
peers=$bundle/bin/kiln-torch-peers
if ! [ -x "$peers" ] || ! "$peers" --version > /dev/null 2>&1; then
  peers_build=/tmp/kiln-peers-build
  cmake -S "$root/bench/peers" -B "$peers_build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTORCH_DIR="$torch_dir" > "$out/peers-build.log" 2>&1 &&
    ninja -C "$peers_build" >> "$out/peers-build.log" 2>&1 ||
    { tail -30 "$out/peers-build.log"; echo "gpu-bench: kiln-torch-peers did not build" >&2; exit 1; }
  peers=$peers_build/kiln-torch-peers
fi

status=0
for part in "$@"; do
  case $part in
    cnn) models="resnet50 mobilenet_v3_large efficientnet_b0" ;;
    resnet) models="resnet50" ;;
    mobilenet) models="mobilenet_v3_large" ;;
    efficientnet) models="efficientnet_b0" ;;
    vit) models="vit_b_16" ;;
    bert) models="bert" ;;
    gpt2) models="gpt2" ;;
    gpt2_block) models="gpt2_block" ;;
    ffn) models="ffn" ;;
    small) models="gpt2_block ffn" ;;
    *) echo "gpu-bench: unknown part '$part'" >&2; exit 2 ;;
  esac
  PYTHONUNBUFFERED=1 python3 "$root/bench/models_vs_torch.py" "$bundle/bin" /tmp/kiln-bench \
    --models $models --batches ${BATCHES:-1 32} --runs "${RUNS:-50}" --rounds "${ROUNDS:-3}" \
    --torchscript $([ "${DEFAULT_COMPILE:-1}" = 1 ] && echo --default-compile) \
    --peers-bin "$peers" --aoti \
    $(for flag in ${KILN_FLAGS:-}; do echo "--kiln-flag=$flag"; done) \
    $([ -n "${KILN_TUNING:-}" ] && echo --kiln-tuning "$KILN_TUNING") \
    --export "${EXPORT:-torchscript}" \
    $(case ${MAX_AUTOTUNE:-} in only) echo --only-max-autotune ;; ?*) echo --max-autotune ;; esac) \
    $([ "${MAX_AUTOTUNE:-}" = only ] || echo --profile) \
    --json "$out/bench-$part$([ "${MAX_AUTOTUNE:-}" = only ] && echo -max-autotune)$([ "${EXPORT:-}" = pt2 ] && echo -pt2).json" \
    --raw-dir "$out/raw" || status=1
done
exit $status
