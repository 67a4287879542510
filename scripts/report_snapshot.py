#!/usr/bin/env python3
"""Writes every report bubblescope makes of every input this checkout can reach, into one folder,
so that two builds can be compared byte for byte (a refactoring must change none of them).

    scripts/report_snapshot.py build/bubblescope /tmp/before
    (change the code, rebuild)
    scripts/report_snapshot.py build/bubblescope /tmp/after --compare /tmp/before

Inputs: the simulated and real sets of sample_traces/, the
third-party traces and Nsight exports of ../shared/traces/, the jobs of the independent accuracy
check (../shared/independent_sim/) and jobs the simulator writes. Per input: analyze as text,
JSON, HTML and Perfetto, whatif as text, JSON and HTML; per pair of runs: diff (text, JSON; from
reports and from traces) and gate (text, Markdown, JUnit). Outputs are compared as written; a
command's exit status and standard error are kept beside them.
"""
import argparse
import filecmp
import importlib.util
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")

# Simulator jobs: (name, simulate flags). Kept small; each covers a schedule family.
SIMULATED = [
    ("sim_1f1b_p4_m6", ["--stages", "4", "--microbatches", "6", "--schedule", "1f1b"]),
    ("sim_interleaved_p4_v2_m8", ["--stages", "4", "--microbatches", "8", "--schedule", "interleaved", "--virtual-stages", "2"]),
    ("sim_gpipe_dp2_p3_m4", ["--stages", "3", "--microbatches", "4", "--schedule", "gpipe", "--data-parallel", "2"]),
    ("sim_zb_p4_m8", ["--stages", "4", "--microbatches", "8", "--schedule", "zb-h1", "--bwd-us", "1200", "--wgrad-us", "800"]),
    ("sim_nsys_1f1b_p2_m4", ["--stages", "2", "--microbatches", "4", "--format", "nsys"]),
    ("sim_hosts_1f1b_dp2_p4_m8", ["--stages", "4", "--microbatches", "8", "--data-parallel", "2", "--ranks-per-host", "2",
                                  "--host-clocks", "0:0,2500:10,-1800:-5,700:3", "--iteration-gap-us", "500000",
                                  "--dp-sync-us", "800", "--jitter", "0.02"]),
]


def trace_inputs():
    """(name, [paths]) for every trace set found."""
    sets = []

    def is_trace(name):
        return name.endswith((".json", ".json.gz", ".sqlite", ".bsdigest")) and name != "truth.json"

    def dirs_of(parent, prefix):
        """Each folder of trace files under parent is a set; a folder of folders is descended."""
        if not os.path.isdir(parent):
            return
        for name in sorted(os.listdir(parent)):
            path = os.path.join(parent, name)
            if not os.path.isdir(path):
                continue
            if any(os.path.isdir(os.path.join(path, f)) for f in os.listdir(path)):
                dirs_of(path, prefix + name + "_")
            elif any(is_trace(f) for f in os.listdir(path)):
                sets.append((prefix + name, [path]))

    dirs_of(os.path.join(ROOT, "sample_traces"), "sample_")
    shared_traces = os.path.join(SHARED, "traces")
    dirs_of(shared_traces, "shared_")
    nsys = os.path.join(shared_traces, "nsys")
    if os.path.isdir(nsys):
        sets = [s for s in sets if s[1][0] != nsys]
        for root, _, files in sorted(os.walk(nsys)):
            for f in sorted(files):
                if f.endswith(".sqlite"):
                    rel = os.path.relpath(os.path.join(root, f), nsys).replace(os.sep, "_")
                    sets.append(("nsys_" + rel, [os.path.join(root, f)]))
    return sets


def accuracy_jobs(work):
    """Generates the independent accuracy check's jobs into work/accuracy; (name, [dir])."""
    check = os.path.join(SHARED, "independent_sim", "check_accuracy.py")
    if not os.path.exists(check):
        return []
    spec = importlib.util.spec_from_file_location("check_accuracy", check)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    jobs = []
    cases = {}
    for table in ("CASES", "FAITHFUL_CASES"):
        cases.update(getattr(module, table, {}))
    for name, runs in sorted(cases.items()):
        out = os.path.join(work, "accuracy", name)
        if not os.path.isdir(out):
            os.makedirs(out)
            for flags in runs:
                subprocess.run([sys.executable, module.SIM, "--out", out] + flags, check=True,
                               stdout=subprocess.DEVNULL)
        jobs.append(("accuracy_" + name, [out]))
    return jobs


def simulated_jobs(binary, work):
    jobs = []
    for name, flags in SIMULATED:
        out = os.path.join(work, "simulated", name)
        subprocess.run([binary, "simulate", "-o", out, "--force"] + flags, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        jobs.append(("simulated_" + name, [out]))
    return jobs


def run(cmd, out_dir, stem):
    """Runs cmd, keeping its stdout, stderr and exit status."""
    p = subprocess.run(cmd, capture_output=True, timeout=600)
    with open(os.path.join(out_dir, stem + ".stdout"), "wb") as f:
        f.write(p.stdout)
    with open(os.path.join(out_dir, stem + ".stderr"), "wb") as f:
        f.write(p.stderr)
    with open(os.path.join(out_dir, stem + ".rc"), "w") as f:
        f.write("%d\n" % p.returncode)
    return p.returncode


def snapshot(binary, out, work):
    os.makedirs(out, exist_ok=True)
    inputs = trace_inputs() + accuracy_jobs(work) + simulated_jobs(binary, work)
    for name, paths in inputs:
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        run([binary, "analyze", "-q", "-j", "2"] + paths, d, "analyze_text")
        run([binary, "analyze", "-q", "-j", "2", "--format", "json", "-o", os.path.join(d, "report.json"),
             "--html", os.path.join(d, "report.html"), "--perfetto", os.path.join(d, "perfetto.json")] + paths,
            d, "analyze_files")
        run([binary, "whatif", "-q", "-j", "2", "-m", "16"] + paths, d, "whatif_text")
        run([binary, "whatif", "-q", "-j", "2", "--format", "json", "-o", os.path.join(d, "whatif.json"),
             "--html", os.path.join(d, "whatif.html")] + paths, d, "whatif_files")
    # Pairs of runs for diff and gate: each sample set against the balanced one, from reports
    # and from traces.
    base_name = "sample_sim_1f1b_p4_m8"
    pairs = [(base_name, n) for n, _ in inputs if n.startswith("sample_sim_") and n != base_name]
    pairs += [("sample_torch_cpu_1f1b_p4_m8", "sample_torch_cpu_1f1b_p4_m8_heavy2"),
              ("sample_torch_cpu_gpipe_p2_m4", "sample_torch_cpu_1f1b_p2_m4_recompute")]
    paths_of = dict(inputs)
    for a, b in pairs:
        if a not in paths_of or b not in paths_of:
            continue
        d = os.path.join(out, "pair_%s__%s" % (a, b))
        os.makedirs(d, exist_ok=True)
        ra, rb = os.path.join(out, a, "report.json"), os.path.join(out, b, "report.json")
        run([binary, "diff", ra, rb], d, "diff_reports_text")
        run([binary, "diff", "--format", "json", ra, rb], d, "diff_reports_json")
        run([binary, "diff", "-q", "-j", "2"] + [paths_of[a][0], paths_of[b][0]], d, "diff_traces_text")
        run([binary, "gate", "--baseline", ra, rb, "--max-bubble-increase", "0.02", "--max-latency-increase", "5%",
             "--max-memory-increase", "5%", "--markdown", os.path.join(d, "gate.md"),
             "--junit", os.path.join(d, "gate.xml")], d, "gate_reports")
        run([binary, "gate", "-q", "-j", "2", "--baseline", paths_of[a][0], paths_of[b][0], "--max-bubble", "0.3"],
            d, "gate_traces")
    # Reports name the files they read: the snapshot's own folder, the generated jobs' folder, the
    # checkout and ../shared are made neutral, so that two snapshots compare whatever folders (or
    # worktrees) they used.
    for root, _, files in os.walk(out):
        for f in files:
            path = os.path.join(root, f)
            with open(path, "rb") as fh:
                data = fh.read()
            neutral = data.replace(out.encode(), b"<snapshot>").replace(work.encode(), b"<jobs>")
            neutral = neutral.replace(SHARED.encode(), b"<shared>").replace(ROOT.encode(), b"<checkout>")
            if neutral != data:
                with open(path, "wb") as fh:
                    fh.write(neutral)
    return len(inputs)


def compare(a, b):
    """Lists the files that differ or exist on one side only; returns their count."""
    differ = 0

    def walk(cmp, rel):
        nonlocal differ
        for f in sorted(cmp.left_only + cmp.right_only):
            print("only on one side: %s" % os.path.join(rel, f))
            differ += 1
        _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
        for f in sorted(mismatch + errors):
            print("differs: %s" % os.path.join(rel, f))
            differ += 1
        for name, sub in sorted(cmp.subdirs.items()):
            walk(sub, os.path.join(rel, name))

    walk(filecmp.dircmp(a, b), "")
    return differ


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary", help="the bubblescope executable")
    ap.add_argument("out", help="folder to write the reports into (created; must not exist)")
    ap.add_argument("--compare", metavar="DIR", help="a snapshot to compare with; exit 1 if any file differs")
    ap.add_argument("--work", metavar="DIR", default=os.path.join(tempfile.gettempdir(), "bubblescope_snapshot_jobs"),
                    help="where generated jobs are kept (default: %(default)s)")
    a = ap.parse_args()
    if os.path.exists(a.out):
        sys.exit("report_snapshot: %s exists; give a new folder" % a.out)
    n = snapshot(os.path.abspath(a.binary), os.path.abspath(a.out), os.path.abspath(a.work))
    files = sum(len(f) for _, _, f in os.walk(a.out))
    print("report_snapshot: %d inputs, %d files in %s" % (n, files, a.out))
    if a.compare:
        differ = compare(a.compare, a.out)
        print("report_snapshot: %d of %d files differ from %s" % (differ, files, a.compare))
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
