#!/usr/bin/env python3
"""Figures of the real Nsight Systems exports in ../shared/traces/nsys, worked out from each
SQLite file with Python's own sqlite3 (not bubblescope): per process that ran kernels, the
kernel count and the first kernel's start and last kernel's end on the UTC epoch (utcEpochNs +
the time from the session's start; the time as recorded where the export has no session start).
tests/readers/nsys_real_exports_test.cc holds the figures this prints."""
import glob
import os
import sqlite3
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "shared", "traces", "nsys")
for path in sorted(glob.glob(os.path.join(root, "*", "*.sqlite"))):
    db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    utc = 0
    if "TARGET_INFO_SESSION_START_TIME" in tables:
        utc = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
    rows = db.execute(
        "SELECT globalPid / 16777216 % 16777216, COUNT(*), MIN(start), MAX(\"end\") "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1 ORDER BY 1").fetchall()
    for pid, count, first, last in rows:
        print(f'{os.path.basename(os.path.dirname(path))}: pid {pid} kernels {count} '
              f'first {utc + first} last {utc + last} span {last - first}')
