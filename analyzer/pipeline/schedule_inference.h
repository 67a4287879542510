// Pipeline shape and schedule inference (docs/schedule-inference.md): given the stage order
// (stage_order.h), how many stages (p), virtual stages per rank (v) and microbatches per
// iteration (m) the job used, which schedule family ran, and how long each stage's forward /
// backward / weight-gradient ops took.
//
// Sources, in order of trust:
//  1. Annotations. `PP:{stage}{F|B|I|W}{mb}` ranges (torch.distributed.pipelining runtime
//     schedules, the simulator's GPU style) give the virtual stage -> rank map, m, v and every
//     op's compute directly. `Forward {mb}` / `Backward {mb}` ranges (torch GPipe, the
//     simulator's CPU style) and stageless `PP:F{mb}` ranges give m, v and the ops.
//  2. Point-to-point traffic (issue order of send / recv on each rank, within each rank's
//     reference step, see step_map.h). The first stage's sends to the second give m·v; wrap-around
//     sends last -> first give m·(v-1) (visible with peers and p >= 3). Where they are not, the
//     first stage's forward-op count F = v·m against its (2v-1)·m sends gives m and v. On the last
//     stage, gpipe receives all m forward inputs before its first send, 1f1b does not. F / B / W
//     ops are the compute runs between transfers, split by name hints (see issued_items.h,
//     segment_ops.h); where those do not give one pass per microbatch on every stage, the ops the
//     schedule's program places between each rank's transfers (program_fit.h).
//  3. Family: any W or I op -> "zb"; no backward -> "fwd-only"; m = v = 1 -> "gpipe" (identical
//     to 1f1b then; a note says so); else "gpipe" when the rank of the last virtual stage runs
//     all its forwards before its first backward (with v > 1 torch's ScheduleLoopedBFS: looped
//     GPipe), "1f1b" (v = 1) or "interleaved" (v > 1) when it does not. Annotated ops show that
//     rank's order of ops; the traffic its forward inputs against its first gradient send.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "pipeline/issued_items.h"
#include "pipeline/pipeline_op.h"
#include "pipeline/program_fit.h"
#include "pipeline/stage_order.h"

namespace bubblescope::schedule_inference {

using pipeline::ShapeSource;

enum class ScheduleFamily : uint8_t { kGpipe, k1F1B, kInterleaved, kZeroBubble, kForwardOnly };

// "gpipe", "1f1b", "interleaved", "zb", "fwd-only".
std::string_view ScheduleFamilyName(ScheduleFamily family);

// What decided the family (rule 3 above), for the report's evidence.
enum class FamilyRule : uint8_t {
  kSplitBackward,              // a weight-gradient or input-gradient op: zb
  kNoBackward,                 // no backward at all: fwd-only
  kOneMicrobatch,              // m = v = 1: gpipe and 1f1b run one order
  kForwardsFirst,              // every forward before the first backward: gpipe
  kBackwardBeforeLastForward,  // a backward before the last forward: 1f1b or interleaved
};

// "split_backward", "no_backward", "one_microbatch", "forwards_first",
// "backward_before_last_forward".
std::string_view FamilyRuleName(FamilyRule rule);

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
  OpStats backward;            // full backward, or input-grad backward when W is separate
  OpStats weight_grad;         // separate W ops only
  double mean_total_ns = 0.0;  // mean F + mean B + mean W: one microbatch (per chunk) on the stage
};

struct Result {
  int32_t p = 0;
  int32_t v = 0;
  int32_t m = 0;  // microbatches per iteration
  ScheduleFamily family = ScheduleFamily::kGpipe;
  FamilyRule family_rule = FamilyRule::kForwardsFirst;
  std::vector<int32_t> stage_order;          // rank of stage 0 .. p-1 (the driver's)
  std::vector<int32_t> virtual_stage_ranks;  // rank of virtual stage 0 .. p·v-1
  ShapeSource stage_order_source = ShapeSource::kP2p;
  ShapeSource schedule_source = ShapeSource::kP2p;  // where p, v, m and family came from
  std::vector<StageFigures> stages;  // by pipeline position; empty when ops could not be split
  // False when the stages' op counts do not fit one pass of every microbatch (ops mis-split:
  // a backward cut into pieces): the per-stage times are shown, but no slowest stage, finding
  // or rebalance is built on them, and a note says why.
  bool stage_counts_fit = true;
  int32_t slowest_stage = -1;  // largest mean_total_ns (lowest among equals); -1 = unknown
  int32_t slowest_rank = -1;
  double slowest_excess_ns = 0.0;       // slowest mean_total_ns - mean over stages
  double slowest_excess_percent = 0.0;  // of that mean
  std::vector<std::string> notes;       // assumptions and ambiguities met on the way
  // Shapes read from the traffic: how the schedule's program fitted the ranks' transfers and
  // compute (program_fit.h), and whether the per-stage figures come from that fit (`used`:
  // where phase hints alone did not split the ops one pass per microbatch). nullopt for
  // annotated shapes and shapes the simulator does not model.
  std::optional<pipeline::FitSummary> op_fit;
  // The ops the per-stage figures come from, every step of every rank, each rank's in start
  // order; empty when they could not be split.
  std::vector<pipeline::PipelineOp> ops;
};

struct Input {
  const pipeline::StageOrder* order = nullptr;  // decided by the job driver
  // The pipeline's ranks (each rank's issued work, stepped by its reference step) and the op
  // annotations of each, parallel.
  const std::vector<pipeline::IssuedTimeline>* timelines = nullptr;
  const std::vector<std::vector<pipeline::PipelineOp>>* annotated = nullptr;
  std::vector<int32_t> cut_short_ranks;  // ranks of the pipeline whose file was cut short
};

// FailedPreconditionError when neither annotations nor traffic reveal the pipeline (e.g. no p2p
// at all, or no stage order).
absl::StatusOr<Result> Analyze(const Input& input);

}  // namespace bubblescope::schedule_inference
