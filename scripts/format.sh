#!/usr/bin/env bash
# Lays out every C and C++ file of the project as .clang-format says (clang-format 14, the
# version Debian 12 ships and the suite's check uses: other versions lay some lines out
# differently). With --check, changes nothing and exits 1 naming the files that differ.
#
#   scripts/format.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
mode=(-i)
if [ "${1:-}" = --check ]; then mode=(--dry-run --Werror); shift; fi
if [ $# -gt 0 ]; then echo "format.sh: usage: scripts/format.sh [--check]" >&2; exit 2; fi
tool=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$tool" ]; then
  echo "format.sh: clang-format not found (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
git ls-files -z '*.cc' '*.h' '*.c' | xargs -0 "$tool" "${mode[@]}" --style=file
