#!/usr/bin/env bash
#===- scripts/gpu-ab.sh - variants behind a switch, checked and timed ------===#
#
# On the GPU machine, after scripts/gpu-pack.sh here:
#   scripts/gpu-ab.sh PART...
# PART:
#   tests      the kernel tests of the variants (stream-K, attention_wgmma)
#              and the families they touch
#   gemm       bench/gemm_vs_torch.py --set transformer: default,
#              --wgmma-stream-k, then KILN_EPILOGUE_FRAGMENTS=late-residual
#              (a tile's first residual slice copied when its epilogue
#              starts, not before its main loop)
#   attention  bench/attention_vs_sdpa.py at batch 32: default (attention_wgmma
#              on sm_90, its softmax beside P V), --attention-overlap=false
#              (softmax and products in turn), then --attention-wgmma=false
#              (attention_mma)
#   sweep      bench/sweep_knobs.py over the zoo at batch 32 (checked against
#              PyTorch, settings interleaved): default, --wgmma-stream-k,
#              --attention-overlap=false, --attention-wgmma=false
# Everything lands in $OUT (default gpu-out/ab) and in one archive,
# $OUT/ab.tar.gz, at the end. A variant that wins becomes the default
# (bench/NOTES.md, "Next on the GPU machine").
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$root/gpu-bundle
bin=$bundle/bin
[ -d "$bin" ] || { echo "gpu-ab: $bundle missing: run scripts/gpu-pack.sh here first" >&2; exit 2; }
[ $# -gt 0 ] || { echo "usage: gpu-ab.sh PART... (tests gemm attention sweep)" >&2; exit 2; }
torch_dir=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:$torch_dir/../nvidia/cu13/lib:$torch_dir/lib"
out=${OUT:-$root/gpu-out}/ab
work=${KILN_GPU_WORK:-/tmp/kiln-ab}
mkdir -p "$out" "$work"
export PYTHONUNBUFFERED=1

status=0
run() { # name command...: output to $out/name.log and the terminal's tail
  local name=$1; shift
  echo "=== $name"
  if ! "$@" > "$out/$name.log" 2>&1; then
    echo "    FAIL"; status=1
  fi
  tail -n "${TAIL:-25}" "$out/$name.log" | sed 's/^/    /'
}

for part in "$@"; do
  case $part in
    tests)
      TAIL=6 run kernel-tests "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*StreamK*:*Wgmma*:*ConvHopper*:*Attention*:*Fragment*' ;;
    gemm)
      run gemm-default python3 "$root/bench/gemm_vs_torch.py" "$bin" "$work/gemm" \
        --set transformer --markdown "$out/gemm-default.md"
      run gemm-stream-k python3 "$root/bench/gemm_vs_torch.py" "$bin" "$work/gemm" \
        --set transformer --kiln-flag=--wgmma-stream-k --markdown "$out/gemm-stream-k.md"
      KILN_EPILOGUE_FRAGMENTS=late-residual run gemm-late-residual python3 \
        "$root/bench/gemm_vs_torch.py" "$bin" "$work/gemm" --set transformer \
        --markdown "$out/gemm-late-residual.md" ;;
    attention)
      run attention python3 "$root/bench/attention_vs_sdpa.py" "$bin" "$work/att" \
        --batches 32 --json "$out/attention.json" \
        --markdown "$out/attention.md"
      run attention-cooperative python3 "$root/bench/attention_vs_sdpa.py" "$bin" "$work/att" \
        --batches 32 --kiln-flag=--attention-overlap=false \
        --json "$out/attention-cooperative.json" --markdown "$out/attention-cooperative.md"
      run attention-mma python3 "$root/bench/attention_vs_sdpa.py" "$bin" "$work/att" \
        --batches 32 --kiln-flag=--attention-wgmma=false --json "$out/attention-mma.json" \
        --markdown "$out/attention-mma.md" ;;
    sweep)
      run sweep python3 "$root/bench/sweep_knobs.py" "$bin" "$work/sweep" \
        --models vit_b_16 bert resnet50 mobilenet_v3_large efficientnet_b0 --batches 32 \
        --setting "" --setting "--wgmma-stream-k" --setting "--attention-overlap=false" \
        --setting "--attention-wgmma=false" ;;
    *) echo "gpu-ab: unknown part '$part'" >&2; exit 2 ;;
  esac
done
tar czf "$out/ab.tar.gz" -C "$out" $(cd "$out" && ls -- *.log *.md *.json 2>/dev/null)
echo "=== overall: $([ $status -eq 0 ] && echo PASS || echo FAIL) (all of it: $out/ab.tar.gz)"
exit $status
