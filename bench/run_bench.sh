#!/usr/bin/env bash
# Builds the benchmark optimised and runs it once on a trace directory (default
# /tmp/bubblescope-bench, generated on first use: 8 ranks, ~440 MB).
#
#   bench/run_bench.sh [DIR] [bench_analyze options...]
#
# BUILD_DIR overrides the build directory (default build-bench-release). Figures depend on the
# machine and its load; the exit status reflects only the truth checks.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build-bench-release}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target bench_analyze bench_gen -j2
exec "$build/bench/bench_analyze" "$@"
