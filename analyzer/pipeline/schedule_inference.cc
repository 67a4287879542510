#include "pipeline/schedule_inference.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "pipeline/p2p_structure.h"
#include "pipeline/pipeline_op.h"
#include "pipeline/segment_ops.h"
#include "pipeline/sim_schedule.h"
#include "pipeline/stage_stats.h"

namespace bubblescope::schedule_inference {
namespace {

using pipeline::IssuedTimeline;
using pipeline::OpType;
using pipeline::PipelineOp;

// What the ops of the reference iteration (step 0) say about the family, given p, v and m.
struct FamilyEvidence {
  bool any_backward = false;
  bool any_split_backward = false;  // W or I ops
  // The last virtual stage's rank runs all of its forwards before its first backward (GPipe's
  // order, over every chunk of the rank when v > 1: torch's ScheduleLoopedBFS).
  bool all_forwards_first = false;
};

void SetFamily(const FamilyEvidence& evidence, Result* result) {
  if (evidence.any_split_backward) {
    result->family = ScheduleFamily::kZeroBubble;
    result->family_rule = FamilyRule::kSplitBackward;
  } else if (!evidence.any_backward) {
    result->family = ScheduleFamily::kForwardOnly;
    result->family_rule = FamilyRule::kNoBackward;
  } else if (result->m == 1 && result->v == 1) {
    result->family = ScheduleFamily::kGpipe;
    result->family_rule = FamilyRule::kOneMicrobatch;
    result->notes.push_back("m = 1: gpipe and 1f1b run the same order; reported as gpipe");
  } else if (evidence.all_forwards_first) {
    // With several chunks per rank this tells looped GPipe from interleaved 1F1B, whose last
    // stage runs a backward after (v-1)·p + 1 of its v·m forwards, before the rest.
    result->family = ScheduleFamily::kGpipe;
    result->family_rule = FamilyRule::kForwardsFirst;
  } else {
    result->family = result->v > 1 ? ScheduleFamily::kInterleaved : ScheduleFamily::k1F1B;
    result->family_rule = FamilyRule::kBackwardBeforeLastForward;
  }
}

// Round-robin placement (Megatron interleaving): virtual stage c·p + s runs on stage s's rank.
std::vector<int32_t> RoundRobinPlacement(const std::vector<int32_t>& order, int32_t v) {
  std::vector<int32_t> ranks;
  for (int32_t chunk = 0; chunk < v; ++chunk) ranks.insert(ranks.end(), order.begin(), order.end());
  return ranks;
}

// Family evidence from annotated ops: whether `rank` runs its v·m forwards of the reference step
// before its first backward. Asked of the rank of the last virtual stage, the one rank where the
// families' orders always differ: 1F1B and interleaved 1F1B run that stage's first backward right
// after its first forward, while GPipe (looped or not) runs it after every forward; earlier
// ranks of 1F1B-like schedules may run all their forwards first when m is small.
bool ForwardsFirst(const std::vector<PipelineOp>& ops, int32_t rank, int64_t forwards_per_rank) {
  std::vector<const PipelineOp*> rank_ops;
  for (const PipelineOp& op : ops) {
    if (op.step == 0 && op.rank == rank) rank_ops.push_back(&op);
  }
  std::stable_sort(rank_ops.begin(), rank_ops.end(),
                   [](const PipelineOp* a, const PipelineOp* b) { return a->start < b->start; });
  int64_t forwards = 0;
  for (const PipelineOp* op : rank_ops) {
    if (op->type != OpType::kForward) break;
    ++forwards;
  }
  return forwards >= forwards_per_rank;
}

void FillSplitEvidence(const std::vector<PipelineOp>& ops, FamilyEvidence* evidence) {
  for (const PipelineOp& op : ops) {
    if (op.type != OpType::kForward) evidence->any_backward = true;
    if (op.type == OpType::kWeightGrad || op.input_grad_only) evidence->any_split_backward = true;
  }
}

// `PP:{stage}...` ops: everything but the statistics comes from the stage numbers, whose
// placement the stage order already read.
Result FromStagedAnnotations(const std::vector<PipelineOp>& ops,
                             const pipeline::StageOrder& order) {
  Result result;
  result.p = static_cast<int32_t>(order.ranks.size());
  const int32_t stage_count = static_cast<int32_t>(order.virtual_stage_ranks.size());
  result.v = stage_count / result.p;
  result.virtual_stage_ranks = order.virtual_stage_ranks;
  result.stage_order = order.ranks;
  std::set<int32_t> microbatches;
  for (const PipelineOp& op : ops) {
    if (op.step != 0) continue;
    if (op.virtual_stage == 0 && op.type == OpType::kForward) microbatches.insert(op.microbatch);
  }
  result.m = static_cast<int32_t>(microbatches.size());
  FamilyEvidence evidence;
  FillSplitEvidence(ops, &evidence);
  evidence.all_forwards_first =
      ForwardsFirst(ops, result.virtual_stage_ranks.back(), int64_t{result.v} * result.m);
  SetFamily(evidence, &result);
  result.stage_order_source = ShapeSource::kAnnotations;
  result.schedule_source = ShapeSource::kAnnotations;
  return result;
}

// v from the first stage's stageless ops in start order: in every schedule a microbatch's forward
// runs once on each of the rank's v chunks before that microbatch's first backward can start, so
// the forwards of the first microbatch before its first backward count the chunks. Unlike
// forwards ÷ m this holds when step 0 spans several iterations (no iteration boundaries were
// found, so the whole trace is step 0). nullopt without a backward of that microbatch.
std::optional<int32_t> ChunksFromFirstMicrobatch(
    const std::vector<const PipelineOp*>& first_stage) {
  if (first_stage.empty()) return std::nullopt;
  const int32_t microbatch = first_stage.front()->microbatch;
  int32_t forwards = 0;
  for (const PipelineOp* op : first_stage) {
    if (op->microbatch != microbatch) continue;
    if (op->type == OpType::kForward) ++forwards;
    if (op->type == OpType::kBackward) return forwards;
  }
  return std::nullopt;
}

// `Forward {mb}` ops: m, v and family from the ops, stage order from the traffic.
absl::StatusOr<Result> FromWordAnnotations(const std::vector<PipelineOp>& ops,
                                           const pipeline::StageOrder& order) {
  if (!order.known) return absl::FailedPreconditionError(order.problem);
  Result result;
  result.stage_order = order.ranks;
  result.p = static_cast<int32_t>(result.stage_order.size());
  std::set<int32_t> microbatches;
  int32_t forwards = 0;
  std::vector<const PipelineOp*> first_stage_ops;
  for (const PipelineOp& op : ops) {
    if (op.step != 0 || op.rank != result.stage_order.front()) continue;
    first_stage_ops.push_back(&op);
    if (op.type == OpType::kForward) {
      microbatches.insert(op.microbatch);
      ++forwards;
    }
  }
  std::stable_sort(first_stage_ops.begin(), first_stage_ops.end(),
                   [](const PipelineOp* a, const PipelineOp* b) { return a->start < b->start; });
  result.m = static_cast<int32_t>(microbatches.size());
  const int32_t v =
      ChunksFromFirstMicrobatch(first_stage_ops).value_or(result.m == 0 ? 0 : forwards / result.m);
  if (result.m == 0 || v <= 0 || forwards % (v * result.m) != 0) {
    return absl::FailedPreconditionError(absl::StrCat("the first stage's reference iteration has ",
                                                      forwards, " forward ranges over ", result.m,
                                                      " microbatches and ", v, " chunks"));
  }
  result.v = v;
  if (const int32_t passes = forwards / (v * result.m); passes > 1) {
    result.notes.push_back(absl::StrCat(
        "the first stage runs each of its ", result.m, " microbatches ", passes * v,
        " times in one iteration with v = ", v, ": ", passes,
        " passes, as when no iteration boundaries were found (docs/bubble.md); m counts one"));
  }
  result.virtual_stage_ranks = RoundRobinPlacement(result.stage_order, result.v);
  if (result.v > 1) result.notes.push_back("stage placement assumed round-robin (c·p + s)");
  FamilyEvidence evidence;
  FillSplitEvidence(ops, &evidence);
  evidence.all_forwards_first =
      ForwardsFirst(ops, result.stage_order.back(), int64_t{v} * result.m);
  SetFamily(evidence, &result);
  result.stage_order_source = order.source;
  result.schedule_source = ShapeSource::kAnnotations;
  return result;
}

// Fits the shape's program to the ranks' transfers and compute (program_fit.h) and records how
// well it fitted. Its ops replace `ops` where the phase hints did not split them one pass per
// microbatch on every stage and the fit places every rank's reference step.
void FitToProgram(const std::vector<IssuedTimeline>& timelines, bool hints_split_ops,
                  Result* result, std::vector<PipelineOp>* ops) {
  size_t items = 0;
  for (const IssuedTimeline& timeline : timelines) items += timeline.items.size();
  const std::optional<std::vector<std::vector<sim::Op>>> programs =
      pipeline::StagePrograms(*result, static_cast<int64_t>(items) * 3 + 4096);
  if (!programs) return;
  pipeline::ProgramFit fit = pipeline::FitProgram({.timelines = &timelines,
                                                   .stage_order = result->stage_order,
                                                   .v = result->v,
                                                   .programs = &*programs});
  result->op_fit = fit.summary;
  if (hints_split_ops || !fit.summary.reference_fitted || fit.ops.empty()) return;
  result->op_fit->used = true;
  *ops = std::move(fit.ops);
  const pipeline::FitSummary& summary = *result->op_fit;
  std::vector<std::string> evidence;
  for (size_t e = 0; e < 5; ++e) {
    if (summary.by_evidence[e] == 0) continue;
    evidence.push_back(absl::StrCat(
        summary.by_evidence[e], " by ",
        std::string(pipeline::FitEvidenceName(static_cast<pipeline::FitEvidence>(e)))));
  }
  result->notes.push_back(absl::StrCat(
      "forward and backward ops fitted to the ", std::string(ScheduleFamilyName(result->family)),
      " program between the transfers: ", summary.placed, " of ", summary.program_ops,
      " ops placed (", absl::StrJoin(evidence, ", "), ") in ", summary.steps_fitted, " of ",
      summary.steps, " steps"));
  for (const std::string& note : fit.notes) result->notes.push_back("not fitted: " + note);
}

absl::StatusOr<Result> FromTraffic(const std::vector<IssuedTimeline>& timelines,
                                   const pipeline::StageOrder& stage_order,
                                   std::vector<PipelineOp>* ops) {
  if (!stage_order.known) return absl::FailedPreconditionError(stage_order.problem);
  const std::vector<int32_t>* order = &stage_order.ranks;
  // Ops are split before the shape is read: where the traffic hides v, their count shows it.
  // The count needs the first stage's forwards told from its backwards, so its phase hints.
  std::vector<int32_t> unhinted_ranks;
  for (const IssuedTimeline& timeline : timelines) {
    if (!pipeline::HasPhaseHints(timeline)) unhinted_ranks.push_back(timeline.rank);
    std::vector<PipelineOp> rank_ops =
        pipeline::SegmentOps(timeline, timeline.rank == order->front());
    ops->insert(ops->end(), rank_ops.begin(), rank_ops.end());
  }
  std::optional<pipeline::ComputeCounts> counts;
  if (std::find(unhinted_ranks.begin(), unhinted_ranks.end(), order->front()) ==
      unhinted_ranks.end()) {
    counts.emplace();
    for (const PipelineOp& op : *ops) {
      if (op.type != OpType::kForward) counts->any_backward = true;
      if (op.rank != order->front() || op.step != 0) continue;
      if (op.type == OpType::kForward) ++counts->first_stage_forwards;
      if (op.type == OpType::kBackward) ++counts->first_stage_backwards;
    }
  }
  BUBBLESCOPE_ASSIGN_OR_RETURN(pipeline::P2pSchedule schedule,
                               pipeline::InferP2pSchedule(timelines, *order, counts));
  Result result;
  result.stage_order = *order;
  result.p = static_cast<int32_t>(result.stage_order.size());
  result.m = schedule.m;
  result.v = schedule.v;
  result.notes = schedule.notes;
  result.virtual_stage_ranks = RoundRobinPlacement(result.stage_order, result.v);
  if (result.v > 1) result.notes.push_back("stage placement assumed round-robin (c·p + s)");
  // Forward and backward compute of a rank without hints look alike to the name rules: their
  // ops are left to the program fit below, and without it no per-stage figures are made up.
  const bool unhinted = schedule.has_backward && !unhinted_ranks.empty();
  if (unhinted) ops->clear();
  FamilyEvidence evidence;
  FillSplitEvidence(*ops, &evidence);
  evidence.any_backward = evidence.any_backward || schedule.has_backward;
  evidence.all_forwards_first = schedule.all_forwards_first;
  SetFamily(evidence, &result);
  const bool hints_split_ops =
      !unhinted && pipeline::OpCountMisfit(pipeline::StageStats(*ops, *order)).empty();
  FitToProgram(timelines, hints_split_ops, &result, ops);
  if (unhinted && !(result.op_fit && result.op_fit->used)) {
    for (int32_t rank : unhinted_ranks) {
      result.notes.push_back(absl::StrCat("rank ", rank,
                                          ": no backward name hints, so its forward and backward "
                                          "compute cannot be told apart"));
    }
  }
  result.stage_order_source = stage_order.source;
  result.schedule_source = ShapeSource::kP2p;
  return result;
}

}  // namespace

std::string_view FamilyRuleName(FamilyRule rule) {
  switch (rule) {
    case FamilyRule::kSplitBackward:
      return "split_backward";
    case FamilyRule::kNoBackward:
      return "no_backward";
    case FamilyRule::kOneMicrobatch:
      return "one_microbatch";
    case FamilyRule::kForwardsFirst:
      return "forwards_first";
    case FamilyRule::kBackwardBeforeLastForward:
      return "backward_before_last_forward";
  }
  return "unknown";
}

std::string_view ScheduleFamilyName(ScheduleFamily family) {
  switch (family) {
    case ScheduleFamily::kGpipe:
      return "gpipe";
    case ScheduleFamily::k1F1B:
      return "1f1b";
    case ScheduleFamily::kInterleaved:
      return "interleaved";
    case ScheduleFamily::kZeroBubble:
      return "zb";
    case ScheduleFamily::kForwardOnly:
      return "fwd-only";
  }
  return "unknown";
}

absl::StatusOr<Result> Analyze(const Input& input) {
  const pipeline::StageOrder& order = *input.order;
  const std::vector<IssuedTimeline>& timelines = *input.timelines;
  if (timelines.empty()) return absl::FailedPreconditionError("the pipeline has no ranks");
  std::vector<PipelineOp> staged_ops;
  std::vector<PipelineOp> word_ops;
  size_t ranks_with_staged = 0;
  size_t ranks_with_words = 0;
  for (const std::vector<PipelineOp>& rank_ops : *input.annotated) {
    bool staged = false;
    bool words = false;
    for (const PipelineOp& op : rank_ops) {
      (op.virtual_stage >= 0 ? staged_ops : word_ops).push_back(op);
      (op.virtual_stage >= 0 ? staged : words) = true;
    }
    ranks_with_staged += staged ? 1 : 0;
    ranks_with_words += words ? 1 : 0;
  }

  std::vector<std::string> notes;
  for (int32_t rank : input.cut_short_ranks) {
    // Events after the cut are lost from wherever the file held them (a whole stream's, when
    // the writer grouped events by stream), so the shape read from this rank may be off.
    notes.push_back(absl::StrCat("rank ", rank,
                                 "'s trace was cut short: ops it lost may change the shape "
                                 "read from it"));
  }
  std::vector<PipelineOp> ops;
  absl::StatusOr<Result> result = absl::UnknownError("no source tried");
  if (order.source == ShapeSource::kAnnotations) {
    result = FromStagedAnnotations(staged_ops, order);
    ops = std::move(staged_ops);
  } else if (ranks_with_staged == timelines.size()) {
    result = absl::FailedPreconditionError(order.annotation_problem);
  } else if (ranks_with_words == timelines.size()) {
    result = FromWordAnnotations(word_ops, order);
    if (result.ok()) ops = std::move(word_ops);
  } else if (ranks_with_staged + ranks_with_words > 0) {
    notes.push_back("op annotations on some ranks only: ignored");
  }
  if (!result.ok() && (ranks_with_staged > 0 || ranks_with_words > 0) &&
      !absl::IsUnknown(result.status())) {
    notes.push_back(absl::StrCat("annotations not used: ", result.status().message()));
  }
  if (!result.ok()) result = FromTraffic(timelines, order, &ops);
  BUBBLESCOPE_RETURN_IF_ERROR(result.status());
  result->notes.insert(result->notes.begin(), notes.begin(), notes.end());
  if (!ops.empty()) {
    result->stages = pipeline::StageStats(ops, result->stage_order);
    const std::string misfit = pipeline::OpCountMisfit(result->stages);
    const pipeline::FitSummary* fit =
        result->op_fit && result->op_fit->used ? &*result->op_fit : nullptr;
    if (misfit.empty() && fit != nullptr && (fit->weak > 0 || fit->hinted_left_out > 0)) {
      result->stage_counts_fit = false;
      const std::string why =
          fit->weak > 0 ? absl::StrCat(fit->weak,
                                       " of the fitted ops were cut from a neighbour where no "
                                       "phase hint or repeated kernel name confirmed the cut")
                        : absl::StrCat(fit->hinted_left_out, " backward kernels fit no op of the ",
                                       std::string(ScheduleFamilyName(result->family)),
                                       " program (weight-gradient ops of a zero-bubble schedule?)");
      result->notes.push_back(absl::StrCat("guess: ", why,
                                           ", so no stage is called slowest and no imbalance or "
                                           "rebalance is built on these times"));
    } else if (misfit.empty()) {
      pipeline::FindSlowestStage(&*result);
    } else {
      result->stage_counts_fit = false;
      result->notes.push_back(absl::StrCat(
          "per-stage op counts do not fit one pass per microbatch (", misfit,
          "): ops were split without a reliable forward/backward signal, so no stage is called "
          "slowest and no imbalance or rebalance is built on these times"));
    }
  }
  result->ops = std::move(ops);
  return result;
}

}  // namespace bubblescope::schedule_inference
