#include "pipeline/schedule_inference.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pipeline/annotation_ops.h"
#include "pipeline/issued_items.h"
#include "pipeline/p2p_structure.h"
#include "pipeline/pipeline_op.h"
#include "pipeline/segment_ops.h"
#include "pipeline/stage_stats.h"

namespace bubblescope::schedule_inference {
namespace {

using pipeline::IssuedTimeline;
using pipeline::OpType;
using pipeline::PipelineOp;

constexpr char kAnnotations[] = "annotations";
constexpr char kP2p[] = "p2p";

// What the ops of the reference iteration (step 0) say about the family, given p, v and m.
struct FamilyEvidence {
  bool any_backward = false;
  bool any_split_backward = false;  // W or I ops
  bool all_forwards_first = false;  // last stage: every forward before its first backward
};

void SetFamily(const FamilyEvidence& evidence, Result* result) {
  if (evidence.any_split_backward) {
    result->family = "zb";
  } else if (!evidence.any_backward) {
    result->family = "fwd-only";
  } else if (result->v > 1) {
    result->family = "interleaved";
  } else if (result->m == 1) {
    result->family = "gpipe";
    result->notes.push_back("m = 1: gpipe and 1f1b run the same order; reported as gpipe");
  } else {
    result->family = evidence.all_forwards_first ? "gpipe" : "1f1b";
  }
}

// Round-robin placement (Megatron interleaving): virtual stage c·p + s runs on stage s's rank.
std::vector<int32_t> RoundRobinPlacement(const std::vector<int32_t>& order, int32_t v) {
  std::vector<int32_t> ranks;
  for (int32_t chunk = 0; chunk < v; ++chunk) ranks.insert(ranks.end(), order.begin(), order.end());
  return ranks;
}

// Family evidence from annotated ops of one (virtual) stage, in start order.
bool ForwardsFirst(std::vector<const PipelineOp*> ops, int32_t m) {
  std::stable_sort(ops.begin(), ops.end(),
                   [](const PipelineOp* a, const PipelineOp* b) { return a->start < b->start; });
  int32_t forwards = 0;
  for (const PipelineOp* op : ops) {
    if (op->type != OpType::kForward) break;
    ++forwards;
  }
  return forwards >= m;
}

void FillSplitEvidence(const std::vector<PipelineOp>& ops, FamilyEvidence* evidence) {
  for (const PipelineOp& op : ops) {
    if (op.type != OpType::kForward) evidence->any_backward = true;
    if (op.type == OpType::kWeightGrad || op.input_grad_only) evidence->any_split_backward = true;
  }
}

// `PP:{stage}...` ops: everything but the statistics comes from the stage numbers.
absl::StatusOr<Result> FromStagedAnnotations(const std::vector<PipelineOp>& ops,
                                             size_t rank_count) {
  std::map<int32_t, int32_t> rank_of_stage;
  for (const PipelineOp& op : ops) {
    auto [it, inserted] = rank_of_stage.emplace(op.virtual_stage, op.rank);
    if (!inserted && it->second != op.rank) {
      return absl::FailedPreconditionError(absl::StrCat(
          "annotations put stage ", op.virtual_stage, " on ranks ", it->second, " and ", op.rank));
    }
  }
  const int32_t stage_count = rank_of_stage.rbegin()->first + 1;
  if (rank_of_stage.size() != static_cast<size_t>(stage_count) ||
      stage_count % static_cast<int32_t>(rank_count) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "annotated stages do not form 0..S-1 with S a multiple of p = ", rank_count));
  }
  Result result;
  result.p = static_cast<int32_t>(rank_count);
  result.v = stage_count / result.p;
  for (const auto& [stage, rank] : rank_of_stage) {
    result.virtual_stage_ranks.push_back(rank);
    if (std::find(result.stage_order.begin(), result.stage_order.end(), rank) ==
        result.stage_order.end()) {
      result.stage_order.push_back(rank);  // ranks in order of their lowest stage
    }
  }
  std::set<int32_t> microbatches;
  std::vector<const PipelineOp*> last_stage_ops;
  for (const PipelineOp& op : ops) {
    if (op.step != 0) continue;
    if (op.virtual_stage == 0 && op.type == OpType::kForward) microbatches.insert(op.microbatch);
    if (op.virtual_stage == stage_count - 1) last_stage_ops.push_back(&op);
  }
  result.m = static_cast<int32_t>(microbatches.size());
  FamilyEvidence evidence;
  FillSplitEvidence(ops, &evidence);
  evidence.all_forwards_first = ForwardsFirst(std::move(last_stage_ops), result.m);
  SetFamily(evidence, &result);
  result.stage_order_source = kAnnotations;
  result.schedule_source = kAnnotations;
  return result;
}

// v from the first stage's stageless ops in start order: in every schedule a microbatch's forward
// runs once on each of the rank's v chunks before that microbatch's first backward can start, so
// the forwards of the first microbatch before its first backward count the chunks. Unlike
// forwards ÷ m this holds when step 0 spans several iterations (no iteration boundaries were
// found, so the whole trace is step 0). nullopt without a backward of that microbatch.
std::optional<int32_t> ChunksFromFirstMicrobatch(const std::vector<const PipelineOp*>& first_stage) {
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
                                           const std::vector<IssuedTimeline>& timelines) {
  absl::StatusOr<std::vector<int32_t>> order = pipeline::InferStageOrder(timelines);
  if (!order.ok()) return order.status();
  Result result;
  result.stage_order = *std::move(order);
  result.p = static_cast<int32_t>(result.stage_order.size());
  std::set<int32_t> microbatches;
  int32_t forwards = 0;
  std::vector<const PipelineOp*> first_stage_ops;
  std::vector<const PipelineOp*> last_stage_ops;
  for (const PipelineOp& op : ops) {
    if (op.step != 0) continue;
    if (op.rank == result.stage_order.front()) {
      first_stage_ops.push_back(&op);
      if (op.type == OpType::kForward) {
        microbatches.insert(op.microbatch);
        ++forwards;
      }
    }
    if (op.rank == result.stage_order.back()) last_stage_ops.push_back(&op);
  }
  std::stable_sort(first_stage_ops.begin(), first_stage_ops.end(),
                   [](const PipelineOp* a, const PipelineOp* b) { return a->start < b->start; });
  result.m = static_cast<int32_t>(microbatches.size());
  const int32_t v = ChunksFromFirstMicrobatch(first_stage_ops)
                        .value_or(result.m == 0 ? 0 : forwards / result.m);
  if (result.m == 0 || v <= 0 || forwards % (v * result.m) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the first stage's reference iteration has ", forwards, " forward ranges over ", result.m,
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
  evidence.all_forwards_first = ForwardsFirst(std::move(last_stage_ops), result.m);
  SetFamily(evidence, &result);
  result.stage_order_source = kP2p;
  result.schedule_source = kAnnotations;
  return result;
}

absl::StatusOr<Result> FromTraffic(const std::vector<IssuedTimeline>& timelines,
                                   std::vector<PipelineOp>* ops) {
  absl::StatusOr<std::vector<int32_t>> order = pipeline::InferStageOrder(timelines);
  if (!order.ok()) return order.status();
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
  absl::StatusOr<pipeline::P2pSchedule> schedule =
      pipeline::InferP2pSchedule(timelines, *order, counts);
  if (!schedule.ok()) return schedule.status();
  Result result;
  result.stage_order = *std::move(order);
  result.p = static_cast<int32_t>(result.stage_order.size());
  result.m = schedule->m;
  result.v = schedule->v;
  result.notes = schedule->notes;
  result.virtual_stage_ranks = RoundRobinPlacement(result.stage_order, result.v);
  if (result.v > 1) result.notes.push_back("stage placement assumed round-robin (c·p + s)");
  if (schedule->has_backward && !unhinted_ranks.empty()) {
    // Forward and backward compute look alike there: no per-stage figures are made up.
    for (int32_t rank : unhinted_ranks) {
      result.notes.push_back(absl::StrCat("rank ", rank,
                                          ": no backward name hints, so its forward and backward "
                                          "compute cannot be told apart"));
    }
    ops->clear();
  }
  FamilyEvidence evidence;
  FillSplitEvidence(*ops, &evidence);
  evidence.any_backward = evidence.any_backward || schedule->has_backward;
  evidence.all_forwards_first = schedule->all_forwards_first;
  SetFamily(evidence, &result);
  result.stage_order_source = kP2p;
  result.schedule_source = kP2p;
  return result;
}

}  // namespace

absl::StatusOr<Result> Analyze(const Trace& trace, const Options& options) {
  absl::StatusOr<iterations::Result> assignment = iterations::Analyze(trace, options.iterations);
  if (!assignment.ok()) return assignment.status();
  return FromIterations(trace, *assignment, options);
}

absl::StatusOr<Result> FromIterations(const Trace& trace, const iterations::Result& assignment,
                                      const Options& options) {
  std::vector<size_t> indices;  // the pipeline's ranks, as indices into the trace
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    if (options.ranks.empty() || std::find(options.ranks.begin(), options.ranks.end(),
                                           trace.ranks[r].rank) != options.ranks.end()) {
      indices.push_back(r);
    }
  }
  if (indices.size() != options.ranks.size() && !options.ranks.empty()) {
    return absl::InvalidArgumentError("options.ranks names a rank the trace does not have");
  }
  if (indices.empty()) return absl::FailedPreconditionError("the trace has no ranks");
  if (assignment.steps.size() != trace.ranks.size()) {
    return absl::InvalidArgumentError("the iteration assignment was made for another trace");
  }

  const int64_t reference = pipeline::ReferenceIteration(assignment, indices);
  std::vector<IssuedTimeline> timelines;
  std::vector<PipelineOp> staged_ops;
  std::vector<PipelineOp> word_ops;
  size_t ranks_with_staged = 0;
  size_t ranks_with_words = 0;
  for (size_t r : indices) {
    const Rank& rank = trace.ranks[r];
    const pipeline::StepMap steps =
        pipeline::StepMap::FromIterations(assignment.steps[r], reference);
    timelines.push_back(pipeline::BuildIssuedTimeline(rank, steps));
    bool staged = false;
    bool words = false;
    for (const PipelineOp& op : pipeline::AnnotatedOps(rank, steps)) {
      (op.virtual_stage >= 0 ? staged_ops : word_ops).push_back(op);
      (op.virtual_stage >= 0 ? staged : words) = true;
    }
    ranks_with_staged += staged ? 1 : 0;
    ranks_with_words += words ? 1 : 0;
  }

  std::vector<std::string> notes;
  for (size_t r : indices) {
    // Events after the cut are lost from wherever the file held them (a whole stream's, when
    // the writer grouped events by stream), so the shape read from this rank may be off.
    if (trace.ranks[r].stats.count(ImportCounter::kTruncated) > 0) {
      notes.push_back(absl::StrCat("rank ", trace.ranks[r].rank,
                                   "'s trace was cut short: ops it lost may change the shape "
                                   "read from it"));
    }
  }
  std::vector<PipelineOp> ops;
  absl::StatusOr<Result> result = absl::UnknownError("no source tried");
  if (ranks_with_staged == indices.size()) {
    result = FromStagedAnnotations(staged_ops, indices.size());
    if (result.ok()) ops = std::move(staged_ops);
  } else if (ranks_with_words == indices.size()) {
    result = FromWordAnnotations(word_ops, timelines);
    if (result.ok()) ops = std::move(word_ops);
  } else if (ranks_with_staged + ranks_with_words > 0) {
    notes.push_back("op annotations on some ranks only: ignored");
  }
  if (!result.ok() && (ranks_with_staged > 0 || ranks_with_words > 0) &&
      !absl::IsUnknown(result.status())) {
    notes.push_back(absl::StrCat("annotations not used: ", result.status().message()));
  }
  if (!result.ok()) result = FromTraffic(timelines, &ops);
  if (!result.ok()) return result.status();
  result->notes.insert(result->notes.begin(), notes.begin(), notes.end());
  if (!ops.empty()) {
    result->stages = pipeline::StageStats(ops, result->stage_order);
    pipeline::FindSlowestStage(&*result);
  }
  return result;
}

}  // namespace bubblescope::schedule_inference
