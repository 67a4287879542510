#!/usr/bin/env bash
# Configures the Release build that scripts/test.sh builds and tests (build/, or the folder given,
# relative to the repository root). Where the folder is already configured (the README's quick
# start configures build/), its configuration is kept as it is, so nothing compiled there is
# compiled again and it stays the user's Release build; a fresh folder (CI's clean clone) is
# configured as a Release build with warnings as errors. Prints which of the two it did.
#   scripts/configure-release-build.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
if [ -f "$dir/CMakeCache.txt" ]; then
  werror=$(sed -n 's/^BUBBLESCOPE_WERROR:BOOL=//p' "$dir/CMakeCache.txt")
  echo "== $dir/ as configured (warnings as errors: ${werror:-OFF}; a fresh clone makes them errors) =="
  cmake -S . -B "$dir" >/dev/null
else
  echo "== Release build in $dir/, warnings as errors =="
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUBBLESCOPE_WERROR=ON >/dev/null
fi
