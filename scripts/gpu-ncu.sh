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
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$root/gpu-bundle
if [ $# -lt 2 ]; then
  echo "usage: gpu-ncu.sh MODEL.kiln KERNEL [KERNEL...]" >&2
  exit 2
fi
artifact=$1
shift
[ -f "$artifact" ] || { echo "gpu-ncu: $artifact: no such artifact" >&2; exit 2; }
[ -x "$bundle/bin/kiln-run" ] || { echo "gpu-ncu: $bundle/bin/kiln-run missing: run scripts/gpu-pack.sh first" >&2; exit 2; }
command -v ncu > /dev/null || { echo "gpu-ncu: ncu (Nsight Compute) is not on the PATH" >&2; exit 2; }
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
torch_dir=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))' 2>/dev/null || true)
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${torch_dir:+:$torch_dir/../nvidia/cu13/lib:$torch_dir/lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

status=0
for kernel in "$@"; do
  case $kernel in
    *[!A-Za-z0-9_]*) echo "gpu-ncu: '$kernel' is not a kernel name" >&2; status=2; continue ;;
  esac
  report=$out/ncu-$kernel.txt
  echo "=== $kernel"
  if ncu --clock-control none --kernel-name "regex:^$kernel" --launch-skip 5 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
      --section LaunchStats --section WarpStateStats --section SchedulerStats \
      --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
      "$bundle/bin/kiln-run" "$artifact" --device-io --no-graph --bench 20 > "$report" 2>&1 &&
     grep -q "Duration" "$report"; then
    grep -E "Duration|SM Frequency|DRAM Throughput|Memory Throughput|L1/TEX Hit Rate|L2 Hit Rate|Compute \(SM\) Throughput|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Issued Warp Per Scheduler|No Eligible" \
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
