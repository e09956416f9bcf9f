#!/usr/bin/env bash
#===- scripts/kernel-snapshot.sh - every kernel the zoo compiles to -------===#
#
#   scripts/kernel-snapshot.sh OUT_DIR [BIN_DIR]
#
# For a refactor of kernel selection or code generation that must not change
# any kernel: compiles the zoo (exported here with torch, fixed seeds: the
# torchvision CNNs and ViT, BERT and GPT-2, each at batch 1 and 32 in fp16)
# and the test models to optimized IR, prints every kernel's source and
# launch configuration with `kiln-translate --kiln-to-cuda` into
# OUT_DIR/<case>.cu and one hash per case on stdout. Run it before and after
# and diff the two folders. Needs torchvision and transformers (pip).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: kernel-snapshot.sh OUT_DIR [BIN_DIR]}
bin=${2:-$root/build/bin}
zoo=${KILN_ZOO_DIR:-/tmp/kiln-zoo}
models=${KILN_TEST_MODELS:-$root/build/test/models}
mkdir -p "$out" "$zoo"
python3 -c "import torchvision, transformers" 2>/dev/null ||
  { echo "kernel-snapshot: needs torchvision and transformers (pip install)" >&2; exit 2; }
[ -f "$zoo/resnet50_f32.pt" ] ||
  python3 "$root/bench/export_torchvision.py" "$zoo" resnet50 mobilenet_v3_large efficientnet_b0 > /dev/null
[ -f "$zoo/gpt2_f32.pt" ] ||
  python3 "$root/bench/export_transformers.py" "$zoo" vit_b_16 bert gpt2 ffn > /dev/null 2>&1
image=x:32x3x224x224:f32
cases=(
  "resnet50_b1 $zoo/resnet50_f32.pt --precision fp16"
  "resnet50_b32 $zoo/resnet50_f32.pt --precision fp16 --input $image"
  "mobilenet_b1 $zoo/mobilenet_v3_large_f32.pt --precision fp16"
  "mobilenet_b32 $zoo/mobilenet_v3_large_f32.pt --precision fp16 --input $image"
  "efficientnet_b1 $zoo/efficientnet_b0_f32.pt --precision fp16"
  "efficientnet_b32 $zoo/efficientnet_b0_f32.pt --precision fp16 --input $image"
  "vit_b1 $zoo/vit_b_16_f32.pt --precision fp16"
  "vit_b32 $zoo/vit_b_16_f32.pt --precision fp16 --input $image"
  "bert_b1 $zoo/bert_f32.pt --precision fp16"
  "bert_b32 $zoo/bert_f32.pt --precision fp16 --input input_ids:32x128:i64 --input attention_mask:32x128:i64"
  "gpt2_b1 $zoo/gpt2_f32.pt --precision fp16"
  "gpt2_b32 $zoo/gpt2_f32.pt --precision fp16 --input input_ids:32x128:i64"
  "ffn_b32 $zoo/ffn_f32.pt --precision fp16 --input x:32x128x1024:f32"
  "ffn_f32 $zoo/ffn_f32.pt"
)
for m in mlp_f32 mlp_f16 ffn_large_f16 mlp_stack_f32 bert_tiny_f32 bert_tiny_f16 gpt2_block_f32 \
         mobilenet_block_f32 mobilenet_block_f16 op_sdpa op_pools op_matmul; do
  cases+=("t_$m $models/$m.pt")
done
cases+=("t_ffn_tf32 $models/ffn_f32.pt --precision tf32"
        "t_mlp_stack_bf16 $models/mlp_stack_f32.pt --precision bf16")
# One fixed path: the kernels' header comments name the IR file's locations.
ir=${TMPDIR:-/tmp}/kiln-kernel-snapshot.mlir
status=0
for c in "${cases[@]}"; do
  set -- $c
  name=$1
  shift
  if "$bin/kiln-compile" "$@" -o "$ir" 2> "$out/$name.err" &&
     "$bin/kiln-translate" --kiln-to-cuda "$ir" -o "$out/$name.cu" 2>> "$out/$name.err"; then
    echo "$name $(grep -c '=== kernel' "$out/$name.cu") kernels $(md5sum < "$out/$name.cu" | cut -c1-12)"
  else
    echo "$name FAILED: $(grep -m1 error "$out/$name.err")"
    status=1
  fi
done
exit $status
