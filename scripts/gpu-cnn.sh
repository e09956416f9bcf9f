#!/usr/bin/env bash
#===- scripts/gpu-cnn.sh - convolutional networks on the GPU machine ------===#
#
# After make-models (gpu-run.sh): the CNN test models through kiln-run
# --check against PyTorch, then torchvision's ResNet-50 (and, with FULL=1,
# MobileNetV3-Large and EfficientNet-B0) against PyTorch eager and
# torch.compile(mode="reduce-overhead"), raw numbers to $OUT/cnn.json.
#   gpu-cnn.sh BIN_DIR WORK_DIR
set -uo pipefail
bin=$1 work=$2
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$work}
status=0
"$root/scripts/gpu-check-models.sh" "$bin" "$work" resnet_basic_f32 resnet_basic_f16 \
  resnet_bottleneck_f16 resnet_small_f32 resnet_small_f16 mobilenet_block_f32 \
  mobilenet_block_f16 || status=1
python3 "$root/bench/models_vs_torch.py" "$bin" "$work/zoo" --models resnet50 \
  --batches 1 32 --json "$out/cnn-resnet50.json" || status=1
if [ "${FULL:-0}" = 1 ]; then
  python3 "$root/bench/models_vs_torch.py" "$bin" "$work/zoo" --models mobilenet_v3_large \
    efficientnet_b0 --batches 1 32 --no-compile --json "$out/cnn-others.json" || status=1
fi
exit $status
