#!/bin/sh
# Regenerates the simulated sample sets sample_traces/sim_* (see sample_traces/README.md) with a
# built bubblescope binary. The simulator is deterministic, so the files come out byte-identical.
#
# Usage: sample_traces/make_sim_sets.sh [path/to/bubblescope [output-dir]]
#   (defaults: build/bubblescope, and sample_traces/ itself; the test sample_sets_current writes
#   them elsewhere and compares)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-"$here/../build/bubblescope"}
out=${2:-"$here"}

# 4 stages, 8 microbatches, 3 iterations; F 1 ms, B 2 ms per microbatch and stage; 16 MiB
# activations over 400 Gb/s links (50 GB/s, NVLink class) with 5 us latency; 5 us launches; a 300 us optimizer step;
# 2 GiB of weights and 96 MiB of stashed activations per in-flight microbatch; 2 % jitter.
common="--stages 4 --microbatches 8 --iterations 3 --activation-mb 16 --link-gbps 400
  --link-latency-us 5 --launch-gap-us 5 --weights-mb 2048 --stash-mb 96 --jitter 0.02 --seed 1
  --gzip --force"
train="--fwd-us 1000 --bwd-us 2000 --optimizer-us 300"

sim() {
  dir=$1
  shift
  # $common is split into words on purpose.
  # shellcheck disable=SC2086
  "$bin" simulate -o "$out/$dir" $common "$@"
}

# shellcheck disable=SC2086
{
  sim sim_gpipe_p4_m8 --schedule gpipe $train --annotations pp-gpu
  sim sim_1f1b_p4_m8 --schedule 1f1b $train --annotations pp-gpu
  sim sim_interleaved_p4_v2_m8 --schedule interleaved --virtual-stages 2 $train \
    --annotations pp-gpu
  sim sim_1f1b_imbalanced_p4_m8 --schedule 1f1b --fwd-us 1000,1000,1500,1000 \
    --bwd-us 2000,2000,3000,2000 --optimizer-us 300 --annotations none
  sim sim_1f1b_slow_link_p4_m8 --schedule 1f1b $train --slow-link 1:2:100 --annotations none
  sim sim_fwd_only_p4_m8 --schedule fwd-only --fwd-us 1000 --bwd-us 0 --annotations none
  sim sim_1f1b_batched_p4_m8 --schedule 1f1b $train --p2p batched --launches torch \
    --annotations pp-mirrored
}
