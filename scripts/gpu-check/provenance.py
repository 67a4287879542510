#!/usr/bin/env python3
"""What the GPU check ran on: GPU, driver, CUDA toolkit, torch, NCCL and CUPTI versions, and the
bundle's own manifest (what the collector was built against). Prints JSON."""
import datetime
import importlib.metadata
import json
import subprocess
import sys


def command(*args):
    try:
        return subprocess.run(args, capture_output=True, text=True, check=False,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None


def main():
    manifest_path = sys.argv[1] if len(sys.argv) > 1 else None
    info = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    smi = command("nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                  "--format=csv,noheader")
    if smi:
        name, driver, memory = [part.strip() for part in smi.splitlines()[0].split(",")]
        info.update(gpu=name, driver=driver, gpu_memory=memory)
    nvcc = command("nvcc", "--version") or command("/usr/local/cuda/bin/nvcc", "--version")
    if nvcc:
        info["cuda_toolkit"] = nvcc.splitlines()[-1]
    info["glibc"] = (command("ldd", "--version") or "").split("\n")[0]
    try:
        import torch
        info["torch"] = torch.__version__
        info["torch_cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            info["nccl"] = ".".join(str(part) for part in torch.cuda.nccl.version())
    except Exception as error:  # torch missing or broken: say so, keep the rest
        info["torch_error"] = repr(error)
    packages = {}
    for distribution in importlib.metadata.distributions():
        name = distribution.metadata["Name"] or ""
        if name.startswith("nvidia-") and ("cupti" in name or "nccl" in name or "runtime" in name):
            packages[name] = distribution.version
    info["nvidia_packages"] = packages
    info["cupti"] = ", ".join(f"{k} {v}" for k, v in sorted(packages.items()) if "cupti" in k)
    if manifest_path:
        with open(manifest_path, encoding="utf-8") as source:
            info["bundle"] = json.load(source)
    json.dump(info, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
