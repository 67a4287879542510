// The truth of a simulated job as JSON, schema "bubblescope.truth/1": the
// config that made it and every figure of truth.h, so tests and people can
// check an analysis of the written traces without the simulator at hand.
// docs/simulator.md documents every field.
//
// Times are microseconds written exactly from the nanoseconds (1234.567 is
// 1234567 ns); window starts and ends are on the true clock (a rank's trace
// shows them shifted by its clock offset).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "schedule_engine/config.h"
#include "schedule_engine/truth.h"

namespace bubblescope::sim {

inline constexpr std::string_view kTruthSchema = "bubblescope.truth/1";

// `truth` must come from ComputeTruth(config, ...). An error only reports a
// JSON writer misuse.
absl::StatusOr<std::string> TruthJson(const Config& config, const Truth& truth);

}  // namespace bubblescope::sim
