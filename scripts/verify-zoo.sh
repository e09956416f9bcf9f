#!/usr/bin/env bash
#===- scripts/verify-zoo.sh - full-size torchvision models through --verify ===#
#
# Exports ResNet-50, MobileNetV3-Large and EfficientNet-B0 (random weights;
# CALIBRATE=1: BatchNorm statistics measured on random images, see
# bench/export_torchvision.py) in fp32 and fp16 and
# runs `kiln-compile --verify` on each: kiln's imported and optimized IR on
# fresh random inputs against LibTorch, fp32 within 1e-5 and fp16 within
# 1e-2 relative L2, plus the kernel count. Needs torchvision (pip installs
# it when missing; not part of CI). CPU only.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build/zoo}
models=${MODELS:-resnet50 mobilenet_v3_large efficientnet_b0}
python3 -c "import torchvision" 2>/dev/null || pip install --no-deps torchvision==0.26.0 pillow
"$root/scripts/build.sh" > /dev/null
python3 "$root/bench/export_torchvision.py" "$out" $models ${CALIBRATE:+--calibrate}
status=0
for model in $models; do
  for dtype in f32 f16; do
    echo "--- $model $dtype"
    "$root/build/bin/kiln-compile" "$out/${model}_$dtype.pt" --verify -o "$out/${model}_$dtype.mlir" \
      2>&1 | grep -E "verify|error" || status=1
    echo "kernels: $(grep -c 'kiln.fusion' "$out/${model}_$dtype.mlir" || true)"
  done
done
exit $status
