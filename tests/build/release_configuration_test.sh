#!/bin/sh
# A user's Release (and MinSizeRel) build keeps warnings on but never turns them into errors, and
# a developer's default build does: configures both in scratch directories (no compiling; CI's
# own normal build compiles Release with BUBBLESCOPE_WERROR=ON) and reads the compile commands.
#   release_configuration_test.sh SOURCE_DIR SCRATCH_DIR
set -eu
source_dir=$1
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch"
configure() {  # configure DIR ARGS...: compile_commands.json of a minimal configuration
  dir=$1; shift
  cmake -S "$source_dir" -B "$scratch/$dir" -G Ninja -DBUBBLESCOPE_BUILD_TESTS=OFF \
    -DBUBBLESCOPE_BUILD_BENCH=OFF -DBUBBLESCOPE_BUILD_COLLECTOR=OFF "$@" >"$scratch/$dir.log" 2>&1 \
    || { cat "$scratch/$dir.log"; echo "FAIL: cmake $* did not configure"; exit 1; }
}
configure release -DCMAKE_BUILD_TYPE=Release
configure minsizerel -DCMAKE_BUILD_TYPE=MinSizeRel
configure developer
configure release_werror -DCMAKE_BUILD_TYPE=Release -DBUBBLESCOPE_WERROR=ON
for dir in release minsizerel; do
  grep -q -- "-Wall" "$scratch/$dir/compile_commands.json" || { echo "FAIL: $dir has no -Wall"; exit 1; }
  if grep -q -- "-Werror" "$scratch/$dir/compile_commands.json"; then
    echo "FAIL: a $dir build turns warnings into errors"; exit 1
  fi
done
for dir in developer release_werror; do
  grep -q -- "-Werror" "$scratch/$dir/compile_commands.json" || { echo "FAIL: $dir has no -Werror"; exit 1; }
done
echo "release builds warn without failing; developer and CI builds fail on warnings"
