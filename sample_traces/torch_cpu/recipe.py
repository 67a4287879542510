#!/usr/bin/env python3
"""Runs docs/getting-traces.md's torch.profiler recipe as written, around a real pipeline job.

The page's code blocks are marked `<!-- recipe: NAME ... -->`; this script reads the block NAME
from the page at run time and executes it unchanged, with the two names the page leaves to the
user bound: `train_step()` (one training step of a torch.distributed.pipelining job on gloo,
pipeline_run.py's model) and `num_steps`. So the page cannot drift from what runs: the bundled
`recipe_*` runs are recorded through here (record.py --export recipe), their truth.json keeps
the SHA-256 of the block they ran, and tests/docs/getting_traces_recipe_test.py fails when the
page's block no longer matches it.

As a user would run it (one process per rank; the traces land in ./traces/):
    torchrun --nproc-per-node 4 recipe.py --schedule gpipe --microbatches 8 --steps 5
    torchrun --nproc-per-node 2 recipe.py --recipe cycles --schedule 1f1b --steps 11

PyTorch is only the tool that makes these files; bubblescope never uses it.
"""

import argparse
import hashlib
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.normpath(os.path.join(HERE, "..", "..", "docs", "getting-traces.md"))

# The window each of the page's blocks sets up, (skip_first, wait, warmup, active, repeat):
# what record.py writes into truth.json, checked against the block's text by the test.
RECIPE_WINDOWS = {
    "one-cycle": (0, 1, 1, 3, 1),
    "cycles": (0, 1, 1, 2, 0),
}


def doc_block(name, doc=DOC):
    """The text of the ```python block after the page's `<!-- recipe: NAME` marker."""
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    found = re.search(r"<!-- recipe: " + re.escape(name) + r"\b[^>]*-->\n```python\n(.*?)\n```\n",
                      text, re.S)
    if not found:
        raise LookupError(f"{doc}: no block marked '<!-- recipe: {name}'")
    return found.group(1) + "\n"


def block_sha256(name, doc=DOC):
    return hashlib.sha256(doc_block(name, doc).encode("utf-8")).hexdigest()


def run_doc_block(name, train_step, num_steps, workdir):
    """Executes the page's block NAME in `workdir` (its relative paths land there) with the
    user's two names bound; `train_step` takes no argument, as on the page."""
    code = compile(doc_block(name), f"{DOC} (recipe {name})", "exec")
    previous = os.getcwd()
    os.chdir(workdir)
    try:
        exec(code, {"__name__": "__recipe__", "train_step": train_step, "num_steps": num_steps})
    finally:
        os.chdir(previous)


def main():
    # torch is imported here only: doc_block() serves the test, which runs without torch.
    import sys

    sys.path.insert(0, HERE)
    from pipeline_run import Profiling, Run, worker

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", choices=sorted(RECIPE_WINDOWS), default="one-cycle")
    parser.add_argument("--schedule", default="1f1b",
                        choices=["gpipe", "1f1b", "interleaved", "zb", "zbv", "dualpipev",
                                 "loopedbfs"])
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--virtual", type=int, default=1, help="stages per rank")
    parser.add_argument("--steps", type=int, default=5, help="num_steps: training steps run")
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--microbatch-rows", type=int, default=64)
    args = parser.parse_args()
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        parser.error("run it under torchrun (it reads RANK and WORLD_SIZE)")
    world = int(os.environ["WORLD_SIZE"])
    run = Run(f"recipe_{args.schedule}", args.schedule, world, args.microbatches,
              virtual=args.virtual, layers=args.layers, hidden=args.hidden,
              microbatch_rows=args.microbatch_rows,
              profiling=Profiling(export="recipe", recipe=args.recipe, steps=args.steps))
    worker(int(os.environ["RANK"]), run, None, os.getcwd())


if __name__ == "__main__":
    main()
