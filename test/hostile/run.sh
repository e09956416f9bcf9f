#!/usr/bin/env bash
#===- test/hostile/run.sh - kiln's tools against hostile input ------------===#
#
#   run.sh BIN_DIR MODELS_DIR ARTIFACT FAKE_CUDA_DRIVER
#
# Every input a user or an attacker can hand kiln-compile and kiln-run that
# once crashed them, escaped a folder, was silently misread or gave an
# unclear message: forged artifacts (made here from ARTIFACT, the ctest
# fixture, with test/fuzz/kiln_artifact.py), forged and numpy-written .npy
# files, and the TorchScript fixtures in MODELS_DIR. Each case runs in a
# fresh folder and must
#   - exit with a status from 1 to 127 (no signal, no abort),
#   - print one error line that names the cause (a phrase is grepped),
#   - write no file outside the folders it was given, and
#   - leave no partial file (*.partial.*, *.tmp.*) anywhere.
# A few cases must instead succeed (a note on stderr, a cache entry
# replaced, a stale partial removed). kiln-run runs on test/fakecuda.
#
#===----------------------------------------------------------------------===#
set -u
bin=$(realpath "$1") models=$(realpath "$2") artifact=$(realpath "$3") fake=$(realpath "$4")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-hostile.XXXXXX")
trap 'rm -rf "$work"' EXIT
export KILN_CUDA_DRIVER=$fake KILN_CACHE_DIR=$work/cache
failures=0 cases=0

fail() {
  echo "FAIL [$case]: $*"
  failures=$((failures + 1))
}

# Everything under $work but the kernel cache, one path a line.
snapshot() { (cd "$work" && find . -path ./cache -prune -o -print | sort); }

# expect_error NAME PHRASE COMMAND...: runs COMMAND in a fresh folder
# $work/NAME/cwd, where $out ($work/NAME/out) is the one folder it may write.
expect_error() {
  case=$1 phrase=$2
  shift 2
  cases=$((cases + 1))
  local before after status lines
  before=$(snapshot)
  (cd "$work/$case/cwd" && "$@") >"$work/$case.stdout" 2>"$work/$case.stderr"
  status=$?
  after=$(snapshot)
  if [ "$status" -lt 1 ] || [ "$status" -gt 127 ]; then
    fail "exit status $status (wanted 1 to 127)"
  fi
  lines=$(grep -c "error:" "$work/$case.stderr")
  if [ "$lines" -ne 1 ]; then
    fail "$lines error lines (wanted one)"
  fi
  if ! grep "error:" "$work/$case.stderr" | grep -qF -- "$phrase"; then
    fail "no error line contains '$phrase'"
  fi
  if LC_ALL=C grep -q $'\x1b' "$work/$case.stderr"; then
    fail "a raw escape character reached the terminal"
  fi
  local new
  new=$(comm -13 <(echo "$before") <(echo "$after") | grep -v "^\./$case/out/" | grep -v "^\./$case\.std")
  if [ -n "$new" ]; then
    fail "wrote outside its folders: $new"
  fi
  if [ "$status" -ge 1 ] && [ "$status" -le 127 ] && [ "$lines" -eq 1 ] && [ -z "$new" ]; then
    echo "ok   [$case] $(grep "error:" "$work/$case.stderr")"
  else
    sed 's/^/       /' "$work/$case.stderr" | head -20
  fi
  check_no_partials
}

check_no_partials() {
  local partial
  partial=$(find "$work" \( -name '*.partial.*' -o -name '*.tmp.*' \) ! -name '*.keep')
  if [ -n "$partial" ]; then
    fail "partial files left: $partial"
  fi
}

# prepare NAME: the folders of a case; sets $out.
prepare() {
  mkdir -p "$work/$1/cwd" "$work/$1/out"
  out=$work/$1/out
}

# forge OUT PYTHON: ARTIFACT with `a` (kiln_artifact.read's dict) changed by
# PYTHON, checksums recomputed.
forge() {
  python3 - "$here/../fuzz" "$artifact" "$1" "$2" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import kiln_artifact as k
a = k.read(open(sys.argv[2], "rb").read())
exec(sys.argv[4])
open(sys.argv[3], "wb").write(k.write(a))
EOF
}

# npy OUT PYTHON: a .npy file; PYTHON sets `data` (bytes) or `array`.
npy() {
  python3 - "$1" "$2" <<'EOF'
import io, struct, sys
import numpy as np
def forged(header, body=b""):
    text = header.encode()
    text += b" " * ((64 - (10 + len(text) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + body
data = None
exec(sys.argv[2])
if data is None:
    buffer = io.BytesIO()
    np.save(buffer, array)
    data = buffer.getvalue()
open(sys.argv[1], "wb").write(data)
EOF
}

mkdir -p "$work/in"
cp "$models/mlp_f32.pt" "$models/mlp_f16.pt" "$artifact" "$work/in/"
model=$work/in/mlp_f32.pt kiln=$work/in/$(basename "$artifact")

#===--- kiln-compile: input specs ----------------------------------------===#
prepare huge-input
expect_error huge-input "bytes per tensor" \
  "$bin/kiln-compile" "$model" --input x:62500000000x16:f32 -o "$out/m.kiln"
# 1 TiB: within an artifact's bounds, beyond any CI machine's memory.
prepare host-memory
expect_error host-memory "more than this machine's memory" \
  "$bin/kiln-compile" "$model" --input x:16384x16777216:f32 -o "$out/m.kiln"
prepare overflowing-dim
expect_error overflowing-dim "more elements than any GPU holds" \
  "$bin/kiln-compile" "$model" --input x:99999999999999999999x16:f32 -o "$out/m.kiln"
prepare range-overflow
expect_error range-overflow "is not a range of values [LO,HI) with LO < HI" \
  "$bin/kiln-compile" "$model" --input "x:8x16:i64[0,99999999999999999999)" -o "$out/m.kiln"
prepare range-float
expect_error range-float "a range of values is for i64 and i32 inputs" \
  "$bin/kiln-compile" "$model" --input "x:8x16:f32[0,4)" -o "$out/m.kiln"
prepare zero-dim
expect_error zero-dim "a dimension of size 0" \
  "$bin/kiln-compile" "$model" --input x:0x16:f32 -o "$out/m.kiln"
prepare trailing-x
expect_error trailing-x "'' is not a dimension size" \
  "$bin/kiln-compile" "$model" --input x:8x16x:f32 -o "$out/m.kiln"

#===--- kiln-compile: targets and outputs --------------------------------===#
prepare output-is-model
cp "$model" "$out/model.pt"
sum=$(cksum <"$out/model.pt")
expect_error output-is-model "is the model itself" \
  "$bin/kiln-compile" "$out/model.pt" --input x:8x16:f32 -o "$out/model.pt"
[ "$(cksum <"$out/model.pt")" = "$sum" ] || fail "the model was overwritten"
prepare output-via-other-name
cp "$model" "$out/model.pt"
expect_error output-via-other-name "is the model itself" \
  "$bin/kiln-compile" "$out/model.pt" --input x:8x16:f32 -o "$out/../out/./model.pt"
[ "$(cksum <"$out/model.pt")" = "$sum" ] || fail "the model was overwritten"
prepare unknown-arch
expect_error unknown-arch "--arch: unknown GPU architecture 'sm90' (known: native, sm_100a" \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 --arch sm90 -o "$out/m.kiln"
[ "$(wc -l <"$work/$case.stderr")" -eq 1 ] || fail "more than the one line"
grep -q "sm_90a" "$work/$case.stderr" || fail "the accepted architectures are not listed"
prepare io-dtype-mismatch
expect_error io-dtype-mismatch "io-dtype f16 needs precision fp16" \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 --precision bf16 --io-dtype f16 -o "$out/m.kiln"
[ "$(wc -l <"$work/$case.stderr")" -eq 1 ] || fail "more than the one line"
prepare io-dtype-unknown
expect_error io-dtype-unknown "unknown io-dtype 'f64' (use declared, f16 or bf16)" \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 --io-dtype f64 -o "$out/m.kiln"
prepare native-without-gpu
# CI has no GPU (on a machine with one, `native` is the GPU and compiles);
# on the fake driver, `native` is its sm_90a GPU.
if ! ldconfig -p 2>/dev/null | grep -q libcuda.so.1; then
  expect_error native-without-gpu "--arch: native needs a GPU on this machine" env -u KILN_CUDA_DRIVER \
    "$bin/kiln-compile" "$model" --input x:8x16:f32 --arch native -o "$out/m.kiln"
fi
case=native-on-fake-driver
cases=$((cases + 1))
prepare native-on-fake-driver
KILN_CACHE_DIR=$out/cache "$bin/kiln-compile" "$model" --input x:8x16:f32 --arch native -o "$out/m.kiln" \
  >"$work/$case.stdout" 2>"$work/$case.stderr" &&
  grep -q "for sm_90a," "$work/$case.stderr" && echo "ok   [$case] native is the fake driver's sm_90a" ||
  fail "--arch native did not resolve to the fake driver's GPU: $(tail -1 "$work/$case.stderr")"
prepare split-k-knob
expect_error split-k-knob "split-K options: --split-k-k-tile must be a positive multiple of 16" \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 --split-k-k-tile 40 -o "$out/m.kiln"
prepare kernel-knob
expect_error kernel-knob "error: --attention-rows must be 0 (the cost model's choice), 64 or 128, got 96" \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 --attention-rows 96 -o "$out/m.kiln"
prepare attention-stages
expect_error attention-stages "error: --attention-stages must be 0 (the kernel's 2), 2 or 3, got 5" \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 --attention-stages 5 -o "$out/m.kiln"
prepare gemv-knob
expect_error gemv-knob "error: --gemm-gemv-rows must be 0 (never) to 32 (the kernel's most), got 40" \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 --gemm-gemv-rows 40 -o "$out/m.kiln"
prepare few-rows-knob
expect_error few-rows-knob "error: --wgmma-few-rows-tiles must be 0 (a quarter of the multiprocessors) or a count of 128 x 64 tiles, got -3" \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 --wgmma-few-rows-tiles=-3 -o "$out/m.kiln"
prepare depthwise-knob
expect_error depthwise-knob "error: --depthwise-columns must be 1, 2 or 4, got 3" \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 --depthwise-columns 3 -o "$out/m.kiln"
prepare narrow-knob
expect_error narrow-knob "error: --gemm-narrow-fmas must be 0 (never) to 6144" \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 --gemm-narrow-fmas -1 -o "$out/m.kiln"
prepare elementwise-knob
expect_error elementwise-knob "error: --elementwise-unroll must be 1, 2, 4 or 8, got 16" \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 --elementwise-unroll 16 -o "$out/m.kiln"
prepare jobs-negative
expect_error jobs-negative "error: --jobs: -2 is not a number of compiles at once" \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 --jobs -2 -o "$out/m.kiln"
prepare unknown-kernels-arch
expect_error unknown-kernels-arch "--kernels-arch: unknown GPU architecture 'sm_8'" \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 --kernels-arch sm_8
prepare missing-output-folder
expect_error missing-output-folder "the folder '$out/missing' does not exist" \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 -o "$out/missing/m.kiln"
prepare output-is-folder
expect_error output-is-folder "is a folder" \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 -o "$out"

#===--- kiln-compile: files that are not TorchScript ---------------------===#
prepare plain-zip
python3 -c "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], 'w'); z.writestr('notes.txt', 'hello'); z.close()" "$out/notes.zip"
expect_error plain-zip "is a zip but not a TorchScript archive (its files do not lie in one folder" \
  "$bin/kiln-compile" "$out/notes.zip" --input x:8x16:f32
prepare state-dict
expect_error state-dict "not a TorchScript archive" \
  "$bin/kiln-compile" "$models/mlp_state_dict.pt" --input x:8x16:f32

#===--- kiln-compile: partial outputs and the kernel cache ---------------===#
# A compile killed before its rename left m.kiln.partial.PID: the next
# compile to m.kiln removes it once PID is gone (999999999 is above any
# pid_max), and keeps a live process's.
prepare compile-ok
case=compile-ok cases=$((cases + 1)) failed=$failures
touch "$out/m.kiln.partial.999999999" "$out/m.kiln.partial.$$"
mkdir -p "$work/cache"
touch "$work/cache/0123-sm_80.kernel.tmp.999999999.ab12"
(cd "$work/$case/cwd" && "$bin/kiln-compile" "$model" --input x:8x16:f32 --arch sm_80 \
  -o "$out/m.kiln") 2>"$work/$case.stderr" || fail "did not compile: $(cat "$work/$case.stderr")"
[ -e "$out/m.kiln.partial.999999999" ] && fail "the dead process's partial is still there"
[ -e "$out/m.kiln.partial.$$" ] || fail "a live process's partial was removed"
[ -e "$work/cache/0123-sm_80.kernel.tmp.999999999.ab12" ] && fail "a stale cache temporary is left"
rm -f "$out/m.kiln.partial.$$"
entries=$(find "$work/cache" -type f -name '*.kernel' | wc -l)
others=$(find "$work/cache" -type f ! -name '*.kernel' | wc -l)
[ "$entries" -eq 2 ] && [ "$others" -eq 0 ] ||
  fail "the cache holds $entries entries and $others other files (wanted 2 and 0)"
check_no_partials
[ "$failures" -eq "$failed" ] && echo "ok   [$case] stale partials removed, one cache file per kernel"
f32kiln=$out/m.kiln

# A corrupted cache entry is recompiled and replaced, never loaded.
case=cache-corrupted cases=$((cases + 1))
entry=$(find "$work/cache" -name '*.kernel' | head -1)
good=$(cksum <"$entry")
python3 -c "import sys; d = bytearray(open(sys.argv[1], 'rb').read()); d[200] ^= 0xff; open(sys.argv[1], 'wb').write(d)" "$entry"
# From the same folder: NVRTC's line info records it, so the bytes match.
failed=$failures
(cd "$work/compile-ok/cwd" && "$bin/kiln-compile" "$model" --input x:8x16:f32 --arch sm_80 \
  -o "$work/compile-ok/out/again.kiln") 2>"$work/$case.stderr" ||
  fail "did not compile: $(cat "$work/$case.stderr")"
[ "$(cksum <"$entry")" = "$good" ] || fail "the corrupted entry was not replaced"
cmp -s "$f32kiln" "$work/compile-ok/out/again.kiln" || fail "the artifact differs from the first"
check_no_partials
[ "$failures" -eq "$failed" ] && echo "ok   [$case] the bad entry was recompiled and replaced"

# A write that fails halfway (a 16 KiB file size limit, like a full disk)
# leaves neither a cache temporary nor a partial artifact.
prepare write-fails
rm -rf "$work/cache"
expect_error write-fails "cannot write '$out/m.kiln'" \
  bash -c 'trap "" XFSZ; ulimit -f 16; exec "$@"' sh \
  "$bin/kiln-compile" "$model" --input x:8x16:f32 --arch sm_80 -o "$out/m.kiln"
[ -e "$out/m.kiln" ] && fail "an output was written"

#===--- kiln-run: forged artifacts ---------------------------------------===#
prepare arena-2-64
forge "$out/m.kiln" 'a["arena"] = 2**64 - 1'
expect_error arena-2-64 "an arena of 18446744073709551615 bytes (at most 1099511627776)" \
  "$bin/kiln-run" "$out/m.kiln"
prepare arena-100g
forge "$out/m.kiln" 'a["arena"] = 100 << 30'
expect_error arena-100g "out of device memory: the model" \
  "$bin/kiln-run" "$out/m.kiln"
grep -q "107374182400 bytes per session" "$work/$case.stderr" || fail "the arena size is not named"
prepare huge-tensor
forge "$out/m.kiln" 'a["inputs"][0]["shape"] = [1 << 30, 1 << 11]'
expect_error huge-tensor "would take 4398046511104 bytes" "$bin/kiln-run" "$out/m.kiln"
# Within the format's bounds but not the GPU's: refused before any host
# memory is spent on random inputs.
prepare input-512g
forge "$out/m.kiln" '
a["inputs"][0]["shape"] = [1 << 34, 16]
for b in a["buffers"]:
    if b[0] == 1 and b[1] == 0:
        b[3] = (1 << 38) * 2'
expect_error input-512g "out of device memory: the model's inputs and outputs needs" \
  "$bin/kiln-run" "$out/m.kiln"
prepare traversal-input
forge "$out/m.kiln" 'a["inputs"][0]["name"] = "../../x"'
expect_error traversal-input "an input named '../../x'" \
  "$bin/kiln-run" "$out/m.kiln" --save-inputs "$out" --save-outputs "$out"
prepare traversal-output
forge "$out/m.kiln" 'a["outputs"][0]["name"] = "/tmp/kiln-hostile-output"'
expect_error traversal-output "an output named '/tmp/kiln-hostile-output'" \
  "$bin/kiln-run" "$out/m.kiln" --save-outputs "$out"
[ -e /tmp/kiln-hostile-output.npy ] && fail "wrote /tmp/kiln-hostile-output.npy"
prepare hidden-name
forge "$out/m.kiln" 'a["outputs"][0]["name"] = ".."'
expect_error hidden-name "an output named '..'" \
  "$bin/kiln-run" "$out/m.kiln" --save-outputs "$out"
prepare escape-name
forge "$out/m.kiln" 'a["inputs"][0]["name"] = "x\x1b]0;owned\x07\x1b[2J"'
expect_error escape-name "an input named 'x\\x1b]0;owned\\x07\\x1b[2J'" \
  "$bin/kiln-run" "$out/m.kiln"

#===--- kiln-run: options ------------------------------------------------===#
prepare threads
expect_error threads "--threads 1000000: cannot start thread" \
  bash -c 'ulimit -v 2000000; exec "$@"' sh "$bin/kiln-run" "$kiln" --threads 1000000
prepare tolerance-negative
expect_error tolerance-negative "--tolerance takes a non-negative relative L2 error" \
  "$bin/kiln-run" "$kiln" --tolerance -1
prepare tolerance-text
expect_error tolerance-text "--tolerance takes a non-negative relative L2 error (e.g. 1e-3), got 'abc'" \
  "$bin/kiln-run" "$kiln" --tolerance abc
prepare trace-folder
expect_error trace-folder "--trace: '$out/missing' is not a folder" \
  "$bin/kiln-run" "$kiln" --trace "$out/missing/t.json"
prepare save-folder
expect_error save-folder "--save-outputs: '$out/missing' is not a folder" \
  "$bin/kiln-run" "$kiln" --save-outputs "$out/missing"

#===--- kiln-run: .npy files ---------------------------------------------===#
prepare npy-overflow
npy "$out/x.npy" "data = forged(\"{'descr': '<f2', 'fortran_order': False, 'shape': (4294967296, 4294967296), }\")"
expect_error npy-overflow "'$out/x.npy' is not a usable .npy file: its shape has more than" \
  "$bin/kiln-run" "$kiln" --input "x=$out/x.npy"
prepare npy-huge
npy "$out/x.npy" "data = forged(\"{'descr': '<f2', 'fortran_order': False, 'shape': (1099511627776,), }\")"
expect_error npy-huge "holds 0 bytes of data, its header promises 2199023255552" \
  "$bin/kiln-run" "$kiln" --input "x=$out/x.npy"
prepare npy-cut-header
npy "$out/x.npy" "data = forged(\"{'descr': '<f2', 'fortran_order': False, 'shape': (8192, 16\")"
expect_error npy-cut-header "is not a usable .npy file: a malformed header" \
  "$bin/kiln-run" "$kiln" --input "x=$out/x.npy"
prepare npy-bad-dim
npy "$out/x.npy" "data = forged(\"{'descr': '<f2', 'fortran_order': False, 'shape': (8192, x), }\")"
expect_error npy-bad-dim "a malformed shape" "$bin/kiln-run" "$kiln" --input "x=$out/x.npy"
prepare npy-no-header
npy "$out/x.npy" "data = b'\x93NUMPY\x01\x00\xff\xff'"
expect_error npy-no-header "truncated header" "$bin/kiln-run" "$kiln" --input "x=$out/x.npy"
prepare npy-check
npy "$out/r.npy" "data = forged(\"{'descr': '<f4', 'fortran_order': True, 'shape': (8192, 16), }\", bytes(8192 * 64))"
expect_error npy-check "'$out/r.npy' is not a usable .npy file: Fortran order" \
  "$bin/kiln-run" "$kiln" --check "$out/r.npy"

# Converted inputs run, with one note each on stderr.
expect_note() {
  case=$1 note=$2
  shift 2
  cases=$((cases + 1))
  if ! (cd "$work/$case/cwd" && "$@") >"$work/$case.stdout" 2>"$work/$case.stderr"; then
    fail "failed: $(cat "$work/$case.stderr")"
  elif [ "$(grep -cF -- "$note" "$work/$case.stderr")" -ne 1 ]; then
    fail "wanted the note '$note' once; stderr: $(cat "$work/$case.stderr")"
  else
    echo "ok   [$case] $(grep -F -- "$note" "$work/$case.stderr")"
  fi
}
prepare npy-int32
npy "$out/x.npy" "array = np.arange(8192 * 16, dtype=np.int32).reshape(8192, 16) % 7"
expect_note npy-int32 "input 'x': $out/x.npy holds i32 values, converted to f16" \
  "$bin/kiln-run" "$kiln" --input "x=$out/x.npy"
prepare npy-float64
npy "$out/x.npy" "array = np.zeros((8192, 16))"
expect_note npy-float64 "input 'x': $out/x.npy holds f64 values, converted to f16" \
  "$bin/kiln-run" "$kiln" --input "x=$out/x.npy"
prepare npy-fp16
npy "$out/x.npy" "array = np.ones((8, 16), dtype=np.float16)"
expect_note npy-fp16 "input 'x': $out/x.npy holds f16 values, converted to f32" \
  "$bin/kiln-run" "$f32kiln" --input "x=$out/x.npy"
prepare npy-fp32
case=npy-fp32 cases=$((cases + 1))
npy "$out/x.npy" "array = np.ones((8192, 16), dtype=np.float32)"
(cd "$work/npy-fp32/cwd" && "$bin/kiln-run" "$kiln" --input "x=$out/x.npy") \
  >/dev/null 2>"$work/npy-fp32.stderr" || fail "float32 into an f16 input failed"
if grep -q "note:" "$work/npy-fp32.stderr"; then
  fail "a note for float32 into an f16 input"
else
  echo "ok   [$case] float32 into an f16 input, without a note"
fi

#===--- kiln-run --json ---------------------------------------------------===#
# The run as one JSON object (outputs, bench, profile), and a --json folder
# that does not exist fails before any work like the other outputs.
prepare json-folder
expect_error json-folder "--json: '$out/missing' is not a folder" \
  "$bin/kiln-run" "$kiln" --json "$out/missing/run.json"
prepare time-launches-zero
expect_error time-launches-zero "--time-launches takes a positive count" \
  "$bin/kiln-run" "$kiln" --time-launches 0
prepare json
case=json cases=$((cases + 1))
(cd "$work/json/cwd" && "$bin/kiln-run" "$kiln" --bench 2 --profile --time-launches 3 \
  --json "$out/run.json") \
  >/dev/null 2>"$work/json.stderr" || fail "kiln-run --json failed"
if python3 -c 'import json, sys
report = json.load(open(sys.argv[1]))
assert report["ok"] is True and report["outputs"][0]["name"], report
assert report["bench"]["runs"] == 2 and report["profile"], report
alone = report["launches_alone"]
assert alone["repetitions"] == 3, alone
assert [l["launch"] for l in alone["launches"]] == list(range(report["launches"])), alone' \
  "$out/run.json" 2>"$work/json.check"; then
  echo "ok   [$case] kiln-run --json writes outputs, bench, profile and launches timed alone"
else
  fail "kiln-run --json: $(tail -1 "$work/json.check")"
fi

check_no_partials
echo "$cases cases, $failures failures"
[ "$failures" -eq 0 ]
