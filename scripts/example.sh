#!/usr/bin/env bash
#===- scripts/example.sh - kiln's main job on the bundled example --------===#
# For now: parse, verify, canonicalize and print the bundled FFN block in the
# kiln dialect. Later issues make this compile and run a bundled model.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
build=${KILN_BUILD_DIR:-$root/build}
"$build/bin/kiln-opt" "$root/test/examples/ffn_block.mlir" --canonicalize
