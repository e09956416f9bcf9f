#!/usr/bin/env bash
#===- scripts/setup.sh - install what kiln's build and tests need ----------===#
#
# Idempotent: installs only what is missing, so the README commands and CI can
# call it every time. Debian packages through apt, Python packages through pip.
# The CUDA toolkit is not installed here (it is part of the machine image); we
# check it and name exactly what is missing.
set -euo pipefail

APT_PACKAGES=(
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools libzstd-dev
  ninja-build libgtest-dev libgmock-dev cmake g++ python3-pip
  clang-22 libclang-rt-22-dev  # the artifact fuzzer (libFuzzer, ASan, UBSan)
)
TORCH_VERSION=2.11.0
PYTHON=${PYTHON:-python3}

log() { echo "kiln-setup: $*" >&2; }

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# torch pins LibTorch for the frontend (same version as the GPU machine);
# numpy is what the test-model scripts use.
if ! $PYTHON - "$TORCH_VERSION" <<'PY' 2>/dev/null
import sys, importlib.metadata as md
assert md.version("torch").split("+")[0] == sys.argv[1]
import numpy  # noqa: F401
PY
then
  log "installing Python packages: torch==$TORCH_VERSION numpy"
  $PYTHON -m pip install -q "torch==$TORCH_VERSION" numpy
fi

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
cuda_missing=()
for f in include/cuda.h include/nvrtc.h include/cccl/cuda/ptx \
         lib64/libnvrtc.so lib64/stubs/libcuda.so bin/nvcc; do
  [ -e "$CUDA_HOME/$f" ] || cuda_missing+=("$CUDA_HOME/$f")
done
if ((${#cuda_missing[@]})); then
  log "the CUDA 13 toolkit is incomplete or absent; missing: ${cuda_missing[*]}"
  log "install the CUDA toolkit (NVRTC, driver API headers and stub, CCCL) at $CUDA_HOME or set CUDA_HOME"
  exit 1
fi
