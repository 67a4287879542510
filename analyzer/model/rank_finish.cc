#include "bubblescope/rank_finish.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "bubblescope/op_names.h"

namespace bubblescope {
namespace {

// Moves every time of `rank` by `base`, dropping what leaves the model's range; returns how many.
size_t ShiftTimes(int64_t base, Rank* rank) {
  size_t dropped = 0;
  // Shifts [start, end]; false (and the item is dropped) if either end leaves the range.
  auto shift = [&](TimeNs* start, TimeNs* end) {
    const std::optional<TimeNs> new_start = CheckedAdd(*start, base);
    const std::optional<TimeNs> new_end = CheckedAdd(*end, base);
    if (!new_start || !new_end || !InTimeRange(*new_start) || !InTimeRange(*new_end)) {
      ++dropped;
      return false;
    }
    *start = *new_start;
    *end = *new_end;
    return true;
  };
  for (Timeline& timeline : rank->timelines) {
    std::erase_if(timeline.intervals, [&](Interval& i) { return !shift(&i.start, &i.end); });
  }
  std::erase_if(rank->annotations, [&](Annotation& a) { return !shift(&a.start, &a.end); });
  std::erase_if(rank->steps, [&](ProfilerStep& s) { return !shift(&s.start, &s.end); });
  std::erase_if(rank->memory, [&](MemorySample& m) {
    TimeNs end = m.time;
    return !shift(&m.time, &end);
  });
  return dropped;
}

// Whether the rank recorded anything (an op, a kernel, a copy, an API call) that begins in
// [start, end).
bool RecordedIn(const Rank& rank, TimeNs start, TimeNs end) {
  for (const Timeline& timeline : rank.timelines) {
    auto first = std::lower_bound(
        timeline.intervals.begin(), timeline.intervals.end(), start,
        [](const Interval& interval, TimeNs time) { return interval.start < time; });
    if (first != timeline.intervals.end() && first->start < end) return true;
  }
  return false;
}

// Drops the profiler steps in whose slot (from their start to the next step's start; the last:
// to the end of time) the rank recorded nothing, counting each. torch closes a profiler window
// that the training loop left early with such a step: the loop's last prof.step() opens it and
// the profiler stops before anything runs in it, so it is no iteration, and a profiler cycle
// ending in one is cut short. A file cut short keeps its steps: what it lost is unknown.
void DropEmptySteps(Rank* rank) {
  if (rank->stats.count(ImportCounter::kTruncated) > 0) return;
  std::vector<ProfilerStep>& steps = rank->steps;
  std::vector<bool> empty(steps.size(), false);
  for (size_t i = 0; i < steps.size(); ++i) {
    const TimeNs slot_end = i + 1 < steps.size() ? steps[i + 1].start : kMaxTimeNs;
    empty[i] = !RecordedIn(*rank, steps[i].start, std::max(slot_end, steps[i].start + 1));
  }
  size_t kept = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (empty[i]) {
      rank->stats.Bump(ImportCounter::kEmptyProfilerStep, -1);
      continue;
    }
    steps[kept++] = steps[i];
  }
  steps.resize(kept);
}

// Counts the steps that cannot all be iterations of one run, in start order: each number the
// rank had already (a second profiler's steps, two files joined: bubble 69.6% where each number
// is one iteration), and each step beginning before the one before it ended. They are kept, as
// read; the counters say the iterations built from them are suspect.
void CountStepProblems(Rank* rank) {
  const std::vector<ProfilerStep>& steps = rank->steps;
  std::vector<int64_t> numbers;
  numbers.reserve(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    numbers.push_back(steps[i].number);
    if (i > 0 && steps[i].start < steps[i - 1].end) {
      rank->stats.Bump(ImportCounter::kOverlappingProfilerStep, -1);
    }
  }
  std::sort(numbers.begin(), numbers.end());
  for (size_t i = 1; i < numbers.size(); ++i) {
    if (numbers[i] == numbers[i - 1]) rank->stats.Bump(ImportCounter::kDuplicateProfilerStep, -1);
  }
}

// Counts the launches of device work on a rank that recorded none: a trace profiled without
// ProfilerActivity.CUDA (its 1,862 cudaLaunchKernel calls, no kernel) would otherwise read as a
// CPU rank, its CPU thread measured as if it were the device, without a word.
// A file cut short may have lost its device events to the cut, which its own warning says.
void CountLaunchesWithoutDevice(Rank* rank) {
  if (rank->HasGpuActivity() || rank->stats.count(ImportCounter::kTruncated) > 0) return;
  uint64_t launches = 0;
  for (const Timeline& timeline : rank->timelines) {
    for (const Interval& interval : timeline.intervals) {
      if (interval.kind == IntervalKind::kRuntime &&
          op_names::IsDeviceLaunchName(rank->name(interval.name))) {
        ++launches;
      }
    }
  }
  rank->stats.Add(ImportCounter::kLaunchWithoutDeviceActivity, launches, -1);
}

// Counts the events of a rank timed on both kinds of clock (the fewer of the two kinds), read
// before the format's base moves them: a mix cannot be put on one clock, and its span (years)
// would make an iteration of 10^12 ms.
void CountMixedTimeBases(Rank* rank) {
  uint64_t relative = 0;
  uint64_t absolute = 0;
  auto classify = [&](TimeNs start) {
    const TimeNs distance = start < 0 ? -start : start;  // within ±kMaxTimeNs: no overflow
    if (distance < kRelativeTimeWithinNs) ++relative;
    if (distance >= kAbsoluteTimeFromNs) ++absolute;
  };
  for (const Timeline& timeline : rank->timelines) {
    for (const Interval& interval : timeline.intervals) classify(interval.start);
  }
  for (const Annotation& annotation : rank->annotations) classify(annotation.start);
  if (relative > 0 && absolute > 0) {
    rank->stats.Add(ImportCounter::kMixedTimeBases, std::min(relative, absolute), -1);
  }
}

}  // namespace

void SortIntervals(std::vector<Interval>* intervals) {
  if (!std::is_sorted(intervals->begin(), intervals->end(), IntervalBefore)) {
    std::stable_sort(intervals->begin(), intervals->end(), IntervalBefore);
  }
}

void SortAnnotations(std::vector<Annotation>* annotations) {
  std::stable_sort(annotations->begin(), annotations->end(),
                   [](const Annotation& a, const Annotation& b) {
                     return StartsEarlierOrIsLonger(a.start, a.end, b.start, b.end);
                   });
}

std::optional<ImportCounter> SpanProblem(TimeNs start, TimeNs end) {
  if (end < start) return ImportCounter::kNegativeDuration;
  if (!InTimeRange(start) || !InTimeRange(end)) return ImportCounter::kTimeOutOfRange;
  return std::nullopt;
}

uint32_t ProcessGroupTable::Add(std::string_view name, std::string_view description,
                                const std::vector<int32_t>* ranks) {
  std::string key;
  if (!name.empty()) {
    key = "name:";
    key += name;
  } else if (ranks != nullptr) {
    key = "ranks:";
    for (size_t i = 0; i < ranks->size(); ++i) {
      if (i > 0) key += ',';
      key += std::to_string((*ranks)[i]);
    }
  } else if (!description.empty()) {
    key = "desc:";
    key += description;
  } else {
    key = "unknown";
  }
  auto [it, inserted] =
      index_.try_emplace(std::move(key), static_cast<uint32_t>(rank_->process_groups.size()));
  if (inserted) rank_->process_groups.emplace_back().name = std::string(name);
  ProcessGroup& group = rank_->process_groups[it->second];
  if (group.ranks.empty() && ranks != nullptr) group.ranks = *ranks;
  if (group.description.empty()) group.description = std::string(description);
  return it->second;
}

void FinishRank(const FinishOptions& options, Rank* rank) {
  CountMixedTimeBases(rank);
  if (options.base_ns != 0) {
    rank->stats.Add(ImportCounter::kTimeOutOfRange, ShiftTimes(options.base_ns, rank),
                    options.base_offset);
  }
  for (Timeline& timeline : rank->timelines) SortIntervals(&timeline.intervals);
  SortAnnotations(&rank->annotations);
  std::stable_sort(rank->steps.begin(), rank->steps.end(),
                   [](const ProfilerStep& a, const ProfilerStep& b) { return a.start < b.start; });
  std::stable_sort(rank->memory.begin(), rank->memory.end(),
                   [](const MemorySample& a, const MemorySample& b) { return a.time < b.time; });
  std::stable_sort(
      rank->timelines.begin(), rank->timelines.end(), [](const Timeline& a, const Timeline& b) {
        return std::tie(a.kind, a.device, a.pid, a.id) < std::tie(b.kind, b.device, b.pid, b.id);
      });
  if (!options.keep_empty_steps) DropEmptySteps(rank);
  CountStepProblems(rank);
  CountLaunchesWithoutDevice(rank);
}

}  // namespace bubblescope
