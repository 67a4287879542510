#!/usr/bin/env bash
# Builds the benchmark optimised and runs it once on a trace directory (default
# /tmp/bubblescope-bench; when it holds no truth.json, a simulated 8-rank 1f1b job of ~440 MB is
# written there first). docs/benchmarks.md says what is generated, measured and checked.
#
#   bench/run_bench.sh [DIR] [bench_analyze options...]   (--ranks, --target-mb, --schedule,
#                                                          --seed, --regenerate)
#
# BUILD_DIR overrides the build directory (default build-bench-release). Figures depend on the
# machine and its load; the exit status reflects only the truth checks (2: the set could not be
# generated or its truth.json not reproduced).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build-bench-release}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target bench_analyze bench_gen -j2
exec "$build/bench/bench_analyze" "$@"
