#!/bin/sh
# The README's second command (scripts/test.sh) reuses the first command's build/: configured as
# the quick start configures it and one library built, scripts/configure-release-build.sh keeps
# that configuration (no warnings-as-errors flag added), so the library has nothing to rebuild;
# a fresh folder gets a Release build with warnings as errors.
#   quickstart_reuse_test.sh SOURCE_DIR SCRATCH_DIR
set -eu
source_dir=$1
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch"
quick="$scratch/quickstart"
# Command 1's configuration, less what this test does not build.
cmake -S "$source_dir" -B "$quick" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUBBLESCOPE_BUILD_TESTS=OFF \
  -DBUBBLESCOPE_BUILD_BENCH=OFF -DBUBBLESCOPE_BUILD_COLLECTOR=OFF >"$scratch/quick.log" 2>&1 \
  || { cat "$scratch/quick.log"; echo "FAIL: the quick start's configuration"; exit 1; }
cmake --build "$quick" --target bubblescope_text >"$scratch/build.log" 2>&1 \
  || { cat "$scratch/build.log"; echo "FAIL: building bubblescope_text"; exit 1; }
"$source_dir/scripts/configure-release-build.sh" "$quick" >"$scratch/reuse.log"
grep -q "as configured (warnings as errors: OFF" "$scratch/reuse.log" \
  || { cat "$scratch/reuse.log"; echo "FAIL: the quick start's build/ was not reused as configured"; exit 1; }
if grep -q -- "-Werror" "$quick/compile_commands.json"; then
  echo "FAIL: the quick start's build/ was given warnings as errors (every file would be rebuilt)"; exit 1
fi
plan=$(ninja -C "$quick" -n bubblescope_text)
case "$plan" in
  *"no work to do"*) ;;
  *) echo "$plan"; echo "FAIL: what the quick start built would be built again"; exit 1 ;;
esac
fresh="$scratch/fresh"
"$source_dir/scripts/configure-release-build.sh" "$fresh" >"$scratch/fresh.log"
grep -q -- "-Werror" "$fresh/compile_commands.json" \
  || { echo "FAIL: a fresh build/ has no warnings as errors"; exit 1; }
grep -q "^CMAKE_BUILD_TYPE:STRING=Release" "$fresh/CMakeCache.txt" \
  || { echo "FAIL: a fresh build/ is not a Release build"; exit 1; }
echo "the quick start's build/ is reused as configured; a fresh one gets warnings as errors"
