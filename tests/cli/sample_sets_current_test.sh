#!/bin/sh
# The bundled simulated sample sets are exactly what the current simulator writes: the script
# that made them writes them again into a scratch directory and every file must be identical
# (sample_traces/README.md promises byte-for-byte regeneration; a simulator change that forgets
# to regenerate them fails here).
# Usage: sample_sets_current_test.sh BUBBLESCOPE SOURCE_DIR SCRATCH_DIR
set -eu
bin=$1
source_dir=$2
scratch=$3
rm -rf "$scratch"
mkdir -p "$scratch"
sh "$source_dir/sample_traces/make_sim_sets.sh" "$bin" "$scratch" >/dev/null
status=0
for set in "$scratch"/sim_*; do
  name=$(basename "$set")
  for file in "$set"/*; do
    committed="$source_dir/sample_traces/$name/$(basename "$file")"
    if ! cmp -s "$file" "$committed"; then
      echo "differs from what the simulator writes now: sample_traces/$name/$(basename "$file")"
      status=1
    fi
  done
  count_new=$(ls "$set" | wc -l)
  count_old=$(ls "$source_dir/sample_traces/$name" | wc -l)
  if [ "$count_new" -ne "$count_old" ]; then
    echo "sample_traces/$name holds $count_old files, the simulator writes $count_new"
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "all simulated sample sets are current"
exit "$status"
