// Iterations found from the repeating schedule itself, for traces with neither profiler steps
// nor an iteration marker (an Nsight or collector trace, a profiler run without a schedule).
//
// A training loop issues the same sequence of device ops every iteration. On each rank the ops
// are put in issue order (launch start; own start without a launch record) and each is reduced
// to a signature: its name and whether it is compute or communication (copies are left out: a
// data-loader copy may come and go between iterations). The longest stretch of that sequence
// that is periodic gives the period P as its smallest period (prefix function, linear time per
// try). The stretch is tried anchored at either end and through a quarter, the middle and three
// quarters of the trace, so a non-periodic start (warm-up) and a non-periodic end (a checkpoint)
// are tolerated together. The cut within the period is placed
// where the rank's issue gaps are longest on average over the repeats: the host waits for the
// device at the end of an iteration (synchronize, loss.item(), the optimizer's all-reduce). A
// trace that is exactly whole periods is cut at its start instead (see DetectRank).
//
// Accepted only when the stretch holds >= min_repeats whole periods and a period holds both
// compute and, when the rank has any, communication (a period of one op or of compute alone is
// a microbatch, not an iteration). A forward-only job with no per-iteration op (no optimizer,
// no collective, no sync) repeats per microbatch and cannot be split this way.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/clock_offsets.h"
#include "bubblescope/trace.h"
#include "index/rank_index.h"

namespace bubblescope::repeating_schedule {

struct Options {
  int32_t min_repeats = 2;
};

// One iteration of one rank: the issue time of its first op opens it; issue times are what the
// iteration assignment compares (iterations.h), so ops follow their launch into it.
struct Segment {
  TimeNs issue_start = 0;
  TimeNs first_start = 0;  // device span of its ops, for matching iterations across ranks
  TimeNs last_end = 0;
  bool whole = true;  // false: the part before the first or after the last whole period
};

struct RankSchedule {
  bool found = false;
  int64_t period_ops = 0;         // device ops (copies excluded) per iteration
  int64_t whole_repeats = 0;      // whole periods found
  std::vector<Segment> segments;  // in issue order; the partial ones only when they hold ops
};

RankSchedule DetectRank(const index::RankIndex& rank, const Options& options);

// Each rank's own numbering of its segments: its first whole segment is 0, a leading partial one
// -1, the rest follow on.
std::vector<int64_t> LocalNumbers(const RankSchedule& rank);

// What to add to each rank's local numbers so that the same iteration carries the same number on
// every rank: the first rank with a schedule keeps its own; another rank's first whole segment
// takes the number of the first rank's whole segment whose device span it overlaps most (0
// without overlap), its device spans moved onto the reference clock by `offsets` (one per rank,
// parallel to `ranks`, rank clock - reference clock).
std::vector<int64_t> NumberingShifts(const std::vector<RankSchedule>& ranks,
                                     const std::vector<RankClock>& offsets);

}  // namespace bubblescope::repeating_schedule
