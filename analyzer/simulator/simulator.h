// The pipeline schedule simulator: Config -> {Trace, Truth}.
//
// The simulated job is the test suite's source of truth for bubble analysis: the Trace is what
// the profilers of the job's ranks would have recorded (engine.h states the exact semantics), and
// the Truth is what an analysis of that trace should find (truth.h defines every figure).
#pragma once

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "simulator/config.h"
#include "simulator/records.h"
#include "simulator/truth.h"

namespace bubblescope::sim {

struct Simulation {
  Trace trace;      // per-rank clocks (clock offsets applied)
  Truth truth;      // true clock
  Records records;  // what the engine recorded, true clock
};

// Validates `config` (InvalidArgumentError naming the bad field) and runs it.
absl::StatusOr<Simulation> Simulate(const Config& config);

}  // namespace bubblescope::sim
