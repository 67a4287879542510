#!/bin/sh
# analyze --mpi under a real mpirun (docs/scale.md): with 1, 2 and 4 processes, a simulated
# DP x PP job gives the report one process gives, byte for byte (JSON to a file, text to stdout,
# the HTML page, the Perfetto trace), with the same notes on stderr printed once; whatif on the
# --mpi JSON report predicts what whatif on the traces does; several profiler cycles in one
# folder are told apart as one process tells them; Nsight exports keep each rank's rank and time
# sources; a bad file gives the same one-line
# error, once, and exit status 2. In a build without MPI, --mpi must be a one-line error (exit
# 2) and the test is skipped (77).
# Usage: mpi_analyze_test.sh BUBBLESCOPE HAVE_MPI MPIEXEC SCRATCH_DIR
set -u
bin=$1
have_mpi=$2
mpiexec=$3
scratch=$4
rm -rf "$scratch"
mkdir -p "$scratch"
fail() { echo "FAIL: $*"; exit 1; }

if [ "$have_mpi" != "ON" ] && [ "$have_mpi" != "TRUE" ] && [ "$have_mpi" != "1" ]; then
  "$bin" analyze --mpi "$scratch" >/dev/null 2>"$scratch/err"
  status=$?
  [ "$status" -eq 2 ] || fail "--mpi without MPI: exit $status, not 2"
  grep -q "built without MPI" "$scratch/err" || fail "--mpi without MPI: $(cat "$scratch/err")"
  [ "$(wc -l <"$scratch/err")" -eq 1 ] || fail "--mpi without MPI: not one line"
  echo "this build has no MPI: --mpi says so; skipped"
  exit 77
fi

# Open MPI refuses root unless told, and needs --oversubscribe for more processes than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
flags=""
if "$mpiexec" --version 2>&1 | grep -qiE "open ?(mpi|rte)"; then flags="--oversubscribe"; fi
# Under the sanitizers, Open MPI leaves allocations of its own components (unloaded at
# MPI_Finalize) for LeakSanitizer to report; they are not bubblescope's. Leak checking stays on for
# the single-process runs, which run the same code.
mpirun_quiet_leaks() {
  # shellcheck disable=SC2086
  ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" $mpiexec $flags "$@"
}

# Three DP replicas of a 4-stage pipeline (12 ranks; 4 processes get uneven shares), one rank per
# host pair with a clock offset, gzip'd like real profiler output.
job="$scratch/job"
"$bin" simulate -o "$job" --data-parallel 3 --stages 4 --microbatches 8 --dp-sync-us 300 \
  --jitter 0.02 --ranks-per-host 2 --gzip >/dev/null || fail "simulate"

"$bin" analyze "$job" --format json -o "$scratch/one.json" --html "$scratch/one.html" \
  --perfetto "$scratch/one.perfetto.json" 2>"$scratch/one.err" || fail "single-process analyze"
"$bin" analyze "$job" >"$scratch/one.txt" 2>/dev/null || fail "single-process text"
pipelines=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['pipelines']))" \
  "$scratch/one.json")
[ "$pipelines" -eq 3 ] || fail "the single-process report has $pipelines pipelines, not 3"

for n in 1 2 4; do
  mpirun_quiet_leaks -np "$n" "$bin" analyze --mpi "$job" --format json -o "$scratch/mpi$n.json" \
    --html "$scratch/mpi$n.html" --perfetto "$scratch/mpi$n.perfetto.json" 2>"$scratch/mpi$n.err"
  status=$?
  [ "$status" -eq 0 ] || fail "-np $n: exit $status: $(cat "$scratch/mpi$n.err")"
  cmp -s "$scratch/one.json" "$scratch/mpi$n.json" || fail "-np $n: the JSON report differs"
  cmp -s "$scratch/one.html" "$scratch/mpi$n.html" || fail "-np $n: the HTML page differs"
  cmp -s "$scratch/one.perfetto.json" "$scratch/mpi$n.perfetto.json" ||
    fail "-np $n: the Perfetto trace differs"
  # The same notes; the "wrote FILE" lines name each run's own files, so they differ by name only.
  sed "s#$scratch/one\.#FILE.#" "$scratch/one.err" >"$scratch/one.err.named"
  sed "s#$scratch/mpi$n\.#FILE.#" "$scratch/mpi$n.err" >"$scratch/mpi$n.err.named"
  cmp -s "$scratch/one.err.named" "$scratch/mpi$n.err.named" || fail "-np $n: stderr differs"
  mpirun_quiet_leaks -np "$n" "$bin" analyze --mpi "$job" >"$scratch/mpi$n.txt" 2>/dev/null ||
    fail "-np $n: text report"
  cmp -s "$scratch/one.txt" "$scratch/mpi$n.txt" || fail "-np $n: the text report differs"
done

# whatif at scale reads the --mpi JSON report's what-if models: the same predictions as whatif
# on the traces (docs/scale.md).
"$bin" whatif "$job" --microbatches 16 >"$scratch/whatif_traces.txt" 2>/dev/null ||
  fail "whatif on the traces"
"$bin" whatif "$scratch/mpi4.json" --microbatches 16 >"$scratch/whatif_mpi.txt" 2>/dev/null ||
  fail "whatif on the --mpi report"
grep -q "m=16" "$scratch/whatif_mpi.txt" || fail "whatif on the --mpi report predicts no m=16"
cmp -s "$scratch/whatif_traces.txt" "$scratch/whatif_mpi.txt" ||
  fail "whatif on the --mpi report differs from whatif on the traces"

# Three torch.profiler cycles of one 2-rank job in one folder (tests/data/torch_cycles): the
# newest complete one by default and --cycle 1 on request, with the single process's notes and
# report.
cycles="$(dirname "$0")/../data/torch_cycles"
for pick in "" "--cycle 1"; do
  # shellcheck disable=SC2086
  "$bin" analyze "$cycles" $pick --format json -o "$scratch/cycles_one.json" \
    2>"$scratch/cycles_one.err" || fail "single-process analyze of the cycles [$pick]"
  # shellcheck disable=SC2086
  mpirun_quiet_leaks -np 2 "$bin" analyze --mpi "$cycles" $pick --format json \
    -o "$scratch/cycles_mpi.json" 2>"$scratch/cycles_mpi.err" ||
    fail "--mpi of the cycles [$pick]: $(cat "$scratch/cycles_mpi.err")"
  cmp -s "$scratch/cycles_one.json" "$scratch/cycles_mpi.json" ||
    fail "--mpi of the cycles [$pick]: the JSON report differs"
  sed "s#$scratch/cycles_one\.#FILE.#" "$scratch/cycles_one.err" >"$scratch/cycles_one.err.named"
  sed "s#$scratch/cycles_mpi\.#FILE.#" "$scratch/cycles_mpi.err" >"$scratch/cycles_mpi.err.named"
  cmp -s "$scratch/cycles_one.err.named" "$scratch/cycles_mpi.err.named" ||
    fail "--mpi of the cycles [$pick]: the notes differ"
done
picked=$(python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['profiler_cycle']; \
print(c['number'], c['chosen_by'], len(c['cycles']))" "$scratch/cycles_mpi.json")
[ "$picked" = "1 flag 3" ] || fail "--cycle 1 under --mpi: cycle, choice, cycles = $picked"

# Nsight exports, one per rank: each rank's rank_source, time_base and time_evidence reach the
# --mpi report through the ranks' headers, as the single process reports them.
nsys="$scratch/nsys"
"$bin" simulate -o "$nsys" --stages 4 --microbatches 8 --format nsys >/dev/null ||
  fail "simulate --format nsys"
"$bin" analyze "$nsys" --format json -o "$scratch/nsys_one.json" 2>/dev/null ||
  fail "single-process analyze of the Nsight exports"
grep -q '"time_base": "session_start"' "$scratch/nsys_one.json" ||
  fail "the single-process report of the Nsight exports has no time_base"
mpirun_quiet_leaks -np 2 "$bin" analyze --mpi "$nsys" --format json -o "$scratch/nsys_mpi.json" \
  2>"$scratch/nsys_mpi.err" || fail "--mpi of the Nsight exports: $(cat "$scratch/nsys_mpi.err")"
cmp -s "$scratch/nsys_one.json" "$scratch/nsys_mpi.json" ||
  fail "--mpi of the Nsight exports: the JSON report differs"

# A damaged file among the ranks: the one-line error of one process, printed once, exit 2.
cp "$job"/rank7.pt.trace.json.gz "$scratch/rank7.saved"
printf '{"traceEvents": [{"ph": "X", nope' | gzip >"$job"/rank7.pt.trace.json.gz
"$bin" analyze "$job" >/dev/null 2>"$scratch/bad_one.err"
[ $? -eq 2 ] || fail "single-process: a bad file is not exit 2"
[ "$(wc -l <"$scratch/bad_one.err")" -eq 1 ] || fail "single-process: not one line"
grep -q "rank7.pt.trace.json.gz" "$scratch/bad_one.err" || fail "the error does not name the file"
for n in 1 4; do
  mpirun_quiet_leaks -np "$n" "$bin" analyze --mpi "$job" >"$scratch/bad$n.out" \
    2>"$scratch/bad$n.err"
  status=$?
  [ "$status" -eq 2 ] || fail "-np $n: a bad file gives exit $status, not 2"
  [ -s "$scratch/bad$n.out" ] && fail "-np $n: a report was printed for a bad file"
  # mpirun adds its own lines about the exit status; bubblescope's line comes once.
  [ "$(grep -c '^bubblescope: ' "$scratch/bad$n.err")" -eq 1 ] ||
    fail "-np $n: the error is not printed once: $(cat "$scratch/bad$n.err")"
  grep -qxF "$(cat "$scratch/bad_one.err")" "$scratch/bad$n.err" ||
    fail "-np $n: not the single-process error: $(cat "$scratch/bad$n.err")"
done
mv "$scratch/rank7.saved" "$job"/rank7.pt.trace.json.gz
echo "analyze --mpi with 1, 2 and 4 processes gives the single-process report and errors"
