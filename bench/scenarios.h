// The work of each benchmark scenario, run in a forked child (child_process.h) so that its peak
// RSS is its own. Each returns a report of "key value" lines the parent reads back with
// ParseScenarioReport; scenarios that produce checked figures append them after a "figures" line.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace bubblescope::bench {

// The whole of `bubblescope analyze FILES`, timed: LoadTrace with `jobs` workers, job::Analyze
// with the default options, and both reports rendered (text and JSON). Reports the seconds of
// each phase (the load's reading and assembling apart, with the page faults of reading), the
// events kept, a digest of the two reports and the job's checked figures.
absl::StatusOr<std::string> AnalyzeScenario(const std::vector<std::string>& files, int jobs);

// The same files through bare_pass.h: the practical speed limit of any reader.
absl::StatusOr<std::string> BarePassScenario(const std::vector<std::string>& files);

// What the machine gives `threads` threads of core-bound work, one run of about `seconds`:
// "cores", their CPU seconds over the wall seconds (an idle machine gives each its own core, a
// busy one shares them), and "throughput", the work they did together over what one thread does
// alone in the same time. A machine whose CPUs are hyper-threads of fewer cores shows full cores
// but a throughput near 1; no speed-up measured at that moment can be more than the throughput.
absl::StatusOr<std::string> CoresScenario(int threads, double seconds);

// Not timed: the truth the figures must equal, from `truth_path` (set_truth.h).
absl::StatusOr<std::string> TruthScenario(const std::string& truth_path);

struct ScenarioReport {
  std::map<std::string, std::string> values;
  std::string figures;  // serialised (checked_figures.h); empty when the scenario has none

  // The value of `key` as a number; 0 when absent (every scenario writes the keys it owns).
  double Number(const std::string& key) const;
};

ScenarioReport ParseScenarioReport(const std::string& text);

}  // namespace bubblescope::bench
