// Fuzz target for gate config files (`bubblescope gate --config FILE`, docs/diff-and-gate.md):
// the bytes as a file, read by cli::ReadGateConfigFile, the one path the gate takes (the reading
// budget, gzip, compare::ParseGateConfig); then, when they read, the thresholds judge a fixed
// pair of runs, one of them without a complete iteration.
//
// Input: the whole contents (no choice bytes): seeds are configs, whose keys and units
// libFuzzer's mutations reach through the dictionary (tests/fuzz/gate.dict).
//
// Checks: an error is one line naming the file first; every threshold read is finite and not
// negative; the gate's verdict agrees with its checks (a check it cannot compute is an error,
// never a pass), and its text, Markdown and JUnit reports are never empty.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cli/compare_input.h"
#include "compare/diff.h"
#include "compare/gate.h"
#include "file_fuzz_util.h"
#include "fuzz_checks.h"
#include "report/gate_report.h"

namespace {

using namespace bubblescope;  // NOLINT(build/namespaces): a fuzz target's private helpers

// Two one-pipeline runs: the baseline measured, the current without a complete iteration.
compare::DiffResult FixedDiff() {
  compare::RunFigures baseline;
  baseline.source = "baseline.json";
  compare::PipelineFigures measured;
  measured.ranks = {0, 1};
  measured.bubble_fraction = 0.25;
  measured.latency_p50_us = measured.latency_p90_us = measured.latency_max_us = 1000.0;
  measured.complete_iterations = 2;
  for (int32_t position : {0, 1}) {
    compare::StageFigures& stage = measured.stage_figures.emplace_back();
    stage.rank = position;
    stage.stage = position;
    stage.bubble_fraction = 0.2 + 0.1 * position;
    if (position == 0) stage.peak_allocated_bytes = 1e9;  // stage 1 has no memory samples
  }
  baseline.pipelines.push_back(measured);
  compare::RunFigures current = baseline;
  current.source = "current";
  current.pipelines[0].complete_iterations = 0;
  current.pipelines[0].no_complete_iteration = "no step on every rank";
  baseline.pipelines.push_back(measured);  // and one pipeline only the baseline has
  baseline.pipelines.back().ranks = {2, 3};
  return compare::Diff(baseline, current);
}

void CheckLimit(const std::optional<double>& limit) {
  if (limit.has_value() && (!std::isfinite(*limit) || *limit < 0.0)) {
    fuzz::Fail("a threshold that is not a finite number of at least 0");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string path = fuzz::WriteWorkFile("gate.conf", bytes);
  absl::StatusOr<compare::GateThresholds> thresholds = ReadGateConfigFile(path);
  if (!thresholds.ok()) {
    fuzz::CheckOneLineAbout(thresholds.status(), path);
    return 0;
  }
  for (const std::optional<double>* limit :
       {&thresholds->max_bubble, &thresholds->max_bubble_increase,
        &thresholds->max_stage_bubble_increase, &thresholds->max_latency_us,
        &thresholds->max_latency_increase, &thresholds->max_memory_bytes,
        &thresholds->max_memory_increase}) {
    CheckLimit(*limit);
  }
  if (thresholds->Empty()) return 0;
  static const compare::DiffResult diff = FixedDiff();
  const compare::GateResult result = compare::Gate(diff, *thresholds);
  for (const compare::Check& check : result.checks) {
    const bool needs_iteration = check.kind == compare::CheckKind::kMaxBubble ||
                                 check.kind == compare::CheckKind::kMaxBubbleIncrease ||
                                 check.kind == compare::CheckKind::kMaxLatency ||
                                 check.kind == compare::CheckKind::kMaxLatencyIncrease ||
                                 check.kind == compare::CheckKind::kMaxStageBubbleIncrease;
    // The current run has no complete iteration: whatever needs one is an error there (the
    // pipeline only the baseline has fails instead).
    if (needs_iteration && check.pipeline == "pipeline 0" &&
        check.outcome != compare::CheckOutcome::kError) {
      fuzz::Fail("a check on a figure that cannot be computed was judged");
    }
    if (check.outcome == compare::CheckOutcome::kError && check.note.empty()) {
      fuzz::Fail("an error check without its reason");
    }
  }
  if (result.Passed() && (result.Undecided() || result.Count(compare::CheckOutcome::kFail) > 0)) {
    fuzz::Fail("a gate that passed with a failed or undecided check");
  }
  if (GateText(result).empty() || GateMarkdown(result).empty() || GateJunit(result).empty()) {
    fuzz::Fail("an empty gate report");
  }
  return 0;
}
