"""Each exception class, raised with the line the CLI prints for the same failure."""

import os

import pytest

import bubblescope
from conftest import error_line, run_cli


def _cli_line(*args):
    done = run_cli(*args)
    assert done.returncode != 0
    return error_line(done.stderr)


def test_a_missing_path_is_a_trace_error():
    with pytest.raises(bubblescope.TraceError) as raised:
        bubblescope.analyze("no/such/traces")
    assert str(raised.value) == _cli_line("analyze", "no/such/traces")
    assert isinstance(raised.value, bubblescope.BubblescopeError)


def test_damaged_json_names_the_file_and_byte(tmp_path):
    bad = tmp_path / "rank0.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "ts": 1, "dur": }]}')
    with pytest.raises(bubblescope.TraceError) as raised:
        bubblescope.analyze(bad)
    assert str(raised.value) == _cli_line("analyze", bad)
    assert "byte" in str(raised.value) and str(bad) in str(raised.value)


def test_a_negative_rank_is_a_usage_error():
    with pytest.raises(bubblescope.UsageError) as raised:
        bubblescope.analyze("sample_traces/sim_1f1b_p4_m8", ranks={"rank0.pt.trace.json": -1})
    assert str(raised.value) == _cli_line("analyze", "sample_traces/sim_1f1b_p4_m8", "--rank",
                                          "rank0.pt.trace.json=-1")


@pytest.mark.parametrize("option, flag", [
    ({"iteration_marker": "("}, ["--iteration-marker", "("]),
    ({"layers_per_stage": [8, 8]}, ["--layers-per-stage", "8,8"]),
])
def test_options_the_job_driver_refuses_are_usage_errors(option, flag):
    # Refused once the four-stage trace has loaded: a marker that is no regular expression, two
    # layer counts for four stages.
    with pytest.raises(bubblescope.UsageError) as raised:
        bubblescope.analyze("sample_traces/sim_1f1b_p4_m8", **option)
    assert str(raised.value) == _cli_line("analyze", "sample_traces/sim_1f1b_p4_m8", *flag)


def test_a_rank_override_naming_no_file_is_a_trace_error():
    # The CLI reads the files before it can tell: an input error, as on the command line.
    with pytest.raises(bubblescope.TraceError) as raised:
        bubblescope.analyze("sample_traces/sim_1f1b_p4_m8", ranks={"nowhere.json": 3})
    assert str(raised.value) == _cli_line("analyze", "sample_traces/sim_1f1b_p4_m8", "--rank",
                                          "nowhere.json=3")


def test_a_bad_threshold_is_a_usage_error():
    with pytest.raises(bubblescope.UsageError) as raised:
        bubblescope.gate("sample_traces/sim_1f1b_p4_m8", "sample_traces/sim_1f1b_p4_m8",
                         max_bubble_increase="lots")
    assert str(raised.value) == _cli_line("gate", "--baseline", "sample_traces/sim_1f1b_p4_m8",
                                          "sample_traces/sim_1f1b_p4_m8",
                                          "--max-bubble-increase", "lots")


def test_a_file_over_the_reading_budget_is_out_of_memory(tmp_path):
    # 1 MiB of budget against a trace of more: the loader's memory error (the budget is the
    # memory a process can afford a file), as a MemoryError the caller can catch.
    bubblescope.simulate(tmp_path / "big", stages=2, iterations=40)
    with pytest.raises(bubblescope.OutOfMemoryError) as raised:
        bubblescope.analyze(tmp_path / "big", max_file_mb=1)
    assert isinstance(raised.value, MemoryError)
    assert str(raised.value) == _cli_line("analyze", tmp_path / "big", "--max-file-mb", "1")
    assert "MiB of text, the reading budget per file" in str(raised.value)


def test_an_unwritable_output_is_an_output_error(tmp_path):
    job = bubblescope.analyze("sample_traces/sim_1f1b_p4_m8")
    with pytest.raises(bubblescope.OutputError) as raised:
        job.html(tmp_path / "no" / "such" / "dir" / "report.html")
    assert "cannot write" in str(raised.value)


def test_strict_refuses_what_the_cli_refuses():
    # Two ranks of a job that declares 128 (the shared real traces): an incomplete job, which
    # --strict refuses and a plain analysis warns of.
    path = "../shared/traces/hta_trace_filter_2rank"
    if not os.path.isdir(path):
        pytest.skip("the shared real traces are not beside the checkout")
    with pytest.raises(bubblescope.TraceError) as raised:
        bubblescope.analyze(path, strict=True)
    assert str(raised.value) == _cli_line("analyze", path, "--strict")
    assert str(raised.value).startswith("bubblescope: --strict: INCOMPLETE JOB")
    job = bubblescope.analyze(path)
    assert "warning: INCOMPLETE JOB: the trace holds 2 of the 128 ranks" in job.warnings
