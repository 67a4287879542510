#!/usr/bin/env python3
"""Step 3 of scripts/gpu-check.sh: NCCL's profiler plugin on one GPU.

A one-rank communicator (ncclCommInitAll over GPU 0) does, --iterations times, a send and a
receive to itself inside one group, then an all-reduce. It calls the NCCL library torch itself
loaded (through ctypes, so nothing is compiled against a particular NCCL), on torch's current
stream with torch tensors as buffers, and checks the data arrived. Writes JSON to --result: the
NCCL version, what was run, and whether the data was right.
"""
import argparse
import ctypes
import glob
import json
import os

import torch

NCCL_FLOAT32 = 7
NCCL_SUM = 0


def loaded_nccl():
    """The libnccl this process holds (torch's), else the one in torch's site-packages."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "libnccl.so" in os.path.basename(path):
                return path
    roots = [os.path.dirname(os.path.dirname(torch.__file__))]
    for root in roots:
        found = sorted(glob.glob(os.path.join(root, "nvidia", "**", "libnccl.so*"), recursive=True))
        if found:
            return found[0]
    return "libnccl.so.2"


def check(result, what):
    if result != 0:
        raise RuntimeError(f"{what} failed: ncclResult {result}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--elements", type=int, default=1 << 20)
    parser.add_argument("--result", required=True)
    args = parser.parse_args()

    torch.cuda.init()
    path = loaded_nccl()
    nccl = ctypes.CDLL(path)
    version = ctypes.c_int()
    check(nccl.ncclGetVersion(ctypes.byref(version)), "ncclGetVersion")
    nccl.ncclSend.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                              ctypes.c_void_p, ctypes.c_void_p]
    nccl.ncclRecv.argtypes = nccl.ncclSend.argtypes
    nccl.ncclAllReduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                   ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]

    comm = ctypes.c_void_p()
    devices = (ctypes.c_int * 1)(0)
    check(nccl.ncclCommInitAll(ctypes.byref(comm), 1, devices), "ncclCommInitAll")
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    send = torch.arange(args.elements, dtype=torch.float32, device="cuda")
    recv = torch.zeros_like(send)
    reduced = torch.zeros_like(send)
    ok = True
    for i in range(args.iterations):
        torch.cuda.nvtx.range_push(f"ProfilerStep#{i}")
        check(nccl.ncclGroupStart(), "ncclGroupStart")
        check(nccl.ncclSend(send.data_ptr(), args.elements, NCCL_FLOAT32, 0, comm, stream), "ncclSend")
        check(nccl.ncclRecv(recv.data_ptr(), args.elements, NCCL_FLOAT32, 0, comm, stream), "ncclRecv")
        check(nccl.ncclGroupEnd(), "ncclGroupEnd")
        check(nccl.ncclAllReduce(send.data_ptr(), reduced.data_ptr(), args.elements, NCCL_FLOAT32,
                                 NCCL_SUM, comm, stream), "ncclAllReduce")
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        ok = ok and torch.equal(recv, send) and torch.equal(reduced, send)
        recv.zero_()
        reduced.zero_()
    check(nccl.ncclCommFinalize(comm), "ncclCommFinalize")
    check(nccl.ncclCommDestroy(comm), "ncclCommDestroy")
    with open(args.result, "w") as out:
        json.dump({"nccl_library": path, "nccl_version": version.value,
                   "iterations": args.iterations, "elements": args.elements,
                   "bytes_per_transfer": 4 * args.elements, "data_correct": ok}, out)
    if not ok:
        raise SystemExit("nccl_self: the data sent to itself or all-reduced came back wrong")


if __name__ == "__main__":
    main()
