#include "analysis/iterations.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "re2/re2.h"

namespace bubblescope::iterations {

int64_t StepIndexAt(const std::vector<StepStart>& steps, TimeNs time) {
  auto after = std::upper_bound(steps.begin(), steps.end(), time,
                                [](TimeNs t, const StepStart& step) { return t < step.start; });
  return static_cast<int64_t>(after - steps.begin()) - 1;
}

bool CutShort(const Rank& rank) { return rank.stats.count(ImportCounter::kTruncated) > 0; }

namespace {

constexpr TimeNs kBeginningOfTime = std::numeric_limits<TimeNs>::min();

void SortByStart(std::vector<StepStart>* steps) {
  std::stable_sort(steps->begin(), steps->end(),
                   [](const StepStart& a, const StepStart& b) { return a.start < b.start; });
}

std::vector<StepStart> ProfilerSteps(const Rank& rank) {
  std::vector<StepStart> steps;
  steps.reserve(rank.steps.size());
  for (const ProfilerStep& step : rank.steps) steps.push_back({step.number, step.start});
  // The model keeps steps sorted; the lookup depends on it, so it is not left to trust.
  SortByStart(&steps);
  return steps;
}

std::vector<StepStart> MarkerSteps(const Rank& rank, const RE2& marker) {
  // Each distinct name is matched once: a trace holds few names and many annotations.
  enum class Match : uint8_t { kUnknown, kYes, kNo };
  std::vector<Match> matches(rank.names.size(), Match::kUnknown);
  std::vector<StepStart> steps;
  for (const Annotation& annotation : rank.annotations) {
    if (annotation.scope != AnnotationScope::kCpu) continue;
    Match& match = matches[annotation.name];
    if (match == Match::kUnknown) {
      std::string_view name = rank.name(annotation.name);
      match = RE2::PartialMatch(re2::StringPiece(name.data(), name.size()), marker) ? Match::kYes
                                                                                    : Match::kNo;
    }
    if (match == Match::kYes) steps.push_back({0, annotation.start});
  }
  SortByStart(&steps);
  for (size_t i = 0; i < steps.size(); ++i) steps[i].number = static_cast<int64_t>(i);
  return steps;
}

// A rank's periods as steps in its own numbering.
std::vector<StepStart> RepeatingSteps(const repeating_schedule::RankSchedule& schedule) {
  std::vector<StepStart> steps;
  const std::vector<int64_t> numbers = repeating_schedule::LocalNumbers(schedule);
  for (size_t s = 0; s < schedule.segments.size(); ++s) {
    const repeating_schedule::Segment& segment = schedule.segments[s];
    // A leading partial period opens at the beginning of time, so nothing is left unassigned.
    const TimeNs start = s == 0 && !segment.whole ? kBeginningOfTime : segment.issue_start;
    steps.push_back({numbers[s], start, !segment.whole});
  }
  return steps;
}

}  // namespace

std::string_view StepSourceName(StepSource source) {
  switch (source) {
    case StepSource::kProfilerSteps:
      return "profiler_steps";
    case StepSource::kMarker:
      return "marker";
    case StepSource::kRepeatingSchedule:
      return "repeating_schedule";
    case StepSource::kWholeTrace:
      return "whole_trace";
  }
  return "unknown";
}

namespace {

// The marker of `options`, compiled; InvalidArgumentError when it is not a valid expression.
absl::Status CheckMarker(const RE2& marker, const std::string& pattern) {
  if (marker.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "iteration marker \"", pattern, "\" is not a valid regular expression: ", marker.error()));
}

}  // namespace

absl::StatusOr<std::vector<StepStart>> OwnSteps(const Rank& rank, const Options& options) {
  if (!options.iteration_marker.has_value()) return ProfilerSteps(rank);
  const RE2 marker(*options.iteration_marker, RE2::Quiet);
  if (absl::Status checked = CheckMarker(marker, *options.iteration_marker); !checked.ok()) {
    return checked;
  }
  return MarkerSteps(rank, marker);
}

absl::StatusOr<Steps> FindSteps(const Trace& trace, const index::TraceIndex& index,
                                const Options& options, const std::vector<size_t>& considered) {
  Steps steps;
  const size_t n = trace.ranks.size();
  steps.ranks.resize(n);
  if (options.iteration_marker.has_value()) {
    const RE2 marker(*options.iteration_marker, RE2::Quiet);
    if (absl::Status checked = CheckMarker(marker, *options.iteration_marker); !checked.ok()) {
      return checked;
    }
    steps.source = StepSource::kMarker;
    for (size_t r = 0; r < n; ++r) steps.ranks[r] = MarkerSteps(trace.ranks[r], marker);
    return steps;
  }
  const std::optional<StepSource>& decided = options.decided_source;
  for (size_t r = 0; r < n; ++r) steps.ranks[r] = ProfilerSteps(trace.ranks[r]);
  const bool any_steps = std::any_of(steps.ranks.begin(), steps.ranks.end(),
                                     [](const std::vector<StepStart>& s) { return !s.empty(); });
  if (decided.has_value() ? *decided == StepSource::kProfilerSteps : any_steps) {
    steps.source = StepSource::kProfilerSteps;
    return steps;
  }
  for (std::vector<StepStart>& rank_steps : steps.ranks) rank_steps.clear();
  std::vector<size_t> ranks = considered;
  if (ranks.empty()) {
    for (size_t r = 0; r < n; ++r) ranks.push_back(r);
  }
  steps.schedules.resize(n);
  bool every_rank_repeats = !ranks.empty();
  if (!decided.has_value() || *decided == StepSource::kRepeatingSchedule) {
    for (size_t r : ranks) {
      steps.schedules[r] = repeating_schedule::DetectRank(index.ranks[r], {});
      every_rank_repeats = every_rank_repeats && steps.schedules[r].found;
    }
  }
  if (decided.has_value() ? *decided == StepSource::kRepeatingSchedule : every_rank_repeats) {
    steps.source = StepSource::kRepeatingSchedule;
    for (size_t r : ranks) {
      if (steps.schedules[r].found) steps.ranks[r] = RepeatingSteps(steps.schedules[r]);
    }
    return steps;
  }
  // One step from the beginning of time: every op of every rank is in iteration 0.
  steps.source = StepSource::kWholeTrace;
  steps.schedules.clear();
  for (std::vector<StepStart>& rank_steps : steps.ranks) {
    rank_steps.push_back({0, kBeginningOfTime, false});
  }
  return steps;
}

Result Assign(const Trace& trace, const index::TraceIndex& index, const Steps& steps,
              const std::vector<size_t>& positions, const ClockOffsets& offsets) {
  Result result;
  result.source = steps.source;
  result.positions = positions;

  // The pipeline's steps in one numbering.
  std::vector<std::vector<StepStart>> rank_steps;
  for (size_t r : positions) rank_steps.push_back(steps.ranks[r]);
  if (steps.source == StepSource::kRepeatingSchedule) {
    std::vector<repeating_schedule::RankSchedule> schedules;
    std::vector<RankClock> rank_offsets;
    for (size_t r : positions) {
      schedules.push_back(steps.schedules[r]);
      rank_offsets.push_back(offsets.Of(trace.ranks[r].rank));
    }
    const std::vector<int64_t> shifts =
        repeating_schedule::NumberingShifts(schedules, rank_offsets);
    for (size_t i = 0; i < rank_steps.size(); ++i) {
      for (StepStart& step : rank_steps[i]) step.number += shifts[i];
    }
  }

  // Every step number of any rank is an iteration.
  std::vector<int64_t> numbers;
  for (const std::vector<StepStart>& one_rank : rank_steps) {
    for (const StepStart& step : one_rank) numbers.push_back(step.number);
  }
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  result.iterations.resize(numbers.size());
  for (size_t i = 0; i < numbers.size(); ++i) {
    result.iterations[i].number = numbers[i];
    result.iterations[i].ranks.resize(positions.size());
  }
  auto position_of = [&numbers](int64_t number) {
    return static_cast<size_t>(std::lower_bound(numbers.begin(), numbers.end(), number) -
                               numbers.begin());
  };

  for (size_t p = 0; p < positions.size(); ++p) {
    const Rank& rank = trace.ranks[positions[p]];
    const index::RankIndex& rank_index = index.ranks[positions[p]];
    const std::vector<StepStart>& one_rank = rank_steps[p];
    RankAssignment assignment;
    assignment.rank = rank.rank;
    assignment.steps = static_cast<int64_t>(
        std::count_if(one_rank.begin(), one_rank.end(), [&result](const StepStart& step) {
          return result.source != StepSource::kWholeTrace && !step.partial;
        }));
    assignment.truncated = CutShort(rank);
    int64_t last_number = std::numeric_limits<int64_t>::min();
    for (const StepStart& step : one_rank) {
      RankIteration& iteration = result.iterations[position_of(step.number)].ranks[p];
      iteration.present = true;
      iteration.partial = step.partial;
      last_number = std::max(last_number, step.number);
    }
    if (assignment.truncated && !one_rank.empty()) {
      result.iterations[position_of(last_number)].ranks[p].cut_short = true;
      // Kineto writes a rank's CPU events before its GPU activity, so a cut can keep every step's
      // range while losing the kernels of several: each step that does not end (its successor
      // does not start) before the last op the file still holds lost its end too.
      TimeNs last_seen = std::numeric_limits<TimeNs>::min();
      for (const index::DeviceOp& op : rank_index.ops) last_seen = std::max(last_seen, op.end);
      for (size_t k = 0; k + 1 < one_rank.size(); ++k) {
        if (one_rank[k + 1].start > last_seen) {
          result.iterations[position_of(one_rank[k].number)].ranks[p].cut_short = true;
        }
      }
    }
    for (size_t i = 0; i < rank_index.ops.size(); ++i) {
      const index::DeviceOp& op = rank_index.ops[i];
      const int64_t step = StepIndexAt(one_rank, op.issue);
      if (step < 0) {
        ++assignment.unassigned;
        continue;
      }
      ++(op.launched ? assignment.by_launch : assignment.by_start);
      const size_t at = position_of(one_rank[static_cast<size_t>(step)].number);
      RankIteration& owner = result.iterations[at].ranks[p];
      owner.ops.push_back(static_cast<uint32_t>(i));
      owner.holds_work = owner.holds_work || op.op_class == index::OpClass::kCompute;
    }
    result.ranks.push_back(assignment);
  }
  for (Iteration& iteration : result.iterations) {
    iteration.complete =
        std::all_of(iteration.ranks.begin(), iteration.ranks.end(), [](const RankIteration& rank) {
          return rank.present && rank.holds_work && !rank.cut_short && !rank.partial;
        });
  }
  return result;
}

}  // namespace bubblescope::iterations
