#!/usr/bin/env bash
# Installs what pkc needs to build and test on Debian 12, and nothing that
# is already there: LLVM/MLIR 22, ANTLR4, CLI11, nlohmann/json, GoogleTest,
# DLPack, Ninja, ccache and Python's headers from Debian; from PyPI, JAX
# (CPU) and NumPy for the differential tests against Pallas, nanobind for
# the Python package, and ptxas and libdevice (nvidia-cuda-nvcc,
# nvidia-nvvm) for machines without the CUDA toolkit.
#
# usage: scripts/setup.sh [--sanitizers]
#   --sanitizers  also clang-22 and its sanitizer runtimes, for the
#                 sanitized test build (scripts/test.sh) and the fuzzers
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache git
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  antlr4 libantlr4-runtime-dev
  libcli11-dev nlohmann-json3-dev libgtest-dev libdlpack-dev
  python3 python3-dev
)
for arg in "$@"; do
  case "$arg" in
    --sanitizers) packages+=(clang-22 libclang-rt-22-dev) ;;
    *) echo "setup: unknown argument '$arg' (--sanitizers)" >&2; exit 2 ;;
  esac
done
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

python=${PYTHON:-python3}

# pip_install WHAT... : installs from PyPI into $python's environment.
pip_install() {
  if ! "$python" -m pip --version >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip
  fi
  if ! "$python" -m pip install --quiet "$@" 2>/tmp/pkc-pip.log; then
    # Debian's own Python refuses pip installs into the system (PEP 668).
    if grep -q externally-managed /tmp/pkc-pip.log; then
      "$python" -m pip install --quiet --break-system-packages "$@"
    else
      cat /tmp/pkc-pip.log >&2
      exit 1
    fi
  fi
}

# The Python side of the differential tests. The versions are pinned: the
# tests compare against this JAX's Pallas interpret mode.
# absl-py: JAX's Mosaic GPU module (the reference for plgpu kernels) needs it.
if ! "$python" -c "import jax, numpy, ml_dtypes, absl; assert jax.__version__ == '0.10.2'" 2>/dev/null; then
  echo "setup: installing jax==0.10.2 (CPU) and numpy from PyPI"
  pip_install jax==0.10.2 jaxlib==0.10.2 numpy ml_dtypes absl-py
fi

# The Python package's extension module is built with nanobind.
if ! "$python" -c "import nanobind" 2>/dev/null; then
  echo "setup: installing nanobind from PyPI"
  pip_install "nanobind>=2.4,<3"
fi

# ptxas and libdevice from PyPI (CUDA 13.0, as the toolkit pkc is tested
# with): pkc finds them through Python when there is no CUDA toolkit
# (docs/cuda.md), and the tests check that it works with them, so they are
# installed on every machine.
if ! "$python" -c "import importlib.metadata as m; assert m.version('nvidia-cuda-nvcc') == '13.0.88' and m.version('nvidia-nvvm') == '13.0.88'" 2>/dev/null; then
  echo "setup: installing ptxas and libdevice (nvidia-cuda-nvcc, nvidia-nvvm 13.0) from PyPI"
  pip_install nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88
fi

# cuobjdump and nvdisasm, for the tests that read the SASS ptxas made
# (HGMMA, UTMALDG): PyPI's builds start at CUDA 13.2, which reads 13.0's
# cubins.
if ! "$python" -c "import importlib.metadata as m; assert m.version('nvidia-cuda-cuobjdump') == '13.2.78' and m.version('nvidia-cuda-nvdisasm') == '13.2.78'" 2>/dev/null; then
  echo "setup: installing cuobjdump and nvdisasm (CUDA 13.2) from PyPI"
  pip_install nvidia-cuda-cuobjdump==13.2.78 nvidia-cuda-nvdisasm==13.2.78
fi
