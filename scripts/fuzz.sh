#!/usr/bin/env bash
# Builds pkc's libFuzzer harnesses (fuzz/, docs/fuzzing.md) with clang-22
# under AddressSanitizer and UndefinedBehaviorSanitizer in build-fuzz/ (or
# $PK_FUZZ_BUILD_DIR), makes seed corpora from the samples and tests, and
# runs each harness for RUNS executions. A crash, a sanitizer report, a
# hang (an input over 30 s) or a broken invariant stops that harness with
# a non-zero exit; its reproducer is left in build-fuzz/findings/.
#
# Usage: scripts/fuzz.sh [--runs N] [--jobs J] [HARNESS...]
#   --jobs J: J fuzzing processes side by side on one corpus (one a core),
#   N/J executions each; their logs are build-fuzz/findings/HARNESS-logs/.
#   HARNESS: frontend npy manifest launch-args (the default), and backends
#   (the front end, then PTX and Mosaic MLIR: up to a second for a seed
#   that compiles, ~80 inputs a second once mutants, most of which the
#   front end rejects, dominate; docs/fuzzing.md)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PK_FUZZ_BUILD_DIR:-$root/build-fuzz}
runs=20000
jobs=1
harnesses=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --runs=*) runs=${1#--runs=}; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --jobs=*) jobs=${1#--jobs=}; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) harnesses+=("$1"); shift ;;
  esac
done
[ ${#harnesses[@]} -eq 0 ] && harnesses=(frontend npy manifest launch-args)

"$root/scripts/setup.sh" --sanitizers

export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DPK_FUZZ=ON -DPK_BUILD_TESTS=OFF
fi
cmake --build "$build" --target $(printf 'pk-fuzz-%s ' "${harnesses[@]}")

# Seed corpora: what the project's own tests feed each reader.
seeds=$build/seeds
rm -rf "$seeds" && mkdir -p "$seeds"/{frontend,npy,manifest,launch-args,backends}
cp "$root"/samples/*.pk "$root"/tests/pallas/corpus/*.pk "$root"/tests/pallas/real/*.pk \
   "$root"/tests/pallas/mosaic_gpu/*.pk "$root"/tests/lit/diagnostics/*.pk "$seeds/frontend/"
for f in "$root"/tests/lit/elab/*.pk; do # names the samples share (add.pk)
  cp "$f" "$seeds/frontend/elab-$(basename "$f")"
done
python3 "$root/fuzz/deep_programs.py" "$seeds/frontend" --count 60
for seed in 1 2 3; do
  python3 "$root/tests/pallas/random_kernels.py" --pkc none --seed "$seed" --count 8 --print \
    > "$seeds/frontend/random-$seed.pk"
done
cp "$root"/fuzz/seeds/npy/* "$seeds/npy/"
cp "$root"/fuzz/seeds/manifest/*.json "$seeds/manifest/"
# The backends start from programs of one feature each, which mutate into
# other programs that compile. The real kernels (5-50 KB) and the deep
# programs stay the front end's seeds: LLVM takes up to 11 s natively, and
# minutes under the sanitizers, on the largest (scripts/test.sh
# --sanitizers compiles them every run).
cp "$root"/samples/*.pk "$root"/tests/pallas/corpus/*.pk "$root"/tests/pallas/mosaic_gpu/*.pk \
   "$root"/tests/lit/diagnostics/*.pk "$seeds"/frontend/random-[0-9]*.pk "$root"/fuzz/seeds/backends/* \
   "$seeds/backends/"
cp "$root"/fuzz/seeds/launch-args/* "$seeds/launch-args/"

# The harnesses carry the sanitizers' options (UBSan's reports end the run
# like ASan's; LLVM's manual poisoning is off): src/support/SanitizerDefaults.cpp.
# Fuzzing spends most of its time in ASan's allocator: record two frames of
# where memory was allocated (not 30) and quarantine less; ~10% more
# executions a second. Rerun a reproducer without these for full stacks.
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=2:quarantine_size_mb=16}
mkdir -p "$build/findings"
failed=0
for h in "${harnesses[@]}"; do
  corpus=$build/corpus/$h
  mkdir -p "$corpus"
  echo "fuzz: pk-fuzz-$h, $runs executions in $jobs process(es)"
  # The elaborator's step budget stops endless static recursion after about
  # a second natively: ten times that under the sanitizers and coverage, so
  # an input is a hang only past 30 s.
  flags=(-timeout=30 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1
         -artifact_prefix="$build/findings/$h-")
  status=0
  if [ "$jobs" -gt 1 ]; then
    # libFuzzer's job mode: each process writes fuzz-K.log where it starts.
    logs=$build/findings/$h-logs
    rm -rf "$logs" && mkdir -p "$logs"
    (cd "$logs" && "$build/fuzz/pk-fuzz-$h" -jobs="$jobs" -workers="$jobs" \
        -runs=$(( (runs + jobs - 1) / jobs )) "${flags[@]}" "$corpus" "$seeds/$h" \
        > "$build/findings/$h.log" 2>&1) || status=$?
    stats=("$logs"/fuzz-*.log)
  else
    stats=("$build/findings/$h.log")
    "$build/fuzz/pk-fuzz-$h" -runs="$runs" "${flags[@]}" "$corpus" "$seeds/$h" \
        2> "$build/findings/$h.log" || status=$?
  fi
  if [ $status -ne 0 ]; then
    echo "fuzz: pk-fuzz-$h FAILED; see $build/findings/$h.log" >&2
    tail -30 "$build/findings/$h.log" >&2
    failed=1
  else
    grep -h -E "stat::number_of_executed_units|stat::peak_rss_mb" "${stats[@]}" | sed 's/^/  /'
    awk '/stat::number_of_executed_units/ { n += $2 } END { print "  executions in all: " n }' \
        "${stats[@]}"
  fi
done
exit $failed
