#!/bin/sh
# `cmake --install BUILD --prefix P` gives a bubblescope that runs from P with nothing copied by
# hand: P/bin/bubblescope answers --version and --help, and its `record` finds the collector and
# the CUPTI hand-over library in P/lib/bubblescope/ (the job is a shell that prints the variables
# record gives it). In a build without the collector, record says so. Needs BUILD built.
#   install_test.sh BUILD_DIR SCRATCH_DIR COLLECTOR_BUILT(1|0) CUPTI_LIBRARY DEMO_BUILT(1|0)
set -u
build=$1
scratch=$2
collector_built=$3
cupti=$4
demo_built=$5

fail() {
  echo "FAIL: $*"
  exit 1
}

rm -rf "$scratch"
mkdir -p "$scratch/prefix"
prefix=$(cd "$scratch/prefix" && pwd -P)  # as /proc/self/exe will name it
cmake --install "$build" --prefix "$prefix" >"$scratch/install.log" 2>&1 ||
  { cat "$scratch/install.log"; fail "cmake --install exited with status $?"; }
bubblescope=$prefix/bin/bubblescope
[ -x "$bubblescope" ] || fail "no $bubblescope"
version=$("$bubblescope" --version) || fail "installed bubblescope --version exited with status $?"
echo "$version" | grep -q "^bubblescope " || fail "--version printed '$version'"
"$bubblescope" --help >"$scratch/help.txt" ||
  fail "installed bubblescope --help exited with status $?"
grep -q "record" "$scratch/help.txt" || fail "--help does not list record"

# The job prints what record injected; record exits with the job's status (0) and warns that no
# trace was written (no CUDA activity), which is expected here.
job='printf "%s\n" "$CUDA_INJECTION64_PATH" "$NCCL_PROFILER_PLUGIN" "$LD_PRELOAD"'
# In a sanitizer build the preloaded hand-off library brings ASan into an uninstrumented `sh`,
# which ASan refuses unless told the order of libraries does not matter here.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
  env -u LD_PRELOAD "$bubblescope" record -o "$scratch/traces" -- sh -c "$job" \
  >"$scratch/job.out" 2>"$scratch/record.err"
status=$?
libdir=$prefix/lib/bubblescope
if [ "$collector_built" = 1 ]; then
  [ "$status" = 0 ] ||
    { cat "$scratch/record.err"; fail "installed record exited with status $status"; }
  collector=$libdir/libbubblescope_collector.so
  expected=$(printf "%s\n" "$collector" "$collector" "$libdir/libbubblescope_cupti_handoff.so")
  if [ "$(cat "$scratch/job.out")" != "$expected" ]; then
    echo "the job saw:"; cat "$scratch/job.out"; echo "expected:"; echo "$expected"
    fail "record did not inject the installed collector"
  fi
  # The installed collector keeps the directory of the CUPTI it was linked against as its run
  # path, so it loads where that directory is not in the loader's search path.
  runpath=$(readelf -d "$libdir/libbubblescope_collector.so" | grep -E "RUNPATH|RPATH") ||
    fail "the installed collector has no run path"
  echo "$runpath" | grep -q "$(dirname "$cupti")" ||
    fail "the installed collector's run path ($runpath) does not name $(dirname "$cupti")"
  echo "installed record injects $collector"
else
  [ "$status" = 2 ] || fail "record without a collector exited with status $status, not 2"
  grep -q "collector library not found: this bubblescope was built without it (" \
    "$scratch/record.err" ||
    { cat "$scratch/record.err"; fail "record did not say the build has no collector"; }
  echo "installed record says: $(cat "$scratch/record.err")"
fi
if [ "$demo_built" = 1 ] && [ -f "$build/bubblescope_pipeline_demo" ]; then
  "$prefix/bin/bubblescope_pipeline_demo" --help >/dev/null ||
    fail "the installed demo job's --help exited with status $?"
fi
echo "PASS"
