#!/bin/sh
# Where CMake finds the CUDA toolkit, the README's first build (`cmake --build build --target
# bubblescope`) builds the collector too, so `record` works after it, and the configure log names
# the CUPTI library it found. Configures a scratch build (no compiling); exits 77 (skipped) where
# CMake finds no CUDA toolkit with CUPTI.
#   collector_configuration_test.sh SOURCE_DIR SCRATCH_DIR
set -eu
source_dir=$1
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch"
log=$scratch/configure.log
cmake -S "$source_dir" -B "$scratch/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DBUBBLESCOPE_BUILD_TESTS=OFF -DBUBBLESCOPE_BUILD_BENCH=OFF -DBUBBLESCOPE_BUILD_DEMO=OFF \
  >"$log" 2>&1 || { cat "$log"; echo "FAIL: cmake did not configure"; exit 1; }
found=$(grep "bubblescope: CUDA .* with CUPTI found at" "$log" || true)
if [ -z "$found" ]; then
  grep "bubblescope: CUDA" "$log" || true
  echo "SKIP: CMake found no CUDA toolkit with CUPTI here, so no collector is built"
  exit 77
fi
echo "$found"
cupti=${found#*with CUPTI found at }
[ -n "$cupti" ] || { echo "FAIL: the configure log names no CUPTI path"; exit 1; }
[ -f "$cupti" ] || { echo "FAIL: the configure log's CUPTI path '$cupti' is not a file"; exit 1; }
plan=$(ninja -C "$scratch/build" -n bubblescope)
for library in libbubblescope_collector.so libbubblescope_cupti_handoff.so; do
  echo "$plan" | grep -q "Linking CXX shared library $library" ||
    { echo "FAIL: building the bubblescope target does not build $library"; exit 1; }
done
echo "the CUPTI library is named and the bubblescope target builds the collector"
