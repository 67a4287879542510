#!/usr/bin/env bash
# The Python package's tests (docs/python.md): a virtual environment in build-python/venv, the
# package installed into it from this checkout with `pip install .` (scikit-build-core builds the
# module and the CLI in build-python/, which later runs reuse), pytest, and pandas and matplotlib
# where they install (the frames and plot tests skip cleanly without them), then tests/python/.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=build-python/venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
"$venv/bin/python" -m pip install -q pytest
"$venv/bin/python" -m pip install -q pandas matplotlib ||
  echo "test-python: pandas or matplotlib did not install; their tests are skipped" >&2
jobs=$(nproc 2>/dev/null || echo 2)
start=$SECONDS
# Warnings are errors here, as in the project's other test builds; a user's `pip install .` keeps
# them warnings (a Release build), so a newer compiler cannot break an install.
CMAKE_ARGS="-DBUBBLESCOPE_WERROR=ON ${CMAKE_ARGS:-}" CMAKE_BUILD_PARALLEL_LEVEL=$jobs \
  "$venv/bin/python" -m pip install -q .
echo "test-python: pip install . took $((SECONDS - start)) s" >&2
"$venv/bin/python" -m pytest -q tests/python "$@"
