#include "analysis/repeating_schedule.h"

#include <algorithm>
#include <cstddef>
#include <limits>

#include "analysis/clock_offsets.h"

namespace bubblescope::repeating_schedule {
namespace {

struct IssuedOp {
  TimeNs issue = 0;
  TimeNs start = 0;
  TimeNs end = 0;
  uint64_t signature = 0;  // name id and activity class
  bool comm = false;
};

// The rank's compute and communication ops in issue order (copies left out: a data-loader copy
// may come and go between iterations).
std::vector<IssuedOp> IssueOrder(const index::RankIndex& rank) {
  std::vector<IssuedOp> ops;
  ops.reserve(rank.ops.size());
  for (uint32_t i : rank.issue_order) {
    const index::DeviceOp& op = rank.ops[i];
    if (op.op_class == index::OpClass::kCopy) continue;
    const bool comm = op.op_class == index::OpClass::kComm;
    ops.push_back({op.issue, op.start, op.end,
                   (static_cast<uint64_t>(op.name) << 1) | (comm ? 1u : 0u), comm});
  }
  return ops;
}

// Length and smallest period of the longest prefix of `signatures` that holds two or more
// periods: the prefix function gives every prefix's smallest period.
struct PeriodicPrefix {
  size_t length = 0;
  size_t period = 0;
};

PeriodicPrefix LongestPeriodicPrefix(const std::vector<uint64_t>& signatures) {
  std::vector<size_t> border(signatures.size(), 0);
  PeriodicPrefix best;
  for (size_t i = 1; i < signatures.size(); ++i) {
    size_t k = border[i - 1];
    while (k > 0 && signatures[i] != signatures[k]) k = border[k - 1];
    if (signatures[i] == signatures[k]) ++k;
    border[i] = k;
    const size_t length = i + 1;
    const size_t period = length - k;
    if (2 * period <= length) best = {length, period};
  }
  return best;
}

// A periodic stretch [begin, begin + length) of `ops`.
struct Stretch {
  size_t begin = 0;
  size_t length = 0;
  size_t period = 0;
};

// The periodic prefix of the ops from `anchor` on, extended backwards while its period holds.
Stretch StretchThrough(const std::vector<uint64_t>& signatures, size_t anchor) {
  const std::vector<uint64_t> suffix(signatures.begin() + static_cast<ptrdiff_t>(anchor),
                                     signatures.end());
  const PeriodicPrefix forward = LongestPeriodicPrefix(suffix);
  if (forward.period == 0) return {};
  size_t begin = anchor;
  while (begin > 0 && signatures[begin - 1] == signatures[begin - 1 + forward.period]) --begin;
  return {begin, anchor + forward.length - begin, forward.period};
}

bool PeriodLooksLikeAnIteration(const std::vector<IssuedOp>& ops, const Stretch& stretch);

// The longest stretch whose period looks like an iteration, among those anchored at the front,
// at the back and through a quarter, the middle and three quarters of the trace: a non-periodic
// start (warm-up) and a non-periodic end (a checkpoint, an evaluation) together leave only the
// middle periodic.
Stretch FindStretch(const std::vector<IssuedOp>& ops) {
  std::vector<uint64_t> signatures(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) signatures[i] = ops[i].signature;
  std::vector<Stretch> candidates;
  const PeriodicPrefix front = LongestPeriodicPrefix(signatures);
  candidates.push_back({0, front.length, front.period});
  std::vector<uint64_t> reversed(signatures.rbegin(), signatures.rend());
  const PeriodicPrefix back = LongestPeriodicPrefix(reversed);
  candidates.push_back({ops.size() - back.length, back.length, back.period});
  for (size_t quarter = 1; quarter <= 3; ++quarter) {
    candidates.push_back(StretchThrough(signatures, ops.size() * quarter / 4));
  }
  Stretch best;
  for (const Stretch& candidate : candidates) {
    if (candidate.period == 0 || !PeriodLooksLikeAnIteration(ops, candidate)) continue;
    if (candidate.length > best.length) best = candidate;
  }
  return best;
}

// Offset within the period of the cut whose issue gap is longest on average over the repeats.
size_t BestPhase(const std::vector<IssuedOp>& ops, const Stretch& stretch) {
  size_t best_phase = 0;
  double best_gap = -1.0;
  for (size_t phase = 0; phase < stretch.period; ++phase) {
    double total = 0.0;  // a sum of gaps, which need not fit an int64 however many repeats
    int64_t cuts = 0;
    for (size_t at = stretch.begin + phase; at < stretch.begin + stretch.length;
         at += stretch.period) {
      if (at == stretch.begin) continue;  // the op before it lies outside the stretch
      total += static_cast<double>(ops[at].issue - ops[at - 1].issue);
      ++cuts;
    }
    if (cuts == 0) continue;
    const double gap = total / static_cast<double>(cuts);
    if (gap > best_gap) {
      best_gap = gap;
      best_phase = phase;
    }
  }
  return best_phase;
}

Segment SegmentOf(const std::vector<IssuedOp>& ops, size_t begin, size_t end, bool whole) {
  Segment segment;
  segment.issue_start = ops[begin].issue;
  segment.first_start = std::numeric_limits<TimeNs>::max();
  segment.last_end = std::numeric_limits<TimeNs>::min();
  for (size_t i = begin; i < end; ++i) {
    segment.first_start = std::min(segment.first_start, ops[i].start);
    segment.last_end = std::max(segment.last_end, ops[i].end);
  }
  segment.whole = whole;
  return segment;
}

bool PeriodLooksLikeAnIteration(const std::vector<IssuedOp>& ops, const Stretch& stretch) {
  if (stretch.period < 2) return false;
  const bool rank_has_comm =
      std::any_of(ops.begin(), ops.end(), [](const IssuedOp& op) { return op.comm; });
  bool has_comm = false;
  bool has_compute = false;
  for (size_t i = stretch.begin; i < stretch.begin + stretch.period; ++i) {
    (ops[i].comm ? has_comm : has_compute) = true;
  }
  return has_compute && (has_comm || !rank_has_comm);
}

TimeNs Overlap(const Segment& a, const Segment& b) {
  return std::max<TimeNs>(
      0, std::min(a.last_end, b.last_end) - std::max(a.first_start, b.first_start));
}

}  // namespace

RankSchedule DetectRank(const index::RankIndex& rank, const Options& options) {
  RankSchedule schedule;
  const std::vector<IssuedOp> ops = IssueOrder(rank);
  if (ops.empty()) return schedule;
  const Stretch stretch = FindStretch(ops);
  if (stretch.period == 0) return schedule;

  // A trace that is a whole number of periods and nothing else was most likely recorded from one
  // iteration boundary to another (a profiler window of whole steps): a cut anywhere else would
  // leave part of a period at both ends. This matters where the longest issue gap is not at the
  // iteration boundary, as on a gloo rank that blocks in a receive mid-iteration.
  const bool whole_periods_only =
      stretch.begin == 0 && stretch.length == ops.size() && stretch.length % stretch.period == 0;
  const size_t first_cut = whole_periods_only ? 0 : stretch.begin + BestPhase(ops, stretch);
  const size_t stretch_end = stretch.begin + stretch.length;
  const size_t repeats = (stretch_end - first_cut) / stretch.period;
  if (repeats < static_cast<size_t>(std::max(options.min_repeats, 1))) return schedule;

  schedule.found = true;
  schedule.period_ops = static_cast<int64_t>(stretch.period);
  schedule.whole_repeats = static_cast<int64_t>(repeats);
  if (first_cut > 0) schedule.segments.push_back(SegmentOf(ops, 0, first_cut, false));
  for (size_t k = 0; k < repeats; ++k) {
    const size_t begin = first_cut + k * stretch.period;
    schedule.segments.push_back(SegmentOf(ops, begin, begin + stretch.period, true));
  }
  const size_t whole_end = first_cut + repeats * stretch.period;
  if (whole_end < ops.size())
    schedule.segments.push_back(SegmentOf(ops, whole_end, ops.size(), false));
  return schedule;
}

std::vector<int64_t> LocalNumbers(const RankSchedule& rank) {
  const auto first_whole = std::find_if(rank.segments.begin(), rank.segments.end(),
                                        [](const Segment& segment) { return segment.whole; });
  const int64_t leading = first_whole - rank.segments.begin();  // 0 or 1 partial segment
  std::vector<int64_t> numbers;
  for (size_t s = 0; s < rank.segments.size(); ++s) {
    numbers.push_back(static_cast<int64_t>(s) - leading);
  }
  return numbers;
}

std::vector<int64_t> NumberingShifts(const std::vector<RankSchedule>& ranks,
                                     const std::vector<RankClock>& offsets) {
  const auto on_reference = [&offsets](const Segment& segment, size_t r) {
    Segment moved = segment;
    moved.first_start = ClockOffsets::Move(segment.first_start, offsets[r]);
    moved.last_end = ClockOffsets::Move(segment.last_end, offsets[r]);
    return moved;
  };
  std::vector<int64_t> shifts(ranks.size(), 0);
  size_t anchor = ranks.size();
  std::vector<Segment> anchor_whole;
  for (size_t r = 0; r < ranks.size() && anchor == ranks.size(); ++r) {
    if (!ranks[r].found) continue;
    anchor = r;
    for (const Segment& segment : ranks[r].segments) {
      if (segment.whole) anchor_whole.push_back(on_reference(segment, r));
    }
  }
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r].found || r == anchor) continue;
    const auto first_whole = std::find_if(ranks[r].segments.begin(), ranks[r].segments.end(),
                                          [](const Segment& segment) { return segment.whole; });
    const Segment first = on_reference(*first_whole, r);
    TimeNs best = 0;
    for (size_t j = 0; j < anchor_whole.size(); ++j) {
      const TimeNs overlap = Overlap(first, anchor_whole[j]);
      if (overlap > best) {
        best = overlap;
        shifts[r] = static_cast<int64_t>(j);
      }
    }
  }
  return shifts;
}

}  // namespace bubblescope::repeating_schedule
