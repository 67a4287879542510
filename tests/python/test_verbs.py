"""whatif, diff, gate, digest and simulate: the CLI's verbs, with the CLI's results."""

import json
import os
import subprocess
import sys

import pytest

import bubblescope
from conftest import ROOT, run_cli


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A balanced 1F1B job and the same job with stage 2's forward twice as long."""
    folder = tmp_path_factory.mktemp("runs")
    bubblescope.simulate(folder / "before")
    bubblescope.simulate(folder / "after", fwd_us=[1000, 1000, 2000, 1000])
    return folder


def test_simulate_writes_the_cli_set(runs, tmp_path):
    run_cli("simulate", "-o", tmp_path / "cli")
    for name in ("truth.json", "rank0.pt.trace.json", "rank3.pt.trace.json"):
        assert (runs / "before" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()


def test_a_failing_gate_returns_its_failing_check(runs):
    result = bubblescope.gate(runs / "before", runs / "after", max_bubble_increase=0.02)
    assert result.passed is False and not result
    assert [c.name for c in result.failed] == ["pipeline 0: max-bubble-increase"]
    assert "limit <= +2.0 pts" in result.failed[0].figures
    # The same checks the CLI's verdict lists, and its exit status 1.
    done = run_cli("gate", "--baseline", runs / "before", runs / "after",
                   "--max-bubble-increase", "0.02", "--quiet")
    assert done.returncode == 1 and result.text == done.stdout


def test_a_passing_gate_on_jobs(runs):
    before = bubblescope.analyze(runs / "before")
    result = bubblescope.gate(before, before, max_bubble_increase=0.02, max_bubble=0.5)
    assert result.passed and len(result.checks) == 2
    assert all(c.passed for c in result.checks)


def test_diff_equals_the_cli(runs, tmp_path):
    before, after = (bubblescope.analyze(runs / n) for n in ("before", "after"))
    mine = bubblescope.diff(before, after)
    for name, job in (("a.json", before), ("b.json", after)):
        (tmp_path / name).write_text(job.to_json())
    cli = json.loads(run_cli("diff", tmp_path / "a.json", tmp_path / "b.json", "--format",
                             "json").stdout)
    # Only the sides' names differ: temporary report files on one side, these on the other.
    for report in (mine, cli):
        report.pop("a", None), report.pop("b", None)
    assert mine == cli


def test_whatif_equals_the_cli(runs):
    job = bubblescope.analyze(runs / "before")
    mine = bubblescope.whatif(runs / "before", microbatches=16)
    cli = json.loads(run_cli("whatif", runs / "before", "-m", "16", "--format", "json",
                             "--quiet").stdout)
    assert mine == cli
    assert bubblescope.whatif(job, microbatches=16)["pipelines"] == cli["pipelines"]


def test_digest_is_read_back_as_the_job(runs, tmp_path):
    bubblescope.digest(runs / "before", tmp_path / "digests")
    original = bubblescope.analyze(runs / "before")
    read_back = bubblescope.analyze(tmp_path / "digests")
    assert read_back.pipelines[0].bubble_fraction == original.pipelines[0].bubble_fraction


def test_the_example_script_runs(tmp_path):
    done = subprocess.run([sys.executable, os.path.join(ROOT, "docs", "python_example.py"),
                           str(tmp_path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    # The simulated 1F1B job of p=4, m=8: the closed form (p-1)/(m+p-1) is 27.3%.
    assert "theoretical 27.3%" in done.stdout
    assert "gate passed: False" in done.stdout
