// The alerts of `bubblescope watch` (docs/watch.md, "Alerts"): a rule crosses its threshold on N
// iterations of a pipeline in a row. Pure: it reads iteration reports and says when a rule fires;
// what follows (the exit status, --on-alert's command, the printed line) is the caller's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "bubblescope/trace.h"
#include "watch/iteration_report.h"

namespace bubblescope::watch {

struct AlertOptions {
  // A rule is on when its threshold is set: the figure strictly above it on for_iterations
  // iterations of a pipeline in a row.
  std::optional<double> bubble_above = std::nullopt;   // IterationReport::bubble_fraction
  std::optional<double> excess_above = std::nullopt;   // IterationReport::excess_bubble_fraction
  std::optional<TimeNs> latency_above = std::nullopt;  // IterationReport::window_ns
  int32_t for_iterations = 1;
};

// The options' own errors, one line naming the field: a threshold that is NaN or infinite, a
// negative latency, or fewer than 1 iteration in a row.
absl::Status ValidateAlertOptions(const AlertOptions& options);

enum class AlertRule : uint8_t { kBubble, kExcess, kLatency };

// "bubble", "excess", "latency".
std::string_view AlertRuleName(AlertRule rule);

struct Alert {
  int32_t pipeline = 0;
  AlertRule rule = AlertRule::kBubble;
  // The threshold and the figures that crossed it, oldest first (for_iterations of them): for
  // kBubble and kExcess fractions, for kLatency nanoseconds (whole numbers, which a double holds
  // exactly up to 2^53 ns, 104 days).
  double threshold = 0.0;
  std::vector<double> values;
  int64_t first_step = 0;  // the steps of the first and the last iteration of the run
  int64_t last_step = 0;
  int64_t analysed_unix_ns = 0;  // when the iteration that completed the run was analysed
};

// Counts, per pipeline and per rule, the iterations in a row whose figure is strictly above the
// rule's threshold. An iteration at or below it ends the run; so does one without the figure (an
// excess without an inferred schedule, nullopt): a run is unbroken evidence, and an iteration
// that cannot say whether it crossed gives none. A rule fires the first time its run on a
// pipeline reaches for_iterations, once per pipeline and rule for the tracker's life: an alert
// says "this job needs a look", and repeating it each iteration after would only bury it.
// "In a row" counts the iterations observed for the pipeline, in the order observed.
class AlertTracker {
 public:
  explicit AlertTracker(const AlertOptions& options);

  // Counts `report` and returns the alerts it completes: none, or one per rule that fires now
  // (several rules may cross on the same iteration), in the order bubble, excess, latency.
  std::vector<Alert> Observe(const IterationReport& report);

 private:
  struct Run {
    std::vector<double> values;  // the current run's figures, oldest first
    int64_t first_step = 0;
    bool fired = false;
  };

  // Adds `value` (nullopt: no figure) to the run of `rule` on `report`'s pipeline; the alert
  // when the run reaches for_iterations for the first time.
  std::optional<Alert> Count(AlertRule rule, double threshold, std::optional<double> value,
                             const IterationReport& report);

  AlertOptions options_;
  std::map<std::pair<int32_t, AlertRule>, Run> runs_;
};

}  // namespace bubblescope::watch
