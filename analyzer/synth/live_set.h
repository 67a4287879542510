// Writes a simulated job into its directory as it runs, an iteration at a time on a pace, the
// two ways a real job's folder grows (`simulate --live`, docs/simulator.md): so `bubblescope
// watch` can be tried end to end without a GPU.
//
// - The bare-array layout grows one file per rank, rank<r>.pt.trace.json, as bubblescope's
//   collector writes it: opened with "[" and the rank's metadata events, each iteration's events
//   appended with one write(2), closed with "]" when the job ends. Read between two writes, it is
//   a legal array without its closing bracket.
// - The object layouts (new, old) are written as torch.profiler's tensorboard_trace_handler
//   writes a job profiled with schedule(..., active=1, repeat=0): one whole Kineto file per rank
//   per iteration, <worker>.<time_ns>.pt.trace.json (simulated_set.h), each holding that
//   iteration's ProfilerStep and events with the rank's metadata (distributedInfo names the
//   rank). Each appears whole (written beside and renamed).
//
// The first iteration is written at once, each next one `interval_ns` after the one before, and
// truth.json (the whole job's) once the job's last iteration is written.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "schedule_engine/config.h"
#include "synth/simulated_set.h"
#include "synth/synthetic_job.h"

namespace bubblescope::sim {

// A rank cut into one part per profiler step, each a Rank with the whole rank's identity, names,
// comms, groups and devices and the events of that step, in the order the profiler would have
// handed them over: a CPU event (op, launch, annotation, memory sample) goes with the last step
// that starts at or before it, or the first step when it comes before them all (setup); a device
// op with its launch (by correlation id), so no part holds a kernel whose launch comes in a later
// one (by its own start when no launch names it); a GPU annotation with the first device op on
// its stream inside it (by its own start when there is none). A rank without steps is one part.
std::vector<Rank> SliceByStep(const Rank& rank);

// The wall clock a live write keeps its pace by, injected so tests run without waiting.
struct LiveClock {
  std::function<int64_t()> now_ns;              // nanoseconds since the epoch
  std::function<void(int64_t)> sleep_until_ns;  // returns at or after that time
};

// The system's clock and sleep.
LiveClock SystemClock();

struct LiveWriteOptions {
  int64_t interval_ns = 0;  // between two iterations' writes; 0: one after the other
  LiveClock clock = SystemClock();
};

// Writes `simulation` into `directory` live. `options` as WriteSimulationSet takes them, except
// nsys (an export is made after a run ends) and gzip with the bare-array layout (a growing gzip
// file cannot be read before it ends): InvalidArgument errors. Directory rules as
// WriteSimulationSet's: any set already there is an error without overwrite, and with it
// removed before the first write. Returns the paths written: the rank files (by rank, each
// iteration's in turn for cycle files), truth.json last.
absl::StatusOr<std::vector<std::string>> WriteSimulationSetLive(const Config& config,
                                                                Simulation& simulation,
                                                                const std::string& directory,
                                                                const SetWriteOptions& options,
                                                                const LiveWriteOptions& live);

}  // namespace bubblescope::sim
