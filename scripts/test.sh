#!/usr/bin/env bash
# Sets up, builds, and runs the whole test suite: unit tests, lit tests,
# the differential tests against JAX Pallas, the Python package and the
# CMake package. GPU tests (label gpu) skip with a message when no GPU is
# present. CI runs this.
#
# By default it is the ordinary optimized build in build/ (or
# $PK_BUILD_DIR), as scripts/build.sh and scripts/demo.sh make it: on
# CI's two cores the build takes about 18 minutes and the suite 15.
#
# usage: scripts/test.sh [--sanitizers] [CTEST_ARGS...]
#   --sanitizers  everything built with clang-22 under AddressSanitizer and
#                 UndefinedBehaviorSanitizer in build-san/ (or
#                 $PK_SAN_BUILD_DIR), so that every test is also a
#                 memory-safety and undefined-behaviour check
#                 (docs/fuzzing.md#the-test-suite-under-the-sanitizers):
#                 about twice as long, for changes to memory handling
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sanitizers=0
case "${1:-}" in
  --sanitizers) sanitizers=1; shift ;;
  --plain) shift ;;  # the default; kept for older instructions
esac

if [ $sanitizers -eq 0 ]; then
  "$root/scripts/setup.sh"
  "$root/scripts/build.sh"
  cd "${PK_BUILD_DIR:-$root/build}"
  exec ctest --output-on-failure -j "$(nproc)" "$@"
fi

"$root/scripts/setup.sh" --sanitizers
build=${PK_SAN_BUILD_DIR:-$root/build-san}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
# (The sanitizers' options are built into the programs:
# src/support/SanitizerDefaults.cpp.)
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DPK_SANITIZE="address;undefined"
fi
cmake --build "$build"
cd "$build"
exec ctest --output-on-failure -j "$(nproc)" "$@"
