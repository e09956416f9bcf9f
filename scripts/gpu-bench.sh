#!/usr/bin/env bash
#===- scripts/gpu-bench.sh - the zoo against every PyTorch mode (issue 7) --===#
#
# On the GPU machine, after scripts/gpu-pack.sh here (carry gpu-bundle):
#   scripts/gpu-bench.sh PART...   PART: cnn (= resnet + mobilenet) | vit | bert | gpt2 | ffn
# Each part fits one 10-minute device call (cnn takes ~5 minutes, the others
# ~2 to 3, so several parts may share a call): it checks and times its models at
# batch 1 and 32 in fp16 against eager, TorchScript (trace + freeze),
# torch.compile and torch.compile(mode="reduce-overhead"), and writes
# $OUT/bench-PART.json after every row, with kiln's profile (device time per
# kernel kind, against the kind's roofline floor in RESULTS.md). Back here,
# merge the parts:
#   python3 bench/report.py bench/RESULTS.md bench/results/bench-*.json
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$root/gpu-bundle
torch_dir=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:$torch_dir/../nvidia/cu13/lib:$torch_dir/lib"
[ $# -gt 0 ] || { echo "usage: gpu-bench.sh PART... (cnn vit bert gpt2 ffn)" >&2; exit 2; }
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
status=0
for part in "$@"; do
  case $part in
    cnn) models="resnet50 mobilenet_v3_large" ;;
    resnet) models="resnet50" ;;
    mobilenet) models="mobilenet_v3_large" ;;
    vit) models="vit_b_16" ;;
    bert) models="bert" ;;
    gpt2) models="gpt2_block" ;;
    ffn) models="ffn" ;;
    *) echo "gpu-bench: unknown part '$part' (cnn resnet mobilenet vit bert gpt2 ffn)" >&2; exit 2 ;;
  esac
  python3 "$root/bench/models_vs_torch.py" "$bundle/bin" /tmp/kiln-bench --models $models \
    --batches 1 32 --runs ${RUNS:-50} --torchscript --default-compile --profile \
    --json "$out/bench-$part.json" --raw-dir "$out/raw" || status=1
done
exit $status
