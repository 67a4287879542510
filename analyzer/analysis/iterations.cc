#include "analysis/iterations.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analysis/repeating_schedule.h"
#include "re2/re2.h"

namespace bubblescope::iterations {

std::vector<StepStart> ProfilerStepStarts(const Rank& rank) {
  std::vector<StepStart> steps;
  steps.reserve(rank.steps.size());
  for (const ProfilerStep& step : rank.steps) steps.push_back({step.number, step.start});
  // The model keeps steps sorted; the lookup below depends on it, so it is not left to trust.
  std::stable_sort(steps.begin(), steps.end(),
                   [](const StepStart& a, const StepStart& b) { return a.start < b.start; });
  return steps;
}

int64_t StepIndexAt(const std::vector<StepStart>& steps, TimeNs time) {
  auto after = std::upper_bound(steps.begin(), steps.end(), time,
                                [](TimeNs t, const StepStart& step) { return t < step.start; });
  return static_cast<int64_t>(after - steps.begin()) - 1;
}

namespace {

using device_activity::DeviceInterval;
using device_activity::DeviceKind;
using device_activity::RankActivity;

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
      match = RE2::PartialMatch(re2::StringPiece(name.data(), name.size()), marker)
                  ? Match::kYes
                  : Match::kNo;
    }
    if (match == Match::kYes) steps.push_back({0, annotation.start});
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [](const StepStart& a, const StepStart& b) { return a.start < b.start; });
  for (size_t i = 0; i < steps.size(); ++i) steps[i].number = static_cast<int64_t>(i);
  return steps;
}

// Start of the launch of every correlated GPU op of the rank, by correlation id.
absl::flat_hash_map<int64_t, TimeNs> LaunchStarts(const Rank& rank) {
  absl::flat_hash_map<int64_t, TimeNs> launches;
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind != TimelineKind::kCpuThread) continue;
    for (const Interval& interval : timeline.intervals) {
      if (interval.kind != IntervalKind::kRuntime || interval.correlation == 0) continue;
      launches.try_emplace(interval.correlation, interval.start);
    }
  }
  return launches;
}

// Steps from the schedule each rank repeats; empty unless every rank repeats one.
std::vector<std::vector<StepStart>> RepeatingSteps(
    const Trace& trace, const std::vector<RankActivity>& activity,
    const std::vector<absl::flat_hash_map<int64_t, TimeNs>>& launches) {
  std::vector<repeating_schedule::RankSchedule> schedules;
  schedules.reserve(trace.ranks.size());
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    schedules.push_back(
        repeating_schedule::DetectRank(trace.ranks[r], activity[r], launches[r], {}));
    if (!schedules.back().found) return {};
  }
  const std::vector<std::vector<int64_t>> numbers = repeating_schedule::NumberSegments(schedules);
  std::vector<std::vector<StepStart>> steps(trace.ranks.size());
  for (size_t r = 0; r < schedules.size(); ++r) {
    const std::vector<repeating_schedule::Segment>& segments = schedules[r].segments;
    for (size_t s = 0; s < segments.size(); ++s) {
      // A leading partial period opens at the beginning of time, so nothing is left unassigned.
      const TimeNs start = s == 0 && !segments[s].whole ? std::numeric_limits<TimeNs>::min()
                                                        : segments[s].issue_start;
      steps[r].push_back({numbers[r][s], start, !segments[s].whole});
    }
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

absl::StatusOr<Result> Analyze(const Trace& trace, const Options& options) {
  Result result;
  result.activity.reserve(trace.ranks.size());
  std::vector<absl::flat_hash_map<int64_t, TimeNs>> launches(trace.ranks.size());
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    result.activity.push_back(device_activity::ForRank(trace.ranks[r]));
    if (result.activity[r].kind == DeviceKind::kGpu) launches[r] = LaunchStarts(trace.ranks[r]);
  }

  std::vector<std::vector<StepStart>> steps(trace.ranks.size());
  if (options.iteration_marker.has_value()) {
    const RE2 marker(*options.iteration_marker, RE2::Quiet);
    if (!marker.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("iteration marker \"", *options.iteration_marker,
                       "\" is not a valid regular expression: ", marker.error()));
    }
    result.source = StepSource::kMarker;
    for (size_t r = 0; r < trace.ranks.size(); ++r) steps[r] = MarkerSteps(trace.ranks[r], marker);
  } else {
    for (size_t r = 0; r < trace.ranks.size(); ++r) steps[r] = ProfilerStepStarts(trace.ranks[r]);
    bool any_steps = std::any_of(steps.begin(), steps.end(),
                                 [](const std::vector<StepStart>& s) { return !s.empty(); });
    result.source = StepSource::kProfilerSteps;
    if (!any_steps) {
      steps = RepeatingSteps(trace, result.activity, launches);
      result.source = steps.empty() ? StepSource::kWholeTrace : StepSource::kRepeatingSchedule;
      steps.resize(trace.ranks.size());
    }
  }
  if (result.source == StepSource::kWholeTrace) {
    // One step from the beginning of time: every op of every rank is in iteration 0.
    for (std::vector<StepStart>& rank_steps : steps) {
      rank_steps.push_back({0, std::numeric_limits<TimeNs>::min(), false});
    }
  }

  // Every step number of any rank is an iteration.
  std::vector<int64_t> numbers;
  for (const std::vector<StepStart>& rank_steps : steps) {
    for (const StepStart& step : rank_steps) numbers.push_back(step.number);
  }
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  result.iterations.resize(numbers.size());
  for (size_t i = 0; i < numbers.size(); ++i) {
    result.iterations[i].number = numbers[i];
    result.iterations[i].ranks.resize(trace.ranks.size());
  }
  auto position_of = [&numbers](int64_t number) {
    return static_cast<size_t>(std::lower_bound(numbers.begin(), numbers.end(), number) -
                               numbers.begin());
  };

  result.ranks.reserve(trace.ranks.size());
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const Rank& rank = trace.ranks[r];
    const std::vector<StepStart>& rank_steps = steps[r];
    RankAssignment assignment;
    assignment.rank = rank.rank;
    assignment.steps = static_cast<int64_t>(
        std::count_if(rank_steps.begin(), rank_steps.end(), [&result](const StepStart& step) {
          return result.source != StepSource::kWholeTrace && !step.partial;
        }));
    assignment.truncated = rank.stats.count(ImportCounter::kTruncated) > 0;
    int64_t last_number = std::numeric_limits<int64_t>::min();
    for (const StepStart& step : rank_steps) {
      result.iterations[position_of(step.number)].ranks[r].present = true;
      result.iterations[position_of(step.number)].ranks[r].partial = step.partial;
      last_number = std::max(last_number, step.number);
    }
    if (assignment.truncated && !rank_steps.empty()) {
      result.iterations[position_of(last_number)].ranks[r].cut_short = true;
    }

    const RankActivity& activity = result.activity[r];
    const absl::flat_hash_map<int64_t, TimeNs>& rank_launches = launches[r];
    for (size_t i = 0; i < activity.intervals.size(); ++i) {
      const DeviceInterval& interval = activity.intervals[i];
      auto launch = interval.correlation == 0 ? rank_launches.end()
                                              : rank_launches.find(interval.correlation);
      const bool launched = launch != rank_launches.end();
      int64_t step = StepIndexAt(rank_steps, launched ? launch->second : interval.start);
      if (step < 0) {
        ++assignment.unassigned;
        continue;
      }
      ++(launched ? assignment.by_launch : assignment.by_start);
      size_t position = position_of(rank_steps[static_cast<size_t>(step)].number);
      result.iterations[position].ranks[r].intervals.push_back(static_cast<uint32_t>(i));
    }
    result.ranks.push_back(assignment);
  }

  std::vector<size_t> all_ranks(trace.ranks.size());
  for (size_t r = 0; r < all_ranks.size(); ++r) all_ranks[r] = r;
  for (Iteration& iteration : result.iterations) {
    iteration.complete = CompleteFor(iteration, all_ranks);
  }
  result.steps = std::move(steps);
  return result;
}

bool CompleteFor(const Iteration& iteration, const std::vector<size_t>& rank_indices) {
  return std::all_of(rank_indices.begin(), rank_indices.end(), [&iteration](size_t r) {
    return r < iteration.ranks.size() && iteration.ranks[r].present &&
           !iteration.ranks[r].cut_short && !iteration.ranks[r].partial;
  });
}

}  // namespace bubblescope::iterations
