#!/usr/bin/env bash
# Builds and runs the whole test suite twice: the Release build in build/ (with warnings as
# errors where this script configures it; the quick start's build/ is reused as it is), which is
# also the configuration users build, and an AddressSanitizer + UndefinedBehaviorSanitizer
# Debug build (build-asan/), which runs the accuracy grids on smaller jobs and leaves out the GPU
# demo job (it only runs on GPU machines). Then every fuzz target runs for a bounded time under
# the sanitizers (scripts/fuzz.sh, build-fuzz/: 20 s a target, about 3.5 minutes). Last, the Python
# package (docs/python.md): `pip install .` into build-python/venv and its pytest suite
# (tests/python/). Exits non-zero if any of the four fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

jobs=$(nproc 2>/dev/null || echo 2)
# The source layout check runs here whatever a developer's machine skips (tests/build/).
export BUBBLESCOPE_REQUIRE_FORMAT_CHECK=1

build_and_test() {
  local dir=$1
  cmake --build "$dir" -j "$jobs"
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 600
}

# build/ is the README's quick-start build: reused as configured where it exists.
scripts/configure-release-build.sh build
build_and_test build
echo "== ASan + UBSan build =="
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# A unity build (the analyzer's files compiled eight at a time): the same code as the Release
# build checks file by file, in about half the compile time.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DBUBBLESCOPE_SANITIZE=ON -DBUBBLESCOPE_BUILD_BENCH=ON \
  -DBUBBLESCOPE_BUILD_DEMO=OFF -DBUBBLESCOPE_UNITY=ON >/dev/null
build_and_test build-asan
echo "== Fuzz targets, 20 s each (ASan + UBSan) =="
scripts/fuzz.sh --seconds 20 --jobs "$jobs"
echo "== Python package: pip install . and tests/python =="
scripts/test-python.sh
