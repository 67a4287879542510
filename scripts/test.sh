#!/usr/bin/env bash
# Builds and runs the whole test suite twice: a Release build with warnings as errors (build/),
# which is also the configuration users build, and an AddressSanitizer + UndefinedBehaviorSanitizer
# Debug build (build-asan/), which runs the accuracy grids on smaller jobs and leaves out the GPU
# demo job (it only runs on GPU machines). Then every fuzz target runs for a bounded time under
# the sanitizers (scripts/fuzz.sh, build-fuzz/: about 3.5 minutes of fuzzing). Exits non-zero if
# any of the three fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

jobs=$(nproc 2>/dev/null || echo 2)
run_suite() {
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 600
}

echo "== Release build, warnings as errors =="
run_suite build -DCMAKE_BUILD_TYPE=Release -DBUBBLESCOPE_WERROR=ON
echo "== ASan + UBSan build =="
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# A unity build (the analyzer's files compiled eight at a time): the same code as the Release
# build checks file by file, in about half the compile time.
run_suite build-asan -DCMAKE_BUILD_TYPE=Debug -DBUBBLESCOPE_SANITIZE=ON -DBUBBLESCOPE_BUILD_BENCH=ON \
  -DBUBBLESCOPE_BUILD_DEMO=OFF -DBUBBLESCOPE_UNITY=ON
echo "== Fuzz targets, 35 s each (ASan + UBSan) =="
scripts/fuzz.sh --seconds 35 --jobs "$jobs"
