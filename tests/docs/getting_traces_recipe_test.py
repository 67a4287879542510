#!/usr/bin/env python3
"""docs/getting-traces.md's torch.profiler recipe cannot drift from what was run.

The bundled `recipe_*` runs (sample_traces/torch_cpu/) were recorded by running the page's
marked blocks as written (recipe.py); each run's truth.json keeps the SHA-256 of the block it
ran. This test fails when a block changed since (record the runs again: record.py --listed ...),
when a block no longer compiles, when it stops creating the folder it writes into, or when the
profiler window a block sets up differs from the one record.py wrote into the runs' truth.
Runs without torch: it reads the page and the runs' truth.json only.
"""

import glob
import json
import os
import re
import sys
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
RUNS = os.path.join(ROOT, "sample_traces", "torch_cpu")
sys.path.insert(0, RUNS)
from recipe import RECIPE_WINDOWS, block_sha256, doc_block  # noqa: E402


def recipe_runs():
    runs = {}
    for path in sorted(glob.glob(os.path.join(RUNS, "recipe_*", "truth.json"))):
        with open(path) as f:
            runs[os.path.basename(os.path.dirname(path))] = json.load(f)
    return runs


def schedule_of(block):
    """(skip_first, wait, warmup, active, repeat) of the block's schedule(...) call."""
    call = re.search(r"schedule\(([^)]*)\)", block).group(1)
    args = dict(re.findall(r"(\w+)=(\d+)", call))
    return tuple(int(args.get(k, 0)) for k in ("skip_first", "wait", "warmup", "active", "repeat"))


class GettingTracesRecipeTest(unittest.TestCase):
    def test_every_marked_block_is_bundled_as_run(self):
        runs = recipe_runs()
        self.assertGreaterEqual(len(runs), 4, "the bundled recipe_* runs are missing")
        ran = {truth["profiler"]["recipe"] for truth in runs.values()}
        self.assertEqual(ran, set(RECIPE_WINDOWS))

    def test_runs_were_recorded_with_the_page_as_it_is(self):
        for name, truth in recipe_runs().items():
            recipe = truth["profiler"]["recipe"]
            with self.subTest(run=name):
                self.assertEqual(truth["recipe_sha256"], block_sha256(recipe),
                                 f"docs/getting-traces.md's '{recipe}' block changed since {name} "
                                 f"was recorded: record it again (record.py --listed {name})")

    def test_blocks_compile_and_set_up_the_window_recorded(self):
        for name, window in RECIPE_WINDOWS.items():
            with self.subTest(recipe=name):
                block = doc_block(name)
                compile(block, name, "exec")
                self.assertEqual(schedule_of(block), window)
                # The names the page leaves to the user, and nothing else unbound.
                self.assertIn("train_step()", block)
                self.assertIn("range(num_steps)", block)
        for name, truth in recipe_runs().items():
            prof = truth["profiler"]
            with self.subTest(run=name):
                self.assertEqual((prof["skip_first"], prof["wait"], prof["warmup"], prof["active"],
                                  prof["repeat"]), RECIPE_WINDOWS[prof["recipe"]])

    def test_the_one_cycle_block_creates_its_folder(self):
        block = doc_block("one-cycle")
        folder = re.search(r'export_chrome_trace\(f"([^/"]+)/', block).group(1)
        self.assertRegex(block, r'os\.makedirs\("' + re.escape(folder) + r'", exist_ok=True\)')

    def test_doc_block_names_a_missing_marker(self):
        with self.assertRaises(LookupError):
            doc_block("no-such-recipe")


if __name__ == "__main__":
    unittest.main()
