#include "watch/alerts.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"

namespace bubblescope::watch {

absl::Status ValidateAlertOptions(const AlertOptions& options) {
  if (options.bubble_above.has_value() && !std::isfinite(*options.bubble_above))
    return absl::InvalidArgumentError("alert: the bubble threshold must be a finite fraction");
  if (options.excess_above.has_value() && !std::isfinite(*options.excess_above))
    return absl::InvalidArgumentError("alert: the excess threshold must be a finite fraction");
  if (options.latency_above.has_value() && *options.latency_above < 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "alert: the latency threshold must be 0 or more, not ", *options.latency_above, " ns"));
  if (options.for_iterations < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("alert: iterations in a row must be 1 or more, not ", options.for_iterations));
  return absl::OkStatus();
}

std::string_view AlertRuleName(AlertRule rule) {
  switch (rule) {
    case AlertRule::kBubble:
      return "bubble";
    case AlertRule::kExcess:
      return "excess";
    case AlertRule::kLatency:
      return "latency";
  }
  return "bubble";
}

AlertTracker::AlertTracker(const AlertOptions& options) : options_(options) {
  // Options the caller did not validate still count sensibly: a run is at least one iteration.
  options_.for_iterations = std::max(options_.for_iterations, 1);
}

std::vector<Alert> AlertTracker::Observe(const IterationReport& report) {
  std::vector<Alert> alerts;
  auto add = [&](std::optional<Alert> alert) {
    if (alert.has_value()) alerts.push_back(std::move(*alert));
  };
  if (options_.bubble_above.has_value())
    add(Count(AlertRule::kBubble, *options_.bubble_above, report.bubble_fraction, report));
  if (options_.excess_above.has_value())
    add(Count(AlertRule::kExcess, *options_.excess_above, report.excess_bubble_fraction, report));
  if (options_.latency_above.has_value())
    add(Count(AlertRule::kLatency, static_cast<double>(*options_.latency_above),
              static_cast<double>(report.window_ns), report));
  return alerts;
}

std::optional<Alert> AlertTracker::Count(AlertRule rule, double threshold,
                                         std::optional<double> value,
                                         const IterationReport& report) {
  Run& run = runs_[{report.pipeline, rule}];
  if (run.fired) return std::nullopt;
  // NaN compares false, so it ends the run as a missing figure does.
  if (!value.has_value() || !(*value > threshold)) {
    run.values.clear();
    return std::nullopt;
  }
  if (run.values.empty()) run.first_step = report.step;
  run.values.push_back(*value);
  if (std::ssize(run.values) < options_.for_iterations) return std::nullopt;
  run.fired = true;
  Alert alert{.pipeline = report.pipeline,
              .rule = rule,
              .threshold = threshold,
              .values = std::move(run.values),
              .first_step = run.first_step,
              .last_step = report.step,
              .analysed_unix_ns = report.analysed_unix_ns};
  run.values.clear();
  return alert;
}

}  // namespace bubblescope::watch
