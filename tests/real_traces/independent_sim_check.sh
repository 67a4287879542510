#!/usr/bin/env bash
# Runs the independent trace generator's accuracy check (../shared/independent_sim, written apart
# from bubblescope) against the built binary: every one of its jobs must pass (bubble within 0.5
# points, shape, latency, slowest stage, slow links). Skips (exit 77) where ../shared is absent on
# a developer's machine; fails when CI requires the shared data (BUBBLESCOPE_REQUIRE_SHARED=1).
# Usage: independent_sim_check.sh BUBBLESCOPE_BINARY SHARED_DIR WORK_DIR
set -euo pipefail
binary=$1 shared=$2 work=$3
check="$shared/independent_sim/check_accuracy.py"
if [ ! -f "$check" ]; then
  if [ "${BUBBLESCOPE_REQUIRE_SHARED:-}" = 1 ]; then
    echo "missing $check (BUBBLESCOPE_REQUIRE_SHARED)" >&2
    exit 1
  fi
  echo "skipped: $check not found"
  exit 77
fi
if ! command -v python3 >/dev/null; then
  echo "python3 is needed to run $check" >&2
  exit 1
fi
mkdir -p "$work"
exec python3 "$check" "$binary" --work "$work"
