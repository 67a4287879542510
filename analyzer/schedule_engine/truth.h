// The ground truth of a simulated job: the bubble figures the analyzer is expected to reproduce,
// computed only from the engine's own records on the true clock (never by analyzer code).
//
// Definitions, per iteration i:
//   window     = [earliest start, latest end] of iteration i's device activity (compute, p2p and
//                all-reduce kernels) over all ranks.
//   compute    = sum of the rank's compute kernel durations in i (optimizer included; kernels on
//                one stream never overlap).
//   idle       = window - compute
//   fill       = first compute start - window start
//   drain      = window end - last compute end (with Config::iteration_barrier this includes the
//                rank's wait in the iteration-end all-reduce, which follows its last compute)
//   stall      = idle - fill - drain
//   comm_wait  = time inside [first compute start, last compute end] where one of the rank's
//                communication kernels runs and none of its compute kernels does.
//   empty      = stall - comm_wait
//   With tensor, context or expert parallelism (ModelParallel) their communication is the stage's
//   work: "compute" in idle, fill, drain and comm_wait reads "compute and in-stage
//   communication" (their union: the tensor-parallel collectives, ring attention's KV exchanges,
//   the MoE all-to-alls; in_stage_comm = that union - compute), and dp_sync = the part of idle
//   under the data-parallel gradient sync.
//   bubble     = sum of idle over ranks / (p * window)
// Over all iterations: bubble = sum of all idle / sum of p * window; latency percentiles of the
// window durations (nearest-rank: the q-quantile of n sorted values is the ceil(q*n)-th, 1-based);
// theoretical bubble = the schedule's own bubble (ScheduleIdealBubble): (p-1) / (v*m + p-1)
// except for zb-h1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bubblescope/idle_split.h"
#include "bubblescope/trace.h"
#include "schedule_engine/config.h"
#include "schedule_engine/records.h"

namespace bubblescope::sim {

struct RankIterationTruth {
  int32_t rank = 0;
  int32_t stage = 0;
  TimeNs first_compute_start = 0;
  TimeNs last_compute_end = 0;
  // first_compute_start / last_compute_end bound the work, in-stage communication included.
  IdleSplit split;
};

struct IterationTruth {
  int32_t iteration = 0;
  TimeNs window_start = 0;
  TimeNs window_end = 0;
  TimeNs idle = 0;  // summed over ranks
  double bubble_fraction = 0.0;
  std::vector<RankIterationTruth> ranks;  // indexed by rank

  TimeNs window() const { return window_end - window_start; }
};

// Time of one op (the sum of its kernels) over every op of a type on a stage (every chunk and
// iteration; for interleaved jobs that is the per-chunk time).
struct OpTimeStats {
  int64_t count = 0;
  TimeNs total_ns = 0;
  double mean_ns = 0.0;
  TimeNs p90_ns = 0;  // nearest-rank
};

struct StageTruth {
  int32_t stage = 0;
  int32_t rank = 0;
  OpTimeStats forward;
  OpTimeStats backward;
  OpTimeStats weight_grad;     // zb-h1 only; count 0 otherwise
  double mean_total_ns = 0.0;  // mean F + mean B + mean W
};

struct RankMemoryTruth {
  int32_t rank = 0;
  int64_t peak_allocated_bytes = 0;
  int64_t peak_reserved_bytes = 0;
};

struct Truth {
  std::string schedule;  // ScheduleName()
  int32_t stages = 0;
  int32_t microbatches = 0;
  int32_t virtual_stages = 0;
  std::vector<IterationTruth> iterations;
  TimeNs idle_ns = 0;            // all iterations, all ranks
  TimeNs capacity_ns = 0;        // sum over iterations of p * window
  double bubble_fraction = 0.0;  // idle_ns / capacity_ns
  TimeNs latency_p50_ns = 0;
  TimeNs latency_p90_ns = 0;
  TimeNs latency_max_ns = 0;
  double theoretical_bubble_fraction = 0.0;
  std::vector<StageTruth> per_stage;    // indexed by stage
  int32_t slowest_stage = 0;            // largest mean_total_ns; the lowest stage among equals
  std::vector<RankMemoryTruth> memory;  // indexed by rank
  std::vector<int32_t> stage_to_rank;
};

Truth ComputeTruth(const Config& config, const Records& records);

// The bubble of `schedule` at p, v, m with equal stages, free links and no host delay, when the
// schedule leaves it in closed form: (p-1)/(v*m+p-1) for gpipe, 1f1b, interleaved and fwd-only;
// looped gpipe (v > 1) with m < p waits v-1 more times p-m slots, so
// (p-1+(v-1)(p-m))/(v*m+p-1+(v-1)(p-m)). 0 when p, v or m is not positive.
double ClosedFormIdealBubble(Schedule schedule, int32_t p, int32_t v, int32_t m);

// The bubble `config`'s schedule leaves by itself: the same p, m, v and schedule with every stage
// at the mean F, B and W cost over stages, free links and no host delay, one iteration. That is
// ClosedFormIdealBubble for gpipe, 1f1b, interleaved and fwd-only, returned as such; zb-h1 fills
// part of it with weight-gradient work, so its own is simulated (with equal F, B and W and m >= p
// it is (p-1)/(3m+p-1)). Assumes a valid config.
double ScheduleIdealBubble(const Config& config);

// Nearest-rank percentile: the ceil(percent * n / 100)-th smallest value (at least the first);
// 0 when empty. Integer arithmetic, so p90 of 10 values is exactly the 9th.
TimeNs NearestRankPercentile(std::vector<TimeNs> values, int32_t percent);

}  // namespace bubblescope::sim
