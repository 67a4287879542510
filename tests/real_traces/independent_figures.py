#!/usr/bin/env python3
"""Works out, independently of bubblescope's C++ code, the per-rank figures that the real-trace
tests assert: device span, unions of compute / communication / memcpy+memset time, idle time, op
counts, profiler steps and memory peaks. Run once by hand; its output was checked and copied into
real_traces_test.cc. Times are exact integer nanoseconds (JSON numbers read as Decimal)."""
import decimal
import gzip
import json
import re
import sys

NCCL = re.compile(r"nccl|rccl|hccl", re.I)


def ns(value):
    d = decimal.Decimal(str(value)) * 1000
    return int(d.to_integral_value(rounding=decimal.ROUND_HALF_UP))


def union_length(intervals):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def figures(path):
    with gzip.open(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    base = doc.get("baseTimeNanoseconds", 0) if isinstance(doc, dict) else 0
    compute, comm, mem = [], [], []
    steps = 0
    peak_alloc = peak_res = -1
    for e in events:
        cat, ph, name = e.get("cat"), e.get("ph"), e.get("name", "")
        if ph == "X" and cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            s = base + ns(e["ts"])
            iv = (s, s + ns(e["dur"]))
            if cat != "kernel":
                mem.append(iv)
            elif NCCL.search(name):
                comm.append(iv)
            else:
                compute.append(iv)
        if ph == "X" and name.startswith("ProfilerStep#"):
            steps += 1
        if ph == "i" and (cat == "[memory]" or name == "[memory]"):
            a = e.get("args", {})
            if a.get("Device Type") == 1:
                peak_alloc = max(peak_alloc, int(a["Total Allocated"]))
                peak_res = max(peak_res, int(a["Total Reserved"]))
    device = compute + comm + mem
    start = min(s for s, _ in device)
    end = max(e for _, e in device)
    span = end - start
    return {
        "rank": doc.get("distributedInfo", {}).get("rank"),
        "span_start": start, "span": span,
        "compute": union_length(compute), "comm": union_length(comm),
        "memcpy": union_length(mem), "idle": span - union_length(device),
        "kernels": len(compute) + len(comm), "comm_ops": len(comm), "memcpy_ops": len(mem),
        "steps": steps, "peak_allocated": peak_alloc, "peak_reserved": peak_res,
    }


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(p.split("/")[-1], json.dumps(figures(p)))
