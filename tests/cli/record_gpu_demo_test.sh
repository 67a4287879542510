#!/bin/sh
# GPU-only end-to-end test of the collector: `bubblescope record` runs the pipeline demo job
# (collector/demo/, 2 ranks, GPipe, 8 microbatches), then `bubblescope analyze` must find both
# rank traces and the pipeline's shape p=2 m=8. Exits 77 (ctest SKIP_RETURN_CODE) where there is
# no GPU, or fewer than the two the job needs.
#
# usage: record_gpu_demo_test.sh BUBBLESCOPE DEMO OUTPUT_DIR
set -u
bubblescope=$1
demo=$2
out=$3

if [ ! -e /dev/nvidia0 ]; then
  echo "SKIP: no NVIDIA GPU here (/dev/nvidia0 is missing); this test needs 2 GPUs"
  exit 77
fi
gpus=$("$demo" --count-gpus)
if [ "${gpus:-0}" -lt 2 ]; then
  echo "SKIP: the pipeline demo job needs 2 GPUs; CUDA reports ${gpus:-0}"
  exit 77
fi

fail() {
  echo "FAIL: $*"
  exit 1
}

rm -rf "$out"
# All three iterations (--whole-job): the default window would skip the first two as warm-up.
"$bubblescope" record -o "$out" --run-id gpu-demo --whole-job -- "$demo" --ranks 2 --microbatches 8 \
  --iterations 3 || fail "record exited with status $?"
for rank in 0 1; do
  ls "$out"/bubblescope-gpu-demo-rank$rank-world2-*.json >/dev/null 2>&1 ||
    fail "no trace from rank $rank"
done
report=$("$bubblescope" analyze "$out") || fail "analyze exited with status $?"
echo "$report"
echo "$report" | grep -q "p=2 m=8 " || fail "analyze did not find p=2 m=8"
echo "PASS"
