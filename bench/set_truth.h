// The truth of a trace set on disk: its truth.json ("bubblescope.truth/1", written by
// sim::WriteSimulationSet) records the whole job config, so the benchmark reads that config back
// and simulates the job again. The fresh truth must serialise to exactly the file's bytes; only
// then is it the truth of those traces (and the config was read without loss), and the benchmark
// compares the analysis against the sim::Truth itself rather than against rounded JSON numbers.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "schedule_engine/config.h"
#include "schedule_engine/truth.h"

namespace bubblescope::bench {

// The config recorded in a truth.json text. Times are read from their microsecond decimals
// exactly, to the nanosecond. InvalidArgumentError naming the member that is missing, malformed
// or unknown to this reader.
absl::StatusOr<sim::Config> ConfigFromTruthJson(std::string_view truth_json);

struct SetTruth {
  sim::Config config;
  sim::Truth truth;
};

// Reads `truth_path`, simulates its config and checks the result serialises to the same text.
// FailedPreconditionError when it does not (a truth.json from another simulator version, or
// edited by hand): regenerate the set.
absl::StatusOr<SetTruth> ResimulateTruthFile(const std::string& truth_path);

}  // namespace bubblescope::bench
