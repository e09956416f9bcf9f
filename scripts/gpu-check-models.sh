#!/usr/bin/env bash
#===- scripts/gpu-check-models.sh - compile, run and check the test models -===#
#
# On the GPU machine (called by gpu-run.sh): for each test model, kiln-compile
# it to a .kiln artifact, let kiln-run draw and save random inputs, compute
# PyTorch's fp32 reference on them, then `kiln-run --check` against it and
# time kiln beside PyTorch eager in the same run.
#   gpu-check-models.sh BIN_DIR WORK_DIR MODEL[@PRECISION]...
set -uo pipefail
bin=$1 work=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
status=0
for entry in "$@"; do
  model=${entry%@*}
  precision=fp32
  [[ $entry == *@* ]] && precision=${entry#*@}
  dir=$work/$model-$precision
  mkdir -p "$dir"
  echo "--- $model ($precision)"
  if ! "$bin/kiln-compile" "$work/models/$model.pt" --precision "$precision" \
       -o "$dir/model.kiln" 2>&1; then status=1; continue; fi
  "$bin/kiln-run" "$dir/model.kiln" --save-inputs "$dir" > /dev/null || { status=1; continue; }
  python3 "$root/test/models/reference.py" "$work/models/$model.pt" "$dir" --bench 200 || { status=1; continue; }
  inputs=$(python3 -c "import torch,sys;m=torch.jit.load(sys.argv[1]);print(' '.join('--input %s=%s/%s.npy'%(n,sys.argv[2],n) for n in [v.debugName().split('.')[0] for v in list(m.graph.inputs())[1:]]))" "$work/models/$model.pt" "$dir")
  # fp32 models computed in reduced precision are held to that precision.
  tol=()
  case $precision in tf32) tol=(--tolerance 1e-3);; fp16|bf16) tol=(--tolerance 1e-2);; esac
  "$bin/kiln-run" "$dir/model.kiln" $inputs --check "$dir/reference0.npy" "${tol[@]}" --bench 200 || status=1
done
exit $status
