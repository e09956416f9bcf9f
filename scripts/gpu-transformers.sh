#!/usr/bin/env bash
#===- scripts/gpu-transformers.sh - attention models on the GPU machine ---===#
#
# After make-models (gpu-run.sh): the tiny transformer test models through
# kiln-run --check against PyTorch, then ViT-B/16 and BERT-base (seq 128,
# masked) at batch 1 and 32 against PyTorch eager and
# torch.compile(mode="reduce-overhead") (NO_COMPILE=1 skips torch.compile),
# raw numbers to $OUT/transformers.json.
#   gpu-transformers.sh BIN_DIR WORK_DIR
set -uo pipefail
bin=$1 work=$2
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$work}
status=0
"$root/scripts/gpu-check-models.sh" "$bin" "$work" vit_tiny_f32 vit_tiny_f16 bert_tiny_f32 \
  bert_tiny_f16 gpt2_block_f32 gpt2_block_f16 || status=1
python3 "$root/bench/models_vs_torch.py" "$bin" "$work/zoo" --models ${MODELS:-vit_b_16 bert} \
  --batches 1 32 ${NO_COMPILE:+--no-compile} --json "$out/transformers.json" || status=1
exit $status
