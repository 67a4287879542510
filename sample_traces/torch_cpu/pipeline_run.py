"""One recorded run of record.py: its description (Run, Profiling) and what each of its
processes runs (worker): the stages of a small Linear+ReLU model on torch.distributed.pipelining
over gloo, trained for a few steps under the profiler set-up the run names.

PyTorch is only the tool that makes these files; bubblescope never uses it.
"""

import dataclasses
import os

import torch
import torch.distributed as dist
from torch.distributed.pipelining import (
    PipelineStage,
    Schedule1F1B,
    ScheduleDualPipeV,
    ScheduleGPipe,
    ScheduleInterleaved1F1B,
    ScheduleInterleavedZeroBubble,
    ScheduleLoopedBFS,
    ScheduleZBVZeroBubble,
)
from torch.distributed.pipelining.schedules import _PipelineScheduleRuntime

# Model geometry. The hidden width is large enough that the matmuls, not the
# Python overhead, dominate a stage's compute, so a stage with twice the layers
# is measurably about twice as slow.
HIDDEN = 512
LAYERS_PER_STAGE = 2
HEAVY_FACTOR = 2
MICROBATCH_ROWS = 32
SEED = 1234

# torch.profiler windows, each (skip_first, wait, warmup, active); the steps
# recorded are the last `active` ones of the run.
#  steps:      step 0 skipped (wait), step 1 warmup, steps 2-3 recorded
#              (ProfilerStep#2 and #3); the prof.step() that ends step 3 closes
#              the active window and exports the trace.
#  skip-first: steps 0-2 skipped by skip_first, step 3 warmup, steps 4-5
#              recorded (ProfilerStep#4 and #5), repeat=1.
#  one-step:   as steps, with step 2 alone recorded (ProfilerStep#2).
#  manual:     no profiler schedule and no prof.step(): prof.start() before
#              step 2 and prof.stop() after step 3, so the trace holds two
#              steps and no ProfilerStep range at all.
PROFILER_WINDOWS = {
    "steps": (0, 1, 1, 2),
    "skip-first": (3, 0, 1, 2),
    "one-step": (0, 1, 1, 1),
    "manual": (0, 1, 1, 2),
}

# How the trace leaves the profiler:
#  chrome:      prof.export_chrome_trace("rank<r>.json") (Kineto's C++ writer),
#               gzipped here with a fixed header;
#  python:      prof.export_chrome_trace(..., use_python_export=True), torch's
#               Python writer, gzipped here alike;
#  tensorboard: torch.profiler.tensorboard_trace_handler(dir, use_gzip=True) with
#               its default worker name: "<host>_<pid>.<time_ns>.pt.trace.json.gz",
#               gzipped by torch, kept byte for byte.
#  recipe:      docs/getting-traces.md's own block (recipe.py), run as written: it
#               profiles and writes the traces itself; Profiling.recipe names the
#               block and Profiling.steps the loop's length (num_steps).
EXPORTS = ("chrome", "python", "tensorboard", "recipe")

@dataclasses.dataclass(frozen=True)
class Profiling:
    record_shapes: bool = False
    profile_memory: bool = False
    with_stack: bool = False
    window: str = "steps"
    export: str = "chrome"
    # Profiler cycles: schedule(repeat=cycles), each cycle's trace handed to on_trace_ready.
    # More than one only with the tensorboard export, whose file names differ per cycle
    # (record_cycles.py; docs/getting-traces.md).
    cycles: int = 1
    # export "recipe" only: the page's block (recipe.RECIPE_WINDOWS) and num_steps.
    recipe: str | None = None
    steps: int | None = None


@dataclasses.dataclass(frozen=True)
class Run:
    name: str
    schedule: str
    procs: int
    microbatches: int
    virtual: int = 1
    heavy_stage: int | None = None
    dp: int = 1
    eval: bool = False
    recompute: str = "none"
    layers: int = LAYERS_PER_STAGE
    hidden: int = HIDDEN
    microbatch_rows: int = MICROBATCH_ROWS
    placement: tuple[int, ...] | None = None  # stage -> rank, schedule "csv" only
    profiling: Profiling = Profiling()


def profiler_window(run):
    """(skip_first, wait, warmup, active, repeat) of the run's profiler schedule."""
    if run.profiling.export == "recipe":
        from recipe import RECIPE_WINDOWS

        return RECIPE_WINDOWS[run.profiling.recipe]
    return (*PROFILER_WINDOWS[run.profiling.window], run.profiling.cycles)


def training_steps(run):
    if run.profiling.steps is not None:
        return run.profiling.steps
    skip_first, wait, warmup, active, repeat = profiler_window(run)
    return skip_first + (wait + warmup + active) * repeat


def profiled_steps(run):
    """The ProfilerStep numbers the traces hold, as torch's schedule numbers them: every
    active step the loop reaches, and, where the loop ends inside an active window, the step
    the loop's last prof.step() opens, which holds nothing (torch closes it on exit)."""
    skip_first, wait, warmup, active, repeat = profiler_window(run)
    total = training_steps(run)
    cycle = wait + warmup + active
    steps = []
    for step in range(skip_first, total + 1):
        k = (step - skip_first) // cycle
        if repeat and k >= repeat:
            break
        if (step - skip_first) % cycle >= wait + warmup:
            steps.append(step)
    return steps


def stage_layer_counts(run):
    counts = [run.layers] * (run.procs * run.virtual)
    if run.heavy_stage is not None:
        counts[run.heavy_stage] = run.layers * HEAVY_FACTOR
    return counts


def stage_to_rank(stage_index, run):
    """The pipeline position (rank within the pipeline) that runs `stage_index`."""
    if run.placement is not None:
        return run.placement[stage_index]
    if run.schedule in ("zbv", "dualpipev"):
        # V placement (ScheduleZBVZeroBubble): stages 0..P-1 go down the ranks,
        # stages P..2P-1 come back up, so rank 0 holds the first and last stage.
        return stage_index if stage_index < run.procs else 2 * run.procs - 1 - stage_index
    # Loop (round-robin) placement, which is what GPipe, 1F1B, Interleaved1F1B,
    # InterleavedZeroBubble and LoopedBFS use: stage s lives on rank s % P.
    return stage_index % run.procs


def build_stage_module(stage_index, layer_counts, hidden):
    """Builds stage `stage_index` deterministically (same weights on every run)."""
    generator = torch.Generator().manual_seed(SEED + stage_index)
    layers = []
    for _ in range(layer_counts[stage_index]):
        linear = torch.nn.Linear(hidden, hidden)
        with torch.no_grad():
            linear.weight.copy_(torch.randn(hidden, hidden, generator=generator) * hidden**-0.5)
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


def compute_only_actions(run):
    """Per pipeline rank, its compute actions (torch's action strings) for schedule "csv"."""
    num_stages = run.procs * run.virtual
    m = run.microbatches
    rows = []
    for rank in range(run.procs):
        stages = [s for s in range(num_stages) if stage_to_rank(s, run) == rank]
        if run.virtual == 1:
            # 1F1B: as many warm-up forwards as stages after this one, then one
            # forward and one backward alternately, then the remaining backwards.
            (stage,) = stages
            warmup = min(m, num_stages - 1 - stage)
            row = [f"{stage}F{mb}" for mb in range(warmup)]
            for mb in range(m - warmup):
                row += [f"{stage}F{warmup + mb}", f"{stage}B{mb}"]
            row += [f"{stage}B{mb}" for mb in range(m - warmup, m)]
        else:
            row = [f"{s}F{mb}" for s in stages for mb in range(m)]
            row += [f"{s}B{mb}" for s in reversed(stages) for mb in reversed(range(m))]
        rows.append(row)
    return rows


def make_schedule(run, stages, loss_fn, scratch):
    m = run.microbatches
    if run.schedule == "gpipe":
        return ScheduleGPipe(stages[0], m, loss_fn=loss_fn)
    if run.schedule == "1f1b":
        return Schedule1F1B(stages[0], m, loss_fn=loss_fn)
    if run.schedule == "csv":
        schedule = _PipelineScheduleRuntime(stages, m, loss_fn=loss_fn)
        path = os.path.join(scratch, f"schedule_rank{dist.get_rank()}.csv")
        with open(path, "w") as f:
            f.writelines(",".join(row) + "\n" for row in compute_only_actions(run))
        schedule._load_csv(path)
        return schedule
    multi = {
        "interleaved": ScheduleInterleaved1F1B,
        "zb": ScheduleInterleavedZeroBubble,
        "zbv": ScheduleZBVZeroBubble,
        "dualpipev": ScheduleDualPipeV,
        "loopedbfs": ScheduleLoopedBFS,
    }
    if run.schedule not in multi:
        raise ValueError(f"unknown schedule {run.schedule}")
    return multi[run.schedule](stages, m, loss_fn=loss_fn)


def profiled(run, rank, trace_dir, train_step):
    """Runs every training step of `run` under the profiler set-up it names."""
    prof_cfg = run.profiling
    activities = dict(
        activities=[torch.profiler.ProfilerActivity.CPU],
        record_shapes=prof_cfg.record_shapes,
        profile_memory=prof_cfg.profile_memory,
        with_stack=prof_cfg.with_stack,
    )
    trace_path = os.path.join(trace_dir, f"rank{rank}.json")

    def export(prof):
        prof.export_chrome_trace(trace_path, use_python_export=prof_cfg.export == "python")

    steps = training_steps(run)
    if prof_cfg.export == "recipe":
        from recipe import run_doc_block

        counter = iter(range(steps))
        run_doc_block(prof_cfg.recipe, lambda: train_step(next(counter)), steps, trace_dir)
        return
    if prof_cfg.window == "manual":
        if prof_cfg.export == "tensorboard":
            raise ValueError("the manual window exports with export_chrome_trace")
        prof = torch.profiler.profile(**activities)
        first = profiled_steps(run)[0]
        for step in range(steps):
            if step == first:
                prof.start()
            train_step(step)
        prof.stop()
        export(prof)
        return
    skip_first, wait, warmup, active = PROFILER_WINDOWS[prof_cfg.window]
    if prof_cfg.export == "tensorboard":
        on_trace_ready = torch.profiler.tensorboard_trace_handler(trace_dir, use_gzip=True)
    else:
        on_trace_ready = export
    with torch.profiler.profile(
        schedule=torch.profiler.schedule(
            skip_first=skip_first, wait=wait, warmup=warmup, active=active,
            repeat=prof_cfg.cycles,
        ),
        on_trace_ready=on_trace_ready,
        **activities,
    ) as prof:
        for step in range(steps):
            train_step(step)
            prof.step()


def worker(rank, run, port, trace_dir):
    # Under torchrun (port None) the launcher has set the rendezvous variables.
    if port is not None:
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    torch.manual_seed(SEED)
    procs, dp = run.procs, run.dp
    dist.init_process_group("gloo", rank=rank, world_size=procs * dp)
    # Every process creates every group, in the same order, as torch requires.
    pp_groups = [dist.new_group([d + dp * s for s in range(procs)]) for d in range(dp)]
    dp_groups = [dist.new_group([s * dp + d for d in range(dp)]) for s in range(procs)]
    replica, position = rank % dp, rank // dp
    pp_group = pp_groups[replica] if dp > 1 else None
    dp_group = dp_groups[position] if dp > 1 else None

    num_stages = procs * run.virtual
    layer_counts = stage_layer_counts(run)
    my_stage_indices = [s for s in range(num_stages) if stage_to_rank(s, run) == position]
    device = torch.device("cpu")
    modules = [build_stage_module(s, layer_counts, run.hidden) for s in my_stage_indices]
    if run.recompute != "none":
        modules = [Checkpointed(m, run.recompute == "reentrant") for m in modules]
    stages = [
        PipelineStage(module, s, num_stages, device, group=pp_group)
        for module, s in zip(modules, my_stage_indices)
    ]
    params = [p for m in modules for p in m.parameters()]
    optimizer = torch.optim.SGD(params, lr=1e-3)
    schedule = make_schedule(run, stages, torch.nn.functional.mse_loss, trace_dir)

    steps = training_steps(run)
    data_gen = torch.Generator().manual_seed(SEED)
    batch_rows = run.microbatch_rows * run.microbatches
    inputs = [torch.randn(batch_rows, run.hidden, generator=data_gen) for _ in range(steps)]
    targets = [torch.randn(batch_rows, run.hidden, generator=data_gen) for _ in range(steps)]
    has_first = 0 in my_stage_indices
    has_last = (num_stages - 1) in my_stage_indices

    def train_step(step):
        optimizer.zero_grad()
        args = (inputs[step],) if has_first else ()
        kwargs = {"target": targets[step], "losses": []} if has_last else {}
        if run.eval:
            # Forward only: the schedule still walks its backward actions, skipped.
            schedule.eval(*args, **kwargs)
            return
        schedule.step(*args, **kwargs)
        if dp_group is not None:
            for param in params:
                if param.grad is not None:
                    dist.all_reduce(param.grad, group=dp_group)
        optimizer.step()

    profiled(run, rank, trace_dir, train_step)
    dist.barrier()
    dist.destroy_process_group()
