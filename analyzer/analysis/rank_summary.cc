#include "analysis/rank_summary.h"

#include <algorithm>
#include <utility>

#include "analysis/device_activity.h"
#include "analysis/interval_set.h"
#include "analysis/memory_peak.h"

namespace bubblescope::rank_summary {
namespace {

using device_activity::ActivityClass;
using device_activity::DeviceInterval;
using device_activity::RankActivity;

// Span, per-class unions and counts of a rank's device intervals.
void SummariseDevice(const RankActivity& activity, RankFigures* figures) {
  std::vector<TimeRange> compute;
  std::vector<TimeRange> comm;
  std::vector<TimeRange> copies;
  for (const DeviceInterval& interval : activity.intervals) {
    TimeRange range{interval.start, interval.end};
    switch (interval.activity) {
      case ActivityClass::kCompute:
        compute.push_back(range);
        break;
      case ActivityClass::kComm:
        comm.push_back(range);
        break;
      case ActivityClass::kCopy:
        copies.push_back(range);
        break;
    }
  }
  figures->kernels = static_cast<int64_t>(compute.size() + comm.size());
  figures->comm_ops = static_cast<int64_t>(comm.size());
  figures->memcpys = static_cast<int64_t>(copies.size());

  IntervalSet compute_set = IntervalSet::FromRanges(std::move(compute));
  IntervalSet comm_set = IntervalSet::FromRanges(std::move(comm));
  IntervalSet copy_set = IntervalSet::FromRanges(std::move(copies));
  figures->compute = compute_set.Length();
  figures->comm = comm_set.Length();
  figures->memcpy = copy_set.Length();
  if (activity.intervals.empty()) return;
  // The span is taken from the raw intervals so a zero-length op at either end still counts.
  figures->span_start = activity.intervals.front().start;
  figures->span_end = figures->span_start;
  for (const DeviceInterval& interval : activity.intervals) {
    figures->span_end = std::max(figures->span_end, interval.end);
  }
  figures->span = figures->span_end - figures->span_start;
  TimeNs busy = compute_set.Union(comm_set).Union(copy_set).Length();
  figures->idle = figures->span - busy;
}

// On a CPU rank the communication figures count every comm op of the model thread, nested or
// not: a c10d::send inside a pipelining range is still time spent communicating.
void SummariseCpuComm(const Rank& rank, const RankActivity& activity, RankFigures* figures) {
  if (activity.model_thread < 0) return;
  std::vector<TimeRange> comm;
  for (const Interval& interval :
       rank.timelines[static_cast<size_t>(activity.model_thread)].intervals) {
    if (interval.kind == IntervalKind::kCpuCommOp) comm.push_back({interval.start, interval.end});
  }
  figures->comm_ops = static_cast<int64_t>(comm.size());
  figures->comm = IntervalSet::FromRanges(std::move(comm)).Length();
}

}  // namespace

Result Analyze(const Trace& trace, const Options& /*options*/) {
  Result result;
  result.ranks.reserve(trace.ranks.size());
  for (const Rank& rank : trace.ranks) {
    RankFigures figures;
    figures.rank = rank.rank;
    figures.source_path = rank.source_path;
    RankActivity activity = device_activity::ForRank(rank);
    figures.cpu_timeline = activity.kind == device_activity::DeviceKind::kCpu;
    SummariseDevice(activity, &figures);
    if (figures.cpu_timeline) SummariseCpuComm(rank, activity, &figures);
    figures.steps = static_cast<int64_t>(rank.steps.size());
    MemoryPeak peak = PeakMemory(rank);
    figures.peak_allocated_bytes = peak.allocated_bytes;
    figures.peak_reserved_bytes = peak.reserved_bytes;
    figures.import_stats = rank.stats;
    result.ranks.push_back(std::move(figures));
  }
  return result;
}

}  // namespace bubblescope::rank_summary
