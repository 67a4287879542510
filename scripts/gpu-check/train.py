#!/usr/bin/env python3
"""A small transformer training loop, the workload of scripts/gpu-check.sh's steps 1 and 2.

Every step is one forward, backward and optimizer step of a 4-layer transformer encoder on a
fixed random batch (seeded, so each run launches the same kernels). Step i (from 0) is marked
as PyTorch's profiler marks it: an NVTX range `ProfilerStep#i` (which the bubblescope collector
records), and, with --kineto, torch.profiler's own `ProfilerStep#i` through prof.step(). Warm-up
steps run before any of that and are not marked.

Writes JSON to --times: the wall time of every marked step (synchronised with the GPU, measured
outside the NVTX range), so runs with and without a profiler compare step for step.
"""
import argparse
import json
import time

import torch


def build(device, d_model, layers, heads):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model,
                                             batch_first=True, dropout=0.0, device=device)
    model = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    return model, optimizer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seq", type=int, default=256)
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--device", default="cuda", help="cuda, or cpu for a dry run")
    parser.add_argument("--kineto", metavar="TRACE.json",
                        help="also run torch.profiler (CPU + CUDA) over the marked steps and "
                             "export its Chrome trace here")
    parser.add_argument("--times", required=True, help="where the step times go (JSON)")
    args = parser.parse_args()

    device = torch.device(args.device)
    on_gpu = device.type == "cuda"
    model, optimizer = build(device, args.d_model, args.layers, args.heads)
    generator = torch.Generator(device="cpu").manual_seed(1)
    batch = torch.randn(args.batch, args.seq, args.d_model, generator=generator).to(device)
    target = torch.randn(args.batch, args.seq, args.d_model, generator=generator).to(device)

    def sync():
        if on_gpu:
            torch.cuda.synchronize()

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(batch), target)
        loss.backward()
        optimizer.step()

    for _ in range(args.warmup):
        step()
    sync()

    profiler = None
    if args.kineto:
        activities = [torch.profiler.ProfilerActivity.CPU]
        if on_gpu:
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        # A schedule is what makes torch.profiler mark its steps (ProfilerStep#i from 0).
        profiler = torch.profiler.profile(
            activities=activities,
            schedule=torch.profiler.schedule(wait=0, warmup=0, active=args.steps, repeat=1),
            on_trace_ready=lambda done: done.export_chrome_trace(args.kineto))
        profiler.__enter__()

    times = []
    for i in range(args.steps):
        sync()
        began = time.perf_counter()
        if on_gpu:
            torch.cuda.nvtx.range_push(f"ProfilerStep#{i}")
        step()
        sync()
        if on_gpu:
            torch.cuda.nvtx.range_pop()
        times.append(time.perf_counter() - began)
        if profiler is not None:
            profiler.step()

    if profiler is not None:
        profiler.__exit__(None, None, None)
    with open(args.times, "w") as out:
        json.dump({"step_seconds": times, "warmup": args.warmup, "device": str(device),
                   "kineto": bool(args.kineto), "torch": torch.__version__,
                   "gpu": torch.cuda.get_device_name() if on_gpu else None}, out)


if __name__ == "__main__":
    main()
