// The gate (`bubblescope gate --baseline BASE CURRENT`, docs/diff-and-gate.md): the checks one
// set of thresholds makes on a diff of baseline (A) and current (B), each passed, failed or
// skipped with the reason. Bubble and latency are checked per pipeline, peak memory per stage,
// and, with max_stage_bubble_increase, each stage's bubble.
// A pure function; reports render the result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compare/changes_behind.h"
#include "compare/diff.h"

namespace bubblescope::compare {

enum class LatencyFigure : uint8_t { kP50, kP90, kMax };

// Every limit is optional; a limit not set makes no check. Fractions are 0..1 (0.02 = 2 %).
struct GateThresholds {
  std::optional<double> max_bubble;           // measured bubble fraction, per pipeline
  std::optional<double> max_bubble_increase;  // current - baseline, in fraction points
  // A stage's (its rank's) bubble: current - baseline, in fraction points, per stage.
  std::optional<double> max_stage_bubble_increase;
  std::optional<double> max_latency_us;         // iteration latency, per pipeline
  std::optional<double> max_latency_increase;   // (current - baseline) / baseline
  std::optional<double> max_memory_bytes;       // peak allocated, per stage
  std::optional<double> max_memory_increase;    // (current - baseline) / baseline, per stage
  LatencyFigure latency = LatencyFigure::kP50;  // which latency the latency limits apply to

  bool Empty() const;
};

// The threshold names, as flags (with "--") and config keys: "max-bubble", ...
enum class CheckKind : uint8_t {
  kMaxBubble,
  kMaxBubbleIncrease,
  kMaxStageBubbleIncrease,
  kMaxLatency,
  kMaxLatencyIncrease,
  kMaxMemory,
  kMaxMemoryIncrease,
};
std::string_view ThresholdKey(CheckKind kind);
std::string_view LatencyFigureName(LatencyFigure figure);  // "p50", "p90", "max"

// Sets one threshold from its key and text value (the same for a flag and a config line):
// fractions as 0.25 or 25%; latency with a unit (us, ms, s); memory in bytes or with a unit
// (KiB, MiB, GiB, TiB, KB, MB, GB, TB); "latency" takes p50, p90 or max. InvalidArgumentError
// "<key>: <why>" for an unknown key, a negative number or a value it cannot read.
absl::Status SetThreshold(std::string_view key, std::string_view value, GateThresholds* thresholds);

// Reads a gate config file: one "key = value" per line, '#' starts a comment, blank lines are
// ignored; keys as SetThreshold's. Errors read "<source>:<line>: <why>" (a key given twice too).
absl::StatusOr<GateThresholds> ParseGateConfig(std::string_view text, std::string_view source);

// kError: the figure cannot be computed (a side without a complete iteration): no verdict, and
// the gate ends with exit status 2 rather than passing.
enum class CheckOutcome : uint8_t { kPass, kFail, kSkipped, kError };
std::string_view CheckOutcomeName(CheckOutcome outcome);  // "pass", "fail", "skipped", "error"

struct Check {
  CheckKind kind = CheckKind::kMaxBubble;
  std::string pipeline;            // PipelineLabel of the pipeline checked
  std::optional<int32_t> stage;    // memory checks: the pipeline position
  std::optional<int32_t> rank;     // memory checks: the stage's rank (current's, else baseline's)
  std::optional<double> baseline;  // the figure on each side
  std::optional<double> current;
  double limit = 0.0;  // as the threshold gives it (a fraction for relative limits)
  CheckOutcome outcome = CheckOutcome::kPass;
  // Why it was skipped, why it failed without a figure, or, for a difference no larger than the
  // iteration-to-iteration spread, that it is.
  std::string note;
  // A failed check: what changed underneath it in the diff (compare/changes_behind.h).
  std::vector<ChangeBehind> behind;

  // current - baseline (0 unless both are known); relative: over the baseline.
  double Delta() const;
  std::optional<double> RelativeDelta() const;
};

struct GateResult {
  std::string baseline_source;
  std::string current_source;
  std::vector<Check> checks;  // per pipeline (bubble, latency, then each stage's memory)
  // Shape changes and pipelines on one side only, in words: context for the verdict.
  std::vector<std::string> notes;

  int32_t Count(CheckOutcome outcome) const;
  bool Passed() const { return Count(CheckOutcome::kFail) == 0 && !Undecided(); }
  // A check could not be judged (CheckOutcome::kError): the gate's verdict is an error.
  bool Undecided() const { return Count(CheckOutcome::kError) > 0; }
  // Every check was skipped (or none was made): the gate checked nothing, which is no pass.
  bool NothingChecked() const {
    return Count(CheckOutcome::kSkipped) == static_cast<int32_t>(checks.size());
  }
};

GateResult Gate(const DiffResult& diff, const GateThresholds& thresholds);

}  // namespace bubblescope::compare
