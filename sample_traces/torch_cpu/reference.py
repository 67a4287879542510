#!/usr/bin/env python3
"""Works out each recorded run's reference figures from its trace files alone, and stores them
in the run's truth.json as "reference".

Independent of bubblescope: plain Python over the JSON, using only the formulas that
docs/bubble.md publishes (no code or definition of the analyzer beyond them). Times are exact
integer nanoseconds (every ts/dur read as a Decimal). All ranks of a run were recorded on one
machine (one host_name), so their clocks are one clock and no offset is applied.

What it derives, per pipeline (the ranks truth.json lists in "pipelines"):
- the stage order, p, m, v and schedule family from what torch.distributed.pipelining wrote:
  its `PP:<stage><F|B|I|W><mb>` action ranges (also inside `PP:(...)OVERLAP_F_B`), GPipe's
  `Forward <mb>` / `Backward <mb>` ranges, or, for Schedule1F1B (which writes no range), the
  c10d::send / c10d::recv_ ops; each is checked against the recorder's configuration in
  truth.json and the script fails on any disagreement;
- the iterations: a ProfilerStep in which no rank of the pipeline runs a compute op is none (torch
  closes a profiler window that the loop left early with such an empty step); of several
  profiler cycles in one folder (one file per rank per cycle), the newest complete one, as
  docs/getting-traces.md states the rule: every rank has a file of it, each holding every step,
  its steps span as many as the longest cycle's, and its last step is not empty;
- per docs/bubble.md: each rank's model thread (the thread whose top-level ops cover the most
  time), its top-level cpu_ops (c10d:: communication ops are comm, every other one compute),
  the iterations (ProfilerStep#N ranges; a run recorded without them: the starts of record.py's
  `Optimizer.zero_grad` ranges, which open every training step), each complete iteration's
  window (earliest start to latest end of the pipeline's top-level ops in it), each rank's
  compute (union of its top-level compute ops in it) and idle (window - compute), and the
  bubble fraction sum(idle) / sum(p x window) over the complete iterations;
- each rank's comm_wait as issue 24 asks for it on gloo: the part of its stall (idle time
  between its first and last compute of an iteration) where one of its communication intervals
  runs, the `gloo:send` / `gloo:recv` / `gloo:all_reduce` ranges of its model thread counted as
  communication beside its c10d ops (docs/bubble.md today counts the c10d ops only).

Usage: python3 reference.py [RUN_DIR ...]   (default: every run directory next to this file)
"""

import bisect
import decimal
import glob
import gzip
import json
import os
import re
import sys

# The other independent reference script (the third-party traces' figures) has the union of
# intervals this one needs.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                                "real_traces"))
from independent_figures import union_length  # noqa: E402

PP_ACTION = re.compile(r"^PP:(\d+)([FBIW])(\d+)$")
PP_OVERLAP = re.compile(r"^PP:\((.*)\)OVERLAP_F_B$")
SUB_ACTION = re.compile(r"^(\d+)([FBIW])(\d+)$")
GPIPE_RANGE = re.compile(r"^(Forward|Backward) (\d+)$")
PROFILER_STEP = re.compile(r"^ProfilerStep#(\d+)$")
STEP_START_RANGE = "Optimizer.zero_grad#SGD.zero_grad"
COMM_OPS = {"c10d::send", "c10d::recv_", "c10d::allreduce_"}
GLOO_RANGE = "gloo:"


def ns(value):
    return int(decimal.Decimal(value) * 1000)


class Op:
    __slots__ = ("name", "start", "end")

    def __init__(self, event):
        self.name = event["name"]
        self.start = ns(event["ts"])
        self.end = self.start + ns(event["dur"])


def top_level(ops):
    """The ops not nested inside another op of the same thread, in start order."""
    result, outer_end = [], None
    for op in sorted(ops, key=lambda o: (o.start, -o.end)):
        if outer_end is not None and op.start < outer_end and op.end <= outer_end:
            continue
        result.append(op)
        outer_end = op.end if outer_end is None else max(outer_end, op.end)
    return result


class RankTrace:
    """One rank's file: its model thread's top-level ops and ranges, and its steps."""

    def __init__(self, path):
        with gzip.open(path, "rt") as f:
            doc = json.load(f, parse_float=str, parse_int=str)
        self.path = path
        self.rank = int(doc["distributedInfo"]["rank"])
        self.host = doc.get("host_name")
        ops_by_thread, ranges_by_thread = {}, {}
        for e in doc["traceEvents"]:
            if e.get("ph") != "X":
                continue
            thread = (str(e.get("pid")), str(e.get("tid")))
            if e.get("cat") == "cpu_op":
                ops_by_thread.setdefault(thread, []).append(Op(e))
            elif e.get("cat") == "user_annotation":
                ranges_by_thread.setdefault(thread, []).append(Op(e))
        tops = {t: top_level(ops) for t, ops in ops_by_thread.items()}
        self.all_ops_by_thread = ops_by_thread
        # Most covered time; ties: the thread whose first op starts earlier.
        self.thread = max(tops, key=lambda t: (union_length([(o.start, o.end) for o in tops[t]]),
                                              -tops[t][0].start))
        self.ops = tops[self.thread]
        # Every aten::linear of the model thread, nested ones included (a checkpointed stage
        # runs its layers inside an autograd Function's op).
        self.linear_starts = sorted(o.start for o in ops_by_thread[self.thread]
                                    if o.name == "aten::linear")
        unknown = {o.name for o in self.ops if o.name.startswith("c10d::")} - COMM_OPS
        if unknown:
            raise ValueError(f"{path}: c10d ops this script does not classify: {unknown}")
        self.ranges = sorted(ranges_by_thread.get(self.thread, []), key=lambda r: r.start)
        steps = {int(m.group(1)): r.start for r in self.ranges
                 if (m := PROFILER_STEP.match(r.name))}
        if steps:
            self.step_source = "profiler_steps"
        else:
            self.step_source = "zero_grad_ranges"
            starts = [r.start for r in self.ranges if r.name == STEP_START_RANGE]
            steps = dict(enumerate(starts))
        self.steps = steps  # iteration number -> start

    def iteration_of(self, start):
        """The step whose range owns time `start` (a step owns up to the next one's start)."""
        owner = None
        for number, step_start in sorted(self.steps.items(), key=lambda kv: kv[1]):
            if step_start <= start:
                owner = number
        return owner

    def ops_in(self, number):
        return [o for o in self.ops if self.iteration_of(o.start) == number]

    def ranges_in(self, number):
        return [r for r in self.ranges if self.iteration_of(r.start) == number]

    def holds_work(self, number):
        """Whether the rank runs a compute op in step `number`."""
        return any(not is_comm(o) for o in self.ops_in(number))


def is_comm(op):
    return op.name in COMM_OPS


def stage_actions(ranges):
    """(stage, kind, microbatch) of every PP compute action range, in start order."""
    actions = []
    for r in ranges:
        if m := PP_ACTION.match(r.name):
            actions.append((int(m.group(1)), m.group(2), int(m.group(3)), r))
        elif m := PP_OVERLAP.match(r.name):
            for sub in m.group(1).split(";"):
                s = SUB_ACTION.match(sub.strip())
                actions.append((int(s.group(1)), s.group(2), int(s.group(3)), r))
    return actions


def covers_compute(rank, r):
    return any(r.start <= o.start and o.end <= r.end and not is_comm(o) for o in rank.ops)


def family_from_order(kinds_per_rank, v):
    """gpipe when every rank runs all its forwards before any backward, else 1f1b/interleaved."""
    for kinds in kinds_per_rank:
        backward_seen = False
        for kind in kinds:
            if kind != "F":
                backward_seen = True
            elif backward_seen:
                return "interleaved" if v > 1 else "1f1b"
    return "gpipe"


def shape(ranks, number):
    """p, m, v, family and stage order (rank position of each stage) of one pipeline."""
    p = len(ranks)
    per_rank = [stage_actions(r.ranges_in(number)) for r in ranks]
    if all(per_rank):
        owner = {}
        for position, actions in enumerate(per_rank):
            for stage, _, _, _ in actions:
                if owner.setdefault(stage, position) != position:
                    raise ValueError(f"stage {stage} on two ranks")
        stages = sorted(owner)
        if stages != list(range(len(stages))) or len(stages) % p:
            raise ValueError(f"stages {stages} on {p} ranks")
        v = len(stages) // p
        m = len({mb for actions in per_rank for s, k, mb, _ in actions if s == 0 and k == "F"})
        kinds = [k for actions in per_rank for _, k, _, _ in actions]
        if "I" in kinds or "W" in kinds:
            family = "zb"
        else:
            family = family_from_order([[k for _, k, _, _ in a] for a in per_rank], v)
        return dict(p=p, m=m, v=v, schedule=family,
                    stage_order=[owner[s] for s in stages], shape_source="PP action ranges")
    # One stage per rank from here: the chain's order is the order of the ranks' first
    # c10d::send (each stage sends its first activation after its predecessor's reached it; the
    # last stage sends only gradients, after its first forward, and nothing in a forward-only
    # run, so a rank without sends can only be the last).
    first_send = [min((o.start for o in r.ops_in(number) if o.name == "c10d::send"),
                      default=float("inf")) for r in ranks]
    if first_send.count(float("inf")) > 1:
        raise ValueError("several ranks send nothing: no chain")
    order = sorted(range(p), key=lambda i: first_send[i])
    stage_order = [0] * p
    for stage, position in enumerate(order):
        stage_order[stage] = position
    first, last = ranks[order[0]], ranks[order[-1]]
    gpipe = [(m.group(1), int(m.group(2)), r) for r in first.ranges_in(number)
             if (m := GPIPE_RANGE.match(r.name))]
    if gpipe:
        m = len({mb for kind, mb, _ in gpipe if kind == "Forward"})
        backwards = [r for r in ranks for rg in r.ranges_in(number)
                     if GPIPE_RANGE.match(rg.name) and rg.name.startswith("Backward")
                     and covers_compute(r, rg)]
        family = "gpipe" if backwards else "fwd-only"
        return dict(p=p, m=m, v=1, schedule=family, stage_order=stage_order,
                    shape_source="Forward/Backward ranges and c10d::send order")
    # Schedule1F1B: the first stage sends one activation per microbatch; the last stage
    # interleaves when it sends its first gradient before it has received every input.
    m = sum(1 for o in first.ops_in(number) if o.name == "c10d::send")
    last_ops = [o for o in last.ops_in(number) if is_comm(o)]
    recvs_before_first_send = 0
    for o in last_ops:
        if o.name == "c10d::send":
            break
        recvs_before_first_send += 1
    family = "gpipe" if recvs_before_first_send >= m else "1f1b"
    return dict(p=p, m=m, v=1, schedule=family, stage_order=stage_order,
                shape_source="c10d::send / c10d::recv_ order")


def fill_end(rank, rank_ops):
    """Where the rank's fill ends (docs/bubble.md): where its first transfer of the iteration is
    a receive, at the start of its first op of the schedule, a forward, which needs that input:
    every stage of these runs is Linear+ReLU layers, so the first of `rank_ops` (top-level, in
    start order) that holds or is an `aten::linear`; elsewhere at its first compute. None
    without compute."""
    compute = [o for o in rank_ops if not is_comm(o)]
    if not compute:
        return None
    transfers = [o for o in rank_ops if o.name in ("c10d::send", "c10d::recv_")]
    if transfers and transfers[0].name == "c10d::recv_":
        for op in compute:
            k = bisect.bisect_left(rank.linear_starts, op.start)
            if k < len(rank.linear_starts) and rank.linear_starts[k] <= op.end:
                return op.start
    return compute[0].start


def comm_wait(rank, number, compute):
    """The part of the rank's stall (between the end of its fill and its last compute of the iteration, no compute running) under one of its communication
    intervals: its top-level c10d ops and, as issue 24 defines a gloo wait, its `gloo:*`
    ranges, each in the iteration it starts in."""
    if not compute:
        return 0
    first, last = min(s for s, _ in compute), max(e for _, e in compute)
    first = max(first, fill_end(rank, rank.ops_in(number)))
    comm = [(o.start, o.end) for o in rank.ops_in(number) if is_comm(o)]
    comm += [(r.start, r.end) for r in rank.ranges_in(number) if r.name.startswith(GLOO_RANGE)]
    clipped = [(max(s, first), min(e, last)) for s, e in comm if s < last and e > first]
    return union_length(clipped + compute) - union_length(compute)


def fill(rank, rank_ops, window_start):
    """The rank's fill in one iteration as docs/bubble.md defines it: the idle time between the
    window's start and the end of its fill (fill_end); the ops before that (splitting the batch
    into microbatches, allocating receive buffers) are work."""
    end = fill_end(rank, rank_ops)
    if end is None:
        return 0
    before = [(max(o.start, window_start), min(o.end, end)) for o in rank_ops
              if not is_comm(o) and o.start < end]
    return end - window_start - union_length([(s, e) for s, e in before if e > s])


def bubble(ranks):
    """docs/bubble.md's bubble over the iterations every rank of the pipeline has."""
    complete = [n for n in sorted(set.intersection(*(set(r.steps) for r in ranks)))
                if all(r.holds_work(n) for r in ranks)]
    total_idle = total_capacity = 0
    compute_per_rank = [0] * len(ranks)
    comm_wait_per_rank = [0] * len(ranks)
    fill_per_rank = [0] * len(ranks)
    iterations = []
    for number in complete:
        ops = [r.ops_in(number) for r in ranks]
        everything = [o for rank_ops in ops for o in rank_ops]
        window_start = min(o.start for o in everything)
        window = max(o.end for o in everything) - window_start
        idle = []
        for i, rank_ops in enumerate(ops):
            intervals = [(o.start, o.end) for o in rank_ops if not is_comm(o)]
            compute = union_length(intervals)
            compute_per_rank[i] += compute
            comm_wait_per_rank[i] += comm_wait(ranks[i], number, intervals)
            fill_per_rank[i] += fill(ranks[i], rank_ops, window_start)
            idle.append(window - compute)
        total_idle += sum(idle)
        total_capacity += len(ranks) * window
        iterations.append(dict(number=number, window_start_ns=window_start, window_ns=window,
                               idle_ns_per_rank=idle,
                               bubble_fraction=round(sum(idle) / (len(ranks) * window), 6)))
    return dict(iterations=iterations, compute_ns_per_rank=compute_per_rank,
                comm_wait_ns_per_rank=comm_wait_per_rank, fill_ns_per_rank=fill_per_rank,
                bubble_fraction=round(total_idle / total_capacity, 6))


def check(name, reference, truth, index):
    """Fails when what the trace says disagrees with what the recorder configured."""
    want = dict(p=truth["p"], m=truth["m"], v=truth["v"], schedule=truth["schedule"],
                stage_order=truth["stage_order"])
    got = {k: reference[k] for k in want}
    if got != want:
        raise SystemExit(f"{name} pipeline {index}: the trace says {got}, the recorder {want}")


def newest_complete_cycle(files):
    """({rank: RankTrace}, the chosen cycle's number or None) of a run's files: one file per
    rank, or several profiler cycles of which the newest complete one is read."""
    by_rank = {}
    for trace in files:
        by_rank.setdefault(trace.rank, []).append(trace)
    if all(len(traces) == 1 for traces in by_rank.values()):
        return {rank: traces[0] for rank, traces in by_rank.items()}, None
    cycles = {}  # the cycle's steps -> {rank: trace}
    for trace in files:
        cycles.setdefault(tuple(sorted(trace.steps)), {})[trace.rank] = trace
    ordered = sorted(cycles, key=lambda steps: steps[0])
    longest = max(steps[-1] - steps[0] for steps in ordered)
    for number in range(len(ordered), 0, -1):
        steps = ordered[number - 1]
        members = cycles[steps]
        if (set(members) == set(by_rank) and steps[-1] - steps[0] == longest
                and all(t.holds_work(steps[-1]) for t in members.values())):
            return members, number
    raise SystemExit("no complete profiler cycle")


def reference_of(run_dir):
    run_dir = os.path.normpath(run_dir)
    with open(os.path.join(run_dir, "truth.json")) as f:
        truth = json.load(f)
    traces, cycle = newest_complete_cycle(
        [RankTrace(path) for path in sorted(glob.glob(os.path.join(run_dir, "*.json.gz")))])
    hosts = sorted({t.host for t in traces.values() if t.host is not None})
    pipelines = []
    # Runs recorded before record.py wrote "pipelines" are one pipeline of ranks 0..p-1.
    for index, ranks in enumerate(truth.get("pipelines", [list(range(truth["p"]))])):
        members = [traces[r] for r in ranks]
        first_complete = min(n for n in set.intersection(*(set(r.steps) for r in members))
                             if all(r.holds_work(n) for r in members))
        figures = shape(members, first_complete)
        check(os.path.basename(run_dir), figures, truth, index)
        figures.update(bubble(members))
        pipelines.append(dict(ranks=ranks, **figures))
    sources = {t.step_source for t in traces.values()}
    reference = dict(
        method="reference.py: from the trace files alone, docs/bubble.md formulas, "
               "exact ns, recorded clocks",
        host_names=hosts,
        clock_offsets_ns={str(r): 0 for r in sorted(traces)},
        iteration_source=sources.pop() if len(sources) == 1 else "mixed",
        pipelines=pipelines,
    )
    if cycle is not None:
        reference["profiler_cycle"] = cycle
    if len(pipelines) == 1:
        for key in ("p", "m", "v", "schedule", "stage_order", "bubble_fraction"):
            reference[key] = pipelines[0][key]
    truth["reference"] = reference
    with open(os.path.join(run_dir, "truth.json"), "w") as f:
        json.dump(truth, f, indent=2)
        f.write("\n")
    return reference


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    run_dirs = sys.argv[1:] or sorted(os.path.dirname(p) for p in
                                      glob.glob(os.path.join(here, "*", "truth.json")))
    for run_dir in run_dirs:
        ref = reference_of(run_dir)
        run_dir = os.path.normpath(run_dir)
        for pipeline in ref["pipelines"]:
            print(f"{os.path.basename(run_dir):34s} ranks {pipeline['ranks']} "
                  f"p={pipeline['p']} m={pipeline['m']} v={pipeline['v']} "
                  f"{pipeline['schedule']:11s} order {pipeline['stage_order']} "
                  f"bubble {pipeline['bubble_fraction']:.4f} "
                  f"({len(pipeline['iterations'])} iterations, {ref['iteration_source']})")


if __name__ == "__main__":
    main()
