#!/usr/bin/env bash
#===- scripts/gpu-pack.sh - collect what a GPU-machine run needs ----------===#
#
# Builds here, then copies the tools, the test binaries, FileCheck, not,
# count, split-file and the lit package into gpu-bundle/ (git-ignored, at
# most 64 MiB: what may travel to the GPU machine with the tree). Run it,
# then on the GPU machine, with gpu-bundle/ carried along:
# scripts/gpu-run.sh or scripts/gpu-bench.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
build=${KILN_BUILD_DIR:-$root/build}
bundle=$root/gpu-bundle
rm -rf "$bundle"
mkdir -p "$bundle/bin"

for tool in kiln-opt kiln-translate kiln-compile kiln-run kiln-info kiln-kernel-library kiln-device-smoke kiln-api-example kiln-compile-times; do
  cp "$build/bin/$tool" "$bundle/bin/"
done
for test in kiln-runtime-tests kiln-runtime-gpu-tests kiln-codegen-tests kiln-kernels-gpu-tests; do
  cp "$build/test/$test" "$bundle/bin/" 2>/dev/null || cp "$build/bin/$test" "$bundle/bin/"
done
# The C++ peers' harness (bench/peers), against this machine's LibTorch of
# the same torch version; gpu-bench.sh builds it there when this one does not
# start.
peers_build=${KILN_BUILD_DIR:-$root/build}-peers
if cmake -S "$root/bench/peers" -B "$peers_build" -G Ninja -DCMAKE_BUILD_TYPE=Release >&2 &&
   cmake --build "$peers_build" >&2; then
  cp "$peers_build/kiln-torch-peers" "$bundle/bin/"
else
  echo "gpu-pack: kiln-torch-peers did not build here; gpu-bench.sh will build it there" >&2
fi
cp /usr/lib/llvm-22/bin/FileCheck /usr/lib/llvm-22/bin/not /usr/lib/llvm-22/bin/count \
  /usr/lib/llvm-22/bin/split-file "$bundle/bin/"
# Debian's FileCheck and not link libz3, which the GPU machine lacks.
mkdir -p "$bundle/lib"
cp -L "$(ldd /usr/lib/llvm-22/bin/FileCheck | awk '/libz3/ {print $3}')" "$bundle/lib/"
cp -r /usr/lib/llvm-22/utils/lit "$bundle/lit"
strip "$bundle"/bin/* "$bundle"/lib/* 2>/dev/null || true
# libz3 is a third of the bundle and only FileCheck needs it: it travels
# xz-compressed (23 -> ~5 MiB) and gpu-run.sh unpacks it for the lit step.
xz -9 -f "$bundle"/lib/*.so*

# KILN_BASE_COMPILE=PATH: an earlier build's kiln-compile travels too, as
# base/kiln-compile beside this build's kiln-run, for gpu-ab.sh's parts
# that time that build's kernels against this one's in the same run.
if [ -n "${KILN_BASE_COMPILE:-}" ]; then
  mkdir -p "$bundle/base"
  cp "$KILN_BASE_COMPILE" "$bundle/base/kiln-compile"
  strip "$bundle/base/kiln-compile" 2>/dev/null || true
  xz -9 -f "$bundle/base/kiln-compile"
fi
# Binaries that drag in LLVM/MLIR shared libraries would not start there.
for bin in "$bundle"/bin/*; do
  if ldd "$bin" 2>/dev/null | grep -qE 'lib(LLVM|MLIR)'; then
    echo "gpu-pack: $bin links LLVM/MLIR dynamically" >&2
    exit 1
  fi
done
# Tools that only a few steps run travel compressed too (about a quarter of
# their size); scripts/gpu-unpack.sh restores them there.
xz -9 -f "$bundle"/bin/kiln-api-example "$bundle"/bin/kiln-kernel-library "$bundle"/bin/kiln-compile-times \
  "$bundle"/bin/kiln-translate "$bundle"/bin/kiln-opt
# What travels is the bundle and the tracked tree together.
size=$(( $(du -sb "$bundle" | cut -f1) / 1048576 + 1 ))
tree=$(( $(cd "$root" && git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1) / 1048576 + 1 ))
if [ $((size + tree)) -gt 63 ]; then
  echo "gpu-pack: bundle ${size} MiB and tree ${tree} MiB are over the 64 MiB that may travel to the GPU machine" >&2
  exit 1
fi
echo "gpu-pack: $bundle (${size} MiB, tree ${tree} MiB) ready for the GPU machine (scripts/gpu-run.sh, scripts/gpu-bench.sh)"
