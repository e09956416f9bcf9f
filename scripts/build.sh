#!/usr/bin/env bash
#===- scripts/build.sh - set up, configure and build kiln with Ninja ------===#
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
build=${KILN_BUILD_DIR:-$root/build}
torch_dir=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DKILN_TORCH_DIR="$torch_dir" >&2
fi
# Two cores and MLIR headers: more jobs only thrash memory.
cmake --build "$build" -j "${KILN_JOBS:-$(nproc)}" >&2
# Editors and clang-tidy find the compile database at the root.
ln -sfn "$build/compile_commands.json" "$root/compile_commands.json"
