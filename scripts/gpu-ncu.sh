#!/usr/bin/env bash
#===- scripts/gpu-ncu.sh - hardware counters of chosen kiln kernels -------===#
#
# On the GPU machine, over gpu-bundle/ (scripts/gpu-pack.sh):
#   scripts/gpu-ncu.sh MODEL.kiln KERNEL [KERNEL...]
# KERNEL: a kernel's name as kiln-run --profile prints it (kiln_5A37EB25...),
# or the start of one. Runs kiln-run on the artifact (random inputs in device
# memory, kernel by kernel rather than a CUDA graph, 20 runs) under Nsight
# Compute and profiles the sixth launch of each kernel (warm caches and
# clocks), with the sections that say where a kernel's time goes:
# throughput against the memory and compute ceilings, the memory hierarchy,
# occupancy, launch shape, and what the warps stall on. Clocks are left as
# they are (--clock-control none), as every other timing here, and the
# summary prints the SM frequency the launch ran at.
# Reports go to $OUT/ncu-KERNEL.txt (gpu-out/ when OUT is unset); a summary
# of each is printed. Exit status: non-zero if any kernel's report failed
# (hardware counters are not readable on every GPU machine's runtime).
#
#   scripts/gpu-ncu.sh --cublas LABEL
# The same sections for the cuBLAS kernel that F.linear runs on one shape of
# bench/cublas_kernels.py's transformer set (LABEL: "BERT FFN down", ...),
# to set beside a kiln kernel's; the report is $OUT/ncu-cublas-LABEL.txt.
#
#   scripts/gpu-ncu.sh --sdpa SHAPE[:BACKEND]
# The same for the kernel that SDPA runs at batch 32 on one shape of
# bench/attention_vs_sdpa.py (vit_b_16, bert, ...), as SDPA picks its backend
# or with BACKEND forced (flash, memory-efficient, cudnn);
# $OUT/ncu-sdpa-SHAPE[-BACKEND].txt.
#
#   scripts/gpu-ncu.sh --cudnn N,C,H,W,K,R,S[,STRIDE[,PAD[,GROUPS]]]
# The same for the kernel cuDNN runs for one convolution (channels-last
# fp16, its autotuner on: bench/cudnn_conv_loop.py), profiled only after
# the autotuner's trials; $OUT/ncu-cudnn-SPEC.txt.
#
# KILN_NCU_SOURCE=1 adds the warps' stall samples instruction by instruction:
# $OUT/ncu-NAME.ncu-rep and the SASS with its samples, $OUT/ncu-NAME-sass.csv
# (bench/sass_stalls.py lists where they gather).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$root/gpu-bundle
if [ $# -lt 2 ]; then
  echo "usage: gpu-ncu.sh MODEL.kiln KERNEL [KERNEL...] | gpu-ncu.sh --cublas LABEL | gpu-ncu.sh --sdpa SHAPE[:BACKEND] | gpu-ncu.sh --cudnn N,C,H,W,K,R,S[,STRIDE[,PAD[,GROUPS]]]" >&2
  exit 2
fi
# Launches of a kernel skipped before the one profiled (warm caches and
# clocks); cuDNN's loop opens its profiled range warm already.
range_flags=() skip=5
if [ "$1" = --cublas ]; then
  label=$2
  # cuBLAS's GEMM kernels only: the operands' random fills run first.
  kernels=(nvjet)
  filter="regex:nvjet|xmma|gemm|cutlass"
  report_names=("cublas-$(echo "$label" | tr -c 'A-Za-z0-9\n' '-')")
  target=(python3 "$root/bench/cublas_kernels.py" --loop "$label")
elif [ "$1" = --sdpa ]; then
  # Whichever backend SDPA picks (flash, memory-efficient, cuDNN); the
  # inputs' random fills are not among these names.
  kernels=(sdpa)
  filter="regex:fmha|flash|attn|attention|cudnn|sdpa"
  shape=${2%%:*} backend=picked
  [ "$shape" = "$2" ] || backend=${2#*:}
  report_names=("sdpa-$shape$([ "$backend" = picked ] || echo "-$backend")")
  target=(python3 "$root/bench/attention_vs_sdpa.py" --loop "$shape" --backend "$backend")
elif [ "$1" = --cudnn ]; then
  # Whatever cuDNN launches once its autotuner has chosen: the loop starts
  # the profiled range after the trials.
  kernels=(cudnn)
  filter="regex:."
  report_names=("cudnn-$(echo "$2" | tr -c '0-9\n' '-')")
  target=(python3 "$root/bench/cudnn_conv_loop.py" "$2")
  range_flags=(--profile-from-start off) skip=0
else
  artifact=$1
  shift
  [ -f "$artifact" ] || { echo "gpu-ncu: $artifact: no such artifact" >&2; exit 2; }
  [ -x "$bundle/bin/kiln-run" ] || { echo "gpu-ncu: $bundle/bin/kiln-run missing: run scripts/gpu-pack.sh first" >&2; exit 2; }
  kernels=("$@")
  filter=
  report_names=("$@")
  target=("$bundle/bin/kiln-run" "$artifact" --device-io --no-graph --bench 20)
fi
command -v ncu > /dev/null || { echo "gpu-ncu: ncu (Nsight Compute) is not on the PATH" >&2; exit 2; }
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
torch_dir=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))' 2>/dev/null || true)
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${torch_dir:+:$torch_dir/../nvidia/cu13/lib:$torch_dir/lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

status=0
for i in "${!kernels[@]}"; do
  kernel=${kernels[$i]}
  case $kernel in
    *[!A-Za-z0-9_]*) echo "gpu-ncu: '$kernel' is not a kernel name" >&2; status=2; continue ;;
  esac
  report=$out/ncu-${report_names[$i]}.txt
  echo "=== ${report_names[$i]}"
  saved=$out/ncu-${report_names[$i]}
  # KILN_NCU_SOURCE=1: also sample where the warps stall, instruction by
  # instruction, kept as a report and as CSV of the SASS with its samples.
  source_flags=()
  [ "${KILN_NCU_SOURCE:-0}" = 1 ] && source_flags=(--section SourceCounters --import-source no
                                                   -f -o "$saved")
  if ncu "${range_flags[@]}" --clock-control none --kernel-name "${filter:-regex:^$kernel}" \
      --launch-skip "$skip" \
      --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
      --section LaunchStats --section WarpStateStats --section SchedulerStats \
      --section ComputeWorkloadAnalysis "${source_flags[@]}" \
      --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,regex:sm__pipe_tensor.*_cycles_active\.avg\.pct_of_peak_sustained_active' \
      "${target[@]}" > "$report" 2>&1 &&
     { [ ${#source_flags[@]} = 0 ] ||
       { ncu -i "$saved.ncu-rep" --page details >> "$report" 2>&1 &&
         ncu -i "$saved.ncu-rep" --page source --csv --print-source sass \
           > "$saved-sass.csv" 2> "$saved-sass.err"; }; } &&
     grep -q "Duration" "$report"; then
    # The kernel's full name: cuBLAS's says its tile and cluster.
    grep -m1 -E '^ *(nvjet|sm90|cutlass|kiln|fmha|flash|cudnn)[A-Za-z0-9_]*' "$report" | sed 's/^ */    kernel /'
    grep -E "Duration|SM Frequency|DRAM Throughput|Memory Throughput|L1/TEX Hit Rate|L2 Hit Rate|Compute \(SM\) Throughput|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Issued Warp Per Scheduler|No Eligible|SM Busy|Issue Slots Busy|sm__pipe_tensor" \
      "$report" | sed 's/^ */    /'
    # What the warps stall on, cycles a warp per issued instruction, the
    # largest first (averaged over every warp: the producer's waits too).
    grep -E "smsp__average_warps_issue_stalled_" "$report" |
      awk '{print $NF, $1}' | sort -rn | head -8 |
      sed -e 's/smsp__average_warps_issue_stalled_//' -e 's/_per_issue_active.ratio//' \
          -e 's/^/    stalled /'
  else
    echo "    FAIL: no report for $kernel (see $report)"
    tail -n 5 "$report" | sed 's/^/    /'
    status=1
  fi
done
exit $status
