#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer:
# builds pkc with -DPK_SANITIZE="address;undefined" in build-asan/ (or
# $PK_ASAN_BUILD_DIR) and runs ctest there (docs/fuzzing.md). The Python
# package is not built in such a tree, so its tests skip.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PK_ASAN_BUILD_DIR:-$root/build-asan}
"$root/scripts/setup.sh"
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
# UBSan's first report fails the program. LLVM's allocators poison memory in
# our instrumented copies of their inline code but not in Debian's libMLIR,
# which reads as use-after-poison: that manual poisoning is off.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=allow_user_poisoning=0
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPK_SANITIZE="address;undefined"
fi
cmake --build "$build"
cd "$build"
ctest --output-on-failure -j "$(nproc)" "$@"
