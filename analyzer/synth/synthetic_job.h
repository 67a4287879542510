// A synthetic job: Config -> {Trace, Truth}. The schedule engine (schedule_engine/) runs the
// job; this layer writes what the profilers of its ranks would have recorded.
//
// The simulated job is the test suite's source of truth for bubble analysis: the Trace is what
// the profilers of the job's ranks would have recorded (schedule_engine/engine.h states the exact
// semantics), and the Truth is what an analysis of that trace should find
// (schedule_engine/truth.h defines every figure).
#pragma once

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "schedule_engine/config.h"
#include "schedule_engine/records.h"
#include "schedule_engine/truth.h"

namespace bubblescope::sim {

struct Simulation {
  Trace trace;      // per-rank clocks (clock offsets applied)
  Truth truth;      // true clock
  Records records;  // what the engine recorded, true clock
};

// Validates `config` (InvalidArgumentError naming the bad field) and runs it.
absl::StatusOr<Simulation> Simulate(const Config& config);

}  // namespace bubblescope::sim
