#!/usr/bin/env bash
#===- scripts/test.sh - build kiln and run every test (lit, GoogleTest) ---===#
# Tests labelled `gpu` report SKIPPED where no GPU is present.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
build=${KILN_BUILD_DIR:-$root/build}
cd "$build"
ctest --output-on-failure -j "$(nproc)" "$@"
