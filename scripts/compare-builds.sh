#!/usr/bin/env bash
# Compiles every sample, corpus, real, Mosaic GPU and TPU kernel with two
# pkc builds (by default the GCC build, build/, and the Clang build under
# the sanitizers, build-san/) for CUDA (PTX, sm_90a) and the TPU (Mosaic
# MLIR, v6e), and lists each file whose output or error differs between
# them. pkc's output must not depend on the C++ compiler that built it: a
# difference is almost always a call whose arguments each build IR, which
# GCC and Clang evaluate in different orders (CONTRIBUTING.md, Style;
# scripts/find-unordered-ir.py lists candidates).
#
# Usage: scripts/compare-builds.sh [PKC_A PKC_B] [-- FILE...]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
a=$root/build/cli/pkc/pkc
b=$root/build-san/cli/pkc/pkc
if [ $# -ge 2 ] && [ "$1" != "--" ]; then
  a=$1 b=$2
  shift 2
fi
[ "${1:-}" = "--" ] && shift
cd "$root"
files=("$@")
[ ${#files[@]} -eq 0 ] && files=(samples/*.pk tests/pallas/corpus/*.pk tests/pallas/real/*.pk
                                 tests/pallas/mosaic_gpu/*.pk tests/tpu/kernels/*.pk)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

same=0 rejected=0 differ=0
for f in "${files[@]}"; do
  for args in "--emit=ptx --target=cuda:sm_90a" "--emit=mlir --target=tpu:v6e"; do
    # shellcheck disable=SC2086 # args is two words
    "$a" compile "$f" $args -o "$work/a.out" > /dev/null 2> "$work/a.err"
    ra=$?
    # shellcheck disable=SC2086
    "$b" compile "$f" $args -o "$work/b.out" > /dev/null 2> "$work/b.err"
    rb=$?
    if [ $ra -eq 0 ] && [ $rb -eq 0 ] && cmp -s "$work/a.out" "$work/b.out"; then
      same=$((same + 1))
    elif [ $ra -eq $rb ] && [ $ra -ne 0 ] && cmp -s "$work/a.err" "$work/b.err"; then
      rejected=$((rejected + 1))
    else
      differ=$((differ + 1))
      echo "differs: $f $args (exit $ra and $rb)"
    fi
    rm -f "$work"/*.out "$work"/*.err
  done
done
echo "compare-builds: $same outputs identical, $rejected rejections identical, $differ differ"
[ $differ -eq 0 ]
