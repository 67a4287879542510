#!/usr/bin/env python3
"""Tests check.py on results written by hand, whose answers are known: kernels per step that agree
in one step and not in the next, a warm-up kernel outside every step, the collector's array form
cut short, step times giving a 2% overhead, the plugin's transfers, the demo's steps, the live
run's writes step by step and watch's figures against analyze's. Run by
ctest (tests/collector/CMakeLists.txt) without a GPU."""
import json
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check.py")


def x(cat, name, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
            "args": args}


def loop_events(step1_third_kernel):
    """Two steps: step 0 launches gemm twice and relu once; step 1 gemm twice and
    `step1_third_kernel`. One warm-up launch before step 0 belongs to no step."""
    events = [x("user_annotation", "ProfilerStep#0", 100, 100),
              x("user_annotation", "ProfilerStep#1", 200, 100),
              x("cuda_runtime", "cudaLaunchKernel", 50, 1, correlation=1),
              x("kernel", "warmup_kernel", 60, 5, correlation=1)]
    launches = [(110, "gemm"), (120, "gemm"), (130, "relu"),
                (210, "gemm"), (220, "gemm"), (230, step1_third_kernel)]
    for correlation, (ts, name) in enumerate(launches, start=2):
        category = "cuda_driver" if name == "relu" else "cuda_runtime"
        events.append(x(category, "launch", ts, 2, correlation=correlation))
        # The kernel runs after its step's CPU range ended: it belongs to the step that launched it.
        events.append(x("kernel", name, ts + 95, 3, correlation=correlation))
    return events


def write(path, content):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write(content if isinstance(content, str) else json.dumps(content))


def collector_file(events, terminated=True):
    text = "[\n" + ",\n".join(json.dumps(e) for e in events)
    return text + ("\n]\n" if terminated else ",\n")


def make_results(root, kineto_third_kernel):
    write(f"{root}/step1/record1/bubblescope-gpucheck-step1-1-rank0-world1-h-1.json",
          collector_file(loop_events("relu"), terminated=False))
    write(f"{root}/step1/kineto.json", {"traceEvents": loop_events(kineto_third_kernel)})
    # Rounds: +2%, +4%, 0%; pooled medians 1.0 (plain) and 1.02 (recorded): +2%.
    write(f"{root}/step1/plain1-times.json", {"step_seconds": [1.0, 1.0, 1.0]})
    write(f"{root}/step1/record1-times.json", {"step_seconds": [1.02, 1.02, 1.02]})
    write(f"{root}/step1/plain2-times.json", {"step_seconds": [1.0]})
    write(f"{root}/step1/record2-times.json", {"step_seconds": [1.04]})
    write(f"{root}/step1/plain3-times.json", {"step_seconds": [1.1, 1.1]})
    write(f"{root}/step1/record3-times.json", {"step_seconds": [1.1]})
    write(f"{root}/step1/kineto-times.json", {"step_seconds": [1.1, 1.1, 1.1]})
    write(f"{root}/step2/status.json", {"exit_status": 0})
    write(f"{root}/step2/kineto.json", {"traceEvents": [x("kernel", "k", 1, 1, correlation=9)]})
    write(f"{root}/step2/stderr.log",
          "bubblescope collector: another profiler asked for CUPTI (libtorch_cpu.so): handed over\n")
    write(f"{root}/step2/record/bubblescope-gpucheck-step2-rank0-world1-h-4.json",
          collector_file([{"ph": "M", "name": "bubblescope_cupti_handed_off", "pid": 1, "tid": 0,
                           "args": {"to": "/torch/lib/libtorch_cpu.so", "at_ns": 5}},
                          x("kernel", "warmup_kernel", 60, 5, correlation=1)]))
    transfers = []
    for i in range(2):
        transfers.append(x("cpu_op", "nccl:send", 10 * i, 1, **{"Dst Rank": 0, "In msg nelems": 8}))
        transfers.append(x("cpu_op", "nccl:recv", 10 * i, 1, **{"Src Rank": 0, "Out msg nelems": 8}))
        transfers.append(x("kernel", "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
                           10 * i, 1, correlation=i))
    write(f"{root}/step3/record/bubblescope-gpucheck-step3-rank0-world1-h-2.json",
          collector_file(transfers))
    write(f"{root}/step3/result.json", {"iterations": 2, "elements": 8, "data_correct": True,
                                        "nccl_version": 23007})
    write(f"{root}/step4/status.json", {"exit_status": 0, "iterations": 3})
    write(f"{root}/step4/record/bubblescope-gpucheck-step4-rank0-world1-h-3.json",
          collector_file(demo_events()))


def demo_events(drop_kernel=False):
    """The demo's trace: 3 steps, a forward and a backward kernel in each (one left out on
    request), and a copy."""
    events = []
    for i in range(3):
        events.append(x("user_annotation", f"ProfilerStep#{i}", 100 * i, 50))
        events.append(x("kernel", "demo_forward", 100 * i + 5, 5, correlation=2 * i))
        if not (drop_kernel and i == 2):
            events.append(x("kernel", "demo_backward", 100 * i + 20, 5, correlation=2 * i + 1))
        events.append(x("gpu_memcpy", "Memcpy HtoD", 100 * i + 1, 1))
    return events


def write_step7(root, runtime=12090, kernels=4):
    """The CUDA 12 application's run: its log and a trace of 3 steps of `kernels` kernels each
    (launched by cudaLaunchKernel inside the step), 2 copies and a memset a step."""
    events = []
    for step in range(3):
        base = 1000 * step
        events.append(x("user_annotation", f"ProfilerStep#{step}", base, 500))
        for k in range(kernels):
            correlation = 100 * step + k
            events.append(x("cuda_runtime", "cudaLaunchKernel", base + 10 + k, 1,
                            correlation=correlation))
            events.append(x("kernel", "AddOne(float*, int)", base + 100 + 10 * k, 5,
                            correlation=correlation))
        events += [x("gpu_memcpy", "Memcpy HtoD", base + 50, 5),
                   x("gpu_memset", "Memset", base + 200, 1),
                   x("gpu_memcpy", "Memcpy DtoH", base + 210, 5)]
    write(f"{root}/step7/status.json", {"exit_status": 0, "iterations": 3})
    write(f"{root}/step7/job.log",
               f"cuda12_app: runtime {runtime}, driver 13000\n"
               "cuda12_app: 3 steps of 4 kernels, results correct\n")
    write(f"{root}/step7/record/bubblescope-gpucheck-step7-norank-h-6.json",
          collector_file(events))


def write_step6(root, drop_kernel=False):
    write(f"{root}/step6/status.json", {"exit_status": 0, "iterations": 3})
    write(f"{root}/step6/record/bubblescope-gpucheck-step6-rank0-world1-h-5.json",
          collector_file(demo_events(drop_kernel)))


# Step 8's demo run: 6 iterations, two stages (two GPUs), one pipeline.
LIVE_ITERATIONS = 6
LIVE_FILES = ("bubblescope-gpucheck-step8-rank0-world2-h-7.json",
              "bubblescope-gpucheck-step8-rank1-world2-h-8.json")


def live_iteration(step):
    """analyze's figures of the live demo's iteration `step` (made up, each its own)."""
    return {"step": step, "complete": True, "window_us": 91000.125 + step,
            "bubble_fraction": 0.25 + step / 1000}


def write_step8(root, flushes=range(1, LIVE_ITERATIONS), watch_figures=None, pipelines=1,
                watch_pipelines=None, live_figures=None):
    """The live run's results: each rank's trace written after the steps in `flushes` (their
    counts of ProfilerStep ranges) and at exit; analyze's `pipelines` pipelines of the 6 steps
    (the last one incomplete); watch's lines for `watch_pipelines` (default: the same) with
    `watch_figures(step)` (default: analyze's); the live watch's lines for analyze's pipelines
    with `live_figures(step)` (default: analyze's)."""
    steps = list(range(LIVE_ITERATIONS))
    write(f"{root}/step8/status.json", {"exit_status": 0, "iterations": LIVE_ITERATIONS})
    for verb in ("watch", "watch-live", "analyze"):
        write(f"{root}/step8/{verb}-status.json", {"exit_status": 0})
    growth = []
    for t, name in enumerate(LIVE_FILES):
        events = [x("user_annotation", f"ProfilerStep#{i}", 100 * i, 50) for i in steps]
        write(f"{root}/step8/record/{name}", collector_file(events))
        growth.append({"t": t, "file": name, "size": 20, "steps": [], "closed": False})
        growth += [{"t": t, "file": name, "size": 100 * n, "steps": steps[:n], "closed": False}
                   for n in flushes]
        growth.append({"t": t, "file": name, "size": 900, "steps": steps, "closed": True})
    write(f"{root}/step8/growth.jsonl", "".join(json.dumps(g) + "\n" for g in growth))
    iterations = [live_iteration(i) for i in steps]
    iterations[-1]["complete"] = False  # watch reports complete iterations only
    write(f"{root}/step8/analyze.json",
          {"pipelines": [{"iterations": iterations} for _ in range(pipelines)]})
    for name, figures, count in (("watch", watch_figures, watch_pipelines),
                                 ("watch-live", live_figures, None)):
        figures = figures or live_iteration
        lines = [{"type": "notice", "text": "clock model from the first iterations"}]
        for pipeline in range(pipelines if count is None else count):
            for step in steps[:-1]:
                figure = figures(step)
                lines.append({"type": "iteration", "pipeline": pipeline, "step": step,
                              "bubble_fraction": figure["bubble_fraction"],
                              "window_us": figure["window_us"]})
        write(f"{root}/step8/{name}.jsonl", "".join(json.dumps(line) + "\n" for line in lines))


def check_agreeing_run_with(write_more):
    """The check's status, summary and text for results whose steps 1 to 4 pass, with what
    `write_more(root)` adds."""
    with tempfile.TemporaryDirectory() as root:
        make_results(root, kineto_third_kernel="relu")
        write_more(root)
        return run_check(root)


def run_check(root):
    done = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True,
                          check=False)
    with open(os.path.join(root, "summary.json"), encoding="utf-8") as source:
        return done.returncode, json.load(source), done.stdout


def main():
    with tempfile.TemporaryDirectory() as root:
        make_results(root, kineto_third_kernel="softmax")
        status, summary, text = run_check(root)
        assert status == 1, text  # step 1 disagrees
        steps = summary["step1"]["steps"]
        assert [s["step"] for s in steps] == [0, 1], steps
        assert steps[0]["agree"] and steps[0]["collector_kernels"] == 3, steps[0]
        assert not steps[1]["agree"], steps[1]
        assert steps[1]["differing"] == [{"name": "relu", "collector": 1, "kineto": 0},
                                         {"name": "softmax", "collector": 0, "kineto": 1}], steps[1]
        overhead = summary["step1"]["collector_overhead_percent"]
        assert abs(overhead - 2.0) < 1e-9, overhead  # pooled medians 1.02 against 1.0
        rounds = summary["step1"]["round_overhead_percent"]
        assert [round(r, 9) for r in rounds] == [2.0, 4.0, 0.0], rounds
        assert summary["step1"]["overhead_goal_met"] is False
        assert abs(summary["step1"]["torch_profiler_overhead_percent"] - 10.0) < 1e-9
        failed = [c["check"] for c in summary["checks"] if not c["ok"]]
        assert failed == ["step 1: kernel names and counts agree with Kineto in every step"], failed
        assert summary["step3"]["transfers"] == {"nccl:send": 2, "nccl:recv": 2}
        assert summary["step3"]["nccl_kernels"] == {"ncclDevKernel_SendRecv": 2}
        assert summary["step2"]["bubblescope_messages"][0].startswith("bubblescope collector:")
        assert summary["step2"]["cupti_handed_off_to"] == ["/torch/lib/libtorch_cpu.so"]
        assert summary["step2"]["collector_kernels"] == 1

    with tempfile.TemporaryDirectory() as root:
        make_results(root, kineto_third_kernel="relu")
        status, summary, text = run_check(root)
        assert status == 0, text
        assert all(s["agree"] for s in summary["step1"]["steps"])
        assert "| step 4: the demo job ran and every iteration is a ProfilerStep range | ok |" in text
        assert "step6" not in summary  # not run: no other CUDA major's collector

    step6 = "step 6: the other CUDA major's collector recorded the demo as step 4's did"
    status, summary, text = check_agreeing_run_with(write_step6)
    assert status == 0, text
    assert summary["step6"]["records"] == {"gpu_memcpy": 3, "kernel": 6,
                                           "user_annotation": 3}, summary["step6"]
    assert summary["step6"]["kernels_agree"] and summary["step6"]["steps"] == 3
    assert f"| {step6} | ok |" in text

    # One backward kernel missing.
    status, summary, _ = check_agreeing_run_with(lambda root: write_step6(root, drop_kernel=True))
    assert status == 1
    assert [c["check"] for c in summary["checks"] if not c["ok"]] == [step6]
    assert summary["step6"]["records"]["kernel"] == 5
    assert summary["step6"]["kernels_agree"] is False

    step7 = "step 7: a CUDA 12 application, recorded by the CUDA 12.9 collector, kernel for kernel"
    status, summary, text = check_agreeing_run_with(write_step7)
    assert status == 0, text
    assert summary["step7"]["runtime_version"] == 12090
    assert summary["step7"]["kernels_per_step"] == [4, 4, 4], summary["step7"]
    assert f"| {step7} | ok |" in text

    for wrong in ({"runtime": 13000}, {"kernels": 3}):  # a CUDA 13 runtime; kernels missing
        status, summary, _ = check_agreeing_run_with(lambda root: write_step7(root, **wrong))
        assert status == 1, wrong
        assert [c["check"] for c in summary["checks"] if not c["ok"]] == [step7], wrong

    grew = "step 8: under record --live each trace grew step by step while the job ran"
    same = ("step 8: watch --once printed analyze's figures for every complete iteration of "
            "every pipeline")
    live = ("step 8: watch following the job live printed analyze's figures for every complete "
            "iteration of every pipeline")
    status, summary, text = check_agreeing_run_with(write_step8)
    assert status == 0, text
    assert summary["step8"]["mid_run_step_counts"] == {name: [1, 2, 3, 4, 5]
                                                       for name in LIVE_FILES}, summary["step8"]
    assert summary["step8"]["watch_iteration_lines"] == 5, summary["step8"]
    assert summary["step8"]["watch_differences"] == [], summary["step8"]
    assert summary["step8"]["watch_live_iteration_lines"] == 5, summary["step8"]
    assert f"| {grew} | ok |" in text and f"| {same} | ok |" in text, text
    assert f"| {live} | ok |" in text, text

    # Written at exit only (what the timed flush alone gives), or after a single step.
    for flushes in ((), (3,)):
        status, summary, _ = check_agreeing_run_with(
            lambda root, f=flushes: write_step8(root, flushes=f))
        assert status == 1, flushes
        assert [c["check"] for c in summary["checks"] if not c["ok"]] == [grew], flushes

    # One figure off by 1e-6; one pipeline of two without a line; watch's steps of a pipeline
    # analyze does not have.
    def off(step):
        figure = live_iteration(step)
        if step == 2:
            figure["bubble_fraction"] += 1e-6
        return figure
    for kwargs, difference in (
            ({"watch_figures": off},
             {"pipeline": 0, "step": 2,
              "bubble_fraction": {"analyze": 0.252, "watch": 0.252 + 1e-6}}),
            ({"pipelines": 2, "watch_pipelines": 1},
             {"pipeline": 1, "watch": "no iteration line"}),
            ({"pipelines": 0, "watch_pipelines": 1},
             {"pipeline": 0, "watch_only_steps": [0, 1, 2, 3, 4]})):
        status, summary, _ = check_agreeing_run_with(
            lambda root, k=kwargs: write_step8(root, **k))
        assert status == 1, kwargs
        assert [c["check"] for c in summary["checks"] if not c["ok"]] == [same], kwargs
        assert summary["step8"]["watch_differences"] == [difference], summary["step8"]

    # The live watch's figure off, the --once one right.
    status, summary, _ = check_agreeing_run_with(
        lambda root: write_step8(root, live_figures=off))
    assert status == 1
    assert [c["check"] for c in summary["checks"] if not c["ok"]] == [live], summary["checks"]
    assert summary["step8"]["watch_live_differences"] == [
        {"pipeline": 0, "step": 2,
         "bubble_fraction": {"analyze": 0.252, "watch": 0.252 + 1e-6}}], summary["step8"]

    # One GPU: one stage, no pipeline, no line: nothing to compare, and said so.
    status, summary, text = check_agreeing_run_with(
        lambda root: write_step8(root, pipelines=0))
    assert status == 0, text
    assert "no pipeline to compare: one GPU runs the demo as one stage" in text, text

    with tempfile.TemporaryDirectory() as root:
        make_results(root, kineto_third_kernel="relu")
        write(f"{root}/step3/result.json", {"iterations": 3, "elements": 8, "data_correct": True})
        os.remove(f"{root}/step4/status.json")
        write(f"{root}/step2/kineto.json", {"traceEvents": []})  # Kineto got no CUDA activity
        status, summary, _ = run_check(root)
        assert status == 1
        failed = [c["check"] for c in summary["checks"] if not c["ok"]]
        assert failed == ["step 2: the user's torch.profiler run works under record and records "
                          "its kernels",
                          "step 3: the plugin recorded every send and recv, to rank 0, with its size",
                          "step 4: the demo job ran and every iteration is a ProfilerStep range"], failed
    print("check_test: ok")


if __name__ == "__main__":
    main()
