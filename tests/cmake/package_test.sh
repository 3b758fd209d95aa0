#!/usr/bin/env bash
# The installed pkc package, end to end (tests/cmake/CMakeLists.txt):
#   1. install this build of pkc into a fresh prefix (nothing is rebuilt);
#   2. configure a copy of samples/cmake-app against it with find_package,
#      for two architectures, and build it with Ninja;
#   3. build again: nothing may run;
#   4. touch kernels/common.pk, which only affine.pk imports, and build:
#      exactly affine.pk's module rebuilds (its header, unchanged, is not
#      rewritten, so main.cpp is not recompiled);
#   5. configure tests/cmake/configure: an unknown pk_add_kernels argument
#      is warned about, ARCH defaults in CUDA_ARCHITECTURES' order, and
#      TUNED passes each record to its source's command and dependencies.
# Leaves the built app in WORK/build/app for the GPU test that runs it.
#
# usage: package_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 source=$2 work=$3

fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
SECONDS=0

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
for f in bin/pkc include/pk/runtime.h include/pk/runtime.hpp lib/cmake/pkc/pkcConfig.cmake \
         lib/cmake/pkc/pkcConfigVersion.cmake lib/cmake/pkc/PkAddKernels.cmake; do
  [ -e "$work/prefix/$f" ] || fail "the install has no $f"
done
"$work/prefix/bin/pkc" --version > /dev/null || fail "the installed pkc does not run"

cp -r "$source/samples/cmake-app" "$work/src"
cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
      -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PK_ARCHITECTURES=sm_90a;sm_80" > "$work/configure.log" \
  || { cat "$work/configure.log"; fail "configuring samples/cmake-app against the install"; }
ninja -C "$work/build" > "$work/build.log" || { cat "$work/build.log"; fail "building it"; }
kernels="$work/build/pk_kernels/app"
for f in add.json add.sm_90a.cubin add.sm_80.cubin affine.json include/add.pk.h include/affine.pk.h; do
  [ -e "$kernels/$f" ] || fail "pk_add_kernels wrote no $f"
done
grep -q "kernels/common.pk" "$kernels/affine.d" || fail "affine.d does not list kernels/common.pk"
if grep -q "common.pk" "$kernels/add.d"; then fail "add.d lists common.pk, which add.pk does not import"; fi
echo "built: $(grep -c Compiling "$work/build.log") modules; affine.d: $(tr -d '\\\n' < "$kernels/affine.d")"

ninja -C "$work/build" > "$work/rebuild.log"
grep -q "no work to do" "$work/rebuild.log" || { cat "$work/rebuild.log"; fail "a second build did work"; }

add_before=$(stat -c %Y.%y "$kernels/add.json")
touch "$work/src/kernels/common.pk"
ninja -C "$work/build" -d explain > "$work/touched.log" 2>&1 || { cat "$work/touched.log"; fail "rebuilding"; }
ran=$(grep -c "Compiling .*\.pk" "$work/touched.log" || true)
grep -q "Compiling affine.pk" "$work/touched.log" || { cat "$work/touched.log"; fail "touching common.pk did not rebuild affine.pk"; }
if grep -q "Compiling add.pk" "$work/touched.log"; then cat "$work/touched.log"; fail "touching common.pk rebuilt add.pk"; fi
[ "$ran" = 1 ] || fail "expected 1 module rebuilt, $ran were"
[ "$(stat -c %Y.%y "$kernels/add.json")" = "$add_before" ] || fail "add.json was rewritten"
if grep -q "Building CXX object.*main.cpp" "$work/touched.log"; then
  cat "$work/touched.log"; fail "main.cpp was recompiled, but affine.pk.h did not change"
fi
echo "after touching kernels/common.pk: $ran module rebuilt (affine.pk), add.pk untouched"

cmake -S "$source/tests/cmake/configure" -B "$work/configure" -G Ninja \
      -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure-checks.log" 2>&1 \
  || { cat "$work/configure-checks.log"; fail "configuring tests/cmake/configure"; }
grep -q "unknown arguments ignored: FIRST;BOGUS;1" "$work/configure-checks.log" \
  || { cat "$work/configure-checks.log"; fail "no warning for an unknown pk_add_kernels argument"; }
check_arch() { # TARGET FLAGS: the architectures pk_add_kernels chose
  grep -q "Compiling add.pk ($2) -> pk_kernels/$1/add.json" "$work/configure/build.ninja" \
    || fail "$1: expected $2 in: $(grep -o "Compiling add.pk ([^)]*) -> pk_kernels/$1/" "$work/configure/build.ninja")"
}
check_arch from_env "--target=cuda:sm_80 --target=cuda:sm_87"
check_arch from_variable "--target=cuda:sm_89"
check_arch from_property "--target=cuda:sm_86"
check_arch from_argument "--target=cuda:sm_90"
record="$work/configure/records/add.tune.json"
grep -q -- "--tuned $record" "$work/configure/build.ninja" \
  || fail "TUNED: no --tuned $record in the tuned target's command"
grep -q "^build pk_kernels/tuned/add.json.*CUSTOM_COMMAND.* records/add.tune.json" "$work/configure/build.ninja" \
  || fail "TUNED: the tuned module does not depend on its record"

echo "ok (${SECONDS} s)"
