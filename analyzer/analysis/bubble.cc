#include "analysis/bubble.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analysis/interval_set.h"

namespace bubblescope::bubble {
namespace {

using device_activity::ActivityClass;
using device_activity::DeviceInterval;
using device_activity::RankActivity;

// Trace indices of the pipeline's ranks, in Options order.
absl::StatusOr<std::vector<size_t>> PipelineRanks(const Trace& trace,
                                                  const std::vector<int32_t>& rank_ids) {
  std::vector<size_t> indices;
  if (rank_ids.empty()) {
    for (size_t r = 0; r < trace.ranks.size(); ++r) indices.push_back(r);
    return indices;
  }
  for (int32_t id : rank_ids) {
    auto it = std::find_if(trace.ranks.begin(), trace.ranks.end(),
                           [id](const Rank& rank) { return rank.rank == id; });
    if (it == trace.ranks.end()) {
      return absl::InvalidArgumentError(absl::StrCat("pipeline rank ", id, " is not in the trace"));
    }
    size_t index = static_cast<size_t>(it - trace.ranks.begin());
    if (std::find(indices.begin(), indices.end(), index) != indices.end()) {
      return absl::InvalidArgumentError(absl::StrCat("pipeline rank ", id, " is listed twice"));
    }
    indices.push_back(index);
  }
  return indices;
}

RankIterationFigures RankFigures(const RankActivity& activity,
                                 const iterations::RankIteration& assigned, TimeNs window_start,
                                 TimeNs window_end) {
  RankIterationFigures figures;
  figures.rank = activity.rank;
  figures.present = assigned.present;
  if (!assigned.present) return figures;
  std::vector<TimeRange> compute;
  std::vector<TimeRange> comm;
  for (uint32_t index : assigned.intervals) {
    const DeviceInterval& interval = activity.intervals[index];
    if (interval.activity == ActivityClass::kCompute) {
      compute.push_back({interval.start, interval.end});
    } else if (interval.activity == ActivityClass::kComm) {
      comm.push_back({interval.start, interval.end});
    }
  }
  const TimeNs window = window_end - window_start;
  IntervalSet compute_set = IntervalSet::FromRanges(std::move(compute));
  figures.compute = compute_set.Length();
  figures.idle = window - figures.compute;
  if (compute_set.empty()) {
    figures.fill = window;
    return figures;
  }
  figures.first_compute_start = compute_set.Start();
  figures.last_compute_end = compute_set.End();
  figures.fill = figures.first_compute_start - window_start;
  figures.drain = window_end - figures.last_compute_end;
  figures.stall = figures.idle - figures.fill - figures.drain;
  IntervalSet between =
      IntervalSet::FromRanges({{figures.first_compute_start, figures.last_compute_end}});
  figures.comm_wait =
      between.Intersect(IntervalSet::FromRanges(std::move(comm))).Subtract(compute_set).Length();
  figures.empty = figures.stall - figures.comm_wait;
  return figures;
}

IterationFigures Figures(const iterations::Result& assignment,
                         const iterations::Iteration& iteration,
                         const std::vector<size_t>& pipeline) {
  IterationFigures figures;
  figures.number = iteration.number;
  figures.complete = iterations::CompleteFor(iteration, pipeline);
  // The window comes from the raw intervals, so a zero-length op at either end still bounds it.
  TimeNs start = std::numeric_limits<TimeNs>::max();
  TimeNs end = std::numeric_limits<TimeNs>::min();
  for (size_t r : pipeline) {
    const RankActivity& activity = assignment.activity[r];
    for (uint32_t index : iteration.ranks[r].intervals) {
      start = std::min(start, activity.intervals[index].start);
      end = std::max(end, activity.intervals[index].end);
    }
  }
  if (start <= end) {
    figures.window_start = start;
    figures.window_end = end;
  }
  int64_t present = 0;
  for (size_t r : pipeline) {
    figures.ranks.push_back(RankFigures(assignment.activity[r], iteration.ranks[r],
                                        figures.window_start, figures.window_end));
    if (!figures.ranks.back().present) continue;
    ++present;
    figures.idle += figures.ranks.back().idle;
  }
  const TimeNs capacity = present * figures.window();
  figures.bubble_fraction =
      capacity > 0 ? static_cast<double>(figures.idle) / static_cast<double>(capacity) : 0.0;
  return figures;
}

// The ceil(percent * n / 100)-th smallest of `sorted` (at least the first); 0 when empty.
TimeNs NearestRank(const std::vector<TimeNs>& sorted, int64_t percent) {
  if (sorted.empty()) return 0;
  const int64_t n = static_cast<int64_t>(sorted.size());
  const int64_t rank = std::max<int64_t>(1, (percent * n + 99) / 100);
  return sorted[static_cast<size_t>(rank - 1)];
}

double Ratio(TimeNs part, TimeNs whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

absl::StatusOr<Result> FromIterations(const Trace& trace, const iterations::Result& assignment,
                                      const Options& options) {
  if (assignment.activity.size() != trace.ranks.size() ||
      assignment.ranks.size() != trace.ranks.size()) {
    return absl::InvalidArgumentError("the iteration assignment was made for another trace");
  }
  absl::StatusOr<std::vector<size_t>> pipeline = PipelineRanks(trace, options.ranks);
  if (!pipeline.ok()) return pipeline.status();
  Result result;
  result.step_source = assignment.source;
  for (size_t r : *pipeline) {
    const Rank& rank = trace.ranks[r];
    result.ranks.push_back(rank.rank);
    RankTotals totals;
    totals.rank = rank.rank;
    totals.device = assignment.activity[r].kind;
    totals.unassigned_intervals = assignment.ranks[r].unassigned;
    totals.memory = PeakMemory(rank);
    result.per_rank.push_back(totals);
  }
  const TimeNs p = static_cast<TimeNs>(pipeline->size());
  std::vector<TimeNs> windows;
  for (const iterations::Iteration& iteration : assignment.iterations) {
    IterationFigures figures = Figures(assignment, iteration, *pipeline);
    if (figures.complete) {
      ++result.complete_iterations;
      result.idle += figures.idle;
      result.capacity += p * figures.window();
      windows.push_back(figures.window());
      for (size_t i = 0; i < figures.ranks.size(); ++i) {
        const RankIterationFigures& rank = figures.ranks[i];
        RankTotals& totals = result.per_rank[i];
        totals.window += figures.window();
        totals.compute += rank.compute;
        totals.idle += rank.idle;
        totals.fill += rank.fill;
        totals.drain += rank.drain;
        totals.stall += rank.stall;
        totals.comm_wait += rank.comm_wait;
        totals.empty += rank.empty;
      }
    }
    result.iterations.push_back(std::move(figures));
  }
  result.bubble_fraction = Ratio(result.idle, result.capacity);
  for (RankTotals& totals : result.per_rank) {
    totals.bubble_fraction = Ratio(totals.idle, totals.window);
  }
  std::sort(windows.begin(), windows.end());
  result.latency.iterations = static_cast<int64_t>(windows.size());
  result.latency.p50 = NearestRank(windows, 50);
  result.latency.p90 = NearestRank(windows, 90);
  result.latency.max = windows.empty() ? 0 : windows.back();
  return result;
}

absl::StatusOr<Result> Analyze(const Trace& trace, const Options& options) {
  absl::StatusOr<iterations::Result> assignment = iterations::Analyze(trace, options.iterations);
  if (!assignment.ok()) return assignment.status();
  return FromIterations(trace, *assignment, options);
}

}  // namespace bubblescope::bubble
