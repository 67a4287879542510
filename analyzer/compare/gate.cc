#include "compare/gate.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace bubblescope::compare {
namespace {

// Figures read back from JSON decimals: a limit met to within this is met.
constexpr double kLimitSlack = 1e-9;

enum class Limit : uint8_t { kAbsolute, kIncrease, kRelativeIncrease };

Limit LimitOf(CheckKind kind) {
  switch (kind) {
    case CheckKind::kMaxBubble:
    case CheckKind::kMaxLatency:
    case CheckKind::kMaxMemory:
      return Limit::kAbsolute;
    case CheckKind::kMaxBubbleIncrease:
    case CheckKind::kMaxStageBubbleIncrease:
      return Limit::kIncrease;
    case CheckKind::kMaxLatencyIncrease:
    case CheckKind::kMaxMemoryIncrease:
      return Limit::kRelativeIncrease;
  }
  return Limit::kAbsolute;
}

// Why a side of a pipeline has no complete iteration; empty when it has one (or no side).
struct Unmeasured {
  std::string_view baseline;
  std::string_view current;
};

// Judges one figure against one limit. `missing_current` says the whole pipeline is gone from
// the current run, which fails every check of it rather than skipping them. A figure that needs
// a complete iteration (the bubble, the latency) on a side without one cannot be computed: the
// check is an error, never a pass or a skip.
Check Judge(CheckKind kind, const Change& change, double limit, bool missing_current,
            std::string_view figure, const Unmeasured* unmeasured) {
  Check check;
  check.kind = kind;
  check.baseline = change.a;
  check.current = change.b;
  check.limit = limit;
  const Limit how = LimitOf(kind);
  if (missing_current) {
    check.outcome = CheckOutcome::kFail;
    check.note = "the pipeline is not in the current run";
    return check;
  }
  if (unmeasured != nullptr) {
    const bool needs_baseline = how != Limit::kAbsolute;
    const std::string_view side = !unmeasured->current.empty()                      ? "current run"
                                  : needs_baseline && !unmeasured->baseline.empty() ? "baseline"
                                                                                    : "";
    if (!side.empty()) {
      check.outcome = CheckOutcome::kError;
      check.note = absl::StrCat(
          "no ", std::string(figure), " can be computed: no complete iteration in the ",
          std::string(side), " (",
          std::string(side == "baseline" ? unmeasured->baseline : unmeasured->current), ")");
      return check;
    }
  }
  if (!change.b.has_value()) {
    check.outcome = CheckOutcome::kSkipped;
    check.note = absl::StrCat("the current run has no ", std::string(figure));
    return check;
  }
  double measured = *change.b;
  if (how != Limit::kAbsolute) {
    if (!change.a.has_value()) {
      check.outcome = CheckOutcome::kSkipped;
      check.note = absl::StrCat("the baseline has no ", std::string(figure));
      return check;
    }
    if (how == Limit::kRelativeIncrease) {
      if (!change.Relative().has_value()) {
        check.outcome = CheckOutcome::kSkipped;
        check.note = "the baseline is 0: no relative change";
        return check;
      }
      measured = *change.Relative();
    } else {
      measured = change.Delta();
    }
  }
  check.outcome = measured <= limit + kLimitSlack ? CheckOutcome::kPass : CheckOutcome::kFail;
  if (how != Limit::kAbsolute && change.WithinSpread()) {
    check.note = "within the iteration-to-iteration spread";
  }
  return check;
}

const Change& LatencyOf(const PipelineDiff& pipeline, LatencyFigure figure) {
  switch (figure) {
    case LatencyFigure::kP50:
      return pipeline.latency_p50_us;
    case LatencyFigure::kP90:
      return pipeline.latency_p90_us;
    case LatencyFigure::kMax:
      return pipeline.latency_max_us;
  }
  return pipeline.latency_p50_us;
}

void AddNotes(const PipelineDiff& pipeline, const std::string& label,
              std::vector<std::string>* notes) {
  if (pipeline.pairing == Pairing::kOnlyA) {
    notes->push_back(absl::StrCat(label, ": ranks ", absl::StrJoin(pipeline.ranks_a, ","),
                                  " are in the baseline but not in the current run"));
  } else if (pipeline.pairing == Pairing::kOnlyB) {
    notes->push_back(absl::StrCat(label, ": ranks ", absl::StrJoin(pipeline.ranks_b, ","),
                                  " are new in the current run (absolute limits only)"));
  }
  for (const ShapeChange& change : pipeline.shape_changes) {
    notes->push_back(
        absl::StrCat(label, ": ", change.figure, " changed from ", change.a, " to ", change.b));
  }
}

}  // namespace

double Check::Delta() const {
  return baseline.has_value() && current.has_value() ? *current - *baseline : 0.0;
}

std::optional<double> Check::RelativeDelta() const {
  if (!baseline.has_value() || !current.has_value() || *baseline == 0.0) return std::nullopt;
  return Delta() / *baseline;
}

std::string_view CheckOutcomeName(CheckOutcome outcome) {
  switch (outcome) {
    case CheckOutcome::kPass:
      return "pass";
    case CheckOutcome::kFail:
      return "fail";
    case CheckOutcome::kSkipped:
      return "skipped";
    case CheckOutcome::kError:
      return "error";
  }
  return "unknown";
}

int32_t GateResult::Count(CheckOutcome outcome) const {
  int32_t count = 0;
  for (const Check& check : checks) count += check.outcome == outcome ? 1 : 0;
  return count;
}

GateResult Gate(const DiffResult& diff, const GateThresholds& thresholds) {
  GateResult result;
  result.baseline_source = diff.source_a;
  result.current_source = diff.source_b;
  for (const PipelineDiff& pipeline : diff.pipelines) {
    const std::string label = PipelineLabel(pipeline);
    AddNotes(pipeline, label, &result.notes);
    const size_t first_check = result.checks.size();
    const bool gone = pipeline.pairing == Pairing::kOnlyA;
    const Unmeasured unmeasured{pipeline.no_complete_iteration_a, pipeline.no_complete_iteration_b};
    auto add = [&](CheckKind kind, const Change& change, const std::optional<double>& limit,
                   std::string_view figure, bool needs_iteration) -> Check* {
      if (!limit.has_value()) return nullptr;
      result.checks.push_back(
          Judge(kind, change, *limit, gone, figure, needs_iteration ? &unmeasured : nullptr));
      result.checks.back().pipeline = label;
      return &result.checks.back();
    };
    add(CheckKind::kMaxBubble, pipeline.bubble_fraction, thresholds.max_bubble, "bubble", true);
    add(CheckKind::kMaxBubbleIncrease, pipeline.bubble_fraction, thresholds.max_bubble_increase,
        "bubble", true);
    const Change& latency = LatencyOf(pipeline, thresholds.latency);
    add(CheckKind::kMaxLatency, latency, thresholds.max_latency_us, "latency", true);
    add(CheckKind::kMaxLatencyIncrease, latency, thresholds.max_latency_increase, "latency", true);
    for (const StageDiff& stage : pipeline.stages) {
      // A stage one side lacks (p changed) says so, rather than blaming its memory samples.
      const std::string figure = stage.rank_a.has_value() && stage.rank_b.has_value()
                                     ? "memory samples"
                                     : absl::StrCat("stage ", stage.stage);
      // A stage's bubble shows where a pipeline's rise sits (the stage waiting on a slower
      // neighbour), so it is checked against its own baseline when asked.
      struct StageLimit {
        CheckKind kind;
        const Change* change;
        const std::optional<double>* limit;
        std::string_view figure;
        bool needs_iteration;
      };
      const bool both = stage.rank_a.has_value() && stage.rank_b.has_value();
      const StageLimit limits[] = {
          {CheckKind::kMaxStageBubbleIncrease, &stage.bubble_fraction,
           &thresholds.max_stage_bubble_increase,
           both ? std::string_view("bubble") : std::string_view(figure), both},
          {CheckKind::kMaxMemory, &stage.peak_allocated_bytes, &thresholds.max_memory_bytes, figure,
           false},
          {CheckKind::kMaxMemoryIncrease, &stage.peak_allocated_bytes,
           &thresholds.max_memory_increase, figure, false}};
      for (const StageLimit& each : limits) {
        Check* check = add(each.kind, *each.change, *each.limit, each.figure, each.needs_iteration);
        if (check == nullptr) continue;
        check->stage = stage.stage;
        check->rank = stage.rank_b.has_value() ? stage.rank_b : stage.rank_a;
      }
    }
    for (size_t i = first_check; i < result.checks.size(); ++i) {
      Check& check = result.checks[i];
      if (check.outcome != CheckOutcome::kFail) continue;
      const bool memory =
          check.kind == CheckKind::kMaxMemory || check.kind == CheckKind::kMaxMemoryIncrease;
      check.behind = ChangesBehind(pipeline, memory, check.stage);
    }
  }
  return result;
}

}  // namespace bubblescope::compare
