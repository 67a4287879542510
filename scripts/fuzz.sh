#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (BUBBLESCOPE_FUZZ=ON: AddressSanitizer,
# UndefinedBehaviorSanitizer and coverage on every library) in build-fuzz/ and runs each one for a
# bounded time, one after the other, starting from its seed corpus and regressions
# (docs/fuzzing.md). Exits non-zero if any target fails; each failing input is kept in
# build-fuzz/fuzz-findings/<target>/ (until that target's next run) and printed (hex and
# base64), so a CI log holds it.
#
#   scripts/fuzz.sh [--seconds N] [--jobs N] [TARGET...]
#
# --seconds: per target (default 30). --jobs: build parallelism (default: every core); the
# fuzzers themselves run one process at a time. TARGET: default all twelve (collector_record_fuzzer
# only where CMake found CUDA with CUPTI). New inputs accumulate in build-fuzz/fuzz-corpus/<target>
# across runs; a run's figures are in build-fuzz/fuzz-logs/<target>.log.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=30
jobs=$(nproc 2>/dev/null || echo 2)
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all_targets=(trace_fuzzer job_fuzzer directory_fuzzer analyze_options_fuzzer simulate_config_fuzzer
             compare_fuzzer gate_config_fuzzer report_file_fuzzer digest_fuzzer
             nsys_sqlite_fuzzer watch_fuzzer collector_record_fuzzer)
explicit=${#targets[@]}
[ "$explicit" -gt 0 ] || targets=("${all_targets[@]}")

build=build-fuzz
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBUBBLESCOPE_FUZZ=ON -DBUBBLESCOPE_BUILD_BENCH=OFF -DBUBBLESCOPE_BUILD_DEMO=OFF \
  -DBUBBLESCOPE_UNITY=ON >/dev/null
built=()
for target in "${targets[@]}"; do
  if ninja -C "$build" -t query "$target" >/dev/null 2>&1; then
    built+=("$target")
  elif [ "$explicit" -gt 0 ] || [ "$target" != collector_record_fuzzer ]; then
    echo "fuzz.sh: no target $target in $build" >&2
    exit 2
  else
    echo "== $target: not built here (no CUDA toolkit with CUPTI), skipped"
  fi
done
cmake --build "$build" -j "$jobs" --target "${built[@]}"

# Per target: the largest input, and the dictionary of the tokens it looks for.
options_for() {
  case "$1" in
    trace_fuzzer | job_fuzzer) echo "-max_len=65536 -dict=tests/fuzz/trace.dict" ;;
    directory_fuzzer) echo "-max_len=32768 -dict=tests/fuzz/trace.dict" ;;
    # Slow targets: libFuzzer would take most of a run to let inputs grow to a useful length.
    analyze_options_fuzzer) echo "-max_len=512 -len_control=0 -dict=tests/fuzz/marker.dict" ;;
    simulate_config_fuzzer) echo "-max_len=1024 -len_control=0 -dict=tests/fuzz/simulate.dict" ;;
    compare_fuzzer) echo "-max_len=16384 -dict=tests/fuzz/compare.dict" ;;
    gate_config_fuzzer) echo "-max_len=4096 -dict=tests/fuzz/gate.dict" ;;
    report_file_fuzzer) echo "-max_len=16384 -dict=tests/fuzz/compare.dict" ;;
    digest_fuzzer) echo "-max_len=16384" ;;
    collector_record_fuzzer) echo "-max_len=8192" ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for target in "${built[@]}"; do
  corpus=$build/fuzz-corpus/$target
  findings=$build/fuzz-findings/$target
  log=$build/fuzz-logs/$target.log
  rm -rf "$findings"  # only this run's failures are shown and kept
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  inputs=("$corpus" "tests/fuzz/corpus/$target")
  [ -d "tests/fuzz/regressions/$target" ] && inputs+=("tests/fuzz/regressions/$target")
  echo "== $target: $seconds s"
  # shellcheck disable=SC2046  # the options are words
  if "$build/tests/fuzz/$target" $(options_for "$target") -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" \
      "${inputs[@]}" >"$log" 2>&1; then
    grep -E "^#[0-9]+[[:space:]]+DONE|^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" \
      "$log" | sed 's/^/   /' || true
  else
    failed+=("$target")
    echo "   FAILED; the end of $log:"
    tail -n 60 "$log" | sed 's/^/   | /'
  fi
  for input in "$findings"/*; do
    [ -f "$input" ] || continue
    size=$(wc -c <"$input")
    echo "   failing input $input ($size bytes), hex (start):"
    od -A d -t x1z -v -N 384 "$input" | sed 's/^/   | /'
    if [ "$size" -le 150000 ]; then
      echo "   base64 (the whole input; base64 -d recreates it):"
      base64 -w 0 "$input"
      echo
    fi
  done
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: ${built[*]}: no failure in $seconds s each"
