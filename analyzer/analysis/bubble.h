// Pipeline bubbles: how much of each iteration the ranks of one pipeline spend not computing,
// and where that idle time sits (docs/bubble.md states every definition with an example).
//
// Per iteration, the window runs from the earliest start to the latest end of the iteration's
// device activity (compute, communication, copies) over the pipeline's ranks. A rank's work is
// its compute and its in-stage communication (tensor, context and expert parallel groups and
// all-to-alls, index::DeviceOp::in_stage_comm: the stage's own work, never a wait for another
// stage), overlapping ones counted once. Per rank, idle is the window minus the union of its
// work; idle splits into fill (before the first op of the pipeline's schedule it runs: its first
// work, or, on a rank whose first pipeline transfer of the iteration is a receive, its first
// compute after that receive completes, since its first forward needs that input; a CPU rank's
// batch split and buffer allocation before its first receive are work, but the wait around
// them is still the fill), drain (after its last work) and stall (in between); stall splits into
// comm_wait (one of its other communication ops runs and no work does: a blocking receive) and
// empty (no work and no communication: the host did not keep the device busy). A rank without work
// in the iteration is idle for the whole window, all of it fill. Two shares are reported beside:
// the in-stage communication no compute overlaps, and the idle time in which the data-parallel
// gradient sync runs (exposed DP sync).
//
// bubble fraction = sum of idle / (p * window), p = the pipeline's rank count; over several
// iterations the sums are taken first (never a mean of ratios), over complete iterations only.
// Times are compared on the pipeline's reference clock: every device op is moved by its rank's
// clock offset (clock_offsets.h) before windows and splits are taken.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/clock_offsets.h"
#include "analysis/iterations.h"
#include "bubblescope/idle_split.h"
#include "bubblescope/trace.h"
#include "common/interval_set.h"
#include "index/memory_peak.h"
#include "index/rank_index.h"

namespace bubblescope::bubble {

// The four kinds of idle time (see above).
enum class IdleKind : uint8_t { kFill, kDrain, kCommWait, kEmpty };

// "fill", "drain", "comm_wait", "empty".
std::string_view IdleKindName(IdleKind kind);

// One stretch of a rank's idle time, on the pipeline's reference clock.
struct IdleSpan {
  IdleKind kind = IdleKind::kFill;
  TimeNs start = 0;
  TimeNs end = 0;  // exclusive

  friend bool operator==(const IdleSpan&, const IdleSpan&) = default;
};

// Where a rank's idle time lies within one iteration (split: idle = fill + stall + drain and
// stall = comm_wait + empty hold exactly).
struct RankIterationFigures {
  int32_t rank = -1;
  bool present = false;            // the rank has this iteration; absent ranks are all zero
  TimeNs first_compute_start = 0;  // of the work; both 0 when the rank has none in the iteration
  TimeNs last_compute_end = 0;
  IdleSplit split;  // the window's time: work, and idle by where it lies (see above)
  // The idle time itself, in time order, none empty: split's sums are these spans' lengths by
  // kind (a stall gap is cut where communication starts and stops running).
  std::vector<IdleSpan> idle_spans;
  // When the rank communicated in the iteration (the union of its comm ops, in-stage ones
  // included, within the window), for pictures.
  std::vector<TimeRange> comm_spans;
};

struct IterationFigures {
  int64_t number = 0;
  bool complete = false;    // every pipeline rank has it and none lost its end to truncation
  TimeNs window_start = 0;  // both 0 when no pipeline rank has device activity in it
  TimeNs window_end = 0;
  TimeNs idle = 0;               // summed over present ranks
  double bubble_fraction = 0.0;  // idle / (present ranks * window); 0 for an empty window
  std::vector<RankIterationFigures> ranks;  // in pipeline order

  TimeNs window() const { return window_end - window_start; }
};

// One rank's figures summed over the complete iterations.
struct RankTotals {
  int32_t rank = -1;
  index::DeviceKind device = index::DeviceKind::kGpu;
  TimeNs window = 0;                 // sum of the complete iterations' windows
  IdleSplit split;                   // summed over the complete iterations
  double bubble_fraction = 0.0;      // split.idle / window
  int64_t unassigned_intervals = 0;  // device intervals before the rank's first step
  MemoryPeak memory;
};

// Nearest-rank percentiles of the complete iterations' window durations: the q-quantile of n
// sorted values is the ceil(q * n)-th smallest. All 0 without complete iterations.
struct Latency {
  int64_t iterations = 0;
  TimeNs p50 = 0;
  TimeNs p90 = 0;
  TimeNs max = 0;
};

struct Result {
  iterations::StepSource step_source = iterations::StepSource::kWholeTrace;
  std::vector<int32_t> ranks;                // the pipeline's rank ids, in assignment order
  std::vector<IterationFigures> iterations;  // ascending number, incomplete ones included
  int64_t complete_iterations = 0;
  TimeNs idle = 0;                   // over complete iterations and pipeline ranks
  TimeNs capacity = 0;               // sum over complete iterations of p * window
  double bubble_fraction = 0.0;      // idle / capacity; 0 when capacity is 0
  std::vector<RankTotals> per_rank;  // in pipeline order
  Latency latency;
};

// The bubble of the pipeline whose iterations `assignment` holds (its ranks in that order), on
// the clock `offsets` align them to.
Result Analyze(const Trace& trace, const index::TraceIndex& index,
               const iterations::Result& assignment, const ClockOffsets& offsets);

}  // namespace bubblescope::bubble
