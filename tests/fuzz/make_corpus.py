#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpus, tests/fuzz/corpus/<target>/ (docs/fuzzing.md, "Seeding").

    tests/fuzz/make_corpus.py build/bubblescope

Seeds come from three places: small jobs `bubblescope simulate` writes (tiny configs), one-iteration
slices of the real PyTorch traces in sample_traces/torch_cpu, and inputs written here by hand. Each
seed ends with the choice bytes its target reads from the end of an input (tests/fuzz/fuzz_input.h),
built by trailer() in the order the target takes them. Files already in a target's directory that
this script does not write (inputs a fuzzer found, kept on purpose) are left alone.
"""
import gzip
import json
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fuzz" / "corpus"
SEPARATOR = b"\n--next-file--\n"  # fuzz_input.h's kFileSeparator


def trailer(*choices):
    """Choice bytes for a target that takes `choices` in this order from the end of its input.

    An int is one byte (a choice of up to 256 values: the target reduces it modulo its range); a
    bytes value is a string taken by FuzzInput::TakeString: its length byte, then the string.
    """
    out = b""
    for choice in choices:
        if isinstance(choice, bytes):
            out = choice + bytes([len(choice)]) + out
        else:
            out = bytes([choice]) + out
    return out


def compact(text):
    """A pretty-printed trace without its line breaks and indentation (number spellings kept)."""
    return re.sub(rb"\n\s*", b"", text)


def simulate(binary, *flags):
    """{file name: bytes} of a job `bubblescope simulate` writes with `flags`."""
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([binary, "simulate", "-o", out, *flags], check=True,
                       stdout=subprocess.DEVNULL)
        return {p.name: p.read_bytes() for p in sorted(pathlib.Path(out).iterdir())}


def perfetto(binary, rank_files):
    """The merged trace `bubblescope analyze --perfetto` writes of `rank_files` (bytes each)."""
    with tempfile.TemporaryDirectory() as out:
        paths = []
        for i, data in enumerate(rank_files):
            path = pathlib.Path(out) / f"rank{i}.json"
            path.write_bytes(data)
            paths.append(str(path))
        merged = pathlib.Path(out) / "merged.json"
        subprocess.run([binary, "analyze", *paths, "--perfetto", str(merged)], check=True,
                       stdout=subprocess.DEVNULL)
        return merged.read_bytes()


def ranks(files):
    """The rank files of a simulated job, rank order, pretty-printed ones made compact."""
    names = sorted((n for n in files if n.startswith("rank")),
                   key=lambda n: int(re.search(r"\d+", n)[0]))
    return [files[n] if n.endswith(".gz") else compact(files[n]) for n in names]


def torch_slice(rank):
    """One profiler step of a real gloo pipeline rank (gpipe, p=2, m=4): metadata, annotations and
    communication ops, the aten/autograd operators left out (about 11 kB)."""
    path = ROOT / "sample_traces" / "torch_cpu" / "gpipe_p2_m4" / f"rank{rank}.json.gz"
    trace = json.load(gzip.open(path))
    events = trace["traceEvents"]
    step = next(e for e in events if e.get("name", "").startswith("ProfilerStep#"))
    start, end = step["ts"], step["ts"] + step["dur"]
    skipped = ("aten", "autograd", "detach", "torch")

    def kept(e):
        if e["ph"] == "M":
            return True
        if not start <= e.get("ts", -1) <= end or e.get("cat") == "fwdbwd":
            return False
        return e.get("cat") != "cpu_op" or not e["name"].startswith(skipped)

    trace["traceEvents"] = [e for e in events if kept(e)]
    return json.dumps(trace, separators=(",", ":")).encode()


def sample_slice(path, events):
    """The first `events` events of a bundled trace, with its metadata."""
    trace = json.load(gzip.open(ROOT / "sample_traces" / path))
    trace["traceEvents"] = trace["traceEvents"][:events]
    return json.dumps(trace, separators=(",", ":")).encode()


# What bubblescope's collector writes (collector/activity_translator.h), by hand: the array form,
# the process metadata first, a device, a launch and its kernel, a copy, an NVTX range, memory.
EPOCH_US = 1700000000000000
COLLECTOR_EVENTS = [
    {"ph": "M", "name": "bubblescope_process", "pid": 42, "tid": 0,
     "args": {"distributedInfo": {"rank": 1, "world_size": 2}, "host": "h", "pid": 42,
              "local_rank": 1,
              "clock": {"source": "realtime", "unit": "ns", "realtime_offset_ns": 0},
              "collector": {"kinds": 255, "flush_ms": 1000, "start": "process",
                            "buffer_cap_bytes": 67108864}}},
    {"ph": "M", "cat": "", "name": "bubblescope_process", "pid": 42, "tid": 0,
     "args": {"deviceProperties": [{"id": 0, "name": "GPU", "totalGlobalMem": 85899345920,
                                    "computeMajor": 9, "computeMinor": 0, "numSms": 132}]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 42, "tid": 42,
     "ts": EPOCH_US + 1, "dur": 5.5, "args": {"cbid": 211, "correlation": 7}},
    {"ph": "X", "cat": "kernel", "name": "gemm(float*, int)", "pid": 0, "tid": 7,
     "ts": EPOCH_US + 10, "dur": 50.123,
     "args": {"device": 0, "context": 1, "stream": 7, "correlation": 7, "registers per thread": 32,
              "shared memory": 0, "grid": [4, 1, 1], "block": [128, 1, 1]}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
     "pid": 0, "tid": 13, "ts": EPOCH_US + 70, "dur": 20,
     "args": {"device": 0, "context": 1, "stream": 13, "correlation": 9}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
     "tid": 7, "ts": EPOCH_US + 5, "dur": 3,
     "args": {"device": 0, "context": 1, "stream": 7, "correlation": 8, "bytes": 4096}},
    {"ph": "X", "cat": "user_annotation", "name": "PP:F0", "pid": 42, "tid": 42,
     "ts": EPOCH_US + 0.5, "dur": 94.5, "args": {"domain": "bubblescope", "color": 4278255360}},
    {"ph": "i", "cat": "[memory]", "name": "[memory]", "s": "t", "pid": 42, "tid": 0,
     "ts": EPOCH_US + 0.125,
     "args": {"Device Type": 1, "Device Id": 0, "Addr": 139637976727552, "Bytes": 1048576,
              "Total Allocated": 1048576, "Total Reserved": 1048576}},
    {"ph": "M", "cat": "", "name": "bubblescope_dropped", "pid": 42, "tid": 0,
     "args": {"cupti_records": 3, "buffer_requests": 0, "nvtx_ranges": 1, "nccl_events": 0}},
]
COLLECTOR_STYLE = ("[\n" + ",\n".join(json.dumps(e, separators=(",", ":"))
                                      for e in COLLECTOR_EVENTS) + "\n]\n").encode()


def trace_seeds(binary):
    new = ranks(simulate(binary, "--stages", "2", "--microbatches", "2", "--iterations", "1",
                         "--kernels-per-op", "1"))
    old = ranks(simulate(binary, "--stages", "2", "--microbatches", "2", "--iterations", "1",
                         "--kernels-per-op", "1", "--format", "old", "--gzip",
                         "--weights-mb", "64"))
    array = ranks(simulate(binary, "--schedule", "gpipe", "--stages", "2", "--microbatches", "2",
                           "--iterations", "1", "--kernels-per-op", "1", "--format", "array",
                           "--annotations", "pp-cpu"))
    one_rank_merged = perfetto(binary, new[:1])
    plain_sample = gzip.open(
        ROOT / "sample_traces" / "sim_1f1b_p4_m8" / "rank2.pt.trace.json.gz").read()
    return {
        "sim_1f1b_new.json": new[0],
        "sim_1f1b_old.json.gz": old[1],
        "sim_gpipe_array_pp_cpu.json": array[0],
        "torch_cpu_gpipe_step.json": torch_slice(0),
        "sim_interleaved_head.json":
            sample_slice("sim_interleaved_p4_v2_m8/rank1.pt.trace.json.gz", 60),
        "synthetic_head.json": sample_slice("synthetic_pipeline_4rank/rank1.pt.trace.json.gz", 60),
        "cut_mid_event.json": plain_sample[:3000],
        "collector_style.json": COLLECTOR_STYLE,
        # A merged trace (docs/perfetto.md) of one rank: its layout member, pids to map back.
        "perfetto_merged_one_rank.json": one_rank_merged,
        # Megatron-style: batch_isend_irecv kernels under nccl:coalesced, backward launched
        # from the autograd thread, PP ranges mirrored on the GPU.
        "sim_1f1b_batched_torch.json": ranks(simulate(
            binary, "--stages", "2", "--microbatches", "2", "--iterations", "1",
            "--kernels-per-op", "1", "--p2p", "batched", "--launches", "torch",
            "--annotations", "pp-mirrored"))[1],
    }


def job(files, choice):
    return SEPARATOR.join(files) + trailer(choice)


def job_seeds(binary):
    # Choice byte: bits 0-1 copies of a single file - 1; bit 2 rank ids as the loader gives them.
    small = ["--microbatches", "2", "--iterations", "1", "--kernels-per-op", "1"]
    return {
        "sim_1f1b_p2": job(ranks(simulate(binary, "--stages", "2", *small)), 0),
        "sim_zb_p3_gzip": job(ranks(simulate(binary, "--schedule", "zb-h1", "--stages", "3",
                                             "--wgrad-us", "700", "--gzip", *small)), 4),
        "sim_interleaved_p2_old_pp_gpu": job(ranks(simulate(
            binary, "--schedule", "interleaved", "--stages", "2", "--virtual-stages", "2",
            "--microbatches", "4", "--iterations", "1", "--kernels-per-op", "1", "--format", "old",
            "--annotations", "pp-gpu")), 4),
        "sim_gpipe_p4_array_offsets": job(ranks(simulate(
            binary, "--schedule", "gpipe", "--stages", "4", "--format", "array",
            "--stage-to-rank", "2,0,3,1", "--clock-offset-us", "0,1500,-2500,40", "--slow-link",
            "0:2:10", *small)), 0),
        "sim_fwd_only_p2_no_peers": job(ranks(simulate(
            binary, "--schedule", "fwd-only", "--stages", "2", "--no-nccl-args",
            "--no-iteration-barrier", "--annotations", "pp-short", *small)), 4),
        "torch_cpu_gpipe_p2": job([torch_slice(0), torch_slice(1)], 4),
        "one_file_four_copies": job(ranks(simulate(binary, "--stages", "2", *small))[:1], 3),
        "sim_interleaved_p3_batched_rocm": job(ranks(simulate(
            binary, "--schedule", "interleaved", "--stages", "3", "--virtual-stages", "2",
            "--microbatches", "3", "--iterations", "1", "--kernels-per-op", "1", "--p2p",
            "batched", "--vendor", "rocm", "--launches", "torch", "--clock-offset-us",
            "0,700,-300")), 0),
    }


def directory(entries, paths_given, budget, overrides=()):
    """entries: (contents, kind, suffix, stem) with kind 0 file, 4 directory, 5 link to the first
    entry, 6 dangling link, 7 FIFO; suffix an index into directory_fuzzer.cc's kSuffixes (0
    .json, 1 .json.gz, 2 .pt.trace.json, 5 .txt); every one of the four entries takes its choices.
    overrides: (target, path or None, rank) as directory_fuzzer.cc's TakeOverrides reads them."""
    choices = [paths_given, budget]
    for i in range(4):
        _, kind, suffix, stem = entries[i] if i < len(entries) else (b"", 0, 0, b"")
        choices += [kind, suffix, stem]
    choices.append(len(overrides))
    for target, path, rank in overrides:
        choices.append(target)
        if path is not None:
            choices.append(path)
        choices += [0, rank]  # the bool byte: a small rank, not text
    return SEPARATOR.join(e[0] for e in entries) + trailer(*choices)


def directory_seeds(binary):
    sim = simulate(binary, "--stages", "2", "--microbatches", "2", "--iterations", "1",
                   "--kernels-per-op", "1")
    rank0, rank1 = ranks(sim)
    truth = sim["truth.json"]
    return {
        "two_ranks_and_truth": directory(
            [(rank0, 0, 2, b"rank0"), (gzip.compress(rank1, mtime=0), 0, 1, b"rank1"),
             (truth, 0, 0, b"truth")], 0, 12),
        "named_files_with_overrides": directory(
            [(torch_slice(0), 0, 0, b"host-a"), (torch_slice(1), 0, 0, b"host-b")], 1, 12,
            overrides=[(4, None, 1), (1, None, 0)]),
        "fifo_links_and_subdirectory": directory(
            [(rank0, 0, 0, b"worker0"), (b"", 7, 0, b"pipe"), (b"", 6, 0, b"gone"),
             (b"", 4, 0, b"sub")], 0, 12),
        "two_files_one_rank": directory([(rank0, 0, 0, b"x"), (rank0, 0, 0, b"y")], 0, 12),
        "over_budget": directory([(rank0, 0, 0, b"rank0")], 0, 0),
        "directory_and_first_file": directory(
            [(rank1, 0, 0, b"rank-1"), (rank0, 5, 0, b"link")], 2, 12),
        # Both ranks in one merged trace, with the overlay's own events (docs/perfetto.md).
        "perfetto_merged_two_ranks": directory(
            [(perfetto(binary, [rank0, rank1]), 0, 0, b"merged")], 0, 12),
        "override_names_nothing": directory(
            [(rank0, 0, 0, b"a")], 1, 12, overrides=[(3, b"b.json", 0)]),
    }


# analyze_options_fuzzer's jobs (gpipe, 1f1b, interleaved, zb-h1, fwd-only) and their ranks.
JOB_RANKS = [4, 4, 2, 3, 2]
DEFAULT_THRESHOLDS = [128, 3, 5, 13, 13, 13, 13, 13]  # as job::Options' defaults, to a byte


def options(job_index, marker=None, layers=(), layer_annotations=None,
            thresholds=DEFAULT_THRESHOLDS):
    """layers: ints (1 to 16 as one byte each after a 0 byte, larger as four after a 7 byte);
    layer_annotations: a choice per rank
    (0 none, 1-6 one of analyze_options_fuzzer.cc's kLayerNames, 7 two that disagree)."""
    choices = [job_index, 1 if marker is not None else 0, len(layers)]
    for count in layers:
        if count <= 16:
            choices += [0, count - 1]
        else:
            choices.append(7)
            choices += list((count - 1).to_bytes(4, "big"))  # the first byte taken is the high one
    choices += thresholds
    choices += list(layer_annotations or [0] * JOB_RANKS[job_index])
    return (marker or b"") + trailer(*choices)


def options_seeds():
    seeds = {f"job{j}_defaults": options(j) for j in range(5)}
    seeds.update({
        "profiler_step_marker": options(1, marker=rb"^ProfilerStep#\d+$"),
        "forward_marker_pp_cpu": options(1, marker=b"^Forward"),
        "pp_short_marker": options(0, marker=b"PP:F0"),
        "marker_does_not_compile": options(2, marker=b"(unclosed"),
        "empty_marker": options(3, marker=b""),
        "layers_8_8_8_8": options(0, layers=(8, 8, 8, 8)),
        "layers_too_few": options(1, layers=(4, 4, 4)),
        "layers_huge": options(2, layers=(2**31 - 1, 1)),
        "layer_annotations_all": options(2, layer_annotations=[3, 3]),
        "layer_annotations_disagree": options(3, layer_annotations=[2, 7, 2]),
        "layer_annotations_one_missing": options(0, layer_annotations=[3, 0, 3, 3]),
        "thresholds_zero": options(1, thresholds=[0] * 8),
        "thresholds_max": options(4, thresholds=[255] * 8),
    })
    return seeds


# simulate_config_fuzzer's seeds: one flag per line.
SIMULATE_SEEDS = {
    "small_1f1b": ["stages=2", "microbatches=2", "iterations=1", "kernels-per-op=1"],
    "gpipe_slow_link_jitter": ["schedule=gpipe", "stages=3", "microbatches=3", "iterations=2",
                               "slow-link=0:1:10", "slow-link=1:2:inf", "jitter=0.05", "seed=7",
                               "clock-offset-us=0,1.5,-2000"],
    "interleaved_old_pp_gpu": ["--schedule=interleaved", "--stages=2", "--virtual-stages=2",
                               "--microbatches=4", "--iterations=1", "--format=old",
                               "--annotations=pp-gpu"],
    "zb_array_memory": ["schedule=zb-h1", "stages=3", "microbatches=3", "iterations=1",
                        "wgrad-us=700", "fwd-us=1000,1500.5,900", "weights-mb=512,256,0.5",
                        "stash-mb=24", "format=array", "annotations=pp-cpu"],
    "fwd_only_no_barrier": ["schedule=fwd-only", "stages=2", "microbatches=4", "iterations=2",
                            "no-iteration-barrier", "no-nccl-args", "annotations=pp-short"],
    "placement_and_links": ["stages=4", "microbatches=4", "iterations=1", "kernels-per-op=1",
                            "stage-to-rank=3,1,0,2", "optimizer-us=300", "launch-gap-us=0",
                            "link-gbps=inf", "link-latency-us=0", "activation-mb=0"],
    "far_apart_times": ["stages=2", "microbatches=1", "iterations=1", "kernels-per-op=1",
                        "fwd-us=999999999999", "bwd-us=0.001",
                        "clock-offset-us=-999999999999.999,999999999999.999"],
    "interleaved_bad_microbatches": ["schedule=interleaved", "stages=2", "virtual-stages=2",
                                     "microbatches=3"],
    "bad_value": ["stages=0"],
    "batched_torch_rocm": ["schedule=interleaved", "stages=3", "virtual-stages=2",
                           "microbatches=3", "iterations=1", "kernels-per-op=1", "p2p=batched",
                           "launches=torch", "vendor=rocm", "annotations=pp-mirrored"],
}


def collector_seeds():
    """One record of each kind (selector byte; the record's bytes are zeros, its times then the
    plausible epoch) with every kind enabled and two strings for the name pointers, and the
    unsizable kind. Longer record sequences come from fuzzing runs (docs/fuzzing.md)."""
    seeds = {}
    names = ["kernel", "memcpy", "memset", "memory", "marker", "marker_data", "runtime", "driver",
             "device", "unsizable"]
    for selector, name in enumerate(names):
        # plausible, all kinds, range cap 8, split after the first record, closed, two strings.
        seeds[f"one_{name}"] = bytes([selector]) + trailer(1, 255, 7, 1, 1, 2, b"_Z4gemmPfi",
                                                           b"forward")
    return seeds


def report_seeds(binary):
    """analyze's JSON reports (with their what-if models) of simulated jobs: 1f1b with layer
    counts (a rebalance move), interleaved, zb-h1 with memory; and a newer minor version."""
    seeds = {}
    for name, flags, layers in [
            ("imbalanced_1f1b", ["--schedule", "1f1b", "--stages", "4", "--microbatches", "8",
                                 "--fwd-us", "1000,1000,1500,1000",
                                 "--bwd-us", "2000,2000,3000,2000"], "8,8,8,8"),
            ("interleaved", ["--schedule", "interleaved", "--stages", "2", "--virtual-stages",
                             "2", "--microbatches", "4"], None),
            ("zb_h1", ["--schedule", "zb-h1", "--stages", "2", "--microbatches", "4",
                       "--bwd-us", "1000", "--wgrad-us", "1000"], None)]:
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([binary, "simulate", "-o", out, *flags], check=True,
                           stdout=subprocess.DEVNULL)
            command = [binary, "analyze", out, "--format", "json"]
            if layers:
                command += ["--layers-per-stage", layers]
            seeds[name] = subprocess.run(command, check=True, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL).stdout
    seeds["newer_minor"] = ('{"schema": "bubblescope.analyze/1.4", "added": {"x": [1]}, '
                            '"pipelines": [{"pipeline": 0, "ranks": [0, 1], "whatif_model": null, '
                            '"whatif_model_problem": "the pipeline\'s shape is unknown"}]}')
    return seeds


def digest_seeds(binary, traces):
    """Each trace seed that reads, as `bubblescope digest` writes it (docs/digest.md)."""
    seeds = {"empty_rank.bsdigest": (CORPUS / "digest_fuzzer" / "empty_rank.bsdigest").read_bytes()}
    with tempfile.TemporaryDirectory() as out:
        for name, data in traces.items():
            trace = pathlib.Path(out) / name
            trace.write_bytes(data if isinstance(data, bytes) else data.encode())
            digests = pathlib.Path(out) / (name + ".digests")
            done = subprocess.run([binary, "digest", str(trace), "-o", str(digests)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if done.returncode != 0:
                continue
            for digest in sorted(digests.iterdir()):
                stem = name.split(".")[0]
                seeds[f"{stem}_{digest.name}"] = digest.read_bytes()
    return seeds


def watch_seeds(binary):
    # Choice bytes: the number of looks (the byte modulo 6, plus 1), then for each look the share
    # of each of four files written by then (of 255).
    small = ["--microbatches", "2", "--iterations", "3", "--kernels-per-op", "1"]
    arrays = ranks(simulate(binary, "--stages", "2", "--format", "array", *small))
    return {
        "sim_1f1b_p2_array_three_looks": SEPARATOR.join(arrays) + trailer(
            2, 60, 40, 0, 0, 150, 170, 0, 0, 254, 200, 0, 0),
        "sim_1f1b_p2_array_cut_in_events": SEPARATOR.join(arrays) + trailer(
            1, 101, 77, 0, 0, 203, 191, 0, 0),
        "torch_cpu_gpipe_p2_whole": SEPARATOR.join([torch_slice(0), torch_slice(1)]) + trailer(
            0, 255, 255, 0, 0),
    }


def write(target, seeds):
    directory = CORPUS / target
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in seeds.items():
        (directory / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    traces = trace_seeds(binary)
    write("trace_fuzzer", traces)
    write("digest_fuzzer", digest_seeds(binary, traces))
    write("job_fuzzer", job_seeds(binary))
    write("directory_fuzzer", directory_seeds(binary))
    write("analyze_options_fuzzer", options_seeds())
    write("simulate_config_fuzzer",
          {name: "\n".join(lines) + "\n" for name, lines in SIMULATE_SEEDS.items()})
    write("compare_fuzzer", report_seeds(binary))
    write("collector_record_fuzzer", collector_seeds())
    write("watch_fuzzer", watch_seeds(binary))


if __name__ == "__main__":
    main()
