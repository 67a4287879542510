#include "analysis/rank_summary.h"

#include <algorithm>
#include <utility>

#include "analysis/interval_set.h"

namespace bubblescope::rank_summary {
namespace {

// Device figures of a rank with GPU activity: every GPU stream together is "the device".
void SummariseGpu(const Rank& rank, RankFigures* figures) {
  std::vector<TimeRange> compute;
  std::vector<TimeRange> comm;
  std::vector<TimeRange> copies;
  TimeNs first_start = 0;
  TimeNs last_end = 0;
  bool any = false;
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind != TimelineKind::kGpuStream) continue;
    for (const Interval& interval : timeline.intervals) {
      if (!IsDeviceKind(interval.kind)) continue;
      TimeRange range{interval.start, interval.end};
      switch (interval.kind) {
        case IntervalKind::kComputeKernel:
          compute.push_back(range);
          break;
        case IntervalKind::kCommKernel:
          comm.push_back(range);
          break;
        default:
          copies.push_back(range);
          break;
      }
      // The span is taken from the raw intervals so a zero-length op at either end still counts.
      first_start = any ? std::min(first_start, interval.start) : interval.start;
      last_end = any ? std::max(last_end, interval.end) : interval.end;
      any = true;
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
  if (!any) return;
  figures->span_start = first_start;
  figures->span_end = std::max(first_start, last_end);
  figures->span = figures->span_end - figures->span_start;
  TimeNs busy = compute_set.Union(comm_set).Union(copy_set).Length();
  figures->idle = figures->span - busy;
}

bool IsCpuModelOp(IntervalKind kind) {
  return kind == IntervalKind::kCpuOp || kind == IntervalKind::kCpuCommOp;
}

// The CPU operators of one thread, split into the top-level ones (not nested inside another op
// of the thread) and the communication ops at any depth.
struct CpuThreadOps {
  std::vector<TimeRange> top_level_compute;
  std::vector<TimeRange> top_level_comm;
  std::vector<TimeRange> comm;  // every kCpuCommOp, nested or not
  TimeNs first_start = 0;
  TimeNs last_end = 0;
  IntervalSet top_level;  // union of every top-level op

  size_t top_level_count() const { return top_level_compute.size() + top_level_comm.size(); }
};

CpuThreadOps CollectCpuThreadOps(const Timeline& timeline) {
  std::vector<const Interval*> ops;
  for (const Interval& interval : timeline.intervals) {
    if (IsCpuModelOp(interval.kind)) ops.push_back(&interval);
  }
  // Nesting is decided in (start ascending, longer first) order; the model keeps intervals that
  // way, but the check is cheap and keeps this function correct for any input.
  auto before = [](const Interval* a, const Interval* b) {
    return a->start != b->start ? a->start < b->start : a->end > b->end;
  };
  if (!std::is_sorted(ops.begin(), ops.end(), before)) {
    std::stable_sort(ops.begin(), ops.end(), before);
  }

  CpuThreadOps result;
  // In that order an op lies inside an earlier one exactly when it ends no later than the
  // furthest end seen so far: that earlier op starts no later and ends no earlier.
  bool any_top_level = false;
  TimeNs furthest_end = 0;
  for (const Interval* op : ops) {
    TimeRange range{op->start, op->end};
    if (op->kind == IntervalKind::kCpuCommOp) result.comm.push_back(range);
    bool nested = any_top_level && op->end <= furthest_end;
    if (nested) continue;
    (op->kind == IntervalKind::kCpuCommOp ? result.top_level_comm : result.top_level_compute)
        .push_back(range);
    result.first_start = any_top_level ? result.first_start : op->start;
    result.last_end = any_top_level ? std::max(result.last_end, op->end) : op->end;
    furthest_end = result.last_end;
    any_top_level = true;
  }
  std::vector<TimeRange> all = result.top_level_compute;
  all.insert(all.end(), result.top_level_comm.begin(), result.top_level_comm.end());
  result.top_level = IntervalSet::FromRanges(std::move(all));
  return result;
}

// Device figures of a rank without GPU activity (e.g. a gloo pipeline): the CPU thread that runs
// the model, i.e. the one whose top-level ops cover the most time, stands in for the device.
void SummariseCpu(const Rank& rank, RankFigures* figures) {
  CpuThreadOps best;
  bool found = false;
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind != TimelineKind::kCpuThread) continue;
    CpuThreadOps ops = CollectCpuThreadOps(timeline);
    if (ops.top_level_count() == 0) continue;
    // Ties keep the earlier thread so the choice does not depend on anything but the input order.
    if (!found || ops.top_level.Length() > best.top_level.Length()) {
      best = std::move(ops);
      found = true;
    }
  }
  if (!found) return;
  figures->span_start = best.first_start;
  figures->span_end = best.last_end;
  figures->span = best.last_end - best.first_start;
  figures->compute = IntervalSet::FromRanges(best.top_level_compute).Length();
  figures->comm = IntervalSet::FromRanges(best.comm).Length();
  figures->idle = figures->span - best.top_level.Length();
  figures->kernels = static_cast<int64_t>(best.top_level_count());
  figures->comm_ops = static_cast<int64_t>(best.comm.size());
}

}  // namespace

Result Analyze(const Trace& trace, const Options& /*options*/) {
  Result result;
  result.ranks.reserve(trace.ranks.size());
  for (const Rank& rank : trace.ranks) {
    RankFigures figures;
    figures.rank = rank.rank;
    figures.source_path = rank.source_path;
    figures.cpu_timeline = !rank.HasGpuActivity();
    if (figures.cpu_timeline) {
      SummariseCpu(rank, &figures);
    } else {
      SummariseGpu(rank, &figures);
    }
    figures.steps = static_cast<int64_t>(rank.steps.size());
    for (const MemorySample& sample : rank.memory) {
      figures.peak_allocated_bytes = std::max(figures.peak_allocated_bytes, sample.allocated_bytes);
      figures.peak_reserved_bytes = std::max(figures.peak_reserved_bytes, sample.reserved_bytes);
    }
    figures.import_stats = rank.stats;
    result.ranks.push_back(std::move(figures));
  }
  return result;
}

}  // namespace bubblescope::rank_summary
