#!/usr/bin/env python3
"""Fetches the CUDA 12 CUPTI headers (and libcupti.so.12) the collector's CUDA 12 tests build against.

The machine that builds bubblescope has one CUDA toolkit (13 today); the collector also has to build
against CUPTI from CUDA 12, whose record structs differ (docs/collector.md#cuda-12-and-13). NVIDIA
publishes each CUDA 12 release's CUPTI headers and library in PyPI's `nvidia-cuda-cupti-cu12` wheel,
and the `cuda.h` / `builtin_types.h` they include in `nvidia-cuda-runtime-cu12`. This script
downloads pinned versions of both with pip (hash-checked), and unpacks only the headers, libcupti
and libcudart into DEST/<version>/{include,lib}, which CMake finds (BUBBLESCOPE_CUDA12_CUPTI_ROOTS).
libcudart.so.12 is for the GPU check only (scripts/gpu-check.sh: a CUDA 12 application recorded by
the CUDA 12 collector); nothing is linked against it here.

Two releases are fetched: 12.0 (the oldest CUDA 12 CUPTI: Device4, Memory3, Memcpy5) and 12.9
(Device5, Memory4, Memcpy6), so each struct choice of collector/cupti_records.h is compiled and
tested. Idempotent: a version already unpacked is left alone. No GPU or CUDA toolkit is needed.
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile

# version -> [(requirement, sha256 of the manylinux x86_64 wheel)]
PINNED = {
    "12.0": [
        ("nvidia-cuda-cupti-cu12==12.0.146",
         "218901bafaef99588bc3681a2af61ea1b884b78c53e554fc8d94056d893920a0"),
        ("nvidia-cuda-runtime-cu12==12.0.146",
         "18c038592af387684812fa712642aa9a26c12da80acb488b6709f7cced147f71"),
    ],
    "12.9": [
        ("nvidia-cuda-cupti-cu12==12.9.79",
         "096bcf334f13e1984ba36685ad4c1d6347db214de03dbb6eebb237b41d9d934f"),
        ("nvidia-cuda-runtime-cu12==12.9.79",
         "25bba2dfb01d48a9b59ca474a1ac43c6ebf7011f1b0b8cc44f54eb6ac48a96c3"),
    ],
}

# What is kept of each wheel: its include/ tree, and its one shared library.
KEEP_PREFIXES = ("nvidia/cuda_cupti/include/", "nvidia/cuda_runtime/include/")
KEEP_LIBRARIES = ("nvidia/cuda_cupti/lib/libcupti.so.12", "nvidia/cuda_runtime/lib/libcudart.so.12")
LIBRARIES = tuple(name.rsplit("/", 1)[1] for name in KEEP_LIBRARIES)


def unpack(wheel: pathlib.Path, dest: pathlib.Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.endswith("/"):
                continue
            if name in KEEP_LIBRARIES:
                target = dest / "lib" / name.rsplit("/", 1)[1]
            else:
                prefix = next((p for p in KEEP_PREFIXES if name.startswith(p)), None)
                if prefix is None:
                    continue
                target = dest / "include" / name[len(prefix):]
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(name) as source, open(target, "wb") as out:
                shutil.copyfileobj(source, out)


def fetch(version: str, root: pathlib.Path, pip: list) -> None:
    dest = root / version
    # A copy from before libcudart was kept is fetched again.
    if (dest / ".complete").exists() and all((dest / "lib" / lib).exists() for lib in LIBRARIES):
        return
    with tempfile.TemporaryDirectory() as tmp:
        requirements = pathlib.Path(tmp) / "requirements.txt"
        requirements.write_text("".join(f"{req} --hash=sha256:{sha}\n"
                                        for req, sha in PINNED[version]))
        wheels = pathlib.Path(tmp) / "wheels"
        # The hashes are the x86-64 Linux wheels', the machine CI builds on.
        subprocess.run(pip + ["download", "--quiet", "--no-deps", "--only-binary=:all:",
                              "--require-hashes", "-r", str(requirements), "-d", str(wheels)],
                       check=True)
        partial = root / (version + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        for wheel in sorted(wheels.glob("*.whl")):
            unpack(wheel, partial)
        if not (partial / "include" / "cupti_activity.h").exists() or \
                not (partial / "include" / "cuda.h").exists() or \
                not all((partial / "lib" / lib).exists() for lib in LIBRARIES):
            sys.exit(f"fetch_cuda12_cupti: the {version} wheels lack the CUPTI headers or "
                     "libraries")
        (partial / ".complete").write_text(" ".join(req for req, _ in PINNED[version]) + "\n")
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(partial, dest)
    print(f"fetch_cuda12_cupti: CUDA {version} CUPTI headers in {dest}", file=sys.stderr)


def main() -> None:
    repo = pathlib.Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", default=str(repo / ".cache" / "cuda12-cupti"),
                        help="where each version's include/ and lib/ go (default: %(default)s)")
    parser.add_argument("--pip", default=f"{sys.executable} -m pip",
                        help="the pip command to download with (default: %(default)s)")
    args = parser.parse_args()
    root = pathlib.Path(args.dest)
    root.mkdir(parents=True, exist_ok=True)
    for version in PINNED:
        fetch(version, root, args.pip.split())


if __name__ == "__main__":
    main()
