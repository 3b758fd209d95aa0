#!/usr/bin/env bash
# The whole GPU check in two commands, for the rare machine with a GPU and
# without LLVM (docs/gpu-check.md).
#
#   scripts/gpu-check.sh prepare [DIR]        where pkc is built (build/):
#       compiles every differential case and the benchmarks for sm_90a,
#       saves inputs and JAX's outputs, and copies the headers the runtime
#       build needs (nlohmann/json, DLPack, GoogleTest) into DIR
#       (default .gpu-check, ignored by git; carry it to the GPU machine).
#   scripts/gpu-check.sh run [DIR] [STEP...]  on the GPU machine: STEPs
#       (default: all, in order) are
#         build     the runtime, its tests and the Python package
#                   (cmake -DPK_RUNTIME_ONLY=ON into build-gpu/)
#         tests     ctest -L gpu (runtime and Python tests on the GPU)
#         replay    every prepared case against JAX's outputs
#         sanitize  the replay under compute-sanitizer memcheck, racecheck
#                   and synccheck
#         bench     bench/kernels/bench.py and bench/python/launch_overhead.py
#       Each step writes DIR/results/STEP.txt; every call ends with the
#       table of all results so far (DIR/results/table.md).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command=${1:-}
dir=${2:-.gpu-check}
shift $(( $# < 2 ? $# : 2 ))

prepare() {
  local pkc=build/cli/pkc/pkc
  [ -x "$pkc" ] || { echo "gpu-check: build pkc first (scripts/build.sh)" >&2; exit 1; }
  rm -rf "$dir"
  mkdir -p "$dir/replay" "$dir/bench" "$dir/add" "$dir/deps"
  local python=${PYTHON:-python3}
  echo "gpu-check: compiling the differential cases for sm_90a (JAX computes the expected outputs)"
  local files=(tests/pallas/corpus/*.pk tests/pallas/real/*.pk tests/pallas/mosaic_gpu/*.pk)
  printf '%s\n' "${files[@]}" |
    xargs -P "$(nproc)" -I{} "$python" tests/pallas/differential.py --pkc "$pkc" \
      --prepare "$dir/replay" {} > "$dir/prepare.log" 2>&1
  while IFS= read -r line; do
    case "$line" in ''|'#'*) continue ;; esac
    "$python" tests/pallas/differential.py --pkc "$pkc" --prepare "$dir/replay" \
      --case "${line#*: }" "samples/${line%%:*}" >> "$dir/prepare.log" 2>&1
  done < tests/pallas/samples.cases
  if grep -q '^FAILED' "$dir/prepare.log"; then
    grep -A8 '^FAILED' "$dir/prepare.log" >&2
    echo "gpu-check: some cases did not compile (above; all of it in $dir/prepare.log)" >&2
    exit 1
  fi
  echo "gpu-check: $(ls "$dir/replay/cases" | wc -l) cases prepared"
  bench/kernels/build_artifacts.sh "$pkc" "$dir/bench" sm_90a
  "$pkc" compile samples/add.pk --target=cuda:sm_90a -o "$dir/add"
  # The runtime's sample programs (samples/runtime), as its build makes them.
  for sample in add matmul; do
    "$pkc" compile "samples/$sample.pk" --target=cuda:sm_90a --target=cuda:sm_80 -o "$dir/samples"
  done
  # The runtime's build needs these; the GPU machine has no package
  # registry. The layout keeps their CMake packages' relative paths.
  local deps=$dir/deps multiarch=lib/x86_64-linux-gnu
  mkdir -p "$deps/include" "$deps/share/cmake" "$deps/$multiarch/cmake"
  cp -r /usr/include/nlohmann /usr/include/dlpack /usr/include/gtest /usr/include/gmock "$deps/include/"
  cp -r /usr/share/cmake/nlohmann_json "$deps/share/cmake/"
  cp -r "/usr/$multiarch/cmake/GTest" "$deps/$multiarch/cmake/"
  cp /usr/$multiarch/libgtest.a /usr/$multiarch/libgtest_main.a /usr/$multiarch/libgmock.a \
    /usr/$multiarch/libgmock_main.a "$deps/$multiarch/"
  du -sh "$dir"
  echo "gpu-check: carry $dir; on the GPU machine run: scripts/gpu-check.sh run $dir"
}

result() { echo "$dir/results/$1.txt"; }

step_build() {
  # Outside the source tree: the runtime's CMake package must not point
  # into it.
  local deps=${TMPDIR:-/tmp}/pk-gpu-check-deps
  rm -rf "$deps" && cp -r "$dir/deps" "$deps"
  cmake -S . -B build-gpu -G Ninja -DPK_RUNTIME_ONLY=ON -DCMAKE_PREFIX_PATH="$deps" \
    -DPK_SAMPLE_ARTIFACTS="$root/$dir/samples" \
    > "$(result build)" 2>&1 && ninja -C build-gpu >> "$(result build)" 2>&1
  local status=$?
  echo "status $status" >> "$(result build)"
  tail -3 "$(result build)"
}

step_tests() {
  ctest --test-dir build-gpu -L gpu --output-on-failure -j 8 > "$(result tests)" 2>&1
  tail -4 "$(result tests)"
}

replay() {
  PYTHONPATH="$root/build-gpu/python${PYTHONPATH:+:$PYTHONPATH}" \
    "$@" python3 tests/pallas/gpu_replay.py "$dir/replay"
}

step_replay() {
  replay > "$(result replay)" 2>&1
  grep -A6 '^FAILED' "$(result replay)" | head -40
  tail -1 "$(result replay)"
}

step_sanitize() {
  : > "$(result sanitize)"
  local tool
  for tool in memcheck racecheck synccheck; do
    replay compute-sanitizer --tool "$tool" --error-exitcode 9 > "$dir/results/sanitize-$tool.log" 2>&1
    local status=$?
    local summary
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$dir/results/sanitize-$tool.log" | tail -1)
    echo "$tool: exit $status; ${summary:-no summary}" | tee -a "$(result sanitize)"
  done
}

step_bench() {
  {
    python3 bench/kernels/bench.py --artifacts "$dir/bench" \
      --runtime build-gpu/src/runtime/libpk_runtime.so
    PYTHONPATH="$root/build-gpu/python" python3 bench/python/launch_overhead.py --manifest "$dir/add/add.json"
  } > "$(result bench)" 2>&1
  cat "$(result bench)"
}

table() {
  local t=$dir/results/table.md
  {
    echo "| check | result |"
    echo "|---|---|"
    [ -f "$(result build)" ] && echo "| runtime build | $(grep -o 'status [0-9]*' "$(result build)" | tail -1) |"
    [ -f "$(result tests)" ] && echo "| ctest -L gpu | $(grep -E 'tests passed|tests failed' "$(result tests)" | tail -1) |"
    [ -f "$(result replay)" ] && echo "| replay vs JAX | $(tail -1 "$(result replay)") |"
    if [ -f "$(result sanitize)" ]; then
      while IFS= read -r line; do echo "| compute-sanitizer ${line%%:*} | ${line#*: } |"; done < "$(result sanitize)"
    fi
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/| GPU | /; s/$/ |/'
    if [ -f "$(result bench)" ]; then
      echo
      echo '```'
      cat "$(result bench)"
      echo '```'
    fi
  } > "$t"
  echo
  cat "$t"
}

case "$command" in
prepare)
  prepare
  ;;
run)
  [ -d "$dir/replay" ] || { echo "gpu-check: no $dir here: run 'scripts/gpu-check.sh prepare' where pkc is, then carry it" >&2; exit 1; }
  mkdir -p "$dir/results"
  steps=("$@")
  [ ${#steps[@]} -eq 0 ] && steps=(build tests replay sanitize bench)
  for s in "${steps[@]}"; do
    case "$s" in
    build|tests|replay|sanitize|bench) echo "== $s"; "step_$s" ;;
    *) echo "gpu-check: unknown step '$s' (build, tests, replay, sanitize, bench)" >&2; exit 2 ;;
    esac
  done
  table
  ;;
*)
  sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
  ;;
esac
