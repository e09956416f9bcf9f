#!/usr/bin/env bash
#===- scripts/test.sh - build kiln and run every test (lit, GoogleTest) ---===#
# Tests labelled `gpu` report SKIPPED where no GPU is present; the reason is
# printed after the run. Extra arguments go to ctest (e.g. -L gpu, -R lit).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
build=${KILN_BUILD_DIR:-$root/build}
cd "$build"
status=0
ctest --output-on-failure -j "$(nproc)" "$@" || status=$?
log=Testing/Temporary/LastTest.log
if [ -f "$log" ] && grep -q "Skipped" "$log"; then
  echo "Skipped tests, with the reason each gave:"
  grep -h -E "SKIPPED: |^no GPU: " "$log" | sort | uniq -c | sed 's/^/  /'
fi
exit $status
