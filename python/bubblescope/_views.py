"""Typed, read-only views of analyze's JSON report (docs/json-report.md).

Every figure is read from the report the job's ``to_dict()`` returns, so a view never says
anything the report does not. Times keep the report's units (µs, as ``*_us``); each view keeps
its whole JSON object as ``raw`` for members it does not name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Tuple


def _frozen_raw():
    return field(repr=False, compare=False)


@dataclass(frozen=True)
class Rank:
    """One rank's summary (the report's ``ranks[]``)."""

    rank: int
    source: str
    timeline: str
    span_us: float
    compute_us: float
    comm_us: float
    memcpy_us: float
    idle_us: float
    steps: int
    peak_allocated_bytes: Optional[int]
    raw: Mapping[str, Any] = _frozen_raw()

    @classmethod
    def from_json(cls, obj):
        return cls(obj["rank"], obj["source"], obj["timeline"], obj["span_us"],
                   obj["compute_us"], obj["comm_us"], obj["memcpy_us"], obj["idle_us"],
                   obj["steps"], obj.get("peak_allocated_bytes"), obj)


@dataclass(frozen=True)
class Stage:
    """One pipeline rank's bubble figures over the complete iterations (``rank_stats[]``)."""

    rank: int
    stage: int
    compute_us: float
    idle_us: float
    fill_us: float
    drain_us: float
    stall_us: float
    comm_wait_us: float
    empty_us: float
    bubble_fraction: float
    raw: Mapping[str, Any] = _frozen_raw()

    @classmethod
    def from_json(cls, obj):
        return cls(obj["rank"], obj["stage"], obj["compute_us"], obj["idle_us"], obj["fill_us"],
                   obj["drain_us"], obj["stall_us"], obj["comm_wait_us"], obj["empty_us"],
                   obj["bubble_fraction"], obj)


@dataclass(frozen=True)
class Iteration:
    """One iteration of a pipeline (``iterations[]``)."""

    step: int
    complete: bool
    window_us: float
    bubble_fraction: float
    raw: Mapping[str, Any] = _frozen_raw()

    @classmethod
    def from_json(cls, obj):
        return cls(obj["step"], obj["complete"], obj["window_us"], obj["bubble_fraction"], obj)


@dataclass(frozen=True)
class Finding:
    """A statement the figures support, with its cost (``findings[]``)."""

    kind: str
    severity: str
    message: str
    ranks: Tuple[int, ...]
    cost_us: Optional[float]
    raw: Mapping[str, Any] = _frozen_raw()

    @classmethod
    def from_json(cls, obj):
        return cls(obj["kind"], obj["severity"], obj["message"], tuple(obj.get("ranks", ())),
                   obj.get("cost_us"), obj)


@dataclass(frozen=True)
class RootCause:
    """A cause the findings group under, with its predicted saving (``root_causes[]``)."""

    cause: str
    severity: str
    summary: str
    ranks: Tuple[int, ...]
    cost_per_iteration_us: Optional[float]
    saving_per_iteration_us: Optional[float]
    fix: Optional[str]
    next_step: Optional[str]
    findings: Tuple[Finding, ...]
    raw: Mapping[str, Any] = _frozen_raw()

    @classmethod
    def from_json(cls, obj):
        return cls(obj["cause"], obj["severity"], obj["summary"], tuple(obj.get("ranks", ())),
                   obj.get("cost_per_iteration_us"), obj.get("saving_per_iteration_us"),
                   obj.get("fix"), obj.get("next_step"),
                   tuple(Finding.from_json(f) for f in obj.get("findings", ())), obj)


@dataclass(frozen=True)
class Pipeline:
    """One pipeline of the job (``pipelines[i]``).

    ``stages`` holds a Stage per pipeline rank in stage order; ``stage_count`` is p.
    ``slowest_stage`` is that stage's Stage (None when the report names none)."""

    index: int
    ranks: Tuple[int, ...]
    stage_count: int
    microbatches: Optional[int]
    virtual_stages: Optional[int]
    schedule: Optional[str]
    bubble_fraction: float
    theoretical_bubble_fraction: Optional[float]
    excess_bubble_fraction: Optional[float]
    complete_iterations: int
    latency_us: Mapping[str, float]
    stages: Tuple[Stage, ...]
    iterations: Tuple[Iteration, ...]
    root_causes: Tuple[RootCause, ...]
    findings: Tuple[Finding, ...]
    slowest_stage: Optional[Stage]
    raw: Mapping[str, Any] = _frozen_raw()

    @classmethod
    def from_json(cls, index, obj):
        stages = tuple(Stage.from_json(s) for s in obj.get("rank_stats", ()))
        slowest = obj.get("slowest_stage")
        slowest_view = next((s for s in stages if s.stage == slowest), None)
        causes = tuple(RootCause.from_json(c) for c in obj.get("root_causes", ()))
        findings = tuple(f for c in causes for f in c.findings)
        return cls(index, tuple(obj["ranks"]), obj.get("stages"), obj.get("microbatches"),
                   obj.get("virtual_stages"), obj.get("schedule"), obj["bubble_fraction"],
                   obj.get("theoretical_bubble_fraction"), obj.get("excess_bubble_fraction"),
                   obj.get("complete_iterations", 0), obj.get("latency_us") or {}, stages,
                   tuple(Iteration.from_json(i) for i in obj.get("iterations", ())), causes,
                   findings, slowest_view, obj)
