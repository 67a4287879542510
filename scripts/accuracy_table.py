#!/usr/bin/env python3
"""Every trace family with a known answer, analysed by bubblescope, against that answer.

Runs `bubblescope analyze --format json` on each bundled set (sample_traces/), on the independent
generator's jobs (../shared/independent_sim, generated into --work) and on the real third-party
traces (../shared/traces), and prints one Markdown table row per pipeline: the truth's p, m, v,
schedule, stage order, slowest stage and bubble beside what bubblescope measured, and the clock
offsets it applied. A tool for people (docs/accuracy.md is made with it); the tests check the
same figures with their own tolerances.

Usage: scripts/accuracy_table.py BUBBLESCOPE_BINARY [--work DIR]
"""
import argparse
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")


def analyze(binary, paths):
    run = subprocess.run([binary, "analyze", "--format", "json"] + paths,
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        return None, run.stderr.strip().splitlines()[-1:] or ["exit %d" % run.returncode]
    return json.loads(run.stdout), None


# Each truth file names the same few facts differently; these read them into one shape:
# list of {ranks, p, m, v, schedule, order, slowest, bubble} (None where the truth has no value).
def simulator_truth(truth):
    config = truth["config"]
    costs = [c["forward_us"] + c["backward_us"] + c["weight_grad_us"] for c in config["costs"]]
    return [{"ranks": None, "p": config["stages"], "m": config["microbatches"],
             "v": config.get("virtual_stages", 1), "schedule": config["schedule"],
             "order": truth["stage_to_rank"],
             "slowest": truth["slowest_stage"] if len(set(costs)) > 1 else None,
             "bubble": truth["bubble_fraction"]}]


def torch_cpu_truth(truth):
    # reference.py's figures, per pipeline (sample_traces/torch_cpu/README.md)
    pipelines = truth.get("reference", {}).get("pipelines") or [{}]
    return [{"ranks": pipeline.get("ranks") if len(pipelines) > 1 else None,
             "p": truth["p"], "m": truth["m"], "v": truth["v"],
             "schedule": truth["schedule"], "order": truth["stage_order"],
             "slowest": truth.get("slowest_stage"),
             "bubble": pipeline.get("bubble_fraction")} for pipeline in pipelines]


def independent_truth(truth):
    params = truth["params"]
    offset = params.get("rank_offset", 0)
    ranks = list(range(offset, offset + params["stages"]))
    tf = params.get("tf") or ""
    return {"ranks": ranks, "p": params["stages"], "m": params["microbatches"],
            "v": params["chunks"] if params["schedule"] == "interleaved" else 1,
            "schedule": params["schedule"], "order": ranks,
            "slowest": truth["slowest_stage"] if len(set(tf.split(","))) > 1 else None,
            "bubble": truth["bubble_fraction"]}


# Simulated jobs with tensor, context, expert and data parallelism beside the pipeline (the
# simulator's ModelParallel, Megatron-Core's layout): generated into --work, one row each for the
# pipeline holding rank 0 (every pipeline of a set has the same truth;
# tests/job/model_parallel_grid_test.cc checks them all).
MODEL_PARALLEL_SETS = [
    ("tp2_sp_overlap_pp4_dp2", ["-p", "4", "--tensor-parallel", "2", "--sequence-parallel",
                                "--tp-overlap", "--data-parallel", "2", "--dp-sync-us", "400"]),
    ("cp2_pp4_1f1b", ["-p", "4", "--context-parallel", "2", "--cp-exchange-us", "200",
                      "--dp-sync-us", "400"]),
    ("cp4_tp2_pp2_interleaved", ["-p", "2", "--schedule", "interleaved", "--virtual-stages", "2",
                                 "--context-parallel", "4", "--tensor-parallel", "2",
                                 "--cp-exchange-us", "200", "--dp-sync-us", "400"]),
    ("cp4_pp4_dp2_interleaved_batched", ["-p", "4", "--schedule", "interleaved",
                                         "--virtual-stages", "2", "--context-parallel", "4",
                                         "--data-parallel", "2", "--p2p", "batched",
                                         "--launches", "torch", "--cp-exchange-us", "200",
                                         "--dp-sync-us", "400"]),
    ("tp2_cp2_ep4_dp2_pp2", ["-p", "2", "--tensor-parallel", "2", "--context-parallel", "2",
                             "--expert-parallel", "4", "--data-parallel", "2", "--ep-share",
                             "0.2", "--cp-exchange-us", "200", "--dp-sync-us", "400"]),
]


def model_parallel_truth(truth):
    want = simulator_truth(truth)[0]
    parallel = truth["config"]["model_parallel"]
    replicas = parallel["tensor"] * parallel["context"] * parallel["data"]
    want["order"] = [r * replicas for r in truth["stage_to_rank"]]
    want["ranks"] = want["order"]
    return want


def fmt(value):
    if value is None:
        return "-"
    if isinstance(value, float):
        return "%.3f" % value
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def row(family, name, want, got):
    if got is None:
        measured = ["(no pipeline)"] + ["-"] * 6
    else:
        offsets = got.get("clock_offsets_us") or {}
        moved = {r: o for r, o in offsets.items() if abs(o) >= 0.001}
        measured = [fmt([got.get("stages"), got.get("microbatches"), got.get("virtual_stages")]),
                    fmt(got.get("schedule")), fmt(got.get("ranks")), fmt(got.get("slowest_stage")),
                    fmt(got.get("bubble_fraction")),
                    ("%+.2f pp" % (100 * (got["bubble_fraction"] - want["bubble"]))
                     if want and want.get("bubble") is not None and got.get("bubble_fraction")
                     is not None else "-"),
                    ", ".join("%s: %+.3f ms" % (r, o / 1000) for r, o in sorted(moved.items()))
                    or "none"]
    truth = (["-"] * 5 if want is None else
             [fmt([want["p"], want["m"], want["v"]]), fmt(want["schedule"]), fmt(want["order"]),
              fmt(want["slowest"]), fmt(want["bubble"])])
    print("| %s | %s | %s |" % (family, name, " | ".join(truth + measured)))


def pick(report, want):
    pipelines = report.get("pipelines", [])
    if want.get("ranks"):
        for pipeline in pipelines:
            if sorted(pipeline.get("ranks", [])) == sorted(want["ranks"]):
                return pipeline
        return None
    return pipelines[0] if len(pipelines) == 1 else None


def table(binary, work):
    print("| family | set | p,m,v | schedule | order | slowest | bubble | measured p,m,v | "
          "schedule | order | slowest | bubble | error | clock offsets applied |")
    print("|" + "---|" * 14)
    for truth_path in sorted(glob.glob(os.path.join(ROOT, "sample_traces", "*", "truth.json"))):
        directory = os.path.dirname(truth_path)
        truth = json.load(open(truth_path))
        if "config" not in truth:
            continue
        report, error = analyze(binary, [directory])
        for want in simulator_truth(truth):
            row("simulator", os.path.basename(directory), want,
                None if error else pick(report, want))
    for truth_path in sorted(glob.glob(os.path.join(ROOT, "sample_traces", "torch_cpu", "*",
                                                    "truth.json"))):
        directory = os.path.dirname(truth_path)
        report, error = analyze(binary, [directory])
        for want in torch_cpu_truth(json.load(open(truth_path))):
            row("real torch (CPU, gloo)", os.path.basename(directory), want,
                None if error else pick(report, want))
    for name, flags in MODEL_PARALLEL_SETS:
        directory = os.path.join(work, "model_parallel", name)
        run = subprocess.run([binary, "simulate", "-o", directory, "--force", "-k", "2",
                              "--jitter", "0.02", "--optimizer-us", "300"] + flags,
                             capture_output=True, text=True)
        if run.returncode != 0:
            print("| simulated 3D parallelism | %s | error: %s |" % (name, run.stderr.strip()))
            continue
        want = model_parallel_truth(json.load(open(os.path.join(directory, "truth.json"))))
        report, error = analyze(binary, [directory])
        row("simulated 3D parallelism", name, want, None if error else pick(report, want))
    check = os.path.join(SHARED, "independent_sim", "check_accuracy.py")
    if os.path.exists(check):
        subprocess.run([sys.executable, check, binary, "--work", work], capture_output=True)
        for directory in sorted(glob.glob(os.path.join(work, "*"))):
            truths = sorted(glob.glob(os.path.join(directory, "truth*.json")))
            if not truths:
                continue
            files = sorted(glob.glob(os.path.join(directory, "rank*.json")))
            report, error = analyze(binary, files)
            for truth_path in truths:
                want = independent_truth(json.load(open(truth_path)))
                row("independent_sim", os.path.basename(directory).rsplit("-", 1)[0], want,
                    None if error else pick(report, want))
    for directory in sorted(glob.glob(os.path.join(SHARED, "traces", "*", ""))):
        report, error = analyze(binary, [directory])
        name = os.path.basename(os.path.dirname(directory))
        if error:
            print("| real GPU (../shared) | %s | error: %s |" % (name, error[0]))
            continue
        pipelines = report.get("pipelines", [])
        if not pipelines:
            row("real GPU (../shared), no pipeline", name, None, None)
        for pipeline in pipelines:
            row("real GPU (../shared), no pipeline", name, None, pipeline)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--work", default="/tmp/bubblescope-accuracy-table")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    table(os.path.abspath(args.binary), args.work)


if __name__ == "__main__":
    main()
