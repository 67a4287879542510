#include "analysis/rank_summary.h"

#include <algorithm>
#include <utility>

#include "common/interval_set.h"

namespace bubblescope::rank_summary {
namespace {

// Span, per-class unions and counts of a rank's device intervals, and the idle time inside its
// profiler steps.
void SummariseDevice(const Rank& rank, const index::RankIndex& activity, RankFigures* figures) {
  std::vector<TimeRange> compute;
  std::vector<TimeRange> comm;
  std::vector<TimeRange> copies;
  int64_t batch_transfers = 0;  // the transfers after the first of a batch kernel: no kernel
  for (const index::DeviceOp& op : activity.ops) {
    batch_transfers += op.batch_index > 0 ? 1 : 0;
    TimeRange range{op.start, op.end};
    switch (op.op_class) {
      case index::OpClass::kCompute:
        compute.push_back(range);
        break;
      case index::OpClass::kComm:
        comm.push_back(range);
        break;
      case index::OpClass::kCopy:
        copies.push_back(range);
        break;
    }
  }
  figures->kernels = static_cast<int64_t>(compute.size() + comm.size()) - batch_transfers;
  figures->comm_ops = static_cast<int64_t>(comm.size()) - batch_transfers;
  figures->memcpys = static_cast<int64_t>(copies.size());

  IntervalSet compute_set = IntervalSet::FromRanges(std::move(compute));
  IntervalSet comm_set = IntervalSet::FromRanges(std::move(comm));
  IntervalSet copy_set = IntervalSet::FromRanges(std::move(copies));
  figures->compute = compute_set.Length();
  figures->comm = comm_set.Length();
  figures->memcpy = copy_set.Length();
  if (activity.ops.empty()) return;
  // The span is taken from the raw ops so a zero-length op at either end still counts.
  figures->span_start = activity.ops.front().start;
  figures->span_end = figures->span_start;
  for (const index::DeviceOp& op : activity.ops)
    figures->span_end = std::max(figures->span_end, op.end);
  figures->span = figures->span_end - figures->span_start;
  const IntervalSet busy = compute_set.Union(comm_set).Union(copy_set);
  figures->idle = figures->span - busy.Length();
  std::vector<TimeRange> steps;
  for (const ProfilerStep& step : rank.steps) {
    const TimeNs start = std::max(step.start, figures->span_start);
    const TimeNs end = std::min(step.end, figures->span_end);
    if (start < end) steps.push_back(TimeRange{start, end});
  }
  const IntervalSet step_set = IntervalSet::FromRanges(std::move(steps));
  figures->step_time = step_set.Length();
  figures->step_idle = figures->step_time - step_set.IntersectionLength(busy);
}

// On a CPU rank the communication figures count every comm op of the model thread, nested or
// not: a c10d::send inside a pipelining range is still time spent communicating.
void SummariseCpuComm(const Rank& rank, const index::RankIndex& activity, RankFigures* figures) {
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

Result Analyze(const Trace& trace, const index::TraceIndex& index) {
  Result result;
  result.ranks.reserve(trace.ranks.size());
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const Rank& rank = trace.ranks[r];
    const index::RankIndex& activity = index.ranks[r];
    RankFigures figures;
    figures.rank = rank.rank;
    figures.source_path = rank.source_path;
    figures.record_run_id = rank.record_run_id;
    figures.rank_source = rank.rank_source;
    figures.time_base = rank.time_base;
    figures.time_evidence = rank.time_evidence;
    figures.cpu_timeline = activity.cpu_only();
    SummariseDevice(rank, activity, &figures);
    if (figures.cpu_timeline) SummariseCpuComm(rank, activity, &figures);
    figures.steps = static_cast<int64_t>(rank.steps.size());
    figures.peak_allocated_bytes = activity.memory.allocated_bytes;
    figures.peak_reserved_bytes = activity.memory.reserved_bytes;
    figures.import_stats = rank.stats;
    result.ranks.push_back(std::move(figures));
  }
  return result;
}

}  // namespace bubblescope::rank_summary
