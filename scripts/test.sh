#!/usr/bin/env bash
# Sets up, builds, and runs the whole test suite: unit tests, lit tests and
# the differential tests against JAX Pallas. GPU tests (label gpu) skip
# with a message when no GPU is present.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "${PK_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc)" "$@"
