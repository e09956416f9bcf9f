#!/usr/bin/env bash
#===- scripts/gpu-ab.sh - variants behind a switch, checked and timed ------===#
#
# On the GPU machine, after scripts/gpu-pack.sh here:
#   scripts/gpu-ab.sh PART...
# PART:
#   tests      the kernel tests of the variants (192-row GEMM tiles)
#   gemm       bench/gemm_vs_torch.py --set transformer: default, then
#              --wgmma-rows=0 (192-row tiles where the cost model takes
#              them), then --wgmma-rows=192 (wherever they fit)
#   attention  bench/attention_vs_sdpa.py at batch 32: default (attention_wgmma
#              on sm_90, its softmax beside P V), --attention-overlap=false
#              (softmax and products in turn), then --attention-wgmma=false
#              (attention_mma)
#   sweep      bench/sweep_knobs.py over the zoo at batch 32 (checked against
#              PyTorch, settings interleaved): default, --wgmma-rows=0
#   residual   the kernel tests of the Hopper GEMM configs (64-wide ping-pong
#              tiles copying residual slices a tile ahead among them), then
#              ResNet-50 at batch 32 launch by launch (kiln-run --profile):
#              default against --wgmma-residual-prefetch, compare_profiles.py
#   tall       the 192-row tile tests (1x1 convolutions among them), then
#              the CNNs at batch 32 launch by launch: --wgmma-rows=128 (no
#              192-row tiles), the default (the cost model's 192-row tiles
#              for 1x1 convolutions), --wgmma-rows=192 (wherever they fit)
#   stream     the streaming GEMM's kernel tests, then MobileNetV3 and
#              EfficientNet-B0 at batch 32 launch by launch: default against
#              --gemm-narrow-fmas=0 (MobileNetV3's 16 -> 16 with a residual
#              streamed instead of a thread per row)
#   alone      the zoo at batch 32, each launch also timed alone (kiln-run
#              --time-launches, as cuDNN's and cuBLAS's kernels are timed),
#              then bench/conv_vs_cudnn.py on the CNNs' profiles
#   alone-ab   ResNet-50 at batch 32, each launch timed alone, under the Hopper
#              main loop's switches one at a time (cooperative, multicast 2,
#              two blocks a multiprocessor, 128 rows, 192 rows), each against
#              the default with compare_profiles.py
#   depthwise  MobileNetV3 and EfficientNet-B0 at batch 32, each launch timed
#              alone, with 1, 2 and 4 adjacent output columns a depthwise
#              thread (--depthwise-columns), each against 1
#   depthwise-patches  the depthwise kernel tests (2-D patches among them),
#              then MobileNetV3 and EfficientNet-B0 at batch 32, each launch
#              alone: default against --depthwise-patches
#   runtime-sizes  the GEMM and normalization tests with sizes given at
#              launch, then BERT-base, the GPT-2 block, the FFN and ViT-B/16
#              at batch 32 and 1, launch by launch (checked against
#              PyTorch): default against --runtime-sizes; then the kernel
#              library built here (kiln-kernel-library, 16 cores) and every
#              zoo model's cold compile with --runtime-sizes and the
#              library, against the default (models_vs_torch.py
#              --build-times --kiln-only)
#   matmul     the kernel tests of matmul and bmm on the Hopper GEMM (a [K, N]
#              B, a batch on the grid), then bench/matmul_vs_torch.py
#              (products of two activations against cuBLAS): default
#              (mma.sync, split K), then --wgmma-matmul
#   two-blocks the Hopper convolution tests (two blocks a multiprocessor with a
#              residual among them), then ResNet-50 at batch 32, each launch
#              alone, twice: default (two blocks a multiprocessor for short-K
#              residual epilogues) against --wgmma-blocks-per-sm=1, then
#              bench/conv_vs_cudnn.py on the second default profile
#   last-stage ResNet-50's 1x1 2048 -> 512 at 7 x 7 (launch LAST_STAGE_LAUNCH,
#              default 44, at batch 32) under Nsight Compute: the default
#              kernel, the K split over pairs of blocks (--wgmma-split-k), and
#              the kernel cuDNN chooses for the convolution (gpu-ncu.sh --cudnn)
#   last-stage-variants  the split pairs' kernel tests (GEMMs and the
#              Hopper convolutions), then the same layer as the GEMM it runs
#              as (bench/gemm_vs_torch.py --set last-stage), once a variant:
#              the default 128 x 64 tiles, stream-K on 128 x 128 and on
#              128 x 192 tiles over every multiprocessor (--wgmma-stream-k
#              with the GEMM's candidates 2 and 4), the split pairs
#              (--wgmma-split-k), then the default again; each checked
#              against PyTorch, cuBLAS's F.linear beside it
#   stream-k-alone  ResNet-50 at batch 32, each launch alone: default against
#              --wgmma-stream-k (which launches it helps, if any)
#   gelu-ncu   bench/gemm_vs_torch.py --set epilogues (BERT's FFN shapes with
#              each epilogue), by default and with the erf GELU written as a
#              tail (KILN_GELU_ERF=tail: 14% fewer instructions), then Nsight
#              Compute on the up-projection's kernels with a bias, ReLU and
#              both GELUs (scripts/gpu-ncu.sh: SM frequency, issue slots,
#              what the warps stall on): whether the GELU costs latency,
#              instructions or clock
#   persistent-attention  the attention and residual-ring kernel tests
#              (the persistent grid's cases, 3 K/V stages, the ring's
#              repeats), then bench/attention_vs_sdpa.py at batch 32 and 1:
#              default (a persistent grid), --attention-persistent=false (a
#              block an item), and the default with --attention-stages=3,
#              two rounds interleaved; ViT-B/16, BERT
#              and GPT-2 at batch 32 and 1 each way (kiln alone, checked
#              against PyTorch); Nsight Compute on the persistent ViT kernel
#   attention-ncu  ViT-B/16's and BERT's attention at batch 32 timed against
#              SDPA, then Nsight Compute on kiln's kernel (with the stall
#              samples instruction by instruction) and on SDPA's: where
#              each spends its time
#   half2      the fragment epilogue tests (every fp16 input through a GEMM's
#              GELU, both forms), then bench/gemm_vs_torch.py --set
#              transformer and --set epilogues: default (a GELU, a ReLU and
#              a residual add on packed fp16 pairs in half2 arithmetic)
#              against KILN_EPILOGUE_HALF2=exact (the GELU in fp32) and =0
#              (everything in fp32)
#   split-k    the Hopper GEMM and convolution tests (K split over pairs of
#              blocks among them), then ResNet-50 at batch 32, each launch
#              alone, twice: default against --wgmma-split-k (its last
#              stage's 3x3 and 2048 -> 512 layers on pairs of 128 x 128
#              tiles), then EfficientNet-B0 and MobileNetV3 once, and
#              bench/conv_vs_cudnn.py on the split runs
#   native-compile  the FFN at batch 32 and 1, cold kiln-compile three times
#              each: default, --arch sm_90a, --arch native (the GPU asked
#              about in a child), native asked here (KILN_NATIVE_QUERY=here),
#              native with NVRTC in threads (KILN_NVRTC_PROCESSES=0); then
#              kiln-compile-times default and native, with and without CUDA
#              initialized first (--init-cuda)
#   in-process cold compiles at load time in one warm process
#              (kiln-compile-times) beside kiln-compile's: the FFN and the
#              GPT-2 block with torch.compile's builds (models_vs_torch.py
#              --build-times)
#   in-process-zoo  the same for the six zoo models, kiln's builds alone
#   ring-residual  the Hopper GEMM tests that read a residual (through the
#              main loop's ring, residual_ring, and copied by rows), then
#              the zoo at batch 1 and 32 checked against PyTorch (kiln
#              alone), then bench/gemm_vs_torch.py --set transformer with
#              the ring and with --wgmma-residual-ring=false (about 8
#              minutes; RING_TESTS narrows the tests)
#   ring-rounds  the transformer GEMM table with the ring and copied,
#              alternating, ROUNDS times (default 3)
#   ring-models  ResNet-50, BERT and ViT-B/16 at batch 32 kernel by kernel
#              with the ring and with --wgmma-residual-ring=false, compared
#              launch by launch
#   vendor-kernels  the transformer GEMM table (unless vendor ran), the
#              kernels cuBLAS runs on its shapes (bench/cublas_kernels.py),
#              and Nsight Compute on kiln's and cuBLAS's side by side where
#              kiln is behind
#   behind     the transformer GEMMs still behind F.linear at batch 32
#              (bench/gemm_vs_torch.py --set behind) on each tile the
#              tuner tries, --wgmma-candidate 0 to 8 (the 192-row tiles
#              narrower than 192 last), two rounds each
#   swap       the swapped few-row GEMM's tests (gemm_wgmma_swap), then the
#              batch-1 GEMM table and the transformers at batch 1 (kiln
#              alone, checked against PyTorch): default against --wgmma-swap;
#              SWAP_MODELS names the models (none: the tables alone)
#   batch-1-gemms  the transformer GEMMs at batch 1 (bench/gemm_vs_torch.py
#              --set batch-1, three rounds) as chosen, then with deeper and
#              wider split-K pipelines and more blocks, the kernels cuBLAS
#              runs there, and Nsight Compute on kiln's and cuBLAS's GPT-2
#              QKV and FFN down-projection side by side
#   few-rows   the batch-1 Hopper GEMM tests (few row tiles, K split over
#              pairs), then the batch-1 GEMM table as chosen (one to three
#              row tiles on the Hopper GEMM), with --wgmma-few-rows=false
#              (64 x 64 mma.sync tiles, K split across a cluster) and with
#              --wgmma-split-k (K split over pairs of Hopper blocks), then
#              GPT-2, BERT and ViT-B/16 at batch 1 (kiln alone, three rounds)
#              as chosen and with --wgmma-few-rows=false
#   few-rows-narrow  the batch-1 GEMM table as chosen, then with the
#              768-wide projections (12 tiles of 128 x 64) on the Hopper GEMM
#              too (--wgmma-few-rows-tiles=12): a block a tile, K split over
#              pairs (--wgmma-split-k), and stream-K (--wgmma-stream-k)
#   epilogue-source  BERT's and ViT's FFN down-projections under Nsight
#              Compute with the warps' stall samples instruction by
#              instruction (KILN_NCU_SOURCE=1): kiln's with a bias, with the
#              residual, and cuBLAS's F.linear
#   query-tail the attention tests with a sequence's last few queries
#              transposed (KILN_ATTENTION_QUERY_TAIL=1, attention_query_tail),
#              then bench/attention_vs_sdpa.py at batch 32 without and
#              with it, ROUNDS times (default 2), then ViT-B/16 at batch 32
#              and 1 checked against PyTorch, launch by launch, both ways
#   layer-norm-fold  the folded layer norm's kernel tests (row moments, the
#              corrected linear on every GEMM kernel), then ViT-B/16 and
#              GPT-2 at batch 32 checked against PyTorch, with the fold (the
#              default) and without (--fold-layer-norm-bytes=-1), then
#              bench/gemm_vs_torch.py --set norm-linear both ways (a norm and
#              its linear alone, against F.layer_norm + F.linear). Their
#              launches are different groups, which compare_profiles.py
#              refuses to pair.
#   shortcut   the merged projection shortcut's kernel tests (conv_wgmma over
#              a channel concat; with KILN_GPU_TEST_ARCH=sm_80 its mma.sync
#              fallback) and the test bottleneck against LibTorch, then
#              ResNet-50 at batch 32, each launch alone, merged (the
#              default) and kept (--merge-shortcut-bytes=-1), each against
#              cuDNN with bench/conv_vs_cudnn.py (a merged launch covers
#              both convolutions, cuDNN timing each)
#   two-consumers  the attention_wgmma tests (two consumer warpgroups
#              among them), then the attention shapes at batch 32 and 1 and
#              ViT-B/16, BERT and GPT-2 (kiln alone): default, then
#              --attention-rows=128 (two consumer warpgroups over one K/V
#              ring at a head size of 64), then that a block an item; Nsight
#              Compute on ViT's two-consumer kernel
#   check-rounds  ResNet-50's check that moves between kiln-run processes: ViT-B/16
#              then ResNet-50 at batch 32, 4 rounds (a process each), with
#              the residual ring (the default) and without
#              (--wgmma-residual-ring=false), each round's rel L2 printed;
#              then compute-sanitizer's racecheck on the ring's kernel
#              tests, and its initcheck and racecheck on one checked
#              kiln-run of ResNet-50. SETTINGS=ring keeps the rounds to
#              the default, CHECK_MODELS=resnet50 to one model; SANITIZE=0
#              leaves compute-sanitizer out
#   attention-base  every attention kernel test, then the attention shapes
#              at batch 32 and 1 and ViT-B/16, BERT and GPT-2 (kiln alone)
#              compiled by an earlier build (gpu-bundle/base, gpu-pack.sh's
#              KILN_BASE_COMPILE) and by this one, in turn, ROUNDS times
#              (default 2)
#   four-blocks  the attention tests with four blocks a multiprocessor, then
#              the attention shapes at batch 32 and 1 and ViT-B/16, BERT and
#              GPT-2 (kiln alone): default, --attention-blocks-per-sm=4 (the
#              cooperative schedule, 96 registers), that a block an item; Nsight
#              Compute on ViT's four-block kernel
#   tune       bench/tune_layers.py on TUNE_MODELS (default: resnet50
#              mobilenet_v3_large efficientnet_b0 vit_b_16 bert gpt2) at
#              batch 32: each layer's Hopper tile among the cost model's
#              candidates (with its defaults, and with one block a
#              multiprocessor, whose candidates the short residual layers'
#              two-block rule leaves out), confirmed beside the default, a
#              tuning file a
#              model ($OUT/tuning/MODEL_b32.json, what gpu-bench.sh's
#              KILN_TUNING reads) and its table
#   alone-tuned  the CNNs at batch 32, each launch alone, at the defaults and
#              with the tuning files in KILN_TUNING (a folder of
#              MODEL_b32.json, as `tune` writes them), then each against
#              cuDNN with bench/conv_vs_cudnn.py (as `alone` and `tuned`)
#   vendor     vendor-transformer, then the zoo at batch 32 each launch
#              alone with bench/conv_vs_cudnn.py (as `alone`)
#   vendor-transformer  the GELU test and the matmul and bmm kernel tests,
#              then the GEMM tables at batch 32 and batch 1 (three rounds:
#              medians and each ratio's range), the attention and the
#              matmul tables
#   vendor-cnn  the CNNs at batch 32 each launch alone against cuDNN alone
#   ring-pairs the residual ring's kernel tests, then the transformer
#              GEMM table at batch 32 by default and in multicast pairs
#              (--wgmma-multicast=2), in turn, twice
#   multicast-a the Hopper GEMM's kernel tests (pairs of column tiles
#              sharing A among them), then the transformer GEMM table at
#              batch 32 and ResNet-50's 2048 -> 512 as a GEMM, default
#              against --wgmma-multicast-a, in turn, twice
#   swap-wide  the swapped GEMM's kernel tests (its wide token tiles among
#              them), then EfficientNet-B0 at batch 32 (whose 7 x 7
#              projections take the wide tiles) launch by launch, default
#              against --wgmma-swap-wide=false (K split over mma.sync), and
#              its table against cuDNN by default
#   narrow     the narrow 128 x 56 tile's kernel tests (both images), then ResNet-50's
#              2048 -> 512 as a GEMM, default against --wgmma-narrow, three
#              times in turn, then ResNet-50 at batch 32 launch by launch
#              both ways and its table against cuDNN with the narrow tiles
#   global-pool the pooled GEMM's kernel and model tests (both images; the global average
#              pool summed in a 1x1 convolution's epilogue), then ResNet-50,
#              EfficientNet-B0 and MobileNetV3-Large at batch 32 launch by
#              launch (checked against PyTorch), default against
#              --conv-global-pool, and their table against cuDNN with it
# Everything lands in $OUT/ab (default gpu-out/ab) and in one archive,
# ab.tar.gz there, at the end or when `timeout -s TERM` cuts the run off.
# A variant that wins becomes the default (bench/NOTES.md, "Next on the
# GPU machine").
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$root/gpu-bundle
bin=$bundle/bin
[ -d "$bin" ] || { echo "gpu-ab: $bundle missing: run scripts/gpu-pack.sh here first" >&2; exit 2; }
"$root/scripts/gpu-unpack.sh"
[ $# -gt 0 ] || { echo "usage: gpu-ab.sh PART... (tests tune alone-tuned attention-base four-blocks two-consumers query-tail layer-norm-fold shortcut check-rounds ring-residual ring-rounds ring-models vendor vendor-transformer vendor-cnn vendor-kernels behind ring-pairs multicast-a narrow global-pool swap-wide swap batch-1-gemms few-rows few-rows-narrow epilogue-source gemm attention sweep residual stream tall alone alone-ab depthwise depthwise-patches runtime-sizes matmul two-blocks last-stage last-stage-variants stream-k-alone gelu-ncu half2 split-k native-compile in-process in-process-zoo)" >&2; exit 2; }
torch_dir=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:$torch_dir/../nvidia/cu13/lib:$torch_dir/lib"
out=${OUT:-$root/gpu-out}/ab
work=${KILN_GPU_WORK:-/tmp/kiln-ab}
mkdir -p "$out" "$work"
export PYTHONUNBUFFERED=1

status=0
# Everything in one archive; also when cut off (timeout's TERM), so that a
# partial run still comes back whole.
pack() {
  tar czf "$out/ab.tar.gz" -C "$out" $(cd "$out" && ls -d -- *.log *.md *.json raw-* ncu-* 2>/dev/null)
}
trap 'echo "=== cut off: packing what is there"; pack; exit 124' TERM
run() { # name command...: output to $out/name.log and the terminal's tail; its status
  local name=$1 rc=0; shift
  echo "=== $name"
  if ! "$@" > "$out/$name.log" 2>&1; then
    echo "    FAIL"; status=1; rc=1
  fi
  tail -n "${TAIL:-25}" "$out/$name.log" | sed 's/^/    /'
  return $rc
}
# CNNs at batch 32, each launch alone, `rounds` times: the default against
# `setting` (kiln-compile's `flag`), compare_profiles.py on each model after
# each round, then conv_vs_cudnn.py on the last round's `tabled` profiles
# (default or `setting`). Logs and profiles under `name`.
cnn_launches_ab() { # name setting flag tabled rounds model...
  local name=$1 setting=$2 flag=$3 tabled=$4 rounds=$5 round variant flags model
  shift 5
  local profiles=()
  for round in $(seq "$rounds"); do
    for variant in default "$setting"; do
      flags=$([ "$variant" = "$setting" ] && echo "--kiln-flag=$flag")
      run "$name-$variant-$round" python3 "$root/bench/models_vs_torch.py" "$bin" \
        "$work/models" --models "$@" --batches 32 --kiln-only --profile \
        --raw-dir "$out/raw-$name-$variant-$round" $flags
    done
    for model in "$@"; do
      TAIL=20 run "$name-compare-$model-$round" python3 "$root/bench/compare_profiles.py" \
        --top 12 "$out/raw-$name-default-$round/${model}_b32.txt" \
        "$out/raw-$name-$setting-$round/${model}_b32.txt"
    done
  done
  for model in "$@"; do
    profiles+=("$out/raw-$name-$tabled-$rounds/${model}_b32.txt")
  done
  run "$name-conv" python3 "$root/bench/conv_vs_cudnn.py" "${profiles[@]}" \
    --markdown "$out/conv-$name.md" --json "$out/conv-$name.json"
}

# The exhaustive GELU test and the matmul and bmm kernel tests, then the
# transformer vendor tables: GEMMs against cuBLAS (batch 32 and 1), attention against each
# SDPA backend, matmul and bmm against cuBLAS.
vendor_transformer() {
  TAIL=8 run gelu-test "$bin/kiln-kernels-gpu-tests" --gtest_filter='*GeluOverEveryHalf*'
  TAIL=8 run matmul-tests "$bin/kiln-kernels-gpu-tests" --gtest_filter='*Matmul*'
  run gemm-default python3 "$root/bench/gemm_vs_torch.py" "$bin" "$work/gemm" \
    --set transformer --rounds 3 --markdown "$out/gemm-default.md"
  run gemm-b1 python3 "$root/bench/gemm_vs_torch.py" "$bin" "$work/gemm-b1" \
    --set batch-1 --rounds 3 --markdown "$out/gemm-b1.md"
  run attention python3 "$root/bench/attention_vs_sdpa.py" "$bin" "$work/att" \
    --batches 32 --json "$out/attention.json" --markdown "$out/attention.md"
  run matmul python3 "$root/bench/matmul_vs_torch.py" "$bin" "$work/matmul" \
    --markdown "$out/matmul.md"
}

# The zoo at batch 32, each launch alone, then the CNNs' table against cuDNN.
launches_alone() {
  local -a models=(resnet50 mobilenet_v3_large efficientnet_b0)
  [ "${1:-}" = cnn ] || models+=(vit_b_16 bert gpt2)
  run alone-models python3 "$root/bench/models_vs_torch.py" "$bin" "$work/models" \
    --models "${models[@]}" --batches 32 \
    --kiln-only --profile --raw-dir "$out/raw-alone"
  run alone-conv python3 "$root/bench/conv_vs_cudnn.py" "$out/raw-alone/resnet50_b32.txt" \
    "$out/raw-alone/mobilenet_v3_large_b32.txt" "$out/raw-alone/efficientnet_b0_b32.txt" \
    --markdown "$out/conv-alone.md" --json "$out/conv-alone.json"
}

# The attention kernel tests (gtest filter $1), and only if they pass (barriers
# that disagree hang): bench/attention_vs_sdpa.py at batch 32 and 1 in two
# interleaved rounds, then ViT-B/16, BERT and GPT-2 at batch 32 and 1 (kiln
# alone, checked against PyTorch), under each setting NAME=FLAGS (kiln-compile
# flags; none for the default); then Nsight Compute on ViT's kernel under
# setting $2.
attention_ab() {
  local filter=$1 profiled=$2 spec setting flag round
  shift 2
  local -a flags
  setting_flags() {
    flags=()
    for flag in ${1#*=}; do flags+=("--kiln-flag=$flag"); done
  }
  TAIL=12 run attention-tests timeout 400 "$bin/kiln-kernels-gpu-tests" \
    --gtest_filter="$filter" || return 0
  for round in 1 2; do
    for spec in "$@"; do
      setting=${spec%%=*}
      setting_flags "$spec"
      TAIL=8 run "attention-$setting-$round" python3 "$root/bench/attention_vs_sdpa.py" \
        "$bin" "$work/att-$setting" --batches 32 1 --json "$out/attention-$setting-$round.json" \
        --markdown "$out/attention-$setting-$round.md" "${flags[@]}"
    done
  done
  for spec in "$@"; do
    setting=${spec%%=*}
    setting_flags "$spec"
    TAIL=12 run "models-$setting" python3 "$root/bench/models_vs_torch.py" "$bin" \
      "$work/models-$setting" --models vit_b_16 bert gpt2 --batches 32 1 --kiln-only \
      --rounds 3 --runs 30 --json "$out/models-$setting.json" "${flags[@]}"
  done
  OUT=$out/ncu-$profiled TAIL=40 run "ncu-$profiled-vit" "$root/scripts/gpu-ncu.sh" \
    "$work/att-$profiled/vit_b_16_b32.kiln" kiln_
}

for part in "$@"; do
  case $part in
    tests)
      TAIL=6 run kernel-tests "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*TallTiles*' ;;
    gemm)
      run gemm-default python3 "$root/bench/gemm_vs_torch.py" "$bin" "$work/gemm" \
        --set transformer --markdown "$out/gemm-default.md"
      run gemm-rows-model python3 "$root/bench/gemm_vs_torch.py" "$bin" "$work/gemm" \
        --set transformer --kiln-flag=--wgmma-rows=0 --markdown "$out/gemm-rows-model.md"
      run gemm-rows-192 python3 "$root/bench/gemm_vs_torch.py" "$bin" "$work/gemm" \
        --set transformer --kiln-flag=--wgmma-rows=192 --markdown "$out/gemm-rows-192.md" ;;
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
    persistent-attention)
      attention_ab '*AttentionWgmma*:*ResidualRing*' default default= \
        per-item=--attention-persistent=false stages3=--attention-stages=3 ;;
    tune)
      mkdir -p "$out/tuning"
      for model in ${TUNE_MODELS:-resnet50 mobilenet_v3_large efficientnet_b0 vit_b_16 bert gpt2}; do
        TAIL=16 run "tune-$model" python3 "$root/bench/tune_layers.py" "$bin" "$work/tune" \
          --model "$model" --batch 32 --candidates 10 --rounds 2 --runs 30 \
          --setting "" --setting "--wgmma-blocks-per-sm=1" \
          --out "$out/tuning/${model}_b32.json" --markdown "$out/tuning/${model}_b32.md"
      done ;;
    attention-base)
      base=$bundle/base
      [ -x "$base/kiln-compile" ] || { echo "gpu-ab: $base/kiln-compile missing (KILN_BASE_COMPILE)" >&2; exit 2; }
      TAIL=12 run attention-tests timeout 400 "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*Attention*' || continue
      for round in $(seq "${ROUNDS:-2}"); do
        for build in base this; do
          build_bin=$([ $build = base ] && echo "$base" || echo "$bin")
          TAIL=8 run "attention-$build-$round" python3 "$root/bench/attention_vs_sdpa.py" \
            "$build_bin" "$work/att-ab" --batches 32 1 \
            --json "$out/attention-$build-$round.json" --markdown "$out/attention-$build-$round.md"
        done
      done
      for build in base this; do
        build_bin=$([ $build = base ] && echo "$base" || echo "$bin")
        TAIL=12 run "models-$build" python3 "$root/bench/models_vs_torch.py" "$build_bin" \
          "$work/models-ab" --models vit_b_16 bert gpt2 --batches 32 1 --kiln-only \
          --rounds 3 --runs 30 --json "$out/models-$build.json"
      done ;;
    four-blocks)
      attention_ab '*AttentionWgmmaFourBlocks*' four default= four=--attention-blocks-per-sm=4 \
        "four-per-item=--attention-blocks-per-sm=4 --attention-persistent=false" ;;
    two-consumers)
      attention_ab '*AttentionWgmma*' rows128 default= rows128=--attention-rows=128 \
        "rows128-per-item=--attention-rows=128 --attention-persistent=false" ;;
    attention-ncu)
      run attention-ncu python3 "$root/bench/attention_vs_sdpa.py" "$bin" "$work/att-ncu" \
        --batches 32 --shapes vit_b_16 bert --json "$out/attention-ncu.json" \
        --markdown "$out/attention-ncu.md"
      for shape in vit_b_16 bert; do
        KILN_NCU_SOURCE=1 OUT=$out/ncu-attention-$shape TAIL=40 run "ncu-attention-$shape" \
          "$root/scripts/gpu-ncu.sh" "$work/att-ncu/${shape}_b32.kiln" kiln_
        OUT=$out/ncu-attention-$shape TAIL=40 run "ncu-sdpa-$shape" \
          "$root/scripts/gpu-ncu.sh" --sdpa "$shape"
      done ;;
    sweep)
      run sweep python3 "$root/bench/sweep_knobs.py" "$bin" "$work/sweep" \
        --models vit_b_16 bert resnet50 mobilenet_v3_large efficientnet_b0 --batches 32 \
        --setting "" --setting "--wgmma-rows=0" ;;
    residual)
      TAIL=6 run residual-tests "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*LinearWgmma*:*WgmmaLateResidual*:*WgmmaEarlyResidual*:*Conv1x1*'
      for setting in default prefetch; do
        flags=$([ $setting = prefetch ] && echo --kiln-flag=--wgmma-residual-prefetch)
        run "residual-$setting" python3 "$root/bench/models_vs_torch.py" "$bin" "$work/models" \
          --models resnet50 --batches 32 --kiln-only --profile --raw-dir "$out/raw-$setting" \
          $flags
      done
      run residual-compare python3 "$root/bench/compare_profiles.py" \
        "$out/raw-default/resnet50_b32.txt" "$out/raw-prefetch/resnet50_b32.txt" ;;
    stream)
      TAIL=6 run stream-tests "$bin/kiln-kernels-gpu-tests" --gtest_filter='*StreamGemm*:*NarrowGemm*'
      for setting in default no-narrow; do
        flags=$([ $setting = no-narrow ] && echo --kiln-flag=--gemm-narrow-fmas=0)
        run "stream-$setting" python3 "$root/bench/models_vs_torch.py" "$bin" "$work/models" \
          --models mobilenet_v3_large efficientnet_b0 --batches 32 --kiln-only --profile \
          --raw-dir "$out/raw-stream-$setting" $flags
      done
      run stream-compare python3 "$root/bench/compare_profiles.py" \
        "$out/raw-stream-default/mobilenet_v3_large_b32.txt" \
        "$out/raw-stream-no-narrow/mobilenet_v3_large_b32.txt" ;;
    tall)
      TAIL=6 run tall-tests "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*Conv1x1TallTiles*:*LinearWgmmaTallTiles*:*Conv1x1AsGemm*:*StreamGemm*:*NarrowGemm*'
      for setting in rows-128 default rows-192; do
        flags=$(case $setting in rows-128) echo --kiln-flag=--wgmma-rows=128 ;;
                rows-192) echo --kiln-flag=--wgmma-rows=192 ;; esac)
        run "tall-$setting" python3 "$root/bench/models_vs_torch.py" "$bin" "$work/models" \
          --models resnet50 mobilenet_v3_large efficientnet_b0 --batches 32 --kiln-only \
          --profile --raw-dir "$out/raw-tall-$setting" $flags
      done
      # EfficientNet-B0's 1x1 16 -> 96 at batch 1 takes 192 rows too.
      for setting in rows-128 default; do
        flags=$([ $setting = rows-128 ] && echo --kiln-flag=--wgmma-rows=128)
        run "tall-b1-$setting" python3 "$root/bench/models_vs_torch.py" "$bin" "$work/models" \
          --models efficientnet_b0 --batches 1 --kiln-only --profile \
          --raw-dir "$out/raw-tall-$setting" $flags
      done
      run tall-compare-efficientnet_b0-b1 python3 "$root/bench/compare_profiles.py" \
        "$out/raw-tall-rows-128/efficientnet_b0_b1.txt" "$out/raw-tall-default/efficientnet_b0_b1.txt"
      for model in resnet50 mobilenet_v3_large efficientnet_b0; do
        for setting in default rows-192; do
          run "tall-compare-$model-$setting" python3 "$root/bench/compare_profiles.py" \
            "$out/raw-tall-rows-128/${model}_b32.txt" "$out/raw-tall-$setting/${model}_b32.txt"
        done
      done ;;
    shortcut)
      [ -d "$work/test-models" ] ||
        python3 "$root/test/models/make_models.py" "$work/test-models" > "$out/make-models.log" 2>&1
      KILN_TEST_MODELS=$work/test-models TAIL=12 run shortcut-tests "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*ConvShortcut*:*resnet_projection*:*resnet_bottleneck*:*ConvHopperImplicitGemm*'
      KILN_GPU_TEST_ARCH=sm_80 TAIL=6 run shortcut-tests-sm80 "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*ConvShortcut*'
      for setting in merged kept; do
        flags=$([ $setting = kept ] && echo --kiln-flag=--merge-shortcut-bytes=-1)
        run "shortcut-$setting" python3 "$root/bench/models_vs_torch.py" "$bin" "$work/models" \
          --models resnet50 --batches 32 --kiln-only --profile \
          --raw-dir "$out/raw-shortcut-$setting" $flags
        TAIL=12 run "shortcut-conv-$setting" python3 "$root/bench/conv_vs_cudnn.py" \
          "$out/raw-shortcut-$setting/resnet50_b32.txt" --markdown "$out/conv-shortcut-$setting.md" \
          --json "$out/conv-shortcut-$setting.json"
      done ;;
    check-rounds)
      for setting in ${SETTINGS:-ring no-ring}; do
        flags=$([ $setting = no-ring ] && echo --kiln-flag=--wgmma-residual-ring=false)
        TAIL=4 run "check-rounds-$setting" python3 "$root/bench/models_vs_torch.py" "$bin" \
          "$work/check-$setting" --models ${CHECK_MODELS:-vit_b_16 resnet50} --batches 32 --kiln-only \
          --rounds 4 --runs 10 --json "$out/check-rounds-$setting.json" $flags
        python3 -c 'import json, sys
for row in json.load(open(sys.argv[1]))["rows"]:
    print("    %s %s: rel L2 by round %s" % (sys.argv[2], row["model"], row.get("rel_l2_rounds")))' \
          "$out/check-rounds-$setting.json" "$setting"
      done
      [ "${SANITIZE:-1}" = 1 ] || continue
      sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
      model=$work/check-ring/resnet50_b32
      inputs=()
      for npy in "$model"/*.npy; do
        name=$(basename "$npy" .npy)
        case $name in ref*) ;; *) inputs+=(--input "$name=$npy") ;; esac
      done
      # The ring's kernel tests first (small grids: racecheck's shared-memory
      # tracking takes minutes over a whole model), then the model.
      TAIL=30 run sanitizer-ring-tests timeout 240 "$sanitizer" --tool racecheck \
        --print-limit 20 "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*LinearWgmma*:*WgmmaLateResidual*:*Conv1x1*'
      for tool in initcheck racecheck; do
        TAIL=30 run "sanitizer-$tool" timeout 240 "$sanitizer" --tool "$tool" --print-limit 20 \
          "$bin/kiln-run" "$model/model.kiln" "${inputs[@]}" --check "$model/ref0.npy" \
          --tolerance 1e-2
      done ;;
    vendor)
      vendor_transformer
      launches_alone ;;
    vendor-transformer)
      vendor_transformer ;;
    vendor-cnn)
      launches_alone cnn ;;
    vendor-kernels)
      # The kernels cuBLAS runs on the transformer shapes, then hardware
      # counters of kiln's and cuBLAS's kernels side by side on the shapes
      # where kiln is behind (kiln's from the vendor table's artifacts).
      [ -f "$out/gemm-default.md" ] || run gemm-default python3 "$root/bench/gemm_vs_torch.py" \
        "$bin" "$work/gemm" --set transformer --markdown "$out/gemm-default.md"
      run cublas-kernels python3 "$root/bench/cublas_kernels.py" --set transformer \
        --markdown "$out/cublas-kernels.md"
      for shape in "BERT QKV:4096x2304x768_bias" "BERT FFN down:4096x768x3072_residual" \
          "ViT FFN down:6304x768x3072_residual" "ViT FFN up:6304x3072x768_gelu"; do
        label=${shape%%:*} case_name=${shape#*:} slug=$(echo "${shape%%:*}" | tr ' ' '-')
        OUT=$out/ncu-kiln-$slug TAIL=40 run "ncu-kiln-$slug" "$root/scripts/gpu-ncu.sh" \
          "$work/gemm/linear_${case_name}_auto.kiln" kiln_
        OUT=$out/ncu-cublas-$slug TAIL=40 run "ncu-cublas-$slug" "$root/scripts/gpu-ncu.sh" \
          --cublas "$label"
      done ;;
    batch-1-gemms)
      run gemm-b1-default python3 "$root/bench/gemm_vs_torch.py" "$bin" "$work/gemm-b1" \
        --set batch-1 --rounds 3 --markdown "$out/gemm-b1-default.md"
      for variant in stages-6 k-tile-128 blocks-528; do
        case $variant in
          stages-6) flag=--split-k-stages=6 ;;
          k-tile-128) flag=--split-k-k-tile=128 ;;
          blocks-528) flag=--split-k-max-blocks=528 ;;
        esac
        TAIL=10 run "gemm-b1-$variant" python3 "$root/bench/gemm_vs_torch.py" "$bin" \
          "$work/gemm-b1-$variant" --set batch-1 --kiln-flag="$flag" \
          --markdown "$out/gemm-b1-$variant.md"
      done
      run cublas-kernels-b1 python3 "$root/bench/cublas_kernels.py" --set batch-1 \
        --markdown "$out/cublas-kernels-b1.md"
      for shape in "GPT-2 QKV, batch 1:128x2304x768_bias" \
          "GPT-2 FFN down, batch 1:128x768x3072_residual"; do
        label=${shape%%:*} case_name=${shape#*:}
        slug=$(echo "$label" | tr -c 'A-Za-z0-9\n' '-')
        OUT=$out/ncu-kiln-$slug TAIL=40 run "ncu-kiln-$slug" "$root/scripts/gpu-ncu.sh" \
          "$work/gemm-b1/linear_${case_name}_auto.kiln" kiln_
        OUT=$out/ncu-cublas-$slug TAIL=40 run "ncu-cublas-$slug" "$root/scripts/gpu-ncu.sh" \
          --cublas "$label"
      done ;;
    few-rows)
      TAIL=6 run few-rows-tests "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*LinearWgmmaFewRows*:*LinearWgmmaSplitK*'
      for variant in default split-k-clusters pairs; do
        case $variant in
          default) flags=() ;;
          split-k-clusters) flags=(--kiln-flag=--wgmma-few-rows=false) ;;
          pairs) flags=(--kiln-flag=--wgmma-split-k) ;;
        esac
        TAIL=10 run "gemm-b1-$variant" python3 "$root/bench/gemm_vs_torch.py" "$bin" \
          "$work/gemm-b1-$variant" --set batch-1 "${flags[@]}" \
          --markdown "$out/gemm-b1-$variant.md"
      done
      for variant in default split-k-clusters; do
        flags=$([ $variant = split-k-clusters ] && echo --kiln-flag=--wgmma-few-rows=false)
        TAIL=8 run "models-b1-$variant" python3 "$root/bench/models_vs_torch.py" "$bin" \
          "$work/models-b1-$variant" --models gpt2 bert vit_b_16 --batches 1 --kiln-only \
          --rounds 3 --runs 30 --json "$out/models-b1-$variant.json" $flags
      done ;;
    behind)
      for candidate in 0 1 2 3 4 5 6 7 8; do
        TAIL=5 run "behind-$candidate" python3 "$root/bench/gemm_vs_torch.py" "$bin" \
          "$work/behind-$candidate" --set behind --rounds 2 \
          --kiln-flag=--wgmma-candidate=$candidate --markdown "$out/behind-$candidate.md"
      done ;;
    ring-pairs)
      # The residual ring's tests (multicast pairs among them) first, and
      # nothing else if they fail or hang (barriers that disagree hang);
      # then every transformer GEMM shape at batch 32, default against
      # pairs of blocks sharing B (--wgmma-multicast=2, the residual still
      # through the ring), in turn, twice.
      TAIL=8 run ring-pairs-tests timeout 300 "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*ResidualRing*' || continue
      for round in 1 2; do
        for variant in default pairs; do
          flags=$([ $variant = pairs ] && echo --kiln-flag=--wgmma-multicast=2)
          TAIL=14 run "gemm-$variant-$round" python3 "$root/bench/gemm_vs_torch.py" "$bin" \
            "$work/gemm-$variant" --set transformer --rounds 1 $flags \
            --markdown "$out/gemm-$variant-$round.md"
        done
      done ;;
    multicast-a)
      # The tests of the Hopper GEMM's tiles (pairs sharing A among them,
      # with the residual ring too) first, and nothing else if they fail or
      # hang (barriers that disagree hang); then every transformer GEMM
      # shape at batch 32 and ResNet-50's 2048 -> 512 as a GEMM, default
      # against pairs of column tiles sharing A (--wgmma-multicast-a), in
      # turn, twice (AB_ROUNDS; AB_TESTS: a narrower test filter).
      TAIL=8 run multicast-a-tests timeout 300 "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter="${AB_TESTS:-*LinearWgmmaMulticastA*:*LinearWgmmaEveryTileWidth*:*LinearWgmmaTallTiles*:*LinearWgmmaResidualRing*}" ||
        continue
      for round in $(seq "${AB_ROUNDS:-2}"); do
        for variant in default pairs-a; do
          flags=$([ $variant = pairs-a ] && echo --kiln-flag=--wgmma-multicast-a)
          TAIL=14 run "gemm-$variant-$round" python3 "$root/bench/gemm_vs_torch.py" "$bin" \
            "$work/gemm-$variant" --set transformer --rounds 1 $flags \
            --markdown "$out/gemm-$variant-$round.md"
          TAIL=4 run "last-stage-$variant-$round" python3 "$root/bench/gemm_vs_torch.py" "$bin" \
            "$work/last-stage-$variant" --set last-stage --rounds 1 $flags \
            --markdown "$out/last-stage-$variant-$round.md"
        done
      done ;;
    narrow)
      # The narrow tile's tests first; then ResNet-50's 2048 -> 512 as a
      # GEMM, default against --wgmma-narrow, in turn, three times; then
      # ResNet-50 at batch 32 launch by launch both ways and its table
      # against cuDNN with the narrow tiles.
      TAIL=8 run narrow-tests timeout 300 "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*LinearWgmmaNarrowTile*' || continue
      # Other GPUs' image (the mma.sync fallback on the narrow tiles' grid).
      KILN_GPU_TEST_ARCH=sm_80 TAIL=8 run narrow-tests-sm80 timeout 300 \
        "$bin/kiln-kernels-gpu-tests" --gtest_filter='*LinearWgmmaNarrowTile*' 
      for round in 1 2 3; do
        for variant in default narrow; do
          flags=$([ $variant = narrow ] && echo --kiln-flag=--wgmma-narrow)
          TAIL=4 run "last-stage-$variant-$round" python3 "$root/bench/gemm_vs_torch.py" "$bin" \
            "$work/last-stage-$variant" --set last-stage --rounds 1 $flags \
            --markdown "$out/last-stage-$variant-$round.md"
        done
      done
      cnn_launches_ab narrow narrow --wgmma-narrow narrow 1 resnet50 ;;
    global-pool)
      TAIL=12 run global-pool-tests timeout 300 "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*ConvGlobalPool*:*resnet_head*' || continue
      # Other GPUs' image: the pool summed on CUDA cores (the forced cases).
      KILN_GPU_TEST_ARCH=sm_80 TAIL=8 run global-pool-tests-sm80 timeout 300 \
        "$bin/kiln-kernels-gpu-tests" --gtest_filter='*ConvGlobalPool*' 
      cnn_launches_ab global-pool pooled --conv-global-pool pooled 1 resnet50 efficientnet_b0 \
        mobilenet_v3_large ;;
    swap-wide)
      # The tests first, and nothing else if they fail or hang (a cluster's
      # barriers that disagree hang).
      TAIL=8 run swap-wide-tests timeout 300 "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*LinearWgmmaSwap*' || continue
      cnn_launches_ab swap-wide split --wgmma-swap-wide=false default 1 efficientnet_b0 ;;
    swap)
      swap_models=${SWAP_MODELS-gpt2 bert vit_b_16 ffn gpt2_block}
      # The swapped few-row GEMM's tests first, and nothing else if they
      # fail or hang (a cluster's barriers that disagree hang).
      TAIL=8 run swap-tests timeout 300 "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*LinearWgmmaSwap*:*LinearWgmmaFewRows*:*GemvFewRows*' || continue
      for variant in default swap; do
        flags=$([ $variant = swap ] && echo --kiln-flag=--wgmma-swap)
        TAIL=12 run "gemm-b1-$variant" python3 "$root/bench/gemm_vs_torch.py" "$bin" \
          "$work/gemm-b1-$variant" --set batch-1 --rounds 2 $flags \
          --markdown "$out/gemm-b1-$variant.md"
        [ -n "$swap_models" ] || continue
        TAIL=8 run "models-b1-$variant" python3 "$root/bench/models_vs_torch.py" "$bin" \
          "$work/models-b1-$variant" --models $swap_models --batches 1 \
          --kiln-only --rounds 3 --runs 30 --json "$out/models-b1-$variant.json" $flags
      done ;;
    few-rows-narrow)
      for variant in default twelve twelve-pairs twelve-stream-k; do
        case $variant in
          default) flags=() ;;
          twelve) flags=(--kiln-flag=--wgmma-few-rows-tiles=12) ;;
          twelve-pairs) flags=(--kiln-flag=--wgmma-few-rows-tiles=12 --kiln-flag=--wgmma-split-k) ;;
          twelve-stream-k) flags=(--kiln-flag=--wgmma-few-rows-tiles=12
                                  --kiln-flag=--wgmma-stream-k) ;;
        esac
        TAIL=10 run "gemm-b1-$variant" python3 "$root/bench/gemm_vs_torch.py" "$bin" \
          "$work/gemm-b1-$variant" --set batch-1 "${flags[@]}" \
          --markdown "$out/gemm-b1-$variant.md"
      done ;;
    epilogue-source)
      # Where the warps of the FFN down-projections stall, instruction by
      # instruction: kiln's kernel with a bias alone, kiln's with the
      # residual, and cuBLAS's F.linear on the same shape.
      run gemm-epilogues python3 "$root/bench/gemm_vs_torch.py" "$bin" "$work/epilogues" \
        --set epilogues --markdown "$out/gemm-epilogues.md"
      for shape in "BERT:4096x768x3072" "ViT:6304x768x3072"; do
        model=${shape%%:*} size=${shape#*:}
        for epilogue in bias residual; do
          KILN_NCU_SOURCE=1 OUT=$out/ncu-source-$model-$epilogue TAIL=40 \
            run "ncu-source-$model-$epilogue" "$root/scripts/gpu-ncu.sh" \
            "$work/epilogues/linear_${size}_${epilogue}_auto.kiln" kiln_
        done
        KILN_NCU_SOURCE=1 OUT=$out/ncu-source-$model-cublas TAIL=40 run "ncu-source-$model-cublas" \
          "$root/scripts/gpu-ncu.sh" --cublas "$model FFN down"
      done ;;
    query-tail)
      # The timings only after the tests pass: a tail whose barriers
      # disagree hangs kiln-run too.
      if KILN_ATTENTION_QUERY_TAIL=1 TAIL=12 run tail-tests timeout 300 \
          "$bin/kiln-kernels-gpu-tests" --gtest_filter='*Attention*'; then
        for round in $(seq "${ROUNDS:-2}"); do
          run "attention-default-$round" python3 "$root/bench/attention_vs_sdpa.py" "$bin" \
            "$work/att-default" --batches 32 --json "$out/attention-default-$round.json" \
            --markdown "$out/attention-default-$round.md"
          KILN_ATTENTION_QUERY_TAIL=1 run "attention-tail-$round" python3 \
            "$root/bench/attention_vs_sdpa.py" "$bin" "$work/att-tail" --batches 32 \
            --json "$out/attention-tail-$round.json" --markdown "$out/attention-tail-$round.md"
        done
        for setting in default tail; do
          KILN_ATTENTION_QUERY_TAIL=$([ $setting = tail ] && echo 1 || echo 0) \
            run "tail-vit-$setting" python3 "$root/bench/models_vs_torch.py" "$bin" \
            "$work/vit-$setting" --models vit_b_16 --batches 32 1 --kiln-only --profile \
            --raw-dir "$out/raw-tail-$setting"
        done
        for batch in 32 1; do
          TAIL=16 run "tail-compare-b$batch" python3 "$root/bench/compare_profiles.py" \
            "$out/raw-tail-default/vit_b_16_b$batch.txt" "$out/raw-tail-tail/vit_b_16_b$batch.txt"
        done
      fi ;;
    layer-norm-fold)
      # The timings only after the tests pass.
      if TAIL=12 run fold-tests timeout 300 "$bin/kiln-kernels-gpu-tests" \
          --gtest_filter='*LayerNormFold*:*LayerNorm*:*Normalization*'; then
        for setting in folded kept; do
          run "fold-models-$setting" python3 "$root/bench/models_vs_torch.py" "$bin" \
            "$work/fold-$setting" --models vit_b_16 gpt2 --batches 32 --kiln-only --profile \
            --raw-dir "$out/raw-fold-$setting" \
            $([ $setting = kept ] && echo --kiln-flag=--fold-layer-norm-bytes=-1)
        done
        for setting in kept folded; do
          run "norm-linear-$setting" python3 "$root/bench/gemm_vs_torch.py" "$bin" \
            "$work/norm-linear-$setting" --set norm-linear --markdown "$out/norm-linear-$setting.md" \
            $([ $setting = kept ] && echo --kiln-flag=--fold-layer-norm-bytes=-1)
        done
      fi ;;
    ring-residual)
      # The zoo and the timings only after the tests pass: a ring whose
      # barriers disagree hangs kiln-run too.
      if TAIL=12 run ring-tests timeout 420 "$bin/kiln-kernels-gpu-tests" \
          --gtest_filter="${RING_TESTS:-*LinearWgmma*:*LinearEpilogueFp16OddSizes*:*WgmmaLateResidual*:*FragmentEpilogue*:*Conv1x1*}"; then
        TAIL=16 run ring-zoo python3 "$root/bench/models_vs_torch.py" "$bin" "$work/zoo" \
          --models resnet50 mobilenet_v3_large efficientnet_b0 vit_b_16 bert gpt2 \
          --batches 1 32 --kiln-only
        for setting in ring copied; do
          run "gemm-$setting" python3 "$root/bench/gemm_vs_torch.py" "$bin" "$work/gemm-$setting" \
            --set transformer --markdown "$out/gemm-$setting.md" \
            $([ $setting = copied ] && echo --kiln-flag=--wgmma-residual-ring=false)
        done
      fi ;;
    ring-rounds)
      # The transformer GEMMs with the ring and copied, alternating, ROUNDS
      # times (default 3): one table each is one sample of each kernel.
      for round in $(seq "${ROUNDS:-3}"); do
        for setting in ring copied; do
          run "gemm-$setting-$round" python3 "$root/bench/gemm_vs_torch.py" "$bin" \
            "$work/gemm-$setting" --set transformer --markdown "$out/gemm-$setting-$round.md" \
            $([ $setting = copied ] && echo --kiln-flag=--wgmma-residual-ring=false)
        done
      done ;;
    ring-models)
      for setting in ring copied; do
        run "ring-models-$setting" \
          python3 "$root/bench/models_vs_torch.py" "$bin" "$work/models-$setting" \
          --models resnet50 bert vit_b_16 --batches 32 --kiln-only --profile \
          --raw-dir "$out/raw-ring-$setting" \
          $([ $setting = copied ] && echo --kiln-flag=--wgmma-residual-ring=false)
      done
      for model in resnet50 bert vit_b_16; do
        TAIL=20 run "ring-compare-$model" python3 "$root/bench/compare_profiles.py" \
          --top 12 "$out/raw-ring-copied/${model}_b32.txt" "$out/raw-ring-ring/${model}_b32.txt"
      done ;;
    alone)
      launches_alone ;;
    alone-tuned)
      [ -d "${KILN_TUNING:-}" ] || { echo "alone-tuned: KILN_TUNING=DIR of tuning files" >&2; exit 2; }
      cnns="resnet50 mobilenet_v3_large efficientnet_b0"
      for setting in alone tuned; do
        run "$setting-models" python3 "$root/bench/models_vs_torch.py" "$bin" "$work/models" \
          --models $cnns --batches 32 --kiln-only --profile --raw-dir "$out/raw-$setting" \
          $([ $setting = tuned ] && echo --kiln-tuning "$KILN_TUNING")
        run "$setting-conv" python3 "$root/bench/conv_vs_cudnn.py" \
          $(for m in $cnns; do echo "$out/raw-$setting/${m}_b32.txt"; done) \
          --markdown "$out/conv-$setting.md" --json "$out/conv-$setting.json"
      done ;;
    alone-ab)
      for setting in default cooperative multicast-2 blocks-2 rows-128 rows-192; do
        flags=$(case $setting in
                cooperative) echo --kiln-flag=--wgmma-schedule=cooperative ;;
                multicast-2) echo --kiln-flag=--wgmma-multicast=2 ;;
                blocks-2) echo --kiln-flag=--wgmma-blocks-per-sm=2 ;;
                rows-128) echo --kiln-flag=--wgmma-rows=128 ;;
                rows-192) echo --kiln-flag=--wgmma-rows=192 ;; esac)
        run "alone-ab-$setting" python3 "$root/bench/models_vs_torch.py" "$bin" "$work/models" \
          --models resnet50 --batches 32 --kiln-only --profile \
          --raw-dir "$out/raw-alone-$setting" $flags
        [ $setting = default ] && continue
        TAIL=40 run "alone-ab-compare-$setting" python3 "$root/bench/compare_profiles.py" \
          --top 40 "$out/raw-alone-default/resnet50_b32.txt" "$out/raw-alone-$setting/resnet50_b32.txt"
      done ;;
    depthwise)
      for columns in 1 2 4; do
        run "depthwise-columns-$columns" python3 "$root/bench/models_vs_torch.py" "$bin" \
          "$work/models" --models mobilenet_v3_large efficientnet_b0 --batches 32 --kiln-only \
          --profile --raw-dir "$out/raw-depthwise-$columns" --kiln-flag=--depthwise-columns=$columns
        [ $columns = 1 ] && continue
        for model in mobilenet_v3_large efficientnet_b0; do
          TAIL=30 run "depthwise-compare-$model-$columns" python3 "$root/bench/compare_profiles.py" \
            --top 20 "$out/raw-depthwise-1/${model}_b32.txt" "$out/raw-depthwise-$columns/${model}_b32.txt"
        done
      done ;;
    depthwise-patches)
      TAIL=6 run depthwise-patch-tests "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*Depthwise*:*ConvGrouped*'
      for setting in default patches; do
        flags=$([ $setting = patches ] && echo --kiln-flag=--depthwise-patches)
        run "depthwise-$setting" python3 "$root/bench/models_vs_torch.py" "$bin" "$work/models" \
          --models mobilenet_v3_large efficientnet_b0 --batches 32 --kiln-only --profile \
          --raw-dir "$out/raw-depthwise-$setting" $flags
      done
      for model in mobilenet_v3_large efficientnet_b0; do
        TAIL=40 run "depthwise-patches-$model" python3 "$root/bench/compare_profiles.py" \
          --top 20 "$out/raw-depthwise-default/${model}_b32.txt" \
          "$out/raw-depthwise-patches/${model}_b32.txt"
      done ;;
    two-blocks)
      TAIL=6 run two-blocks-tests "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*ConvHopperImplicitGemm*:*WgmmaLateResidual*'
      cnn_launches_ab two-blocks one-block --wgmma-blocks-per-sm=1 default 2 resnet50 ;;
    last-stage)
      for setting in default split; do
        flags=$([ $setting = split ] && echo --kiln-flag=--wgmma-split-k)
        run "last-stage-$setting" python3 "$root/bench/models_vs_torch.py" "$bin" \
          "$work/last-stage-$setting" --models resnet50 --batches 32 --kiln-only --profile \
          --rounds 1 --runs 10 --raw-dir "$out/raw-last-stage-$setting" $flags || continue
        kernel=$(awk -v launch="${LAST_STAGE_LAUNCH:-44}" '$1 == launch && $2 ~ /^kiln_/ {
          print $2; exit }' "$out/raw-last-stage-$setting/resnet50_b32.txt")
        [ -n "$kernel" ] || { echo "    FAIL: no launch ${LAST_STAGE_LAUNCH:-44} in the profile"
                              status=1; continue; }
        OUT=$out/ncu-last-stage-$setting TAIL=30 run "ncu-last-stage-$setting" \
          "$root/scripts/gpu-ncu.sh" "$work/last-stage-$setting/resnet50_b32/model.kiln" "$kernel"
      done
      OUT=$out/ncu-last-stage-cudnn TAIL=30 run ncu-last-stage-cudnn "$root/scripts/gpu-ncu.sh" \
        --cudnn 32,2048,7,7,512,1,1 ;;
    last-stage-variants)
      TAIL=6 run split-tests "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*LinearWgmmaSplitK*:*ConvHopperImplicitGemm*'
      for variant in default stream-k-128 stream-k-192 split default-again; do
        case $variant in
          default*) flags=() ;;
          stream-k-128) flags=(--kiln-flag=--wgmma-stream-k --kiln-flag=--wgmma-candidate=2) ;;
          stream-k-192) flags=(--kiln-flag=--wgmma-stream-k --kiln-flag=--wgmma-candidate=4) ;;
          split) flags=(--kiln-flag=--wgmma-split-k) ;;
        esac
        TAIL=3 run "last-stage-$variant" python3 "$root/bench/gemm_vs_torch.py" "$bin" \
          "$work/last-stage-$variant" --set last-stage "${flags[@]}" \
          --markdown "$out/last-stage-$variant.md"
      done ;;
    stream-k-alone)
      for setting in default stream-k; do
        flags=$([ $setting = stream-k ] && echo --kiln-flag=--wgmma-stream-k)
        run "stream-k-alone-$setting" python3 "$root/bench/models_vs_torch.py" "$bin" \
          "$work/models" --models resnet50 --batches 32 --kiln-only --profile \
          --raw-dir "$out/raw-stream-k-alone-$setting" $flags
      done
      TAIL=40 run stream-k-alone-compare python3 "$root/bench/compare_profiles.py" --top 30 \
        "$out/raw-stream-k-alone-default/resnet50_b32.txt" \
        "$out/raw-stream-k-alone-stream-k/resnet50_b32.txt" ;;
    gelu-ncu)
      run gelu-epilogues python3 "$root/bench/gemm_vs_torch.py" "$bin" "$work/epilogues" \
        --set epilogues --markdown "$out/gemm-epilogues.md"
      KILN_GELU_ERF=tail run gelu-epilogues-tail python3 "$root/bench/gemm_vs_torch.py" "$bin" \
        "$work/epilogues-tail" --set epilogues --markdown "$out/gemm-epilogues-tail.md"
      for epilogue in bias relu gelu; do
        OUT=$out/ncu-$epilogue TAIL=40 run "gelu-ncu-$epilogue" "$root/scripts/gpu-ncu.sh" \
          "$work/epilogues/linear_4096x3072x768_${epilogue}_auto.kiln" kiln_
      done
      OUT=$out/ncu-gelu-tail TAIL=40 run gelu-ncu-gelu-tail "$root/scripts/gpu-ncu.sh" \
        "$work/epilogues-tail/linear_4096x3072x768_gelu_auto.kiln" kiln_ ;;
    half2)
      TAIL=12 run half2-tests "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*GeluOverEveryHalf*:*LinearWgmmaFragmentEpilogue*:*LinearWgmmaBiasFree*:*LinearEpilogueFp16OddSizes*:*LinearWgmmaTallTiles*:*WgmmaLateResidual*:*ConvHopperImplicitGemm*'
      for set in transformer epilogues; do
        for mode in half2 exact fp32; do
          setting=$(case $mode in half2) echo "" ;; exact) echo exact ;; fp32) echo 0 ;; esac)
          KILN_EPILOGUE_HALF2=$setting run "gemm-$set-$mode" python3 "$root/bench/gemm_vs_torch.py" \
            "$bin" "$work/$set-$mode" --set $set --markdown "$out/gemm-$set-$mode.md"
        done
      done ;;
    split-k)
      # A pair that waits for its peer forever would hold the call to its
      # end: the tests get five minutes.
      # (Models only after the tests pass: a broken pair hangs kiln-run too.)
      if TAIL=8 run split-k-tests timeout 300 "$bin/kiln-kernels-gpu-tests" \
          --gtest_filter='*LinearWgmma*:*ConvHopperImplicitGemm*:*WgmmaLateResidual*'; then
        cnn_launches_ab split-k split-k --wgmma-split-k split-k 2 resnet50
        # EfficientNet-B0's 1x1 projections at 14 x 14 (five launches) and
        # two of MobileNetV3's take it too.
        cnn_launches_ab split-k-mb-ef split-k --wgmma-split-k split-k 1 efficientnet_b0 \
          mobilenet_v3_large
      fi ;;
    native-compile)
      native=$work/native-compile
      mkdir -p "$native"
      for b in 32 1; do
        python3 "$root/bench/export_transformers.py" "$native/b$b" ffn --batch $b \
          > "$out/native-export-b$b.log" 2>&1
      done
      for rep in 1 2 3; do
        for b in 32 1; do
          for setting in default sm_90a native native-here native-threads; do
            args=() envs=()
            case $setting in
              sm_90a) args=(--arch sm_90a) ;;
              native) args=(--arch native) ;;
              native-here) args=(--arch native); envs=(KILN_NATIVE_QUERY=here) ;;
              native-threads) args=(--arch native); envs=(KILN_NVRTC_PROCESSES=0) ;;
            esac
            rm -rf "$native/cache"
            start=$(date +%s.%N)
            env "${envs[@]}" KILN_CACHE_DIR="$native/cache" "$bin/kiln-compile" \
              "$native/b$b/ffn_f32.pt" --precision fp16 --io-dtype f16 "${args[@]}" -v \
              -o "$native/ffn.kiln" > "$out/native-$setting-b$b-$rep.log" 2>&1 || status=1
            end=$(date +%s.%N)
            echo "native-compile $setting b$b rep $rep: $(python3 -c "print(round($end - $start, 3))") s" |
              tee -a "$out/native-compile.txt"
          done
        done
      done
      for init in "" --init-cuda; do
        for arch in sm_90a,sm_80 native; do
          echo "kiln-compile-times --arch $arch $init:" >> "$out/native-compile.txt"
          "$bin/kiln-compile-times" "$native/times" --precision fp16 --io-dtype f16 \
            --arch $arch $init "$native/b32/ffn_f32.pt" "$native/b1/ffn_f32.pt" \
            "$native/b32/ffn_f32.pt" "$native/b1/ffn_f32.pt" >> "$out/native-compile.txt" 2>&1 ||
            status=1
        done
      done
      tail -n 12 "$out/native-compile.txt" ;;
    in-process)
      run in-process-small python3 "$root/bench/models_vs_torch.py" "$bin" "$work/models" \
        --models ffn gpt2_block --batches 1 32 --build-times --json "$out/in-process-small.json" ;;
    in-process-zoo)
      run in-process-zoo python3 "$root/bench/models_vs_torch.py" "$bin" "$work/models" \
        --models resnet50 mobilenet_v3_large efficientnet_b0 vit_b_16 bert gpt2 --batches 32 1 \
        --build-times --kiln-only --json "$out/in-process-zoo.json" ;;
    matmul)
      TAIL=8 run matmul-tests "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*Matmul*:*LinearWgmmaEveryTileWidth*'
      run matmul-default python3 "$root/bench/matmul_vs_torch.py" "$bin" "$work/matmul" \
        --markdown "$out/matmul-default.md"
      run matmul-wgmma python3 "$root/bench/matmul_vs_torch.py" "$bin" "$work/matmul" \
        --kiln-flag=--wgmma-matmul --markdown "$out/matmul-wgmma.md" ;;
    runtime-sizes)
      TAIL=6 run runtime-size-tests "$bin/kiln-kernels-gpu-tests" \
        --gtest_filter='*LinearWgmmaRuntimeSizes*:*NormalizationRuntimeRows*:*LinearWgmmaEveryTileWidth*'
      for setting in default sizes; do
        flags=$([ $setting = sizes ] && echo --kiln-flag=--runtime-sizes)
        run "runtime-sizes-$setting" python3 "$root/bench/models_vs_torch.py" "$bin" \
          "$work/models" --models bert gpt2_block ffn vit_b_16 --batches 32 1 --kiln-only \
          --profile --raw-dir "$out/raw-runtime-sizes-$setting" $flags
      done
      for model in bert gpt2_block ffn vit_b_16; do
        for batch in 32 1; do
          TAIL=30 run "runtime-sizes-$model-b$batch" python3 "$root/bench/compare_profiles.py" \
            --top 10 "$out/raw-runtime-sizes-default/${model}_b$batch.txt" \
            "$out/raw-runtime-sizes-sizes/${model}_b$batch.txt"
        done
      done
      TAIL=3 run kernel-library "$bin/kiln-kernel-library" -o "$work/kernel-library"
      zoo="resnet50 mobilenet_v3_large efficientnet_b0 ffn gpt2_block vit_b_16 bert gpt2"
      run build-times-default python3 "$root/bench/models_vs_torch.py" "$bin" "$work/models" \
        --models $zoo --batches 32 1 --build-times --kiln-only --json "$out/build-times-default.json"
      KILN_KERNEL_LIBRARY="$work/kernel-library" run build-times-library python3 \
        "$root/bench/models_vs_torch.py" "$bin" "$work/models" --models $zoo --batches 32 1 \
        --build-times --kiln-only --kiln-flag=--runtime-sizes \
        --json "$out/build-times-library.json" ;;
    *) echo "gpu-ab: unknown part '$part'" >&2; exit 2 ;;
  esac
done
pack
echo "=== overall: $([ $status -eq 0 ] && echo PASS || echo FAIL) (all of it: $out/ab.tar.gz)"
exit $status
