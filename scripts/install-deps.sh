#!/usr/bin/env bash
# Installs the Debian packages bubblescope needs to build and test. Idempotent: packages already
# present are left alone and apt is not touched at all when nothing is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libsimdjson-dev   # JSON parsing (On-Demand)
  libabsl-dev       # Status/StatusOr, strings, hash maps
  zlib1g-dev        # gzip'd traces
  libcli11-dev      # command-line parsing with subcommands
  libre2-dev        # --iteration-marker patterns: linear-time matching, no recursion
  libopenmpi-dev openmpi-bin  # analyze --mpi and its mpirun test (optional: builds without)
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-dev  # the fuzz targets (scripts/fuzz.sh): libFuzzer and its sanitizer runtimes
  python3           # only the test suite's helper scripts; bubblescope never needs Python
  chromium          # the HTML report's browser test (headless); bubblescope never needs it
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
