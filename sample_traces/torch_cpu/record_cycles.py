#!/usr/bin/env python3
"""Records a real multi-cycle torch.profiler set on the CPU: the trace folder that
torch.profiler.schedule(wait, warmup, active, repeat=N) with tensorboard_trace_handler
leaves behind, one file per rank per cycle, named "<host>_<pid>.<time_ns>.pt.trace.json.gz".

It runs the 2-rank gloo pipeline of pipeline_run.py (1F1B, 4 microbatches) under the
"steps" window (wait 1, warmup 1, active 2) repeated --cycles times, so cycle k holds
the two steps after its wait and warmup: torch counts steps from 0, so cycle 1 holds
ProfilerStep#2-#3, cycle 2 #6-#7, cycle 3 #10-#11.

Usage:
    /work/torchenv/bin/python record_cycles.py --out DIR [--cycles 3]

"""

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile

import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pipeline_run import Profiling, Run, worker  # noqa: E402
from record import free_port  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--cycles", type=int, default=3)
    args = parser.parse_args()
    run = Run("cycles_1f1b_p2_m4", "1f1b", 2, 4, layers=1, hidden=256, microbatch_rows=16,
              profiling=Profiling(export="tensorboard", cycles=args.cycles))
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        mp.spawn(worker, args=(run, free_port(), scratch), nprocs=run.procs, join=True)
        written = sorted(f for f in os.listdir(scratch) if f.endswith(".pt.trace.json.gz"))
        for name in written:
            shutil.move(os.path.join(scratch, name), os.path.join(args.out, name))
    print(f"{len(written)} files in {args.out}")


if __name__ == "__main__":
    main()
