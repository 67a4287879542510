#!/usr/bin/env bash
# The collector's one prepared run on a GPU machine (docs/collector-gpu-check.md).
#
#   scripts/gpu-check.sh prepare          CPU machine: build everything the run needs into the
#                                         bundle .cache/gpu-check/ (carried over to the GPU machine)
#   scripts/gpu-check.sh run [OUT]        GPU machine: steps 1-8, traces and summary under OUT
#                                         (default $OUT); under 8 minutes
#   scripts/gpu-check.sh check DIR        CPU machine: check what came back (analyze, figures)
#   scripts/gpu-check.sh dry-run [OUT]    CPU machine: `run` on the CPU (torch on the CPU, no NCCL
#                                         step), to try the bundle, the plumbing and the checker
#
# The GPU machine has a driver, CUDA 13, and PyTorch with its pip NCCL and CUPTI, but no Debian
# packages and no network: the bundle holds bubblescope (run through the bundle's own dynamic
# loader path, so the job does not inherit it), the collector built against CUDA 13's and
# CUDA 12.9's CUPTI (the one matching torch's CUDA is used, sharing torch's libcupti), and the
# demo job with the libraries it needs but libcuda and NCCL (torch's NCCL is used).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
bundle=$repo/.cache/gpu-check
tools=$repo/scripts/gpu-check

die() { echo "gpu-check: $*" >&2; exit 2; }

# The libraries a binary needs that the GPU machine may lack: everything ldd resolves but glibc's
# own, the driver (libcuda) and the GPU stack torch brings (NCCL, CUPTI).
copy_libraries() {
  ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libcuda.so*|libnccl.so*|libcupti.so*) ;;
      *) cp -L -n "$lib" "$bundle/lib/" ;;
    esac
  done
}

prepare() {
  local build=${BUILD_DIR:-$repo/build-gpucheck}
  # H100 and H200 are sm_90; the demo's kernels are compiled for it (with its PTX).
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUBBLESCOPE_BUILD_TESTS=OFF \
    -DBUBBLESCOPE_BUILD_BENCH=OFF -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
  local targets=(bubblescope bubblescope_collector bubblescope_pipeline_demo)
  if grep -q '^build bubblescope_collector_cuda12_9:' "$build/build.ninja"; then
    targets+=(bubblescope_collector_cuda12_9)
  else
    echo "gpu-check: no CUDA 12.9 CUPTI headers (scripts/fetch_cuda12_cupti.py): the bundle holds" \
         "the CUDA 13 collector only" >&2
  fi
  cmake --build "$build" -j "${JOBS:-2}" --target "${targets[@]}"
  rm -rf "$bundle"
  mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/stdcxx" "$bundle/collector-cuda13"
  cp "$build/bubblescope" "$bundle/bin/bubblescope.bin"
  cp "$build/bubblescope_pipeline_demo" "$bundle/bin/bubblescope_pipeline_demo"
  cp "$build/libbubblescope_collector.so" "$build/libbubblescope_cupti_handoff.so" \
    "$bundle/collector-cuda13/"
  if [ -f "$build/collector-cuda12_9/libbubblescope_collector.so" ]; then
    mkdir -p "$bundle/collector-cuda12"
    cp "$build/collector-cuda12_9/libbubblescope_collector.so" \
      "$build/collector-cuda12_9/libbubblescope_cupti_handoff.so" "$bundle/collector-cuda12/"
    # CUDA 12.9's libcupti and libcudart, for steps 6 and 7 on a machine whose torch brings
    # CUDA 13's only; step 7's application, linked against that libcudart.
    local cuda12=$repo/.cache/cuda12-cupti/12.9/lib
    if [ -f "$cuda12/libcupti.so.12" ] && [ -f "$cuda12/libcudart.so.12" ]; then
      mkdir -p "$bundle/cupti12"
      cp "$cuda12/libcupti.so.12" "$cuda12/libcudart.so.12" "$bundle/cupti12/"
      nvcc -arch=sm_90 -cudart none -o "$bundle/bin/cuda12_app" "$tools/cuda12_app.cu" \
        -L"$cuda12" -l:libcudart.so.12 -Xlinker -rpath -Xlinker '$ORIGIN/../cupti12'
    else
      echo "gpu-check: no CUDA 12.9 libcupti/libcudart (scripts/fetch_cuda12_cupti.py): no steps" \
           "6 and 7" >&2
    fi
  fi
  copy_libraries "$bundle/bin/bubblescope.bin"
  copy_libraries "$bundle/bin/bubblescope_pipeline_demo"
  # The collector needs only libcupti and libstdc++; the latter is at hand for a torch whose own
  # libstdc++ turns out older (`run` checks before it records).
  for lib in libstdc++.so.6 libgcc_s.so.1; do
    cp -L "$(ldd "$bundle/collector-cuda13/libbubblescope_collector.so" | awk -v l="$lib" '$1 == l {print $3}')" \
      "$bundle/stdcxx/"
  done
  # bubblescope through the dynamic loader with the bundle's libraries: the path reaches it only,
  # not the job it starts.
  local loader
  loader=$(readelf -l "$bundle/bin/bubblescope.bin" | sed -n 's/.*interpreter: \(.*\)]/\1/p')
  cat > "$bundle/bin/bubblescope" <<EOF
#!/bin/sh
here=\$(dirname "\$(readlink -f "\$0")")
exec $loader --library-path "\$here/../lib" "\$here/bubblescope.bin" "\$@"
EOF
  chmod +x "$bundle/bin/bubblescope"
  cat > "$bundle/manifest.json" <<EOF
{"commit": "$(git rev-parse HEAD)$(git diff --quiet HEAD -- collector scripts || echo '+changes')",
 "built_on": "$(hostname)", "built_at": "$(date -u +%FT%TZ)",
 "loader": "$loader",
 "cuda13_cupti_api": "$(sed -n 's/^#define CUPTI_API_VERSION \([0-9]*\).*/\1/p' /usr/local/cuda/include/cupti_version.h 2>/dev/null)",
 "cuda12_cupti_api": "$(sed -n 's/^#define CUPTI_API_VERSION \([0-9]*\).*/\1/p' "$repo/.cache/cuda12-cupti/12.9/include/cupti_version.h" 2>/dev/null)",
 "demo_cuda_architectures": "90"}
EOF
  "$bundle/bin/bubblescope" --version >/dev/null || die "the bundled bubblescope does not start"
  du -sh "$bundle" >&2
  echo "gpu-check: bundle ready in $bundle (carry .cache/gpu-check to the GPU machine)" >&2
}

# Runs a step's job with a time limit, its output in LOG; writes its exit status to STATUS.
timed() {
  local seconds=$1 log=$2 status=$3; shift 3
  local rc=0
  timeout --kill-after=10 "$seconds" "$@" >"$log" 2>&1 || rc=$?
  printf '{"exit_status": %d, "iterations": %s}\n' "$rc" "${ITERATIONS:-null}" >"$status"
  echo "gpu-check: $(basename "$(dirname "$status")") $(basename "$status" .json): exit $rc" >&2
  return 0
}

run() {
  local out=${1:-${OUT:-}} dry=${DRY_RUN:-0}
  [ -n "$out" ] || die "run: no output folder (argument or \$OUT)"
  [ -x "$bundle/bin/bubblescope" ] || die "run: no bundle in $bundle (scripts/gpu-check.sh prepare)"
  mkdir -p "$out"/step{1,2,3,4}
  out=$(cd "$out" && pwd)
  local py=${PYTHON:-python3}
  local bubblescope=$bundle/bin/bubblescope
  local train=("$py" "$tools/train.py")
  if [ "$dry" = 1 ]; then
    train+=(--device cpu --steps 3 --warmup 1 --d-model 64 --seq 32 --batch 2 --layers 2)
  fi

  # Which collector (torch's CUDA major), and where torch keeps libcupti and libnccl: the
  # collector shares torch's libcupti, and the demo uses torch's NCCL.
  local probe
  probe=$("$py" - <<'EOF'
import glob, os, torch
root = os.path.dirname(os.path.dirname(torch.__file__))
dirs = sorted({os.path.dirname(p) for pattern in ("libcupti.so.*", "libnccl.so.*", "libcudart.so.*")
               for p in glob.glob(os.path.join(root, "nvidia", "**", pattern), recursive=True)})
print((torch.version.cuda or "0").split(".")[0], ":".join(dirs))
EOF
  ) || die "run: $py cannot import torch"
  local cuda_major=${probe%% *} torch_libs=${probe#* }
  local collector=$bundle/collector-cuda13/libbubblescope_collector.so
  if [ "$cuda_major" = 12 ]; then collector=$bundle/collector-cuda12/libbubblescope_collector.so; fi
  [ -f "$collector" ] || die "run: no collector for torch's CUDA $cuda_major in the bundle"
  export LD_LIBRARY_PATH=$torch_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # The collector must load into torch's process: if torch's libstdc++ is too old, the bundle's
  # goes first.
  if ! "$py" -c "import torch, ctypes, sys; ctypes.CDLL(sys.argv[1])" "$collector" \
       2>"$out/collector-load.log"; then
    export LD_LIBRARY_PATH=$bundle/stdcxx:$LD_LIBRARY_PATH
    "$py" -c "import torch, ctypes, sys; ctypes.CDLL(sys.argv[1])" "$collector" \
      2>>"$out/collector-load.log" || die "run: the collector does not load: $(cat "$out/collector-load.log")"
  fi
  echo "gpu-check: collector $collector (torch CUDA $cuda_major)" >&2
  "$py" "$tools/provenance.py" "$bundle/manifest.json" >"$out/provenance.json" || true
  nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true

  # --whole-job: each step checks every step and iteration its job runs, not record's default
  # window (docs/record.md, "What is recorded").
  local record=("$bubblescope" record --collector "$collector" --whole-job)
  # 1. The loop alone and under record, alternately, three times (step times vary from run to
  # run on a shared machine as much as the overhead sought: the rounds pair them), then under
  # torch.profiler. The first recorded round is the one compared with Kineto kernel by kernel.
  local round
  for round in 1 2 3; do
    timed 60 "$out/step1/plain$round.log" "$out/step1/plain$round-status.json" \
      "${train[@]}" --times "$out/step1/plain$round-times.json"
    timed 75 "$out/step1/record$round.log" "$out/step1/record$round-status.json" \
      "${record[@]}" -o "$out/step1/record$round" --run-id "gpucheck-step1-$round" -- \
      "${train[@]}" --times "$out/step1/record$round-times.json"
  done
  timed 75 "$out/step1/kineto.log" "$out/step1/kineto-status.json" \
    "${train[@]}" --kineto "$out/step1/kineto.json" --times "$out/step1/kineto-times.json"
  # 2. torch.profiler inside record: what each wrote, and the user's run unbroken.
  timed 90 "$out/step2/stderr.log" "$out/step2/status.json" \
    "${record[@]}" -o "$out/step2/record" --run-id gpucheck-step2 -- \
    "${train[@]}" --kineto "$out/step2/kineto.json" --times "$out/step2/times.json"
  if [ "$dry" != 1 ]; then
    # 3. NCCL's profiler plugin: a one-rank communicator's self send/recv and all-reduce.
    timed 60 "$out/step3/job.log" "$out/step3/status.json" \
      "${record[@]}" -o "$out/step3/record" --run-id gpucheck-step3 -- \
      env RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 "$py" "$tools/nccl_self.py" --result "$out/step3/result.json"
    # 4. The demo job with one stage (one GPU cannot hold two NCCL ranks).
    local loader
    loader=$(sed -n 's/.*"loader": "\(.*\)".*/\1/p' "$bundle/manifest.json")
    ITERATIONS=3 timed 45 "$out/step4/job.log" "$out/step4/status.json" \
      "${record[@]}" -o "$out/step4/record" --run-id gpucheck-step4 -- \
      "$loader" --library-path "$bundle/lib:$LD_LIBRARY_PATH" "$bundle/bin/bubblescope_pipeline_demo" \
      --ranks 1 --iterations 3 --microbatches 4
    # 8. `record --live`: the demo job again, each process writing its trace as each step begins
    # and the timed flush put out of reach (10 minutes), while file_growth.py notes each write;
    # `watch --format jsonl` followed it live; then `watch --once --format jsonl` and
    # `analyze --format json` of the folder, whose iterations check.py compares figure for figure
    # with both watches'. Steps of about 0.1 s (--rounds) so that
    # each write can be seen; one stage per GPU, up to 4 (one GPU makes no pipeline).
    mkdir -p "$out/step8"
    rm -f "$out/step8/stop"
    local demo=("$loader" --library-path "$bundle/lib:$LD_LIBRARY_PATH"
                "$bundle/bin/bubblescope_pipeline_demo")
    local gpus
    gpus=$("${demo[@]}" --count-gpus 2>/dev/null || true)
    case "$gpus" in ''|*[!0-9]*|0) gpus=1 ;; esac
    [ "$gpus" -le 4 ] || gpus=4
    "$py" "$tools/file_growth.py" "$out/step8/record" "$out/step8/growth.jsonl" \
      --stop "$out/step8/stop" --timeout 120 &
    local follower=$!
    # watch following the job while it runs, from before its folder exists until its files
    # close (or 30 s without news, if a rank never closes its file).
    "$bubblescope" watch --format jsonl --interval-ms 50 --idle-exit 30 "$out/step8/record" \
      >"$out/step8/watch-live.jsonl" 2>"$out/step8/watch-live.log" &
    local watcher=$!
    ITERATIONS=6 timed 60 "$out/step8/job.log" "$out/step8/status.json" \
      "${record[@]}" --live --flush-ms 600000 -o "$out/step8/record" --run-id gpucheck-step8 -- \
      "${demo[@]}" --ranks "$gpus" --iterations 6 --microbatches 4 --rounds 60000
    touch "$out/step8/stop"
    wait "$follower" || true
    local live_status=0
    wait "$watcher" || live_status=$?
    printf '{"exit_status": %d}\n' "$live_status" >"$out/step8/watch-live-status.json"
    # Each verb's standard output to its file, its standard error to its log.
    local to_file='out=$1; shift; "$@" >"$out"'
    timed 60 "$out/step8/watch.log" "$out/step8/watch-status.json" sh -c "$to_file" sh \
      "$out/step8/watch.jsonl" "$bubblescope" watch --once --format jsonl "$out/step8/record"
    timed 60 "$out/step8/analyze.log" "$out/step8/analyze-status.json" sh -c "$to_file" sh \
      "$out/step8/analyze.json" "$bubblescope" analyze --format json "$out/step8/record"
    # 6. The collector built for the other CUDA major, where the bundle has it and its libcupti:
    # the same demo job recorded again, to compare record for record with step 4. Today that
    # is the CUDA 12.9 collector on a machine whose torch brings CUDA 13 (CUPTI 12.9 runs on any
    # newer driver); the demo needs no torch.
    if [ "$cuda_major" = 13 ] && [ -f "$bundle/collector-cuda12/libbubblescope_collector.so" ] \
       && [ -f "$bundle/cupti12/libcupti.so.12" ]; then
      mkdir -p "$out/step6"
      local record12=("$bubblescope" record --whole-job
                      --collector "$bundle/collector-cuda12/libbubblescope_collector.so")
      LD_LIBRARY_PATH=$bundle/cupti12:$LD_LIBRARY_PATH ITERATIONS=3 timed 45 "$out/step6/job.log" \
        "$out/step6/status.json" "${record12[@]}" -o "$out/step6/record" \
        --run-id gpucheck-step6 -- \
        "$loader" --library-path "$bundle/lib:$bundle/cupti12:$LD_LIBRARY_PATH" \
        "$bundle/bin/bubblescope_pipeline_demo" --ranks 1 --iterations 3 --microbatches 4
      # 7. A CUDA 12 application (CUDA 12.9's runtime) under the same collector.
      if [ -x "$bundle/bin/cuda12_app" ]; then
        mkdir -p "$out/step7"
        LD_LIBRARY_PATH=$bundle/cupti12:$LD_LIBRARY_PATH ITERATIONS=3 timed 45 \
          "$out/step7/job.log" "$out/step7/status.json" "${record12[@]}" \
          -o "$out/step7/record" --run-id gpucheck-step7 -- "$bundle/bin/cuda12_app"
      fi
    fi
    # 5. Nsight Systems, where the machine has it: the same loop profiled and exported to SQLite,
    # a real export for the Nsight reader's tests (nothing is checked here).
    local nsys
    nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1 || true)
    mkdir -p "$out/step5"
    if [ -n "$nsys" ]; then
      timed 120 "$out/step5/nsys.log" "$out/step5/status.json" sh -c \
        '"$1" profile -t cuda,nvtx,osrt -o "$2/train" --force-overwrite true "$3" "$4" --steps 5 --warmup 2 --times "$2/times.json" && "$1" export --type sqlite -o "$2/train.sqlite" "$2/train.nsys-rep"' \
        sh "$nsys" "$out/step5" "$py" "$tools/train.py"
    else
      echo "no nsys on this machine" >"$out/step5/nsys.log"
    fi
  else
    rmdir "$out/step3" "$out/step4"
  fi
  "$py" "$tools/check.py" "$out" --bubblescope "$bubblescope" || true
}

case "${1:-}" in
  prepare) prepare ;;
  run) shift; run "$@" ;;
  dry-run) shift; DRY_RUN=1 run "$@" ;;
  check) shift; [ $# -ge 1 ] || die "check: which folder?"
         python3 "$tools/check.py" "$1" --bubblescope "${BUBBLESCOPE:-$repo/build/bubblescope}" ;;
  *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
