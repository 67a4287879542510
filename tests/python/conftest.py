"""Shared fixtures of the Python package's tests: the installed CLI beside the module, and the
trace sets every comparison runs on."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_traces"
SHARED = ROOT.parent / "shared" / "traces"
TRACE_SUFFIXES = (".json", ".json.gz", ".sqlite", ".bsdigest")


def cli_path():
    """The `bubblescope` command `pip install .` put beside this interpreter."""
    beside = pathlib.Path(sys.executable).parent / "bubblescope"
    return str(beside) if beside.exists() else shutil.which("bubblescope")


def run_cli(*args):
    return subprocess.run([cli_path(), *map(str, args)], capture_output=True, text=True,
                          check=False)


def error_line(stderr):
    """The CLI's one line of why it stopped: its last line that starts with "bubblescope: "."""
    return [line for line in stderr.splitlines() if line.startswith("bubblescope: ")][-1]


def cli_json(*args):
    """analyze --format json by the CLI: (exit status, parsed report or None, stderr)."""
    done = run_cli("analyze", *args, "--format", "json", "--quiet")
    return done.returncode, (json.loads(done.stdout) if done.returncode == 0 else None), \
        done.stderr


def _holds_traces(folder):
    return any(f.is_file() and f.name.endswith(TRACE_SUFFIXES) for f in folder.iterdir())


def trace_sets():
    """Every sample set (a folder of a job's traces) and the shared real traces: the Kineto
    folders whole and every nsys SQLite export's folder."""
    sets = []
    for top in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        if _holds_traces(top):
            sets.append(top)
        sets += sorted(p for p in top.iterdir() if p.is_dir() and _holds_traces(p))
    if SHARED.is_dir():
        for top in sorted(p for p in SHARED.iterdir() if p.is_dir()):
            if _holds_traces(top):
                sets.append(top)
            sets += sorted(p for p in top.iterdir() if p.is_dir() and _holds_traces(p))
    return [os.path.relpath(s, ROOT) for s in sets]


@pytest.fixture(autouse=True)
def _in_root(monkeypatch):
    # Paths are given relative to the checkout, as a user in it would, so that the reports'
    # source paths read alike from both sides.
    monkeypatch.chdir(ROOT)
