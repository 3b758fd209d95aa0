#!/usr/bin/env bash
# Configures and builds pkc in build/ (or $PK_BUILD_DIR) with Ninja. A
# ccache directory outside the tree keeps rebuilds fast across clones.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PK_BUILD_DIR:-$root/build}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build"
