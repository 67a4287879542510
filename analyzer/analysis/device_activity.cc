#include "analysis/device_activity.h"

#include <algorithm>
#include <utility>

#include "analysis/interval_set.h"

namespace bubblescope::device_activity {
namespace {

bool StartsEarlierOrIsLonger(const DeviceInterval& a, const DeviceInterval& b) {
  return a.start != b.start ? a.start < b.start : a.end > b.end;
}

ActivityClass GpuClass(IntervalKind kind) {
  switch (kind) {
    case IntervalKind::kComputeKernel:
      return ActivityClass::kCompute;
    case IntervalKind::kCommKernel:
      return ActivityClass::kComm;
    default:
      return ActivityClass::kCopy;
  }
}

void CollectGpu(const Rank& rank, RankActivity* activity) {
  for (size_t t = 0; t < rank.timelines.size(); ++t) {
    const Timeline& timeline = rank.timelines[t];
    if (timeline.kind != TimelineKind::kGpuStream) continue;
    for (size_t i = 0; i < timeline.intervals.size(); ++i) {
      const Interval& interval = timeline.intervals[i];
      if (!IsDeviceKind(interval.kind)) continue;
      activity->intervals.push_back(DeviceInterval{.start = interval.start,
                                                   .end = interval.end,
                                                   .correlation = interval.correlation,
                                                   .timeline = static_cast<uint32_t>(t),
                                                   .interval = static_cast<uint32_t>(i),
                                                   .activity = GpuClass(interval.kind)});
    }
  }
}

// The top-level CPU ops of one thread and the time they cover.
struct TopLevelOps {
  std::vector<DeviceInterval> ops;
  TimeNs covered = 0;
};

TopLevelOps CollectTopLevel(const Timeline& timeline, uint32_t timeline_index) {
  std::vector<DeviceInterval> ops;
  for (size_t i = 0; i < timeline.intervals.size(); ++i) {
    const Interval& interval = timeline.intervals[i];
    if (interval.kind != IntervalKind::kCpuOp && interval.kind != IntervalKind::kCpuCommOp) {
      continue;
    }
    ops.push_back(DeviceInterval{.start = interval.start,
                                 .end = interval.end,
                                 .correlation = 0,
                                 .timeline = timeline_index,
                                 .interval = static_cast<uint32_t>(i),
                                 .activity = interval.kind == IntervalKind::kCpuCommOp
                                                 ? ActivityClass::kComm
                                                 : ActivityClass::kCompute});
  }
  // Nesting is decided in (start ascending, longer first) order; the model keeps intervals that
  // way, but the check is cheap and keeps this correct for any input.
  if (!std::is_sorted(ops.begin(), ops.end(), StartsEarlierOrIsLonger)) {
    std::stable_sort(ops.begin(), ops.end(), StartsEarlierOrIsLonger);
  }
  // In that order an op lies inside an earlier one exactly when it ends no later than the
  // furthest end seen so far: the op reaching that end starts no later and ends no earlier.
  TopLevelOps result;
  std::vector<TimeRange> ranges;
  bool any = false;
  TimeNs furthest_end = 0;
  for (const DeviceInterval& op : ops) {
    if (any && op.end <= furthest_end) continue;
    furthest_end = any ? std::max(furthest_end, op.end) : op.end;
    any = true;
    result.ops.push_back(op);
    ranges.push_back({op.start, op.end});
  }
  result.covered = IntervalSet::FromRanges(std::move(ranges)).Length();
  return result;
}

void CollectCpu(const Rank& rank, RankActivity* activity) {
  TopLevelOps best;
  for (size_t t = 0; t < rank.timelines.size(); ++t) {
    if (rank.timelines[t].kind != TimelineKind::kCpuThread) continue;
    TopLevelOps ops = CollectTopLevel(rank.timelines[t], static_cast<uint32_t>(t));
    if (ops.ops.empty()) continue;
    // Ties keep the earlier thread, so the choice depends on nothing but the input order.
    if (activity->model_thread < 0 || ops.covered > best.covered) {
      best = std::move(ops);
      activity->model_thread = static_cast<int32_t>(t);
    }
  }
  activity->intervals = std::move(best.ops);
}

}  // namespace

RankActivity ForRank(const Rank& rank) {
  RankActivity activity;
  activity.rank = rank.rank;
  if (rank.HasGpuActivity()) {
    activity.kind = DeviceKind::kGpu;
    CollectGpu(rank, &activity);
  } else {
    activity.kind = DeviceKind::kCpu;
    CollectCpu(rank, &activity);
  }
  if (!std::is_sorted(activity.intervals.begin(), activity.intervals.end(),
                      StartsEarlierOrIsLonger)) {
    std::stable_sort(activity.intervals.begin(), activity.intervals.end(), StartsEarlierOrIsLonger);
  }
  return activity;
}

Result Analyze(const Trace& trace, const Options& /*options*/) {
  Result result;
  result.ranks.reserve(trace.ranks.size());
  for (const Rank& rank : trace.ranks) result.ranks.push_back(ForRank(rank));
  return result;
}

}  // namespace bubblescope::device_activity
