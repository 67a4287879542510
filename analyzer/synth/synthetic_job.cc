#include "synth/synthetic_job.h"

#include <utility>

#include "common/status_macros.h"
#include "schedule_engine/engine.h"
#include "synth/trace_builder.h"

namespace bubblescope::sim {

absl::StatusOr<Simulation> Simulate(const Config& config) {
  absl::StatusOr<Records> records = RunSchedule(config);
  BUBBLESCOPE_RETURN_IF_ERROR(records.status());
  Simulation simulation;
  simulation.trace = BuildTrace(config, *records);
  simulation.truth = ComputeTruth(config, *records);
  simulation.records = *std::move(records);
  return simulation;
}

}  // namespace bubblescope::sim
