#!/bin/sh
# On a machine without a GPU the demo job says so, rather than "CUDA driver version is
# insufficient": a line "rank R: no CUDA GPU found (...)" from a failing rank, exit status 1;
# --count-gpus answers 0. Exits 77 (ctest SKIP_RETURN_CODE) where there is a GPU.
#   pipeline_demo_no_gpu_test.sh DEMO SCRATCH_DIR
set -u
demo=$1
scratch=$2

fail() {
  echo "FAIL: $*"
  exit 1
}

if [ -e /dev/nvidia0 ]; then
  echo "SKIP: this machine has an NVIDIA GPU (/dev/nvidia0); the test is for one without"
  exit 77
fi
rm -rf "$scratch"
mkdir -p "$scratch"
"$demo" --ranks 2 --iterations 1 >"$scratch/out" 2>"$scratch/err"
status=$?
cat "$scratch/err"
[ "$status" = 1 ] || fail "the demo exited with status $status, not 1"
# The first rank to fail stops the other, which may not get to say it too: one or two lines,
# each this.
lines=$(grep -c . "$scratch/err")
[ "$lines" -ge 1 ] && [ "$lines" -le 2 ] || fail "expected a line from one or both ranks"
said=$(grep -c "^bubblescope_pipeline_demo: rank [01]: no CUDA GPU found (cudaGetDeviceCount: " \
  "$scratch/err")
[ "$said" = "$lines" ] || fail "a rank did not say that there is no CUDA GPU"
count=$("$demo" --count-gpus 2>"$scratch/count_err") || fail "--count-gpus exited with status $?"
[ "$count" = 0 ] || fail "--count-gpus printed '$count', not 0"
grep -q "^bubblescope_pipeline_demo: no CUDA GPU found (" "$scratch/count_err" ||
  fail "--count-gpus did not say why it found none"
echo "PASS"
