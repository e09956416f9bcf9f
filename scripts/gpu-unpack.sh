#!/usr/bin/env bash
#===- scripts/gpu-unpack.sh - unpack the bundle's compressed tools ---------===#
#
# On the GPU machine: scripts/gpu-pack.sh ships the tools that only a few
# steps need (kiln-api-example, kiln-kernel-library, kiln-compile-times,
# kiln-translate, kiln-opt) xz-compressed, to keep the bundle and the tree within the 64 MiB that may
# travel. This unpacks them beside the others, once; the scripts that call
# them run it first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/gpu-bundle/bin
for packed in "$bin"/*.xz "$root"/gpu-bundle/base/*.xz; do
  [ -e "$packed" ] || continue
  tool=${packed%.xz}
  [ -x "$tool" ] && continue
  # Python's lzma, not xz(1): the GPU machine's image need not have xz-utils.
  python3 -c 'import lzma, sys; open(sys.argv[2], "wb").write(lzma.open(sys.argv[1]).read())' \
    "$packed" "$tool.partial"
  chmod +x "$tool.partial"
  mv "$tool.partial" "$tool"
done
# An earlier build's kiln-compile (gpu-pack.sh's KILN_BASE_COMPILE) runs
# with this build's kiln-run.
if [ -x "$root/gpu-bundle/base/kiln-compile" ] && [ ! -e "$root/gpu-bundle/base/kiln-run" ]; then
  ln -s ../bin/kiln-run "$root/gpu-bundle/base/kiln-run"
fi
