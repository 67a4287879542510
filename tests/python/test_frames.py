"""The frames (pandas, optional) against the report's figures and the simulator's truth."""

import json

import pytest

import bubblescope

pandas = pytest.importorskip("pandas")  # the frames extra; skipped cleanly without it

SET = "sample_traces/sim_1f1b_p4_m8"


@pytest.fixture(scope="module")
def job():
    import os
    from conftest import ROOT
    return bubblescope.analyze(os.path.join(ROOT, SET))


def _ns(us):
    return round(us * 1000)


def test_idle_spans_sum_to_each_stage_figure(job):
    idle = job.idle_frame()
    complete = idle[idle.complete]
    lengths = complete.end_ns - complete.start_ns
    by_rank_kind = lengths.groupby([complete["rank"], complete["kind"]]).sum()
    for stage in job.pipelines[0].stages:
        of = lambda kind: int(by_rank_kind.get((stage.rank, kind), 0))  # noqa: E731
        # idle = fill + stall + drain and stall = comm_wait + empty (docs/bubble.md).
        assert of("fill") == _ns(stage.fill_us)
        assert of("drain") == _ns(stage.drain_us)
        assert of("comm_wait") == _ns(stage.comm_wait_us)
        assert of("empty") == _ns(stage.empty_us)
        total = sum(of(k) for k in ("fill", "drain", "comm_wait", "empty"))
        assert total == _ns(stage.idle_us)


def test_ops_are_the_simulated_schedule(job):
    ops = job.ops_frame()
    truth = json.load(open(f"{SET}/truth.json"))["config"]
    p, m, k = truth["stages"], truth["microbatches"], truth["iterations"]
    # Every stage runs one forward and one backward of every microbatch in every iteration.
    assert len(ops) == p * m * 2 * k
    assert sorted(ops.type.unique()) == ["B", "F"]
    assert sorted(ops.microbatch.unique()) == list(range(m))
    per_stage = ops.groupby(["stage", "type"]).size()
    assert (per_stage == m * k).all()
    # Forward 1000 us and backward 2000 us a microbatch on every stage (truth's costs), each op's
    # kernels drawn within +-2% of them (truth's jitter): the mean op is within 2% of its cost.
    spans = (ops.end_ns - ops.start_ns) / 1e3
    means = spans.groupby([ops.stage, ops.type]).mean()
    for cost in truth["costs"]:
        for kind, key in (("F", "forward_us"), ("B", "backward_us")):
            assert means[(cost["stage"], kind)] == pytest.approx(cost[key],
                                                                 rel=truth["jitter"])


def test_iterations_and_ranks_frames_are_the_report(job):
    report = job.to_dict()
    iterations = job.iterations_frame()
    assert list(iterations.step) == [i["step"] for i in report["pipelines"][0]["iterations"]]
    assert iterations.window_us.sum() == pytest.approx(
        sum(i["window_us"] for i in report["pipelines"][0]["iterations"]))
    ranks = job.ranks_frame()
    assert ranks.compute_us.sum() == pytest.approx(sum(r["compute_us"] for r in report["ranks"]))
    assert list(ranks["rank"]) == [0, 1, 2, 3]


def test_plot_draws_one_iteration_measured_and_theoretical(job):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = job.plot()
    # p=4 stages, m=8 microbatches, one forward and one backward each: 64 measured ops of the
    # first complete iteration, and the 64 of the schedule's own run beside them.
    assert len(ax.collections) == 64 + 64
    assert "iteration 0" in ax.get_title() and "27.3% theoretical" in ax.get_title()
