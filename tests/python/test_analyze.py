"""bubblescope.analyze and Job against the CLI's own report."""

import json

import pytest

import bubblescope
from conftest import cli_json, error_line, run_cli, trace_sets

SETS = trace_sets()


def test_every_sample_and_shared_set_is_found():
    # The seven simulated sets, the synthetic one, the torch CPU runs, the collector's four and
    # the shared real traces: a listing that lost its sets would make the test below vacuous.
    assert "sample_traces/sim_1f1b_p4_m8" in SETS
    assert "sample_traces/torch_cpu/1f1b_p4_m8" in SETS
    assert len(SETS) >= 35


@pytest.mark.parametrize("path", SETS)
def test_to_dict_equals_the_cli_json(path):
    status, report, stderr = cli_json(path)
    if status != 0:
        # Where the CLI refuses the set, the module refuses it with the CLI's line.
        with pytest.raises(bubblescope.TraceError) as raised:
            bubblescope.analyze(path)
        assert str(raised.value) == error_line(stderr)
        return
    job = bubblescope.analyze(path)
    assert job.to_dict() == report
    assert json.loads(job.to_json()) == report


def test_options_reach_the_job_as_the_cli_flags_do():
    path = "sample_traces/sim_1f1b_imbalanced_p4_m8"
    _, report, _ = cli_json(path, "--layers-per-stage", "8,8,8,8", "--jobs", "2",
                            "--iteration-marker", "^ProfilerStep#")
    job = bubblescope.analyze(path, layers_per_stage=[8, 8, 8, 8], jobs=2,
                              iteration_marker="^ProfilerStep#")
    assert job.to_dict() == report
    assert report["pipelines"][0]["rebalance"] is not None


def test_views_read_the_report():
    job = bubblescope.analyze("sample_traces/sim_1f1b_p4_m8")
    report = job.to_dict()
    pipeline = job.pipelines[0]
    # The simulated set is 1F1B with p=4, m=8 and 3 profiler steps (its truth.json).
    truth = json.load(open("sample_traces/sim_1f1b_p4_m8/truth.json"))["config"]
    assert (pipeline.schedule, pipeline.stage_count, pipeline.microbatches) == \
        (truth["schedule"], truth["stages"], truth["microbatches"])
    assert len(pipeline.iterations) == truth["iterations"]
    # (p-1)/(m+p-1) = 3/11: the closed form of 1F1B.
    assert pipeline.theoretical_bubble_fraction == pytest.approx(3 / 11)
    assert pipeline.bubble_fraction == report["pipelines"][0]["bubble_fraction"]
    assert [s.rank for s in pipeline.stages] == [0, 1, 2, 3]
    assert pipeline.slowest_stage.stage == report["pipelines"][0]["slowest_stage"]
    assert [c.cause for c in pipeline.root_causes] == \
        [c["cause"] for c in report["pipelines"][0]["root_causes"]]
    assert [r.rank for r in job.ranks] == [0, 1, 2, 3]
    assert len(job.findings) == len(report["findings"])
    with pytest.raises(AttributeError):
        pipeline.bubble_fraction = 0.0  # read-only


def test_text_and_html_are_the_cli_reports(tmp_path):
    path = "sample_traces/sim_gpipe_p4_m8"
    job = bubblescope.analyze(path)
    assert job.text() == run_cli("analyze", path, "--quiet").stdout
    page = tmp_path / "report.html"
    job.html(page)
    cli_page = tmp_path / "cli.html"
    run_cli("analyze", path, "--quiet", "--html", cli_page)
    assert page.read_text() == cli_page.read_text()
    assert "<iframe srcdoc=" in job._repr_html_()


def test_perfetto_is_the_cli_trace(tmp_path):
    path = "sample_traces/sim_1f1b_p4_m8"
    bubblescope.analyze(path).perfetto(tmp_path / "mine.json")
    run_cli("analyze", path, "--quiet", "--perfetto", tmp_path / "cli.json")
    assert (tmp_path / "mine.json").read_bytes() == (tmp_path / "cli.json").read_bytes()


def test_progress_callback_hears_every_stage():
    heard = []
    bubblescope.analyze("sample_traces/sim_1f1b_p4_m8",
                        progress=lambda stage, done, total: heard.append((stage, done, total)))
    # Four ranks indexed and one pipeline analysed, each told once as it finishes.
    assert max(d for s, d, t in heard if t == 4) == 4
    assert all(0 < done <= total for _, done, total in heard)


def test_the_gil_is_released_while_the_job_is_analysed(tmp_path):
    import threading
    import time
    from bubblescope import _core

    bubblescope.simulate(tmp_path / "job", stages=8, microbatches=32, iterations=24)
    ticks = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks.append(time.perf_counter())

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        start = time.perf_counter()
        _core.analyze([str(tmp_path / "job")], 1, 0, [], None, False, [], None)
        end = time.perf_counter()
    finally:
        stop.set()
        spinner.join()
    # Held through the analysis, the GIL would stop the other thread for all of it: one gap in
    # its ticks about as long as the analysis. Released, it ticks all along (a thread waiting for
    # the GIL gets it within the 5 ms switch interval).
    during = [start] + [t for t in ticks if start < t < end] + [end]
    longest_gap = max(b - a for a, b in zip(during, during[1:]))
    assert end - start > 0.1
    assert longest_gap < (end - start) / 2
