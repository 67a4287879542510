"""A worked example of the Python API (docs/python.md); the test suite runs it.

Usage: python docs/python_example.py WORKDIR
Simulates a balanced 1F1B job and one with a slow stage, analyses both, and gates the second
against the first."""

import sys
from pathlib import Path

import bubblescope

work = Path(sys.argv[1] if len(sys.argv) > 1 else "bubblescope-example")
bubblescope.simulate(work / "before", stages=4, microbatches=8, force=True)
bubblescope.simulate(work / "after", stages=4, microbatches=8, fwd_us=[1000, 1000, 2000, 1000],
                     force=True)

job = bubblescope.analyze(work / "before")
pipeline = job.pipelines[0]
print(f"{pipeline.schedule} p={pipeline.stage_count} m={pipeline.microbatches}: bubble "
      f"{pipeline.bubble_fraction:.1%}, theoretical {pipeline.theoretical_bubble_fraction:.1%}")
for cause in pipeline.root_causes:
    print(f"  {cause.cause}: {cause.summary}")

slow = bubblescope.analyze(work / "after")
print(f"slowest stage after: {slow.pipelines[0].slowest_stage.stage}")
verdict = bubblescope.gate(job, slow, max_bubble_increase=0.02)
print(f"gate passed: {verdict.passed}")
for check in verdict.failed:
    print(f"  {check.name}: {check.figures}")

try:
    import pandas  # noqa: F401
except ImportError:
    pass
else:
    idle = slow.idle_frame()
    idle = idle[idle.complete].assign(idle_us=(idle.end_ns - idle.start_ns) / 1e3)
    print(idle.groupby("kind").idle_us.sum().round(3).to_string())
