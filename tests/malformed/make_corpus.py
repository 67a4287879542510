#!/usr/bin/env python3
"""Writes the malformed-input corpus under corpus/. Run once; the files are committed so every
case is visible and stable. Each file's expected outcome is asserted in malformed_test.cc."""
import gzip
import json
import os

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def kernel(ts, dur, name="void gemm_kernel<float>(float*)", corr=1):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": 7, "correlation": corr}}


GOOD_EVENTS = [kernel(1000, 10, corr=1), kernel(1020, 5, corr=2),
               kernel(1030, 20, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 3)]


def trace(events, rank=0):
    return {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": rank,
                                                    "world_size": 2}, "traceEvents": events}


def write(name, data):
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(os.path.join(HERE, name), mode) as f:
        f.write(data)


def main():
    os.makedirs(HERE, exist_ok=True)
    good = json.dumps(trace(GOOD_EVENTS))
    write("empty.json", b"")
    write("whitespace_only.json", "  \n\t \n")
    write("binary_garbage.json", bytes([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]) + bytes(range(256)))
    write("plain_text.json", "hello, this is not a trace\n")
    write("top_level_number.json", "42\n")
    write("top_level_string.json", '"traceEvents"\n')
    write("trace_events_is_string.json", '{"traceEvents": "oops"}\n')
    write("trace_events_is_object.json", '{"traceEvents": {"ph": "X"}}\n')
    write("no_trace_events_key.json", '{"schemaVersion": 1, "deviceProperties": []}\n')
    write("empty_trace_events.json", '{"traceEvents": []}\n')
    write("empty_array.json", "[]\n")
    write("all_events_damaged.json", json.dumps(trace([
        1, "x", None,
        {"ph": "X", "cat": "kernel", "name": "k", "ts": "soon", "dur": 1},
        {"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "dur": -3}])) + "\n")
    write("syntax_error_after_events.json", good[:-1] + ', "x": tru}\n')
    write("syntax_error_mid_event.json",
          '{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1 2, "dur": 3}]}\n')
    write("invalid_utf8.json", good.replace("gemm_kernel", "gemm_\xff_kernel", 1)
          .encode("latin-1"))
    write("deep_nesting.json", '{"traceEvents": [' + "[" * 50000 + "]" * 50000 + "]}\n")
    write("nul_bytes.json", good.encode()[:40] + b"\x00\x00\x00" + good.encode()[40:])
    write("bad_gzip.json.gz", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"not deflate data" * 4)
    gz = gzip.compress(good.encode(), mtime=0)
    write("bad_gzip_crc.json.gz", gz[:-8] + bytes([gz[-8] ^ 0xFF]) + gz[-7:])
    write("truncated_gzip.json.gz", gzip.compress(
        json.dumps(trace([kernel(1000 + 30 * i, 10, corr=i + 1) for i in range(400)])).encode(),
        mtime=0)[:-200])
    write("plain_json_named_gz.json.gz", good)
    damaged = trace(GOOD_EVENTS + [
        7,
        {"ph": "X", "cat": "kernel", "name": "neg", "pid": 0, "tid": 7, "ts": 2000, "dur": -5},
        {"ph": "X", "cat": "kernel", "name": "badts", "pid": 0, "tid": 7, "ts": "soon", "dur": 5},
        {"ph": "X", "cat": "kernel", "name": "huge", "pid": 0, "tid": 7, "ts": 1e300, "dur": 5}])
    write("damaged_events.json", json.dumps(damaged) + "\n")
    array_text = "[" + ",\n".join(json.dumps(e) for e in GOOD_EVENTS)
    write("array_unterminated.json", array_text + ",\n")
    write("array_cut_mid_event.json", array_text + ',\n{"ph": "X", "cat": "kern')
    write("object_cut_mid_event.json", good[: good.index('"ncclDev') + 10])
    write("object_cut_after_events.json", good[:-1])
    write("dup_rank_a.json", json.dumps(trace(GOOD_EVENTS, rank=3)))
    write("dup_rank_b.json", json.dumps(trace(GOOD_EVENTS, rank=3)))


if __name__ == "__main__":
    main()
