#include "analysis/bubble.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "common/interval_set.h"
#include "common/percentile.h"

namespace bubblescope::bubble {
namespace {

// A device op of one rank on the pipeline's reference clock.
struct AlignedOp {
  TimeNs start = 0;
  TimeNs end = 0;
};

AlignedOp Aligned(const index::DeviceOp& op, const RankClock& offset) {
  return {ClockOffsets::Move(op.start, offset), ClockOffsets::Move(op.end, offset)};
}

// Appends [start, end) as idle of `kind` (nothing when empty) and adds it to the sums.
void AddSpan(IdleKind kind, TimeNs start, TimeNs end, RankIterationFigures* figures) {
  if (end <= start) return;
  figures->idle_spans.push_back({kind, start, end});
  const TimeNs length = end - start;
  IdleSplit& split = figures->split;
  split.idle = SaturatingAdd(split.idle, length);
  switch (kind) {
    case IdleKind::kFill:
      split.fill = SaturatingAdd(split.fill, length);
      break;
    case IdleKind::kDrain:
      split.drain = SaturatingAdd(split.drain, length);
      break;
    case IdleKind::kCommWait:
      split.comm_wait = SaturatingAdd(split.comm_wait, length);
      split.stall = SaturatingAdd(split.stall, length);
      break;
    case IdleKind::kEmpty:
      split.empty = SaturatingAdd(split.empty, length);
      split.stall = SaturatingAdd(split.stall, length);
      break;
  }
}

// Where the rank's fill ends in an iteration (reference clock): where its first pipeline transfer
// is a receive (and no send starts with it), at its first compute that starts once that receive
// has completed, since the schedule's first op, a forward, needs that input; else, or without
// such compute, at its first work (`busy_start`).
TimeNs FillEnd(const index::RankIndex& rank, const RankClock& offset,
               const iterations::RankIteration& assigned, TimeNs busy_start) {
  TimeNs first_transfer = std::numeric_limits<TimeNs>::max();
  for (uint32_t i : assigned.ops) {
    if (rank.ops[i].is_p2p()) first_transfer = std::min(first_transfer, rank.ops[i].start);
  }
  TimeNs received = std::numeric_limits<TimeNs>::min();
  for (uint32_t i : assigned.ops) {
    const index::DeviceOp& op = rank.ops[i];
    if (op.start != first_transfer || !op.is_p2p()) continue;
    if (op.is_send()) return busy_start;
    received = std::max(received, op.transfer_end);
  }
  if (received == std::numeric_limits<TimeNs>::min()) return busy_start;
  for (uint32_t i : assigned.ops) {
    const index::DeviceOp& op = rank.ops[i];
    if (op.op_class == index::OpClass::kCompute && op.start >= received) {
      return std::max(busy_start, ClockOffsets::Move(op.start, offset));
    }
  }
  return busy_start;
}

RankIterationFigures RankFigures(const index::RankIndex& rank, const RankClock& offset,
                                 const iterations::RankIteration& assigned, TimeNs window_start,
                                 TimeNs window_end) {
  RankIterationFigures figures;
  figures.rank = rank.rank;
  figures.present = assigned.present;
  if (!assigned.present) return figures;
  std::vector<TimeRange> compute;
  std::vector<TimeRange> in_stage;  // the stage's own communication (tp, cp, ep)
  std::vector<TimeRange> comm;      // every other communication: waits
  std::vector<TimeRange> data;      // the data-parallel gradient sync (part of `comm`)
  std::vector<TimeRange> all_comm;
  for (uint32_t i : assigned.ops) {
    const index::DeviceOp& op = rank.ops[i];
    const AlignedOp aligned = Aligned(op, offset);
    if (op.op_class == index::OpClass::kCompute) {
      compute.push_back({aligned.start, aligned.end});
      continue;
    }
    if (op.op_class != index::OpClass::kComm) continue;
    // A CPU rank's transfer lasts until its gloo:/nccl: range ends: the rank waits in it.
    const TimeRange range{aligned.start, ClockOffsets::Move(op.transfer_end, offset)};
    all_comm.push_back(range);
    if (op.in_stage_comm()) {
      in_stage.push_back(range);
      continue;
    }
    comm.push_back(range);
    if (op.group == index::GroupRole::kData) data.push_back(range);
  }
  const IntervalSet compute_set = IntervalSet::FromRanges(std::move(compute));
  // Compute and in-stage communication together are the stage's work; overlapping ones count once.
  const IntervalSet busy_set = compute_set.Union(IntervalSet::FromRanges(std::move(in_stage)));
  const IntervalSet comm_set = IntervalSet::FromRanges(std::move(comm));
  const IntervalSet window = IntervalSet::FromRanges({{window_start, window_end}});
  figures.comm_spans = IntervalSet::FromRanges(std::move(all_comm)).Intersect(window).ranges();
  figures.split.compute = compute_set.Length();
  figures.split.in_stage_comm = busy_set.Length() - figures.split.compute;
  figures.split.dp_sync =
      IntervalSet::FromRanges(std::move(data)).Intersect(window).Subtract(busy_set).Length();
  if (busy_set.empty()) {
    AddSpan(IdleKind::kFill, window_start, window_end, &figures);
    return figures;
  }
  figures.first_compute_start = busy_set.Start();
  figures.last_compute_end = busy_set.End();
  // Before the schedule's first op, every gap in the work is fill.
  const TimeNs fill_end = FillEnd(rank, offset, assigned, figures.first_compute_start);
  AddSpan(IdleKind::kFill, window_start, figures.first_compute_start, &figures);
  const IntervalSet fill_gaps =
      IntervalSet::FromRanges({{figures.first_compute_start, fill_end}}).Subtract(busy_set);
  for (const TimeRange& gap : fill_gaps.ranges()) {
    AddSpan(IdleKind::kFill, gap.start, gap.end, &figures);
  }
  // The gaps between the schedule's first op (or the first work) and the last work, cut where
  // communication runs.
  const IntervalSet gaps =
      IntervalSet::FromRanges({{fill_end, figures.last_compute_end}}).Subtract(busy_set);
  const IntervalSet waits = gaps.Intersect(comm_set);
  const std::vector<TimeRange>& wait_ranges = waits.ranges();
  size_t w = 0;
  for (const TimeRange& gap : gaps.ranges()) {
    TimeNs at = gap.start;
    for (; w < wait_ranges.size() && wait_ranges[w].start < gap.end; ++w) {
      AddSpan(IdleKind::kEmpty, at, wait_ranges[w].start, &figures);
      AddSpan(IdleKind::kCommWait, wait_ranges[w].start, wait_ranges[w].end, &figures);
      at = wait_ranges[w].end;
    }
    AddSpan(IdleKind::kEmpty, at, gap.end, &figures);
  }
  AddSpan(IdleKind::kDrain, figures.last_compute_end, window_end, &figures);
  return figures;
}

IterationFigures Figures(const index::TraceIndex& index, const iterations::Result& assignment,
                         const std::vector<RankClock>& offsets,
                         const iterations::Iteration& iteration) {
  IterationFigures figures;
  figures.number = iteration.number;
  figures.complete = iteration.complete;
  // The window comes from the raw ops, so a zero-length op at either end still bounds it.
  TimeNs start = std::numeric_limits<TimeNs>::max();
  TimeNs end = std::numeric_limits<TimeNs>::min();
  for (size_t p = 0; p < assignment.positions.size(); ++p) {
    const index::RankIndex& rank = index.ranks[assignment.positions[p]];
    for (uint32_t i : iteration.ranks[p].ops) {
      const AlignedOp aligned = Aligned(rank.ops[i], offsets[p]);
      start = std::min(start, aligned.start);
      end = std::max(end, aligned.end);
    }
  }
  if (start <= end) {
    figures.window_start = start;
    figures.window_end = end;
  }
  int64_t present = 0;
  for (size_t p = 0; p < assignment.positions.size(); ++p) {
    figures.ranks.push_back(RankFigures(index.ranks[assignment.positions[p]], offsets[p],
                                        iteration.ranks[p], figures.window_start,
                                        figures.window_end));
    if (!figures.ranks.back().present) continue;
    ++present;
    figures.idle = SaturatingAdd(figures.idle, figures.ranks.back().split.idle);
  }
  const TimeNs capacity = SaturatingMul(present, figures.window());
  figures.bubble_fraction =
      capacity > 0 ? static_cast<double>(figures.idle) / static_cast<double>(capacity) : 0.0;
  return figures;
}

double Ratio(TimeNs part, TimeNs whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

std::string_view IdleKindName(IdleKind kind) {
  switch (kind) {
    case IdleKind::kFill:
      return "fill";
    case IdleKind::kDrain:
      return "drain";
    case IdleKind::kCommWait:
      return "comm_wait";
    case IdleKind::kEmpty:
      return "empty";
  }
  return "unknown";
}

Result Analyze(const Trace& trace, const index::TraceIndex& index,
               const iterations::Result& assignment, const ClockOffsets& offsets) {
  Result result;
  result.step_source = assignment.source;
  std::vector<RankClock> rank_offsets;
  for (size_t p = 0; p < assignment.positions.size(); ++p) {
    const size_t r = assignment.positions[p];
    const Rank& rank = trace.ranks[r];
    result.ranks.push_back(rank.rank);
    rank_offsets.push_back(offsets.Of(rank.rank));
    RankTotals totals;
    totals.rank = rank.rank;
    totals.device = index.ranks[r].device;
    totals.unassigned_intervals = assignment.ranks[p].unassigned;
    totals.memory = index.ranks[r].memory;
    result.per_rank.push_back(totals);
  }
  const TimeNs p = static_cast<TimeNs>(assignment.positions.size());
  std::vector<TimeNs> windows;
  for (const iterations::Iteration& iteration : assignment.iterations) {
    IterationFigures figures = Figures(index, assignment, rank_offsets, iteration);
    if (figures.complete) {
      ++result.complete_iterations;
      result.idle = SaturatingAdd(result.idle, figures.idle);
      result.capacity = SaturatingAdd(result.capacity, SaturatingMul(p, figures.window()));
      windows.push_back(figures.window());
      for (size_t i = 0; i < figures.ranks.size(); ++i) {
        const RankIterationFigures& rank = figures.ranks[i];
        RankTotals& totals = result.per_rank[i];
        totals.window = SaturatingAdd(totals.window, figures.window());
        totals.split += rank.split;
      }
    }
    result.iterations.push_back(std::move(figures));
  }
  result.bubble_fraction = Ratio(result.idle, result.capacity);
  for (RankTotals& totals : result.per_rank) {
    totals.bubble_fraction = Ratio(totals.split.idle, totals.window);
  }
  std::sort(windows.begin(), windows.end());
  result.latency.iterations = static_cast<int64_t>(windows.size());
  result.latency.p50 = NearestRankOfSorted(windows, 50);
  result.latency.p90 = NearestRankOfSorted(windows, 90);
  result.latency.max = windows.empty() ? 0 : windows.back();
  return result;
}

}  // namespace bubblescope::bubble
