#!/usr/bin/env bash
# Installs the Debian packages bubblescope needs to build and test. Idempotent: packages already
# present are left alone and apt is not touched at all when nothing is missing. Then the pinned
# CUDA 12 CUPTI headers, once.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libsimdjson-dev   # JSON parsing (On-Demand)
  libabsl-dev       # Status/StatusOr, strings, hash maps
  zlib1g-dev        # gzip'd traces
  libsqlite3-dev    # Nsight Systems exports (nsys export --type sqlite)
  libcli11-dev      # command-line parsing with subcommands
  libre2-dev        # --iteration-marker patterns: linear-time matching, no recursion
  libopenmpi-dev openmpi-bin  # analyze --mpi and its mpirun test (optional: builds without)
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-dev  # the fuzz targets (scripts/fuzz.sh): libFuzzer and its sanitizer runtimes
  clang-format      # the source layout check (tests/build/source_format_test.sh, scripts/format.sh)
  python3           # the test suite's helper scripts; the CLI never needs Python
  python3-dev python3-venv  # pip install . (the Python module, docs/python.md) and its tests
  python3-pip       # fetches the CUDA 12 CUPTI headers the collector's CUDA 12 tests build against
  chromium          # the HTML report's browser test (headless); bubblescope never needs it
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -ne 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "install-deps: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The CUDA 12 CUPTI headers (PyPI wheels, hash-pinned) under .cache/cuda12-cupti/: the collector is
# also built and tested against them beside the installed CUDA toolkit (docs/collector.md).
# Fetched once; nothing is downloaded when they are already there.
# Without network access to PyPI this only warns: the CUDA 12 tests then report themselves skipped
# (or fail where BUBBLESCOPE_REQUIRE_CUDA12=1 demands them), and everything else still builds.
python3 "$(dirname "$0")/fetch_cuda12_cupti.py" ||
  echo "install-deps: warning: the CUDA 12 CUPTI headers could not be fetched; the collector's CUDA 12 tests will be skipped" >&2
