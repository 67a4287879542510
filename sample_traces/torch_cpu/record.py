#!/usr/bin/env python3
"""Records real pipeline-parallel PyTorch profiler (Kineto) traces on the CPU.

Each run launches P processes (gloo backend, 127.0.0.1) that train a small
stack of Linear+ReLU layers split into pipeline stages with
torch.distributed.pipelining, profile a few training steps with
torch.profiler (CPU activity only, no shapes), and write one Chrome trace per
rank as <out>/<run>/rank<r>.json.gz plus <out>/<run>/truth.json.

PyTorch is only the tool that makes these files; bubblescope never uses it.

Usage (regenerate every run shipped next to this file):
    python3 record.py --all --out .
One run:
    python3 record.py --run NAME --schedule 1f1b --procs 4 --microbatches 8 \
        [--virtual 2] [--heavy-stage 2] [--dp 2] --out .

--dp D runs D data-parallel replicas of the pipeline (D x procs processes): rank
r is stage position r // D of pipeline r % D, so the pipelines interleave in
rank order ({0,2} and {1,3} for procs 2, D 2). Each pipeline sends on its own
process group; after each step the replicas of a stage all-reduce their
gradients on theirs.
"""

import argparse
import gzip
import json
import os
import shutil
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.pipelining import (
    PipelineStage,
    Schedule1F1B,
    ScheduleDualPipeV,
    ScheduleGPipe,
    ScheduleInterleaved1F1B,
    ScheduleInterleavedZeroBubble,
    ScheduleZBVZeroBubble,
)

# Model geometry. The hidden width is large enough that the matmuls, not the
# Python overhead, dominate a stage's compute, so a stage with twice the layers
# is measurably about twice as slow.
HIDDEN = 512
LAYERS_PER_STAGE = 2
HEAVY_FACTOR = 2
# The heavy run is re-recorded (up to HEAVY_ATTEMPTS times) until the heavy
# stage's rank measures at least HEAVY_MARGIN times the busiest other rank:
# on a shared 2-core machine other processes can inflate any rank's op times.
HEAVY_MARGIN = 1.4
HEAVY_ATTEMPTS = 5
MICROBATCH_ROWS = 32
SEED = 1234

# torch.profiler schedule: step 0 skipped (wait), step 1 warmup, steps 2-3
# recorded (ProfilerStep#2 and #3); the prof.step() that ends step 3 closes
# the active window and exports the trace.
PROFILER_WAIT = 1
PROFILER_WARMUP = 1
PROFILER_ACTIVE = 2
TRAINING_STEPS = PROFILER_WAIT + PROFILER_WARMUP + PROFILER_ACTIVE

FAMILY_OF_SCHEDULE = {
    "gpipe": "gpipe",
    "1f1b": "1f1b",
    "interleaved": "interleaved",
    "zb": "zb",
    "zbv": "zb",
    "dualpipev": "zb",
}

TORCH_SCHEDULE_CLASS = {
    "gpipe": "ScheduleGPipe",
    "1f1b": "Schedule1F1B",
    "interleaved": "ScheduleInterleaved1F1B",
    "zb": "ScheduleInterleavedZeroBubble",
    "zbv": "ScheduleZBVZeroBubble",
    "dualpipev": "ScheduleDualPipeV",
}

# The runs shipped in this directory: (name, schedule, procs, microbatches,
# virtual stages per rank, heavy stage index or None).
STANDARD_RUNS = [
    ("gpipe_p2_m4", "gpipe", 2, 4, 1, None),
    ("1f1b_p4_m8", "1f1b", 4, 8, 1, None),
    ("interleaved_p2_v2_m4", "interleaved", 2, 4, 2, None),
    ("zb_p2_v2_m4", "zb", 2, 4, 2, None),
    ("zbv_p2_v2_m4", "zbv", 2, 4, 2, None),
    ("1f1b_p4_m8_heavy2", "1f1b", 4, 8, 1, 2),
    ("dualpipev_p2_v2_m8", "dualpipev", 2, 8, 2, None),
]
# DP x PP runs: (name, schedule, procs per pipeline, microbatches, virtual, replicas).
DP_RUNS = [
    ("dp2_1f1b_p2_m4", "1f1b", 2, 4, 1, 2),
]
# Activation-checkpointed runs: (name, schedule, procs, microbatches, recompute).
RECOMPUTE_RUNS = [
    ("1f1b_p2_m4_recompute", "1f1b", 2, 4, "reentrant"),
    ("1f1b_p2_m4_recompute_nr", "1f1b", 2, 4, "non-reentrant"),
]
# Inference runs (schedule.eval): (name, schedule, procs, microbatches).
EVAL_RUNS = [
    ("gpipe_eval_p2_m4", "gpipe", 2, 4),
]


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stage_layer_counts(num_stages, heavy_stage):
    counts = [LAYERS_PER_STAGE] * num_stages
    if heavy_stage is not None:
        counts[heavy_stage] = LAYERS_PER_STAGE * HEAVY_FACTOR
    return counts


def build_stage_module(stage_index, layer_counts):
    """Builds stage `stage_index` deterministically (same weights on every run)."""
    generator = torch.Generator().manual_seed(SEED + stage_index)
    layers = []
    for _ in range(layer_counts[stage_index]):
        linear = torch.nn.Linear(HIDDEN, HIDDEN)
        with torch.no_grad():
            linear.weight.copy_(torch.randn(HIDDEN, HIDDEN, generator=generator) * HIDDEN**-0.5)
            linear.bias.zero_()
        layers += [linear, torch.nn.ReLU()]
    return torch.nn.Sequential(*layers)


class CheckpointFunction(torch.autograd.Function):
    """Reentrant activation checkpointing as Megatron-LM's tensor_parallel.checkpoint and
    DeepSpeed's checkpointing run it: the forward keeps only its input; the backward runs the
    forward again under grad mode and then an inner torch.autograd.backward through it.
    (torch.utils.checkpoint's reentrant mode refuses the `inputs=` backward that
    torch.distributed.pipelining uses; this Function, like Megatron's, does not check.)"""

    @staticmethod
    def forward(ctx, run, x):
        ctx.run = run
        ctx.save_for_backward(x)
        with torch.no_grad():
            return run(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        x = x.detach().requires_grad_()
        with torch.enable_grad():
            out = ctx.run(x)
        torch.autograd.backward(out, grad_output)
        return None, x.grad


class Checkpointed(torch.nn.Module):
    """A stage whose activations are recomputed in the backward (activation checkpointing):
    reentrant as Megatron-LM's and DeepSpeed's checkpointing run it, or torch's non-reentrant."""

    def __init__(self, inner, reentrant):
        super().__init__()
        self.inner = inner
        self.reentrant = reentrant

    def forward(self, x):
        if self.reentrant:
            if not x.requires_grad:
                # The Function's output needs grad only through its input (the parameters are
                # not its inputs), so the first stage's input is made to require it.
                x = x.detach().requires_grad_()
            return CheckpointFunction.apply(self.inner, x)
        return torch.utils.checkpoint.checkpoint(self.inner, x, use_reentrant=False)


def stage_to_rank(stage_index, procs, schedule):
    if schedule in ("zbv", "dualpipev"):
        # V placement (ScheduleZBVZeroBubble): stages 0..P-1 go down the ranks,
        # stages P..2P-1 come back up, so rank 0 holds the first and last stage.
        return stage_index if stage_index < procs else 2 * procs - 1 - stage_index
    # Loop (round-robin) placement, which is what GPipe, 1F1B, Interleaved1F1B
    # and InterleavedZeroBubble use: stage s lives on rank s % P.
    return stage_index % procs


def make_schedule(kind, stages, microbatches, loss_fn):
    if kind == "gpipe":
        return ScheduleGPipe(stages[0], microbatches, loss_fn=loss_fn)
    if kind == "1f1b":
        return Schedule1F1B(stages[0], microbatches, loss_fn=loss_fn)
    if kind == "interleaved":
        return ScheduleInterleaved1F1B(stages, microbatches, loss_fn=loss_fn)
    if kind == "zb":
        return ScheduleInterleavedZeroBubble(stages, microbatches, loss_fn=loss_fn)
    if kind == "zbv":
        return ScheduleZBVZeroBubble(stages, microbatches, loss_fn=loss_fn)
    if kind == "dualpipev":
        return ScheduleDualPipeV(stages, microbatches, loss_fn=loss_fn)
    raise ValueError(f"unknown schedule {kind}")


def worker(rank, cfg, port, trace_dir):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    torch.manual_seed(SEED)
    procs = cfg["procs"]
    dp = cfg["dp"]
    dist.init_process_group("gloo", rank=rank, world_size=procs * dp)
    # Every process creates every group, in the same order, as torch requires.
    pp_groups = [dist.new_group([d + dp * s for s in range(procs)]) for d in range(dp)]
    dp_groups = [dist.new_group([s * dp + d for d in range(dp)]) for s in range(procs)]
    replica, position = rank % dp, rank // dp
    pp_group = pp_groups[replica] if dp > 1 else None
    dp_group = dp_groups[position] if dp > 1 else None

    num_stages = procs * cfg["virtual"]
    layer_counts = stage_layer_counts(num_stages, cfg["heavy_stage"])
    my_stage_indices = [s for s in range(num_stages) if stage_to_rank(s, procs, cfg["schedule"]) == position]
    device = torch.device("cpu")
    modules = [build_stage_module(s, layer_counts) for s in my_stage_indices]
    if cfg["recompute"] != "none":
        modules = [Checkpointed(m, cfg["recompute"] == "reentrant") for m in modules]
    stages = [
        PipelineStage(module, s, num_stages, device, group=pp_group)
        for module, s in zip(modules, my_stage_indices)
    ]
    params = [p for m in modules for p in m.parameters()]
    optimizer = torch.optim.SGD(params, lr=1e-3)
    schedule = make_schedule(cfg["schedule"], stages, cfg["microbatches"], torch.nn.functional.mse_loss)

    data_gen = torch.Generator().manual_seed(SEED)
    batch_rows = MICROBATCH_ROWS * cfg["microbatches"]
    inputs = [torch.randn(batch_rows, HIDDEN, generator=data_gen) for _ in range(TRAINING_STEPS)]
    targets = [torch.randn(batch_rows, HIDDEN, generator=data_gen) for _ in range(TRAINING_STEPS)]

    trace_path = os.path.join(trace_dir, f"rank{rank}.json")

    def export(prof):
        prof.export_chrome_trace(trace_path)

    has_first = 0 in my_stage_indices
    has_last = (num_stages - 1) in my_stage_indices
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        schedule=torch.profiler.schedule(
            wait=PROFILER_WAIT, warmup=PROFILER_WARMUP, active=PROFILER_ACTIVE, repeat=1
        ),
        on_trace_ready=export,
        record_shapes=False,
        profile_memory=False,
        with_stack=False,
    ) as prof:
        for step in range(TRAINING_STEPS):
            optimizer.zero_grad()
            args = (inputs[step],) if has_first else ()
            kwargs = {"target": targets[step], "losses": []} if has_last else {}
            if cfg["eval"]:
                # Forward only: the schedule still walks its backward actions, skipped.
                schedule.eval(*args, **kwargs)
                prof.step()
                continue
            schedule.step(*args, **kwargs)
            if dp_group is not None:
                for param in params:
                    if param.grad is not None:
                        dist.all_reduce(param.grad, group=dp_group)
            optimizer.step()
            prof.step()
    dist.barrier()
    dist.destroy_process_group()


def gzip_file(path):
    # No file name and a zero mtime in the gzip header, so the .gz bytes depend
    # only on the JSON.
    with open(path, "rb") as src, open(path + ".gz", "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as dst:
            shutil.copyfileobj(src, dst)
    os.remove(path)


def measure_rank(trace_path):
    """Busy time of one rank, measured from its trace.

    Compute = summed duration of outermost cpu_op events that are not c10d::
    communication ops, inside ProfilerStep# ranges. Returns (compute_ms,
    [ProfilerStep durations in ms]).
    """
    with gzip.open(trace_path, "rt") as f:
        events = json.load(f)["traceEvents"]
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
        inside_step = any(s["ts"] <= op["ts"] <= s["ts"] + s["dur"] for s in steps)
        if inside_step and not op["name"].startswith("c10d::"):
            compute_us += op["dur"]
    return round(compute_us / 1000, 3), [round(s["dur"] / 1000, 3) for s in steps]


def heavy_stage_is_slowest(compute_ms, heavy_rank):
    others = [c for r, c in enumerate(compute_ms) if r != heavy_rank]
    return compute_ms[heavy_rank] >= HEAVY_MARGIN * max(others)


def record_run(name, schedule, procs, microbatches, virtual, heavy_stage, out_dir, command,
               dp=1, eval_only=False, recompute="none"):
    cfg = dict(
        recompute=recompute,
        schedule=schedule,
        procs=procs,
        microbatches=microbatches,
        virtual=virtual,
        heavy_stage=heavy_stage,
        dp=dp,
        eval=eval_only,
    )
    world = procs * dp
    if schedule in ("gpipe", "1f1b") and virtual != 1:
        raise ValueError(f"{schedule} supports one stage per rank")
    if schedule in ("interleaved", "zb") and virtual < 2:
        raise ValueError(f"{schedule} needs --virtual >= 2")
    if schedule in ("zbv", "dualpipev") and virtual != 2:
        raise ValueError(f"{schedule} needs --virtual 2")
    run_dir = os.path.join(out_dir, name)
    os.makedirs(run_dir, exist_ok=True)
    num_stages = procs * virtual
    for attempt in range(1, HEAVY_ATTEMPTS + 1):
        with tempfile.TemporaryDirectory() as scratch:
            mp.spawn(worker, args=(cfg, free_port(), scratch), nprocs=world, join=True)
            for rank in range(world):
                src = os.path.join(scratch, f"rank{rank}.json")
                dst = os.path.join(run_dir, f"rank{rank}.json")
                shutil.move(src, dst)
                gzip_file(dst)
        measured = [measure_rank(os.path.join(run_dir, f"rank{r}.json.gz")) for r in range(world)]
        compute_ms = [m[0] for m in measured]
        if heavy_stage is None:
            break
        heavy_rank = stage_to_rank(heavy_stage, procs, schedule)
        if heavy_stage_is_slowest(compute_ms, heavy_rank):
            break
        print(f"{name}: attempt {attempt}: heavy rank {heavy_rank} not clearly slowest "
              f"(compute ms {compute_ms}), recording again", file=sys.stderr)
    else:
        raise RuntimeError(f"{name}: heavy stage never measured as the slowest: {compute_ms}")
    truth = {
        "schedule": "fwd-only" if eval_only else FAMILY_OF_SCHEDULE[schedule],
        "torch_schedule_class": TORCH_SCHEDULE_CLASS[schedule],
        "p": procs,
        "m": microbatches,
        "v": virtual,
        "stage_order": [stage_to_rank(s, procs, schedule) for s in range(num_stages)],
        "dp": dp,
        "eval": eval_only,
        # Global ranks of each pipeline, stage position order (stage_order indexes into these).
        "pipelines": [[d + dp * s for s in range(procs)] for d in range(dp)],
        "layers_per_stage": stage_layer_counts(num_stages, heavy_stage),
        "recompute": recompute,
        "slowest_stage": heavy_stage,
        "training_steps": TRAINING_STEPS,
        "profiled_steps": list(range(PROFILER_WAIT + PROFILER_WARMUP, TRAINING_STEPS)),
        "hidden": HIDDEN,
        "microbatch_rows": MICROBATCH_ROWS,
        "measured_compute_ms_per_rank": compute_ms,
        "measured_profiler_step_ms_per_rank": [m[1] for m in measured],
        "recording_attempts": attempt,
        "torch_version": torch.__version__,
        "cpu_cores": os.cpu_count(),
        "command": command,
    }
    with open(os.path.join(run_dir, "truth.json"), "w") as f:
        json.dump(truth, f, indent=2)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="record every standard run")
    parser.add_argument("--run", help="name of a single run (directory under --out)")
    parser.add_argument("--schedule", choices=sorted(FAMILY_OF_SCHEDULE))
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--virtual", type=int, default=1, help="stages per rank")
    parser.add_argument("--heavy-stage", type=int, default=None)
    parser.add_argument("--dp", type=int, default=1, help="data-parallel replicas of the pipeline")
    parser.add_argument("--eval", action="store_true", help="forward-only passes (schedule.eval)")
    parser.add_argument("--recompute", choices=["none", "reentrant", "non-reentrant"],
                        default="none", help="activation checkpointing of every stage")
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    opts = parser.parse_args()

    if opts.all:
        for name, schedule, procs, m, v, heavy in STANDARD_RUNS:
            command = (
                f"python3 record.py --run {name} --schedule {schedule} --procs {procs} "
                f"--microbatches {m} --virtual {v}"
                + (f" --heavy-stage {heavy}" if heavy is not None else "")
            )
            print(f"recording {name}", file=sys.stderr)
            record_run(name, schedule, procs, m, v, heavy, opts.out, command)
        for name, schedule, procs, m, v, dp in DP_RUNS:
            command = (f"python3 record.py --run {name} --schedule {schedule} --procs {procs} "
                       f"--microbatches {m} --virtual {v} --dp {dp}")
            print(f"recording {name}", file=sys.stderr)
            record_run(name, schedule, procs, m, v, None, opts.out, command, dp)
        for name, schedule, procs, m, recompute in RECOMPUTE_RUNS:
            command = (f"python3 record.py --run {name} --schedule {schedule} --procs {procs} "
                       f"--microbatches {m} --recompute {recompute}")
            print(f"recording {name}", file=sys.stderr)
            record_run(name, schedule, procs, m, 1, None, opts.out, command, recompute=recompute)
        for name, schedule, procs, m in EVAL_RUNS:
            command = (f"python3 record.py --run {name} --schedule {schedule} --procs {procs} "
                       f"--microbatches {m} --eval")
            print(f"recording {name}", file=sys.stderr)
            record_run(name, schedule, procs, m, 1, None, opts.out, command, eval_only=True)
        return
    if not opts.run or not opts.schedule:
        parser.error("give --all, or --run and --schedule")
    command = "python3 record.py " + " ".join(sys.argv[1:])
    record_run(opts.run, opts.schedule, opts.procs, opts.microbatches, opts.virtual,
               opts.heavy_stage, opts.out, command, opts.dp, opts.eval, opts.recompute)


if __name__ == "__main__":
    main()
