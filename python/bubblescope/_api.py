"""The package's public API (docs/python.md).

The native module ``_core`` does all the work with the CLI's own C++: ``analyze`` runs the
loader, the import checks and the job driver; a Job's reports are the CLI's report writers; and
``whatif``, ``diff``, ``gate``, ``digest`` and ``simulate`` run those very verbs in this process.
This file only turns Python arguments into the CLI's, and the report's JSON into read-only views
and (with pandas) frames."""

from __future__ import annotations

import html as _html
import json
import os
import sys
import tempfile
import xml.etree.ElementTree as _xml
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core
from ._errors import (BubblescopeError, OutOfMemoryError, OutputError, TraceError, UsageError,
                      from_native, from_verb)
from ._views import Finding, Iteration, Pipeline, Rank, RootCause, Stage

__all__ = [
    "analyze", "whatif", "diff", "gate", "digest", "simulate", "Job", "GateResult", "GateCheck",
    "BubblescopeError", "UsageError", "TraceError", "OutputError", "OutOfMemoryError",
    "Pipeline", "Stage", "Rank", "Iteration", "Finding", "RootCause", "__version__",
]

__version__ = _core.version

PathLike = Union[str, "os.PathLike[str]"]
Paths = Union[PathLike, Sequence[PathLike]]


def _path_list(paths: Paths) -> List[str]:
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    listed = [os.fspath(p) for p in paths]
    if not listed:
        raise UsageError("bubblescope: no trace path given")
    return listed


def _whole_number(name: str, value: Optional[int], minimum: int) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise UsageError(f"bubblescope: {name} must be a whole number >= {minimum}, not {value!r}")
    return value


def _progress_printer(stage: str, done: int, total: int) -> None:
    end = "\n" if done >= total else "\r"
    print(f"bubblescope: {stage} {done}/{total}", end=end, file=sys.stderr, flush=True)


def analyze(paths: Paths, *, jobs: Optional[int] = None,
            ranks: Optional[Mapping[PathLike, int]] = None, max_file_mb: Optional[int] = None,
            iteration_marker: Optional[str] = None, strict: bool = False,
            layers_per_stage: Optional[Sequence[int]] = None,
            progress: Union[bool, Callable[[str, int, int], None]] = False) -> "Job":
    """Loads and analyses a job's traces, as ``bubblescope analyze`` does.

    ``paths``: a trace file, a folder of them, or a list of either. ``jobs``: threads (None: one
    per core, as -j 0). ``ranks``: {path: rank id}, as --rank PATH=N. ``max_file_mb``: the
    most trace text one file may hold (--max-file-mb; None: the automatic budget). ``progress``: True prints
    the analysis's stages on stderr; a callable is called with (stage, done, total). The GIL is
    released while the C++ runs. Raises TraceError, UsageError or OutOfMemoryError with the line
    the CLI prints."""
    rank_args = [f"{os.fspath(path)}={rank}" for path, rank in (ranks or {}).items()]
    layers = [int(n) for n in (layers_per_stage or ())]
    if any(n < 1 for n in layers):
        raise UsageError("bubblescope: layers_per_stage: every count must be at least 1")
    callback = _progress_printer if progress is True else (progress or None)
    try:
        native = _core.analyze(_path_list(paths), _whole_number("jobs", jobs, 0),
                               _whole_number("max_file_mb", max_file_mb, 1), rank_args,
                               iteration_marker, bool(strict), layers, callback)
    except _core.Failure as failure:
        raise from_native(failure) from None
    return Job(native)


def _native(call, *args):
    try:
        return call(*args)
    except _core.Failure as failure:
        raise from_native(failure) from None


class Job:
    """One analysed job: read-only views of analyze's report, the reports themselves and frames.

    Build one with ``bubblescope.analyze``."""

    def __init__(self, native: "_core.NativeJob"):
        self._native = native
        self._json_text = _native(native.json)
        self._dict = json.loads(self._json_text)
        self.pipelines: Tuple[Pipeline, ...] = tuple(
            Pipeline.from_json(i, p) for i, p in enumerate(self._dict["pipelines"]))
        self.ranks: Tuple[Rank, ...] = tuple(Rank.from_json(r) for r in self._dict["ranks"])
        self.findings: Tuple[Finding, ...] = tuple(
            Finding.from_json(f) for f in self._dict.get("findings", ()))
        # What the CLI would print on stderr (warnings and notes); empty when clean.
        self.warnings: str = native.warnings

    def __repr__(self) -> str:
        bubbles = ", ".join(f"{p.bubble_fraction:.1%}" for p in self.pipelines)
        return (f"<bubblescope.Job: {len(self.ranks)} ranks, {len(self.pipelines)} pipelines"
                + (f" (bubble {bubbles})" if bubbles else "") + ">")

    # Reports: the CLI's own writers.
    def to_dict(self) -> Dict[str, Any]:
        """analyze --format json, parsed (a fresh copy each call)."""
        return json.loads(self._json_text)

    def to_json(self) -> str:
        """analyze --format json, byte for byte."""
        return self._json_text

    def text(self) -> str:
        """analyze's text report."""
        return _native(self._native.text)

    def html(self, path: Optional[PathLike] = None) -> str:
        """The HTML report (analyze --html); written to ``path`` when given (never over an
        input). Returns the page."""
        page = _native(self._native.html)
        if path is not None:
            _native(self._native.write_file, os.fspath(path), page)
        return page

    def perfetto(self, path: PathLike) -> str:
        """Writes the merged, annotated trace (analyze --perfetto PATH); returns the notes the
        CLI prints about it (events left out), empty when none."""
        return _native(self._native.write_perfetto, os.fspath(path))

    def _repr_html_(self) -> str:
        # The HTML report in a frame: its first screen is the diagnosis and the schedule picture.
        page = _html.escape(_native(self._native.html), quote=True)
        return (f'<iframe srcdoc="{page}" style="width:100%;height:640px;border:1px solid #ccc">'
                "</iframe>")

    # Frames (pandas, optional).
    def ranks_frame(self):
        """One row per rank: the report's ranks[] (times in µs)."""
        pandas = _pandas()
        return pandas.DataFrame([{k: v for k, v in r.raw.items() if k != "import"}
                                 for r in self.ranks])

    def iterations_frame(self):
        """One row per pipeline iteration: pipeline, step, complete, window_us,
        bubble_fraction."""
        pandas = _pandas()
        rows = [{"pipeline": p.index, "step": i.step, "complete": i.complete,
                 "window_us": i.window_us, "bubble_fraction": i.bubble_fraction}
                for p in self.pipelines for i in p.iterations]
        return pandas.DataFrame(rows, columns=["pipeline", "step", "complete", "window_us",
                                               "bubble_fraction"])

    _OP_COLUMNS = ["pipeline", "rank", "stage", "chunk", "microbatch", "type", "start_ns",
                   "end_ns", "iteration"]

    def ops_frame(self):
        """One row per measured pipeline op on its pipeline's aligned clock: pipeline, rank,
        stage, chunk, microbatch (-1 unknown), type (F, B, I, W), start_ns, end_ns (integer
        nanoseconds: epoch times in µs as floats would round to a quarter of a µs), iteration."""
        pandas = _pandas()
        rows = [(p.index, rank, stage, chunk, mb, kind, start, end, iteration)
                for p in self.pipelines
                for rank, stage, chunk, mb, kind, start, end, iteration
                in _native(self._native.ops, p.index)]
        return pandas.DataFrame(rows, columns=self._OP_COLUMNS)

    def idle_frame(self):
        """One row per stretch of a pipeline rank's idle time: pipeline, rank, iteration,
        complete, kind (fill, drain, comm_wait, empty), start_ns, end_ns (integer nanoseconds).
        Summed over the complete iterations, by rank and kind, these are the report's rank_stats
        figures to the nanosecond."""
        pandas = _pandas()
        rows = [(p.index, rank, iteration, complete, kind, start, end)
                for p in self.pipelines
                for rank, iteration, complete, kind, start, end
                in _native(self._native.idle, p.index)]
        return pandas.DataFrame(rows, columns=["pipeline", "rank", "iteration", "complete", "kind",
                                               "start_ns", "end_ns"])

    def plot(self, pipeline: int = 0, iteration: Optional[int] = None, ax=None):
        """Draws pipeline ``pipeline``'s measured schedule (one iteration: ``iteration``, else
        its first complete one) above the theoretical one, with matplotlib. Returns the axes."""
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("Job.plot() needs matplotlib: pip install matplotlib") from None
        view = self.pipelines[pipeline]
        ops = _native(self._native.ops, pipeline)
        if iteration is None:
            iteration = next((i.step for i in view.iterations if i.complete),
                             ops[0][7] if ops else 0)
        measured = [op for op in ops if op[7] == iteration]
        ideal = _native(self._native.ideal_ops, pipeline)
        if ax is None:
            _, ax = plt.subplots(figsize=(12, 1 + 0.5 * 2 * max(1, view.stage_count or 1)))
        colours = {"F": "#4c78a8", "B": "#f58518", "I": "#f58518", "W": "#54a24b"}
        p = view.stage_count or 1 + max((op[1] for op in measured), default=0)
        origin = min((op[5] for op in measured), default=0)
        for _, stage, _, mb, kind, start, end, _ in measured:
            ax.broken_barh([((start - origin) / 1e3, (end - start) / 1e3)], (stage - 0.4, 0.8),
                           color=colours.get(kind, "grey"))
        for stage, _, mb, kind, start, end in ideal:
            ax.broken_barh([(start / 1e3, (end - start) / 1e3)], (p + 1 + stage - 0.4, 0.8),
                           color=colours.get(kind, "grey"), alpha=0.6)
        ax.set_yticks(list(range(p)) + [p + 1 + s for s in range(p)])
        ax.set_yticklabels([f"stage {s}" for s in range(p)]
                           + [f"ideal {s}" for s in range(p)])
        ax.invert_yaxis()
        ax.set_xlabel("µs from the iteration's first op")
        ax.set_title(f"pipeline {pipeline}, iteration {iteration}: bubble "
                     f"{view.bubble_fraction:.1%} measured, "
                     + (f"{view.theoretical_bubble_fraction:.1%} theoretical"
                        if view.theoretical_bubble_fraction is not None else "no theoretical"))
        return ax


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("the frames need pandas: pip install 'bubblescope[frames]'") from None
    return pandas


# The other verbs: the CLI's own, run in this process.

def _run(args: List[str]) -> Tuple[str, str]:
    status, out, err, out_of_memory = _core.run(args)
    if status != 0:
        raise from_verb(status, err, out_of_memory)
    return out, err


class _Inputs:
    """A verb's inputs: Jobs become their JSON reports in a temporary folder, which lasts as long
    as the call."""

    def __init__(self):
        self._folder: Optional[tempfile.TemporaryDirectory] = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._folder is not None:
            self._folder.cleanup()

    def paths(self, value: Union["Job", Paths], name: str) -> List[str]:
        if isinstance(value, Job):
            if self._folder is None:
                self._folder = tempfile.TemporaryDirectory(prefix="bubblescope-")
            path = os.path.join(self._folder.name, f"{name}.json")
            with open(path, "w", encoding="utf-8") as report:
                report.write(value.to_json())
            return [path]
        return _path_list(value)

    def path(self, value: Union["Job", PathLike], name: str) -> str:
        listed = self.paths(value, name)
        if len(listed) != 1:
            raise UsageError(f"bubblescope: {name}: one report or trace folder, not {len(listed)}")
        return listed[0]


def _flag(args: List[str], flag: str, value) -> None:
    if value is None or value is False:
        return
    if value is True:
        args.append(flag)
    elif isinstance(value, (list, tuple)):
        args += [flag, ",".join(str(v) for v in value)]
    else:
        args += [flag, str(value)]


def whatif(job_or_paths: Union[Job, Paths], *, microbatches: Optional[int] = None,
           schedule: Optional[str] = None, virtual_stages: Optional[int] = None,
           same_global_batch: bool = False, try_layers: Optional[Sequence[int]] = None,
           layers_per_stage: Optional[Sequence[int]] = None) -> Dict[str, Any]:
    """``bubblescope whatif --format json``: predictions for other microbatch counts, schedules
    and chunks of the measured job (a Job, its report, or its traces). Returns the report."""
    with _Inputs() as inputs:
        args = ["whatif", *inputs.paths(job_or_paths, "job"), "--format", "json", "--quiet"]
        _flag(args, "--microbatches", microbatches)
        _flag(args, "--schedule", schedule)
        _flag(args, "--virtual-stages", virtual_stages)
        _flag(args, "--same-global-batch", same_global_batch)
        _flag(args, "--try-layers", try_layers)
        _flag(args, "--layers-per-stage", layers_per_stage)
        out, _ = _run(args)
    return json.loads(out)


def diff(a: Union[Job, PathLike], b: Union[Job, PathLike]) -> Dict[str, Any]:
    """``bubblescope diff A B --format json``: each side a Job, a JSON report or traces."""
    with _Inputs() as inputs:
        out, _ = _run(["diff", inputs.path(a, "a"), inputs.path(b, "b"), "--format", "json",
                       "--quiet"])
    return json.loads(out)


@dataclass(frozen=True)
class GateCheck:
    """One of the gate's checks: its name ("pipeline 0: max-bubble-increase"), whether it passed,
    and its figures in the CLI's words (baseline, current, delta, limit)."""

    name: str
    passed: bool
    figures: str


@dataclass(frozen=True)
class GateResult:
    """The gate's verdict: ``passed``, every check, and the CLI's text verdict."""

    passed: bool
    checks: Tuple[GateCheck, ...]
    text: str

    @property
    def failed(self) -> Tuple[GateCheck, ...]:
        return tuple(c for c in self.checks if not c.passed)

    def __bool__(self) -> bool:
        return self.passed


_GATE_THRESHOLDS = ("max_bubble", "max_bubble_increase", "max_stage_bubble_increase",
                    "max_latency", "max_latency_increase", "max_memory", "max_memory_increase")


def gate(baseline: Union[Job, PathLike], current: Union[Job, PathLike], *,
         config: Optional[PathLike] = None, latency: Optional[str] = None,
         **thresholds) -> GateResult:
    """``bubblescope gate``: checks ``current`` against ``baseline`` (each a Job, a JSON report
    or traces) under thresholds named as the CLI's flags (max_bubble_increase=0.02,
    max_latency="120ms", ...). A failed check is ``passed=False``, not an exception."""
    unknown = sorted(set(thresholds) - set(_GATE_THRESHOLDS))
    if unknown:
        raise UsageError(f"bubblescope: gate: unknown threshold {unknown[0]!r} (the thresholds: "
                         + ", ".join(_GATE_THRESHOLDS) + ")")
    with _Inputs() as inputs:
        args = ["gate", "--baseline", inputs.path(baseline, "baseline"),
                inputs.path(current, "current"), "--quiet"]
        for key in _GATE_THRESHOLDS:
            _flag(args, "--" + key.replace("_", "-"), thresholds.get(key))
        _flag(args, "--config", None if config is None else os.fspath(config))
        _flag(args, "--latency", latency)
        with tempfile.TemporaryDirectory(prefix="bubblescope-gate-") as folder:
            junit = os.path.join(folder, "gate.xml")
            status, out, err, out_of_memory = _core.run(args + ["--junit", junit])
            # Status 1 with the verdict written is a failed check; else the CLI's error.
            if status != 0 and not (status == 1 and os.path.exists(junit)):
                raise from_verb(status, err, out_of_memory)
            checks = _junit_checks(junit)
    return GateResult(passed=status == 0, checks=checks, text=out)


def _junit_checks(path: str) -> Tuple[GateCheck, ...]:
    checks = []
    for case in _xml.parse(path).getroot().iter("testcase"):
        failure = case.find("failure")
        if failure is None:
            figures = (case.findtext("system-out") or "").strip()
        else:
            figures = failure.get("message", "")
        checks.append(GateCheck(case.get("name", ""), failure is None, figures))
    return tuple(checks)


def digest(paths: Paths, out: PathLike, *, force: bool = False, jobs: Optional[int] = None,
           ranks: Optional[Mapping[PathLike, int]] = None) -> str:
    """``bubblescope digest PATH... -o OUT``: the job's digests into the folder ``out``.
    Returns what the CLI says of them."""
    args = ["digest", *_path_list(paths), "-o", os.fspath(out), "--quiet"]
    _flag(args, "--jobs", None if jobs is None else _whole_number("jobs", jobs, 0))
    for path, rank in (ranks or {}).items():
        args += ["--rank", f"{os.fspath(path)}={rank}"]
    _flag(args, "--force", force)
    stdout, stderr = _run(args)
    return stdout + stderr


def simulate(out: PathLike, **options) -> str:
    """``bubblescope simulate -o OUT``: a simulated job with its truth.json, options named as
    the CLI's flags (schedule="interleaved", stages=4, microbatches=8, fwd_us=[1000, 2000],
    gzip=True, ...). Returns what the CLI says of it."""
    args = ["simulate", "-o", os.fspath(out)]
    for key, value in options.items():
        _flag(args, "--" + key.replace("_", "-"), value)
    stdout, stderr = _run(args)
    return stdout + stderr
