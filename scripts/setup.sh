#!/usr/bin/env bash
# Installs what pkc needs to build and test on Debian 12, and nothing that
# is already there: LLVM/MLIR 22, ANTLR4, CLI11, nlohmann/json, GoogleTest,
# DLPack, Ninja and ccache from Debian; JAX (CPU) and NumPy from PyPI for
# the differential tests against Pallas.
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache git
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  antlr4 libantlr4-runtime-dev
  libcli11-dev nlohmann-json3-dev libgtest-dev libdlpack-dev
  python3
)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The Python side of the differential tests. The versions are pinned: the
# tests compare against this JAX's Pallas interpret mode.
python=${PYTHON:-python3}
# absl-py: JAX's Mosaic GPU module (the reference for plgpu kernels) needs it.
if ! "$python" -c "import jax, numpy, ml_dtypes, absl; assert jax.__version__ == '0.10.2'" 2>/dev/null; then
  if ! "$python" -m pip --version >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip
  fi
  echo "setup: installing jax==0.10.2 (CPU) and numpy from PyPI"
  requirements=(jax==0.10.2 jaxlib==0.10.2 numpy ml_dtypes absl-py)
  if ! "$python" -m pip install --quiet "${requirements[@]}" 2>/tmp/pkc-pip.log; then
    # Debian's own Python refuses pip installs into the system (PEP 668).
    if grep -q externally-managed /tmp/pkc-pip.log; then
      "$python" -m pip install --quiet --break-system-packages "${requirements[@]}"
    else
      cat /tmp/pkc-pip.log >&2
      exit 1
    fi
  fi
fi
