#!/usr/bin/env python3
"""Records real pipeline-parallel PyTorch profiler (Kineto) traces on the CPU.

Each run launches P processes (gloo backend, 127.0.0.1) that train a small
stack of Linear+ReLU layers split into pipeline stages with
torch.distributed.pipelining (pipeline_run.py), profile a few training steps
with torch.profiler (CPU activity only), and write one Chrome trace per rank
into <out>/<run>/ plus <out>/<run>/truth.json.

PyTorch is only the tool that makes these files; bubblescope never uses it.

Usage (regenerate every run shipped next to this file):
    python3 record.py --all --out .
Some of the shipped runs, by name:
    python3 record.py --listed zb_p4_v2_m4_skipfirst gpipe_p3_m3_manual --out .
One run:
    python3 record.py --run NAME --schedule 1f1b --procs 4 --microbatches 8 \
        [--virtual 2] [--heavy-stage 2] [--dp 2] [--placement 2,0,1] [--layers 1] \
        [--hidden 1024] [--microbatch-rows 64] \
        [--record-shapes] [--profile-memory] [--with-stack] \
        [--profiler-window steps|skip-first|one-step|manual] [--export chrome|tensorboard|python] --out .
A run profiled by docs/getting-traces.md's own block (recipe.py), with its loop length:
    python3 record.py --run NAME --schedule gpipe --procs 4 --microbatches 8 \
        --export recipe --recipe one-cycle --steps 5 --out .

--dp D runs D data-parallel replicas of the pipeline (D x procs processes): rank
r is stage position r // D of pipeline r % D, so the pipelines interleave in
rank order ({0,2} and {1,3} for procs 2, D 2). Each pipeline sends on its own
process group; after each step the replicas of a stage all-reduce their
gradients on theirs.

--schedule csv with --placement S0,S1,... runs torch's _PipelineScheduleRuntime
on a compute-only schedule loaded with _load_csv, which is how torch takes a
stage-to-rank map of the user's: stage s runs on rank S_s. Each rank runs its
stage's forwards and backwards in 1F1B order (one stage per rank) or, with
several stages per rank, in looped breadth-first order (all forwards of its
stages, lowest stage first, then all backwards, highest stage first), which
cannot deadlock whatever the placement.

After recording, run reference.py to add each run's reference figures to its
truth.json.
"""

import argparse
import dataclasses
import glob
import gzip
import json
import os
import shutil
import socket
import sys
import tempfile

import torch
import torch.multiprocessing as mp

from recipe import RECIPE_WINDOWS, block_sha256
from pipeline_run import (
    HIDDEN,
    LAYERS_PER_STAGE,
    MICROBATCH_ROWS,
    PROFILER_WINDOWS,
    EXPORTS,
    Profiling,
    Run,
    profiled_steps,
    profiler_window,
    stage_layer_counts,
    stage_to_rank,
    training_steps,
    worker,
)

# The heavy run is re-recorded (up to HEAVY_ATTEMPTS times) until the heavy
# stage's rank measures at least HEAVY_MARGIN times the busiest other rank:
# on a shared 2-core machine other processes can inflate any rank's op times.
HEAVY_MARGIN = 1.4
HEAVY_ATTEMPTS = 5

FAMILY_OF_SCHEDULE = {
    "gpipe": "gpipe",
    "1f1b": "1f1b",
    "interleaved": "interleaved",
    "zb": "zb",
    "zbv": "zb",
    "dualpipev": "zb",
    # Looped BFS runs, on every rank, all forwards before any backward (chunk
    # by chunk): GPipe's order over v chunks.
    "loopedbfs": "gpipe",
    # "csv" depends on v (see compute_only_actions).
}

TORCH_SCHEDULE_CLASS = {
    "gpipe": "ScheduleGPipe",
    "1f1b": "Schedule1F1B",
    "interleaved": "ScheduleInterleaved1F1B",
    "zb": "ScheduleInterleavedZeroBubble",
    "zbv": "ScheduleZBVZeroBubble",
    "dualpipev": "ScheduleDualPipeV",
    "loopedbfs": "ScheduleLoopedBFS",
    "csv": "_PipelineScheduleRuntime",
}


# The geometry of the runs recorded with every schedule class (below).
WIDE = dict(hidden=1024, microbatch_rows=64)

# Every run shipped in this directory.
RUNS = [
    Run("gpipe_p2_m4", "gpipe", 2, 4),
    Run("1f1b_p4_m8", "1f1b", 4, 8),
    Run("interleaved_p2_v2_m4", "interleaved", 2, 4, virtual=2),
    Run("zb_p2_v2_m4", "zb", 2, 4, virtual=2),
    Run("zbv_p2_v2_m4", "zbv", 2, 4, virtual=2),
    Run("1f1b_p4_m8_heavy2", "1f1b", 4, 8, heavy_stage=2),
    Run("dualpipev_p2_v2_m8", "dualpipev", 2, 8, virtual=2),
    Run("dp2_1f1b_p2_m4", "1f1b", 2, 4, dp=2),
    Run("1f1b_p2_m4_recompute", "1f1b", 2, 4, recompute="reentrant"),
    Run("1f1b_p2_m4_recompute_nr", "1f1b", 2, 4, recompute="non-reentrant"),
    Run("gpipe_eval_p2_m4", "gpipe", 2, 4, eval=True),
    # Every schedule class with p >= 3 (one with p = 4, v = 2), custom placements,
    # and one profiler set-up other than the default each. One layer per stage
    # and few microbatches keep the files small; wider layers and microbatches (8x the
    # flops of the runs above) keep the compute large against the per-op Python time.
    Run("gpipe_p3_m3_manual", "gpipe", 3, 3, layers=1, **WIDE, profiling=Profiling(window="manual")),
    Run("1f1b_p3_m3_shapes", "1f1b", 3, 3, layers=1, **WIDE, profiling=Profiling(record_shapes=True)),
    Run("loopedbfs_p4_v2_m4", "loopedbfs", 4, 4, virtual=2, layers=1, **WIDE),
    Run("interleaved_p3_v2_m3_memory", "interleaved", 3, 3, virtual=2, layers=1, **WIDE,
        profiling=Profiling(profile_memory=True)),
    Run("zb_p4_v2_m4_skipfirst", "zb", 4, 4, virtual=2, layers=1, **WIDE,
        profiling=Profiling(window="skip-first")),
    Run("zbv_p3_v2_m3", "zbv", 3, 3, virtual=2, layers=1, **WIDE),
    Run("dualpipev_p3_v2_m6_tensorboard", "dualpipev", 3, 6, virtual=2, layers=1, **WIDE,
        profiling=Profiling(export="tensorboard")),
    Run("csv_1f1b_p3_m3_order201", "csv", 3, 3, layers=1, **WIDE, placement=(2, 0, 1),
        profiling=Profiling(export="python")),
    Run("csv_bfs_p3_v2_m3_order012120", "csv", 3, 3, virtual=2, layers=1, **WIDE,
        placement=(0, 1, 2, 1, 2, 0)),
    # with_stack writes about ten python_function events per op: the smallest run, one step.
    Run("gpipe_p2_m2_stack", "gpipe", 2, 2, layers=1, **WIDE,
        profiling=Profiling(with_stack=True, window="one-step")),
    # Third set: docs/getting-traces.md's own blocks, run as written (recipe.py), on the
    # second set's geometry. The loop of the first runs exactly wait + warmup + active steps;
    # the second's ends one step inside the active window, so torch closes the window with an
    # empty ProfilerStep#4; the third runs torch's default repeat=0 over 11 steps, so its third
    # cycle ends in an empty ProfilerStep#11.
    Run("recipe_gpipe_p4_m8", "gpipe", 4, 8, layers=1, **WIDE,
        profiling=Profiling(export="recipe", recipe="one-cycle", steps=5)),
    Run("recipe_1f1b_p2_m4", "1f1b", 2, 4, layers=1, **WIDE,
        profiling=Profiling(export="recipe", recipe="one-cycle", steps=5)),
    Run("recipe_1f1b_p4_m8_short_loop", "1f1b", 4, 8, layers=1, **WIDE,
        profiling=Profiling(export="recipe", recipe="one-cycle", steps=4)),
    Run("recipe_cycles_1f1b_p2_m4", "1f1b", 2, 4, layers=1, **WIDE,
        profiling=Profiling(export="recipe", recipe="cycles", steps=11)),
]


def family_of(run):
    if run.eval:
        return "fwd-only"
    if run.schedule == "csv":
        return "1f1b" if run.virtual == 1 else "gpipe"
    return FAMILY_OF_SCHEDULE[run.schedule]


def command_of(run):
    """The record.py command line that records `run` alone."""
    flags = [f"--run {run.name}", f"--schedule {run.schedule}", f"--procs {run.procs}",
             f"--microbatches {run.microbatches}"]
    defaults = Run("", "", 0, 0)
    for field, flag in (("virtual", "--virtual"), ("heavy_stage", "--heavy-stage"), ("dp", "--dp"),
                        ("recompute", "--recompute"), ("layers", "--layers"),
                        ("hidden", "--hidden"), ("microbatch_rows", "--microbatch-rows")):
        if getattr(run, field) != getattr(defaults, field):
            flags.append(f"{flag} {getattr(run, field)}")
    if run.eval:
        flags.append("--eval")
    if run.placement is not None:
        flags.append("--placement " + ",".join(map(str, run.placement)))
    prof, default_prof = run.profiling, Profiling()
    for field in ("record_shapes", "profile_memory", "with_stack"):
        if getattr(prof, field):
            flags.append("--" + field.replace("_", "-"))
    if prof.window != default_prof.window:
        flags.append(f"--profiler-window {prof.window}")
    if prof.export != default_prof.export:
        flags.append(f"--export {prof.export}")
    if prof.recipe is not None:
        flags.append(f"--recipe {prof.recipe} --steps {prof.steps}")
    return "python3 record.py " + " ".join(flags)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gzip_file(path):
    # No file name and a zero mtime in the gzip header, so the .gz bytes depend
    # only on the JSON.
    with open(path, "rb") as src, open(path + ".gz", "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as dst:
            shutil.copyfileobj(src, dst)
    os.remove(path)


def load_trace(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def rank_files(run_dir):
    """{global rank: [trace paths]} of a run directory, the rank read from distributedInfo
    (several files per rank where the run wrote several profiler cycles), in step order."""
    files = {}
    for path in sorted(glob.glob(os.path.join(run_dir, "*.json.gz"))):
        files.setdefault(load_trace(path)["distributedInfo"]["rank"], []).append(path)
    for paths in files.values():
        paths.sort(key=lambda path: min(step_numbers(path), default=-1))
    return files


def step_numbers(path):
    """The N of every ProfilerStep#N range of a trace file."""
    return sorted(int(e["name"][len("ProfilerStep#"):]) for e in load_trace(path)["traceEvents"]
                  if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))


def measure_rank(trace_path):
    """Busy time of one rank, measured from its trace.

    Compute = summed duration of outermost cpu_op events that are not c10d::
    communication ops, inside ProfilerStep# ranges (the whole trace when it has
    none). Returns (compute_ms, [ProfilerStep durations in ms]).
    """
    events = load_trace(trace_path)["traceEvents"]
    steps = [e for e in events if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")]
    ops = sorted(
        (e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"),
        key=lambda e: (e["ts"], -e["dur"]),
    )
    compute_us = 0.0
    outer_end = float("-inf")
    for op in ops:
        if op["ts"] < outer_end:
            continue  # nested inside the previous outermost op
        outer_end = op["ts"] + op["dur"]
        inside_step = not steps or any(s["ts"] <= op["ts"] <= s["ts"] + s["dur"] for s in steps)
        if inside_step and not op["name"].startswith("c10d::"):
            compute_us += op["dur"]
    return round(compute_us / 1000, 3), [round(s["dur"] / 1000, 3) for s in steps]


def heavy_stage_is_slowest(compute_ms, heavy_rank):
    others = [c for r, c in enumerate(compute_ms) if r != heavy_rank]
    return compute_ms[heavy_rank] >= HEAVY_MARGIN * max(others)


def collect_traces(scratch, run_dir, run):
    """Moves the ranks' traces from the scratch directory into the run's directory."""
    for old in glob.glob(os.path.join(run_dir, "*.json.gz")):
        os.remove(old)
    if run.profiling.export == "recipe":
        # The page's block wrote into traces/ of its working directory, gzipped by torch.
        written = glob.glob(os.path.join(scratch, "traces", "*.json.gz"))
        if not written:
            raise RuntimeError(f"{run.name}: the recipe wrote no trace")
        for src in written:
            shutil.move(src, os.path.join(run_dir, os.path.basename(src)))
        return
    if run.profiling.export == "tensorboard":
        written = glob.glob(os.path.join(scratch, "*.pt.trace.json.gz"))
        if len(written) != run.procs * run.dp:
            raise RuntimeError(f"{run.name}: tensorboard_trace_handler wrote {len(written)} files")
        for src in written:
            shutil.move(src, os.path.join(run_dir, os.path.basename(src)))
        return
    for rank in range(run.procs * run.dp):
        dst = os.path.join(run_dir, f"rank{rank}.json")
        shutil.move(os.path.join(scratch, f"rank{rank}.json"), dst)
        gzip_file(dst)


def validate(run):
    if run.schedule in ("gpipe", "1f1b") and run.virtual != 1:
        raise ValueError(f"{run.schedule} supports one stage per rank")
    if run.schedule in ("interleaved", "zb", "loopedbfs") and run.virtual < 2:
        raise ValueError(f"{run.schedule} needs --virtual >= 2")
    if run.schedule in ("zbv", "dualpipev") and run.virtual != 2:
        raise ValueError(f"{run.schedule} needs --virtual 2")
    if (run.schedule == "csv") != (run.placement is not None):
        raise ValueError("--placement goes with --schedule csv, and csv needs it")
    if (run.profiling.export == "recipe") != (run.profiling.recipe is not None):
        raise ValueError("--recipe goes with --export recipe, and recipe needs it")
    if run.profiling.export == "recipe" and not run.profiling.steps:
        raise ValueError("--export recipe needs --steps")
    if run.placement is not None:
        num_stages = run.procs * run.virtual
        if len(run.placement) != num_stages or any(
            list(run.placement).count(r) != run.virtual for r in range(run.procs)
        ):
            raise ValueError(f"--placement must give each of the {num_stages} stages a rank, "
                             f"{run.virtual} stages per rank")


def record_run(run, out_dir, command):
    validate(run)
    world = run.procs * run.dp
    run_dir = os.path.join(out_dir, run.name)
    os.makedirs(run_dir, exist_ok=True)
    num_stages = run.procs * run.virtual
    for attempt in range(1, HEAVY_ATTEMPTS + 1):
        with tempfile.TemporaryDirectory() as scratch:
            mp.spawn(worker, args=(run, free_port(), scratch), nprocs=world, join=True)
            collect_traces(scratch, run_dir, run)
        files = rank_files(run_dir)
        # The figures of the newest file of each rank (the last profiler cycle).
        measured = [measure_rank(files[r][-1]) for r in range(world)]
        compute_ms = [m[0] for m in measured]
        if run.heavy_stage is None:
            break
        heavy_rank = stage_to_rank(run.heavy_stage, run)
        if heavy_stage_is_slowest(compute_ms, heavy_rank):
            break
        print(f"{run.name}: attempt {attempt}: heavy rank {heavy_rank} not clearly slowest "
              f"(compute ms {compute_ms}), recording again", file=sys.stderr)
    else:
        raise RuntimeError(f"{run.name}: heavy stage never measured as the slowest: {compute_ms}")
    skip_first, wait, warmup, active, repeat = profiler_window(run)
    truth = {
        "schedule": family_of(run),
        "torch_schedule_class": TORCH_SCHEDULE_CLASS[run.schedule],
        "p": run.procs,
        "m": run.microbatches,
        "v": run.virtual,
        "stage_order": [stage_to_rank(s, run) for s in range(num_stages)],
        "placement": "custom" if run.placement is not None else "schedule",
        "dp": run.dp,
        "eval": run.eval,
        # Global ranks of each pipeline, stage position order (stage_order indexes into these).
        "pipelines": [[d + run.dp * s for s in range(run.procs)] for d in range(run.dp)],
        "layers_per_stage": stage_layer_counts(run),
        "recompute": run.recompute,
        "slowest_stage": run.heavy_stage,
        "training_steps": training_steps(run),
        "profiled_steps": profiled_steps(run),
        "profiler": {
            **dataclasses.asdict(run.profiling),
            "skip_first": skip_first, "wait": wait, "warmup": warmup, "active": active,
            "repeat": repeat,
            "profiler_step_ranges": run.profiling.window != "manual",
        },
        "files": {str(r): ([os.path.basename(f) for f in files[r]] if len(files[r]) > 1
                           else os.path.basename(files[r][0])) for r in range(world)},
        "hidden": run.hidden,
        "microbatch_rows": run.microbatch_rows,
        "measured_compute_ms_per_rank": compute_ms,
        "measured_profiler_step_ms_per_rank": [m[1] for m in measured],
        "recording_attempts": attempt,
        "torch_version": torch.__version__,
        "python_version": sys.version.split()[0],
        "cpu_cores": os.cpu_count(),
        "command": command,
    }
    if run.profiling.export == "recipe":
        # The block as the page held it when this run was recorded (recipe.py).
        truth["recipe_sha256"] = block_sha256(run.profiling.recipe)
        truth["recorded_step_numbers"] = {str(r): [step_numbers(f) for f in files[r]]
                                          for r in range(world)}
    with open(os.path.join(run_dir, "truth.json"), "w") as f:
        json.dump(truth, f, indent=2)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="record every shipped run")
    parser.add_argument("--listed", nargs="+", metavar="NAME", help="record these shipped runs")
    parser.add_argument("--run", help="name of a single run (directory under --out)")
    parser.add_argument("--schedule", choices=sorted(TORCH_SCHEDULE_CLASS))
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--virtual", type=int, default=1, help="stages per rank")
    parser.add_argument("--heavy-stage", type=int, default=None)
    parser.add_argument("--dp", type=int, default=1, help="data-parallel replicas of the pipeline")
    parser.add_argument("--eval", action="store_true", help="forward-only passes (schedule.eval)")
    parser.add_argument("--recompute", choices=["none", "reentrant", "non-reentrant"],
                        default="none", help="activation checkpointing of every stage")
    parser.add_argument("--layers", type=int, default=LAYERS_PER_STAGE, help="layers per stage")
    parser.add_argument("--hidden", type=int, default=HIDDEN, help="layer width")
    parser.add_argument("--microbatch-rows", type=int, default=MICROBATCH_ROWS)
    parser.add_argument("--placement", help="schedule csv: the rank of each stage, comma-separated")
    parser.add_argument("--record-shapes", action="store_true")
    parser.add_argument("--profile-memory", action="store_true")
    parser.add_argument("--with-stack", action="store_true")
    parser.add_argument("--profiler-window", choices=sorted(PROFILER_WINDOWS), default="steps")
    parser.add_argument("--export", choices=EXPORTS, default="chrome")
    parser.add_argument("--recipe", choices=sorted(RECIPE_WINDOWS),
                        help="--export recipe: the block of docs/getting-traces.md to run")
    parser.add_argument("--steps", type=int, help="--export recipe: num_steps, the loop's length")
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    opts = parser.parse_args()

    if opts.all or opts.listed:
        by_name = {run.name: run for run in RUNS}
        unknown = sorted(set(opts.listed or []) - set(by_name))
        if unknown:
            parser.error(f"not shipped runs: {', '.join(unknown)}")
        for run in RUNS if opts.all else [by_name[name] for name in opts.listed]:
            print(f"recording {run.name}", file=sys.stderr)
            record_run(run, opts.out, command_of(run))
        return
    if not opts.run or not opts.schedule:
        parser.error("give --all, --listed, or --run and --schedule")
    run = Run(
        opts.run, opts.schedule, opts.procs, opts.microbatches, virtual=opts.virtual,
        heavy_stage=opts.heavy_stage, dp=opts.dp, eval=opts.eval, recompute=opts.recompute,
        layers=opts.layers, hidden=opts.hidden, microbatch_rows=opts.microbatch_rows,
        placement=tuple(int(r) for r in opts.placement.split(",")) if opts.placement else None,
        profiling=Profiling(opts.record_shapes, opts.profile_memory, opts.with_stack,
                            opts.profiler_window, opts.export,
                            recipe=opts.recipe if opts.export == "recipe" else None,
                            steps=opts.steps if opts.export == "recipe" else None),
    )
    record_run(run, opts.out, "python3 record.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
