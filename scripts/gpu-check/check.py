#!/usr/bin/env python3
"""Checks what one run of scripts/gpu-check.sh wrote (docs/collector-gpu-check.md).

Reads RESULTS (the run's $OUT): the collector's traces and Kineto's of step 1 (kernel names and
counts per ProfilerStep must agree; step times give the collector's overhead), step 2 (the loop
under torch.profiler and the collector at once: what each wrote), step 3 (NCCL's profiler plugin:
the self send/recv and the all-reduce of a one-rank communicator), step 4 (the demo job),
step 6 (the demo job again, under the collector built for the other CUDA major), step 7 (a
CUDA 12 application under the CUDA 12.9 collector) and step 8 (the demo job under `record --live`:
its trace written step by step, and `watch --once`'s iterations against `analyze`'s).
Step 1 runs the loop alone and recorded in three alternating rounds (plainN / recordN).
Runs `bubblescope analyze` on the traces when --bubblescope is given. Writes RESULTS/summary.json
and RESULTS/summary.md, prints the latter, and exits 1 when a check fails.

Needs only the Python standard library, so it runs on the CPU machine as on the GPU one.
"""
import argparse
import collections
import glob
import json
import os
import re
import statistics
import subprocess
import sys

STEP = re.compile(r"^ProfilerStep#(\d+)$")
LAUNCH_CATEGORIES = ("cuda_runtime", "cuda_driver")
OVERHEAD_GOAL_PERCENT = 1.0


def load_events(path):
    """The events of a Kineto trace (an object) or a collector trace (the array form, possibly
    cut short without its closing bracket)."""
    with open(path, encoding="utf-8") as source:
        text = source.read()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = json.loads(text.rstrip().rstrip(",") + "]")
    return data["traceEvents"] if isinstance(data, dict) else data


def trace_files(folder):
    return sorted(glob.glob(os.path.join(folder, "*.json")))


def profiler_steps(events):
    """{step number: (start, end)} of the ProfilerStep#N ranges on the CPU."""
    steps = {}
    for event in events:
        if event.get("ph") != "X" or event.get("cat") != "user_annotation":
            continue
        match = STEP.match(str(event.get("name", "")))
        if match:
            start = float(event["ts"])
            steps[int(match.group(1))] = (start, start + float(event.get("dur", 0)))
    return steps


def kernels_per_step(events):
    """{step number: Counter of kernel names}, each kernel in the step its launch happened in."""
    steps = profiler_steps(events)
    launches = {}
    for event in events:
        if event.get("ph") == "X" and event.get("cat") in LAUNCH_CATEGORIES:
            correlation = (event.get("args") or {}).get("correlation")
            if correlation is not None:
                launches[correlation] = float(event["ts"])
    counts = {number: collections.Counter() for number in steps}
    for event in events:
        if event.get("ph") != "X" or event.get("cat") != "kernel":
            continue
        launched = launches.get((event.get("args") or {}).get("correlation"))
        if launched is None:
            continue
        for number, (start, end) in steps.items():
            if start <= launched <= end:
                counts[number][event["name"]] += 1
                break
    return counts


def compare_kernels(collector, kineto):
    """Per step: kernel counts on both sides and the names whose counts differ."""
    rows = []
    for number in sorted(set(collector) | set(kineto)):
        ours = collector.get(number, collections.Counter())
        theirs = kineto.get(number, collections.Counter())
        differing = sorted((name, ours[name], theirs[name]) for name in set(ours) | set(theirs)
                           if ours[name] != theirs[name])
        rows.append({"step": number, "collector_kernels": sum(ours.values()),
                     "kineto_kernels": sum(theirs.values()),
                     "distinct_names": len(set(ours) | set(theirs)),
                     "agree": number in collector and number in kineto and not differing,
                     "differing": [{"name": n, "collector": a, "kineto": b}
                                   for n, a, b in differing[:10]]})
    return rows


def read_json(path):
    try:
        with open(path, encoding="utf-8") as source:
            return json.load(source)
    except (OSError, json.JSONDecodeError):
        return None


def median_step(*runs):
    """The median step time over the runs' marked steps (runs that are missing are left out)."""
    seconds = [t for times in runs if times for t in times.get("step_seconds", [])]
    return statistics.median(seconds) if seconds else None


def analyze(bubblescope, paths):
    """`bubblescope analyze --format json` over `paths`: its ranks, or the error it gave."""
    if not bubblescope or not paths:
        return None
    run = subprocess.run([bubblescope, "analyze", "--format", "json", *paths],
                         capture_output=True, text=True, check=False)
    if run.returncode != 0:
        return {"error": run.stderr.strip()[-2000:], "exit_status": run.returncode}
    report = json.loads(run.stdout)
    return {"ranks": [{key: rank.get(key) for key in ("rank", "kernels", "comm_ops", "steps",
                                                        "span_us", "compute_us", "comm_us")}
                      for rank in report.get("ranks", [])],
            "pipelines": len(report.get("pipelines", []) or [])}


class Checks:
    def __init__(self):
        self.items = []

    def add(self, name, ok, detail):
        self.items.append({"check": name, "ok": bool(ok), "detail": detail})

    def failed(self):
        return [item for item in self.items if not item["ok"]]


ROUNDS = (1, 2, 3)


def overhead_percent(recorded, plain):
    return 100.0 * (recorded - plain) / plain if recorded and plain else None


def step1(results, checks, bubblescope):
    folder = os.path.join(results, "step1")
    collector_files = trace_files(os.path.join(folder, "record1"))
    kineto = os.path.join(folder, "kineto.json")
    out = {"collector_files": [os.path.basename(f) for f in collector_files]}
    checks.add("step 1: one collector trace", len(collector_files) == 1, out["collector_files"])
    checks.add("step 1: a Kineto trace", os.path.exists(kineto), kineto)
    if len(collector_files) == 1 and os.path.exists(kineto):
        rows = compare_kernels(kernels_per_step(load_events(collector_files[0])),
                               kernels_per_step(load_events(kineto)))
        out["steps"] = rows
        agreeing = sum(row["agree"] for row in rows)
        checks.add("step 1: kernel names and counts agree with Kineto in every step",
                   rows and agreeing == len(rows), f"{agreeing} of {len(rows)} steps agree")
    # Plain and recorded runs alternate: each round's pair shares the machine's state of the
    # moment; the pooled medians over all rounds are the figure, the rounds show the spread.
    plain_runs = [read_json(os.path.join(folder, f"plain{r}-times.json")) for r in ROUNDS]
    record_runs = [read_json(os.path.join(folder, f"record{r}-times.json")) for r in ROUNDS]
    plain = median_step(*plain_runs)
    recorded = median_step(*record_runs)
    profiled = median_step(read_json(os.path.join(folder, "kineto-times.json")))
    out["median_step_seconds"] = {"plain": plain, "record": recorded, "torch_profiler": profiled}
    out["round_overhead_percent"] = [
        overhead_percent(median_step(r), median_step(p)) for p, r in zip(plain_runs, record_runs)]
    overhead = overhead_percent(recorded, plain)
    if overhead is not None:
        out["collector_overhead_percent"] = overhead
        out["overhead_goal_met"] = overhead <= OVERHEAD_GOAL_PERCENT
        rounds = ", ".join("-" if o is None else f"{o:+.2f}%" for o in out["round_overhead_percent"])
        checks.add("step 1: step times with and without the collector", True,
                   f"collector overhead {overhead:+.2f}% of the median step over "
                   f"{len(ROUNDS)} rounds (each: {rounds}; goal <= {OVERHEAD_GOAL_PERCENT}%)")
    if plain and profiled:
        out["torch_profiler_overhead_percent"] = overhead_percent(profiled, plain)
    out["analyze_collector"] = analyze(bubblescope, collector_files)
    out["analyze_kineto"] = analyze(bubblescope, [kineto] if os.path.exists(kineto) else [])
    return out


def step2(results, checks, bubblescope):
    folder = os.path.join(results, "step2")
    collector_files = trace_files(os.path.join(folder, "record"))
    kineto = os.path.join(folder, "kineto.json")
    status = read_json(os.path.join(folder, "status.json")) or {}
    messages = []
    if os.path.exists(os.path.join(folder, "stderr.log")):
        with open(os.path.join(folder, "stderr.log"), encoding="utf-8", errors="replace") as log:
            messages = [line.strip() for line in log if "bubblescope" in line][:20]
    out = {"job_exit_status": status.get("exit_status"),
           "collector_files": [os.path.basename(f) for f in collector_files],
           "collector_kernels": sum(1 for f in collector_files for e in load_events(f)
                                    if e.get("cat") == "kernel"),
           "kineto_trace": os.path.exists(kineto),
           "kineto_kernels": sum(1 for e in load_events(kineto) if e.get("cat") == "kernel")
           if os.path.exists(kineto) else 0,
           "bubblescope_messages": messages}
    handed = [e.get("args", {}) for f in collector_files for e in load_events(f)
              if e.get("name") == "bubblescope_cupti_handed_off"]
    out["cupti_handed_off_to"] = [h.get("to") for h in handed]
    checks.add("step 2: the user's torch.profiler run works under record and records its kernels",
               status.get("exit_status") == 0 and out["kineto_kernels"] > 0,
               f"exit {status.get('exit_status')}, Kineto trace "
               f"{'written' if out['kineto_trace'] else 'missing'} "
               f"with {out['kineto_kernels']} kernels; the collector wrote "
               f"{len(collector_files)} file(s) with {out['collector_kernels']} kernels, "
               f"CUPTI handed over to {out['cupti_handed_off_to'] or 'nobody'}")
    return out


def step3(results, checks, bubblescope):
    folder = os.path.join(results, "step3")
    result = read_json(os.path.join(folder, "result.json")) or {}
    collector_files = trace_files(os.path.join(folder, "record"))
    transfers = collections.Counter()
    peers, sizes = set(), set()
    nccl_kernels = collections.Counter()
    for path in collector_files:
        for event in load_events(path):
            name = str(event.get("name", ""))
            if name in ("nccl:send", "nccl:recv"):
                transfers[name] += 1
                args = event.get("args") or {}
                peers.add(args.get("Dst Rank", args.get("Src Rank")))
                sizes.add(args.get("In msg nelems", args.get("Out msg nelems")))
            elif event.get("cat") == "kernel" and name.startswith("ncclDevKernel"):
                nccl_kernels[name.split("(")[0]] += 1
    iterations = result.get("iterations")
    out = {"nccl_version": result.get("nccl_version"), "data_correct": result.get("data_correct"),
           "transfers": dict(transfers), "peers": sorted(p for p in peers if p is not None),
           "elements": sorted(s for s in sizes if s is not None),
           "nccl_kernels": dict(nccl_kernels)}
    checks.add("step 3: the self send/recv and all-reduce ran and moved the right data",
               result.get("data_correct") is True, result)
    checks.add("step 3: the plugin recorded every send and recv, to rank 0, with its size",
               iterations is not None
               and transfers == {"nccl:send": iterations, "nccl:recv": iterations}
               and out["peers"] == [0] and out["elements"] == [result.get("elements")],
               out)
    out["analyze"] = analyze(bubblescope, collector_files)
    return out


def step4(results, checks, bubblescope):
    folder = os.path.join(results, "step4")
    status = read_json(os.path.join(folder, "status.json")) or {}
    collector_files = trace_files(os.path.join(folder, "record"))
    out = {"job_exit_status": status.get("exit_status"), "iterations": status.get("iterations"),
           "collector_files": [os.path.basename(f) for f in collector_files],
           "analyze": analyze(bubblescope, collector_files)}
    steps = [len(profiler_steps(load_events(f))) for f in collector_files]
    checks.add("step 4: the demo job ran and every iteration is a ProfilerStep range",
               status.get("exit_status") == 0 and len(collector_files) == 1
               and steps == [status.get("iterations")],
               f"exit {status.get('exit_status')}, {len(collector_files)} trace(s), steps {steps}")
    return out


def record_counts(events):
    """The records a collector trace holds, by category, and its kernels by name."""
    categories = collections.Counter(str(event.get("cat")) for event in events
                                     if event.get("ph") == "X")
    kernels = collections.Counter(event.get("name") for event in events
                                  if event.get("ph") == "X" and event.get("cat") == "kernel")
    return categories, kernels


def step6(results, checks, bubblescope):
    """The demo recorded by the collector built for the other CUDA major, against step 4's."""
    folder = os.path.join(results, "step6")
    status = read_json(os.path.join(folder, "status.json")) or {}
    files = trace_files(os.path.join(folder, "record"))
    reference = trace_files(os.path.join(results, "step4", "record"))
    out = {"job_exit_status": status.get("exit_status"),
           "collector_files": [os.path.basename(f) for f in files],
           "analyze": analyze(bubblescope, files)}
    if len(files) == 1 and len(reference) == 1:
        ours, ours_kernels = record_counts(load_events(files[0]))
        theirs, theirs_kernels = record_counts(load_events(reference[0]))
        out["records"] = dict(sorted(ours.items()))
        out["step4_records"] = dict(sorted(theirs.items()))
        out["kernels_agree"] = ours_kernels == theirs_kernels
        out["steps"] = len(profiler_steps(load_events(files[0])))
    same = (status.get("exit_status") == 0 and out.get("kernels_agree") is True
            and out.get("records") == out.get("step4_records")
            and out.get("steps") == status.get("iterations"))
    checks.add("step 6: the other CUDA major's collector recorded the demo as step 4's did", same,
               {key: out.get(key) for key in ("job_exit_status", "records", "step4_records",
                                              "kernels_agree", "steps")})
    return out


# What scripts/gpu-check/cuda12_app.cu does: per step, a copy in, 4 kernels, a memset, a copy out.
CUDA12_APP = {"steps": 3, "kernels_per_step": 4, "gpu_memcpy": 6, "gpu_memset": 3}
RUNTIME_LINE = re.compile(r"cuda12_app: runtime (\d+), driver (\d+)")


def step7(results, checks, bubblescope):
    """A CUDA 12 application (CUDA 12.9's libcudart) recorded by the CUDA 12.9 collector."""
    folder = os.path.join(results, "step7")
    status = read_json(os.path.join(folder, "status.json")) or {}
    try:
        with open(os.path.join(folder, "job.log"), encoding="utf-8", errors="replace") as source:
            log = source.read()
    except OSError:
        log = ""
    versions = RUNTIME_LINE.search(log)
    files = trace_files(os.path.join(folder, "record"))
    out = {"job_exit_status": status.get("exit_status"),
           "runtime_version": int(versions.group(1)) if versions else None,
           "driver_version": int(versions.group(2)) if versions else None,
           "results_correct": "results correct" in log,
           "collector_files": [os.path.basename(f) for f in files],
           "analyze": analyze(bubblescope, files)}
    if len(files) == 1:
        events = load_events(files[0])
        categories, _ = record_counts(events)
        out["records"] = dict(sorted(categories.items()))
        out["kernels_per_step"] = [sum(counter.values())
                                   for _, counter in sorted(kernels_per_step(events).items())]
    expected = CUDA12_APP
    ok = (status.get("exit_status") == 0 and out["results_correct"]
          and out["runtime_version"] is not None and out["runtime_version"] // 1000 == 12
          and out.get("kernels_per_step") == [expected["kernels_per_step"]] * expected["steps"]
          and (out.get("records") or {}).get("gpu_memcpy") == expected["gpu_memcpy"]
          and (out.get("records") or {}).get("gpu_memset") == expected["gpu_memset"])
    checks.add("step 7: a CUDA 12 application, recorded by the CUDA 12.9 collector, kernel for "
               "kernel", ok,
               {key: out.get(key) for key in ("job_exit_status", "runtime_version",
                                              "driver_version", "results_correct",
                                              "kernels_per_step", "records")})
    return out


def read_json_lines(path):
    """The JSON values of a JSON-lines file and how many of its lines were not JSON; nothing
    when the file is missing."""
    values, bad = [], 0
    try:
        with open(path, encoding="utf-8", errors="replace") as source:
            for line in source:
                if not line.strip():
                    continue
                try:
                    values.append(json.loads(line))
                except json.JSONDecodeError:
                    bad += 1
    except OSError:
        pass
    return values, bad


# How far watch's JSON line may be from analyze's JSON: the same double or the same nanoseconds,
# up to how each prints them.
LIVE_TOLERANCE = {"bubble_fraction": 1e-9, "window_us": 0.0005}


def mid_run_step_counts(samples, iterations):
    """Per trace file: the distinct numbers of ProfilerStep ranges it held at the writes
    file_growth.py saw before the file was closed, between 1 and `iterations` - 1: with the timed
    flush out of reach, each is a step's flush."""
    counts = collections.defaultdict(set)
    for sample in samples:
        if not isinstance(sample, dict) or sample.get("closed"):
            continue
        file_counts = counts[sample.get("file")]
        held = len(sample.get("steps") or [])
        if iterations and 0 < held < iterations:
            file_counts.add(held)
    return {name: sorted(held) for name, held in sorted(counts.items())}


def step_order(line):
    """Watch's lines by step; a line whose step is not a number last."""
    step = line.get("step")
    return (0, step) if isinstance(step, int) else (1, 0)


def watch_against_analyze(watch_lines, report):
    """What differs between watch's iteration lines and analyze's complete iterations, pipeline
    by pipeline: a pipeline without a line, other steps, or a figure off."""
    watched = collections.defaultdict(list)
    for line in watch_lines:
        if isinstance(line, dict) and line.get("type") == "iteration":
            watched[line.get("pipeline")].append(line)
    differences = []
    for index, pipeline in enumerate((report or {}).get("pipelines") or []):
        expected = [it for it in pipeline.get("iterations") or [] if it.get("complete")]
        got = sorted(watched.pop(index, []), key=step_order)
        if not got:
            differences.append({"pipeline": index, "watch": "no iteration line"})
            continue
        if [it.get("step") for it in expected] != [line.get("step") for line in got]:
            differences.append({"pipeline": index,
                                "analyze_steps": [it.get("step") for it in expected],
                                "watch_steps": [line.get("step") for line in got]})
            continue
        for iteration, line in zip(expected, got):
            for key, tolerance in LIVE_TOLERANCE.items():
                theirs, ours = iteration.get(key), line.get(key)
                if not isinstance(ours, (int, float)) or not isinstance(theirs, (int, float)) \
                        or abs(ours - theirs) > tolerance:
                    differences.append({"pipeline": index, "step": iteration.get("step"),
                                        key: {"analyze": theirs, "watch": ours}})
    for index, lines in sorted(watched.items(), key=lambda item: str(item[0])):
        differences.append({"pipeline": index, "watch_only_steps": [l.get("step") for l in lines]})
    return differences


def step8(results, checks, bubblescope):
    """The demo under `record --live`: its traces written step by step while it ran, and
    `watch --once --format jsonl` of the folder giving analyze's iterations figure for figure."""
    folder = os.path.join(results, "step8")
    status = read_json(os.path.join(folder, "status.json")) or {}
    iterations = status.get("iterations")
    files = trace_files(os.path.join(folder, "record"))
    samples, _ = read_json_lines(os.path.join(folder, "growth.jsonl"))
    mid_run = mid_run_step_counts(samples, iterations)
    out = {"job_exit_status": status.get("exit_status"), "iterations": iterations,
           "collector_files": [os.path.basename(f) for f in files],
           "mid_run_step_counts": mid_run, "analyze": analyze(bubblescope, files)}
    # At least two step flushes seen per file while the job ran (the follower, looking every
    # 2 ms, may miss a write: a count skipped, not a failure).
    stepwise = bool(files) and all(len(mid_run.get(os.path.basename(f), [])) >= 2 for f in files)
    checks.add("step 8: under record --live each trace grew step by step while the job ran",
               status.get("exit_status") == 0 and stepwise,
               {key: out[key] for key in ("job_exit_status", "iterations", "mid_run_step_counts")})
    report = read_json(os.path.join(folder, "analyze.json"))
    pipelines = len((report or {}).get("pipelines") or [])
    analyze_status = (read_json(os.path.join(folder, "analyze-status.json")) or {}).get(
        "exit_status")
    out.update({"pipelines": pipelines, "analyze_exit_status": analyze_status})
    # watch --once of the finished folder, and watch following the job live (results from
    # before the live watch have no watch-live files: that check is left out).
    for verb, how in (("watch", "watch --once printed"),
                      ("watch-live", "watch following the job live printed")):
        lines_path = os.path.join(folder, f"{verb}.jsonl")
        if verb != "watch" and not os.path.exists(lines_path):
            continue
        status = (read_json(os.path.join(folder, f"{verb}-status.json")) or {}).get("exit_status")
        watch_lines, bad_lines = read_json_lines(lines_path)
        differences = watch_against_analyze(watch_lines, report)
        key = verb.replace("-", "_")
        out.update({f"{key}_exit_status": status,
                    f"{key}_iteration_lines": sum(1 for line in watch_lines
                                                  if isinstance(line, dict)
                                                  and line.get("type") == "iteration"),
                    f"{key}_lines_not_json": bad_lines, f"{key}_differences": differences})
        detail = {"exit_statuses": {verb: status, "analyze": analyze_status},
                  "pipelines": pipelines, "iteration_lines": out[f"{key}_iteration_lines"],
                  "lines_not_json": bad_lines, "differences": differences[:5]}
        if pipelines == 0:
            detail["note"] = "no pipeline to compare: one GPU runs the demo as one stage"
        checks.add(f"step 8: {how} analyze's figures for every complete iteration of every "
                   "pipeline",
                   status == 0 and analyze_status == 0 and report is not None and not bad_lines
                   and not differences, detail)
    return out


def markdown(summary, checks):
    lines = ["# bubblescope GPU check", ""]
    provenance = summary.get("provenance") or {}
    for key in ("gpu", "driver", "cuda_toolkit", "torch", "torch_cuda", "nccl", "cupti", "date"):
        if key in provenance:
            lines.append(f"- {key}: {provenance[key]}")
    if "bundle" in provenance:
        lines.append(f"- bundle: {json.dumps(provenance['bundle'])}")
    lines += ["", "| check | result | detail |", "|---|---|---|"]
    for item in checks.items:
        detail = item["detail"] if isinstance(item["detail"], str) else json.dumps(item["detail"])
        lines.append(f"| {item['check']} | {'ok' if item['ok'] else 'FAILED'} | {detail[:300]} |")
    rows = (summary.get("step1") or {}).get("steps") or []
    if rows:
        lines += ["", "Step 1, kernels per step (collector / Kineto):", ""]
        for row in rows:
            mark = "agree" if row["agree"] else "differ: " + json.dumps(row["differing"][:3])
            lines.append(f"- ProfilerStep#{row['step']}: {row['collector_kernels']} / "
                         f"{row['kineto_kernels']} kernels, {mark}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="the folder the GPU run wrote ($OUT)")
    parser.add_argument("--bubblescope", help="a bubblescope executable to analyze the traces with")
    args = parser.parse_args()
    checks = Checks()
    summary = {"provenance": read_json(os.path.join(args.results, "provenance.json"))}
    for name, step in (("step1", step1), ("step2", step2), ("step3", step3), ("step4", step4)):
        if os.path.isdir(os.path.join(args.results, name)):
            summary[name] = step(args.results, checks, args.bubblescope)
        else:
            checks.add(f"{name}: ran", False, "no results (the run did not get this far)")
    # Steps 6 and 7 run only where the bundle has the other CUDA major's collector and its
    # libraries; step 8 is missing from results written before it was added.
    for name, step in (("step6", step6), ("step7", step7), ("step8", step8)):
        if os.path.isdir(os.path.join(args.results, name)):
            summary[name] = step(args.results, checks, args.bubblescope)
    summary["checks"] = checks.items
    with open(os.path.join(args.results, "summary.json"), "w", encoding="utf-8") as out:
        json.dump(summary, out, indent=1)
    text = markdown(summary, checks)
    with open(os.path.join(args.results, "summary.md"), "w", encoding="utf-8") as out:
        out.write(text)
    sys.stdout.write(text)
    sys.exit(1 if checks.failed() else 0)


if __name__ == "__main__":
    main()
