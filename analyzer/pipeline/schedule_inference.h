// Pipeline shape and schedule inference (docs/schedule-inference.md): which rank runs which
// stage, how many stages (p), virtual stages per rank (v) and microbatches per iteration (m) the
// job used, which schedule family ran, and how long each stage's forward / backward /
// weight-gradient ops took.
//
// Sources, in order of trust:
//  1. Annotations. `PP:{stage}{F|B|I|W}{mb}` ranges (torch.distributed.pipelining runtime
//     schedules, the simulator's GPU style) give the virtual stage -> rank map, m, v and every
//     op's compute directly. `Forward {mb}` / `Backward {mb}` ranges (torch GPipe, the
//     simulator's CPU style) and stageless `PP:F{mb}` ranges give m, v and the ops, but no
//     stage, so the order comes from 2.
//  2. Point-to-point traffic (issue order of send / recv on each rank, within the pipeline's
//     reference iteration: its first complete one, see step_map.h). With peer ranks recorded
//     (NCCL, simulator), the first stage is the rank
//     whose first transfer is a send and the order follows each rank's first send; without
//     (gloo, NCCL without args), GPU ranks are chained by the gaps between completions of
//     activation transfers (offset-free), CPU ranks by when their first receive completed
//     (one host clock); see p2p_structure.h. The
//     first stage's sends to the second give m·v; wrap-around sends last -> first give m·(v-1)
//     (visible with peers and p >= 3). Where they are not, the first stage's forward-op count
//     F = v·m against its (2v-1)·m sends gives m and v. On the last stage, gpipe receives all
//     m forward inputs before its first send, 1f1b does not. F / B / W ops are the compute runs
//     between transfers, split by name hints (see issued_items.h, segment_ops.h).
//  3. Family: any W or I op -> "zb"; no backward -> "fwd-only"; v > 1 -> "interleaved"; m = 1 ->
//     "gpipe" (identical to 1f1b then; a note says so); else the last stage's F / B order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/iterations.h"
#include "bubblescope/trace.h"

namespace bubblescope::schedule_inference {

struct Options {
  // Global ranks of the one pipeline to analyse; empty = every rank of the trace.
  std::vector<int32_t> ranks;
  // How iterations are found (Analyze only): the same as the bubble's, so m counts the
  // microbatches of one iteration however iterations are marked.
  iterations::Options iterations;
};

// Compute time of one op type on one stage, over every op of that type (all chunks and whole
// iterations). p90 is nearest-rank: the ceil(0.9 n)-th smallest.
struct OpStats {
  int64_t count = 0;
  double mean_ns = 0.0;
  TimeNs p90_ns = 0;
};

struct StageFigures {
  int32_t stage = 0;  // pipeline position, 0 = first
  int32_t rank = -1;
  OpStats forward;
  OpStats backward;     // full backward, or input-grad backward when W is separate
  OpStats weight_grad;  // separate W ops only
  double mean_total_ns = 0.0;  // mean F + mean B + mean W: one microbatch (per chunk) on the stage
};

struct Result {
  int32_t p = 0;
  int32_t v = 0;
  int32_t m = 0;  // microbatches per iteration
  std::string family;  // "gpipe", "1f1b", "interleaved", "zb", "fwd-only"
  std::vector<int32_t> stage_order;          // rank of stage 0 .. p-1
  std::vector<int32_t> virtual_stage_ranks;  // rank of virtual stage 0 .. p·v-1
  std::string stage_order_source;  // "annotations" or "p2p"
  std::string schedule_source;     // where p, v, m and family came from: same words
  std::vector<StageFigures> stages;  // by pipeline position; empty when ops could not be split
  int32_t slowest_stage = -1;        // largest mean_total_ns (lowest among equals); -1 = unknown
  int32_t slowest_rank = -1;
  double slowest_excess_ns = 0.0;       // slowest mean_total_ns - mean over stages
  double slowest_excess_percent = 0.0;  // of that mean
  std::vector<std::string> notes;       // assumptions and ambiguities met on the way
};

// FailedPreconditionError when neither annotations nor traffic reveal the pipeline (e.g. no p2p
// at all), InvalidArgumentError for a rank in options.ranks that the trace does not have or for
// an invalid iteration marker.
absl::StatusOr<Result> Analyze(const Trace& trace, const Options& options);

// The same from an iteration assignment already made for `trace` (Options::iterations unused),
// so the bubble and the shape of a pipeline read the same iterations.
absl::StatusOr<Result> FromIterations(const Trace& trace, const iterations::Result& assignment,
                                      const Options& options);

}  // namespace bubblescope::schedule_inference
