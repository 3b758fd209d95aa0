#!/usr/bin/env bash
# The whole GPU check in two commands, for the rare machine with a GPU and
# without LLVM (docs/gpu-check.md).
#
#   scripts/gpu-check.sh prepare [DIR]        where pkc is built (build/):
#       compiles every differential case, random kernels and the
#       benchmarks for sm_90a, saves inputs and JAX's outputs, and copies
#       the headers the runtime build needs (nlohmann/json, DLPack,
#       GoogleTest) into DIR
#       (default .gpu-check, ignored by git), packed as DIR.tar.xz: carry
#       that to the GPU machine, where run unpacks it.
#   scripts/gpu-check.sh run [DIR] [STEP...]  on the GPU machine: STEPs
#       (default: build, tests, verify, bench) are
#         build     the runtime, its tests and the Python package
#                   (cmake -DPK_RUNTIME_ONLY=ON into build-gpu/)
#         tests     ctest -L gpu (runtime and Python tests on the GPU)
#         replay    every prepared case against JAX's outputs
#         sanitize  the replay under compute-sanitizer memcheck, racecheck
#                   and synccheck
#         verify    replay and sanitize, all at once (the default's choice)
#         bench     bench/kernels/bench.py and bench/python/launch_overhead.py
#         profile   ncu over the Pallas-style matmul and attention and
#                   Triton's (not in the default steps)
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
  # JAX's results the test suite keeps (tests/pallas/differential.py):
  # only what it has not run is run again.
  local references=(--reference-cache build/tests/pallas-references)
  echo "gpu-check: compiling the differential cases for sm_90a (JAX computes the expected outputs)"
  local files=(tests/pallas/corpus/*.pk tests/pallas/real/*.pk tests/pallas/mosaic_gpu/*.pk)
  printf '%s\n' "${files[@]}" |
    xargs -P "$(nproc)" -I{} "$python" tests/pallas/differential.py --pkc "$pkc" \
      "${references[@]}" --prepare "$dir/replay" {} > "$dir/prepare.log" 2>&1
  while IFS= read -r line; do
    case "$line" in ''|'#'*) continue ;; esac
    "$python" tests/pallas/differential.py --pkc "$pkc" "${references[@]}" \
      --prepare "$dir/replay" --case "${line#*: }" "samples/${line%%:*}" >> "$dir/prepare.log" 2>&1
  done < tests/pallas/samples.cases
  # Random valid kernels (tests/pallas/random_kernels.py), RANDOM_SEEDS
  # programs of 25 from seed 1000 on: seeds CI does not run.
  mkdir -p "$dir/random"
  local seed
  for seed in $(seq 1000 $((999 + ${RANDOM_SEEDS:-8}))); do
    "$python" tests/pallas/random_kernels.py --pkc "$pkc" --seed "$seed" --count 25 --print \
      > "$dir/random/random_$seed.pk"
  done
  ls "$dir"/random/*.pk |
    xargs -P "$(nproc)" -I{} "$python" tests/pallas/differential.py --pkc "$pkc" \
      "${references[@]}" --prepare "$dir/replay" {} >> "$dir/prepare.log" 2>&1
  # A case that does not compile is reported (and fails prepare at the
  # end), but the rest is still prepared: a lent GPU is too rare to waste.
  local failed=0
  if grep -q '^FAILED' "$dir/prepare.log"; then
    grep -A8 '^FAILED' "$dir/prepare.log" >&2
    echo "gpu-check: some cases did not compile (above; all of it in $dir/prepare.log)" >&2
    failed=1
  fi
  echo "gpu-check: $(ls "$dir/replay/cases" | wc -l) cases prepared"
  bench/kernels/build_artifacts.sh "$pkc" "$dir/bench" sm_90a
  "$pkc" compile samples/add.pk --target=cuda:sm_90a -o "$dir/add"
  # The runtime's sample programs (samples/runtime), as its build makes
  # them, and what the Python package's GPU tests launch.
  for sample in add matmul softmax layernorm; do
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
  # The device tool carries at most 64 MiB with the working tree; the
  # cases' arrays and the cubins shrink to about a third with xz.
  tar cf - "$dir" | xz -T0 -6 > "$dir.tar.xz"
  du -sh "$dir.tar.xz"
  echo "gpu-check: carry $dir.tar.xz; on the GPU machine run: scripts/gpu-check.sh run $dir"
  return $failed
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
  ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 120 -j 8 > "$(result tests)" 2>&1
  tail -4 "$(result tests)"
}

replay() {
  PYTHONPATH="$root/build-gpu/python${PYTHONPATH:+:$PYTHONPATH}" \
    timeout "${REPLAY_SECONDS:-900}" python3 tests/pallas/gpu_replay.py "$dir/replay" "$@"
}

replay_all() {
  replay --timeout "${REPLAY_CASE_SECONDS:-60}" > "$(result replay)" 2>&1
}

report_replay() {
  grep -A6 '^FAILED' "$(result replay)" | head -40
  tail -1 "$(result replay)"
}

# Each case runs under the tool in the replay's workers: a report fails
# the case it came from. SANITIZE_TOOLS and SANITIZE_FILTER narrow it.
sanitize_tools() { echo "${SANITIZE_TOOLS:-memcheck racecheck synccheck}"; }

sanitize_with() {
  replay --timeout 300 --filter "${SANITIZE_FILTER:-}" \
    --wrap "compute-sanitizer --tool $1" > "$dir/results/sanitize-$1.log" 2>&1
}

# TOOL STATUS: its failures, and its line in results/sanitize.txt.
report_sanitizer() {
  grep -A6 '^FAILED' "$dir/results/sanitize-$1.log" | head -30
  echo "$1: exit $2; $(tail -1 "$dir/results/sanitize-$1.log")" | tee -a "$(result sanitize)"
}

step_replay() {
  replay_all
  report_replay
}

step_sanitize() {
  : > "$(result sanitize)"
  local tool
  for tool in $(sanitize_tools); do
    sanitize_with "$tool"
    report_sanitizer "$tool" $?
  done
}

step_verify() {
  # The replay and each sanitizer at once: on an H200 each takes a minute
  # or two alone, and a lent machine's minutes are few. (Timings taken
  # while they run would mean nothing; bench runs after.)
  replay_all &
  local replaying=$! tool
  local -A pids
  for tool in $(sanitize_tools); do
    sanitize_with "$tool" &
    pids[$tool]=$!
  done
  : > "$(result sanitize)"
  for tool in $(sanitize_tools); do
    wait "${pids[$tool]}"
    report_sanitizer "$tool" $?
  done
  wait "$replaying"
  report_replay
}

step_bench() {
  # Unbuffered: a bench killed by its timeout keeps the rows it printed.
  PYTHONUNBUFFERED=1 && export PYTHONUNBUFFERED
  {
    # A kernel that hangs must not take the machine's whole lease.
    timeout "${BENCH_SECONDS:-420}" python3 bench/kernels/bench.py --artifacts "$dir/bench" \
      --runtime build-gpu/src/runtime/libpk_runtime.so ${BENCH_ONLY:+--only "$BENCH_ONLY"} \
      ${BENCH_ROUNDS:+--rounds "$BENCH_ROUNDS"}
    PYTHONPATH="$root/build-gpu/python" python3 bench/python/launch_overhead.py --manifest "$dir/add/add.json"
  } > "$(result bench)" 2>&1
  cat "$(result bench)"
}

step_profile() {
  # Nsight Compute's view of the Pallas-style matmul and attention next to
  # Triton's: where the warps stall, how busy the tensor cores are.
  : > "$(result profile)"
  local what regex
  for what in matmul attention; do
    regex=matmul
    [ "$what" = attention ] && regex='mha|attention_kernel'
    timeout "${PROFILE_SECONDS:-150}" ncu --kernel-name "regex:$regex" --launch-count 2 \
      --section SpeedOfLight --section LaunchStats --section Occupancy \
      --section WarpStateStats --section SchedulerStats \
      --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
      python3 "bench/kernels/profile_$what.py" --artifacts "$dir/bench" \
      --runtime build-gpu/src/runtime/libpk_runtime.so >> "$(result profile)" 2>&1
    echo "profile $what: exit $?"
  done
  # The stall reasons: cycles per issued instruction spent waiting on each.
  grep -E '^  [a-z_]+.*\(|Duration|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Stall' \
    "$(result profile)" | head -60
  grep -E '^  [a-z_]+.*\(|issue_stalled' "$(result profile)" | awk '/\(/ || $NF > 0.2' | head -80
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
  # Unpacked with Python: the GPU machine may lack the xz program.
  if [ ! -d "$dir/replay" ] && [ -f "$dir.tar.xz" ]; then
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(".")' "$dir.tar.xz" || exit 1
  fi
  [ -d "$dir/replay" ] || { echo "gpu-check: no $dir here: run 'scripts/gpu-check.sh prepare' where pkc is, then carry it" >&2; exit 1; }
  mkdir -p "$dir/results"
  steps=("$@")
  [ ${#steps[@]} -eq 0 ] && steps=(build tests verify bench)
  for s in "${steps[@]}"; do
    case "$s" in
    build|tests|replay|sanitize|verify|bench|profile) echo "== $s"; "step_$s" ;;
    *) echo "gpu-check: unknown step '$s' (build, tests, replay, sanitize, verify, bench, profile)" >&2; exit 2 ;;
    esac
  done
  table
  # Under the device tool, what the command leaves in $OUT comes back.
  # One archive: the tool brings back at most eight files.
  if [ -n "${OUT:-}" ]; then tar czf "$OUT/gpu-check-results.tgz" -C "$dir" results; fi
  ;;
*)
  sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
  ;;
esac
