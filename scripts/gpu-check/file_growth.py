#!/usr/bin/env python3
"""Follows the collector files a recorded job writes into FOLDER (step 8 of scripts/gpu-check.sh):
each time a file's size changes, one JSON line to OUT with the time, the file, its size, the
ProfilerStep#N ranges it then holds and whether it is closed (the `]` of a clean exit). Stops once
the file STOP exists (after one last look) or after --timeout seconds.

With `record --live --flush-ms` far beyond the job's length, every write before the job's exit is
a step's flush, so the lines show whether the file grew step by step while the job ran.

Needs only the Python standard library.
"""
import argparse
import glob
import json
import os
import re
import time

STEP_NAME = re.compile(rb'"name":"ProfilerStep#(\d+)"')


def look(folder, sizes, log):
    """One line per collector file in `folder` whose size changed since the last look."""
    for path in sorted(glob.glob(os.path.join(folder, "bubblescope-*.json"))):
        try:
            size = os.path.getsize(path)
            if sizes.get(path) == size:
                continue
            with open(path, "rb") as source:
                data = source.read()
        except OSError:
            continue  # not there yet, or gone
        sizes[path] = size
        log.write(json.dumps({"t": time.monotonic(), "file": os.path.basename(path),
                              "size": len(data),
                              "steps": sorted({int(n) for n in STEP_NAME.findall(data)}),
                              "closed": data.rstrip().endswith(b"]")}) + "\n")
        log.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("out")
    parser.add_argument("--stop", required=True, help="stop once this file exists")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--interval", type=float, default=0.002, help="seconds between looks")
    args = parser.parse_args()
    deadline = time.monotonic() + args.timeout
    sizes = {}
    with open(args.out, "w", encoding="utf-8") as log:
        while True:
            stopping = os.path.exists(args.stop) or time.monotonic() >= deadline
            look(args.folder, sizes, log)
            if stopping:
                break
            time.sleep(args.interval)


if __name__ == "__main__":
    main()
