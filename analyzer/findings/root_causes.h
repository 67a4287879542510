// Root causes: a pipeline's findings grouped under what causes them, each with the time it
// costs per iteration and the iteration time the schedule simulator predicts fixing it saves,
// ranked by that saving (docs/findings.md, "Root causes").
//
// Causes and how fixing each is predicted, all through one what-if model of the measured job
// (whatif::Model: per-stage F/B/W times, each link's median transfer, no host gaps):
//  - schedule_depth (from pipeline_depth): the schedule's own bubble; expected, never a warning.
//    Saving: the best of the shallower configurations the job driver predicted (the same samples
//    in twice the microbatches, interleaved v=2, ZB-H1), against the model as measured.
//  - stage_imbalance: the slowest stage at the mean F, B and W over stages.
//  - slow_link, one per slow link: that link at the job's reference bandwidth for its message
//    size (its median transfer x its bandwidth / the reference).
//  - late_sender, one per late sender that is not the slowest stage of an imbalance (then its
//    lateness is that imbalance's symptom): the sender's stage at the mean. When that changes
//    nothing (the sender is busy outside its microbatch ops), no saving is predicted.
//  - host_bound, every host_bound finding together: the model has no host gaps, so they are put
//    back into it (whatif::WithHostGaps: each rank's empty time spread over its ops) and the
//    saving is that model minus the model as measured. Cost and saving come from the same
//    empty time, so the saving never exceeds the cost.
//  - recompute (info), from recompute: activation checkpointing's recomputed forwards; the fix is
//    every backward without them (the memory they save is not in the trace).
//  - transfer_time: waits no other cause explains, when the model predicts a saving with every
//    transfer free (overlapped with compute): hand-offs wait for transfers on healthy links.
//  - incomplete_job (info): incomplete iterations and unmatched transfers; nothing to save.
//  - shape_unknown (info): the shape could not be inferred; nothing can be predicted.
//  - unexplained: the measured median iteration minus the model's, less what host_bound puts
//    back, when it exceeds Input::unexplained_min_fraction of the measured iteration: time no
//    cause accounts for (waits the model does not predict, work outside the microbatch ops).
//    Its saving is that remainder (the measured iteration down to the model's), its cost the
//    remainder on every rank; its next step gives each rank's communication waits and work
//    outside the microbatch ops per iteration, where the remainder is to be looked for. With
//    it, every report accounts for the measured iteration: the model, host gaps, the rest.
// Symptoms (excess_bubble, comm_wait) join the warning cause with the largest predicted saving
// (the largest cost when none is predicted); with no warning cause they form transfer_time, or
// "unattributed" when free transfers would not save anything either.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/bubble.h"
#include "crossrank/link_stats.h"
#include "findings/findings.h"
#include "pipeline/rebalance.h"
#include "pipeline/schedule_inference.h"
#include "whatif/whatif.h"

namespace bubblescope::root_causes {

enum class Cause : uint8_t {
  kScheduleDepth,
  kStageImbalance,
  kSlowLink,
  kLateSender,
  kHostBound,
  kRecompute,
  kTransferTime,
  kIncompleteJob,
  kShapeUnknown,
  kUnattributed,
  kUnexplained,
};

// "schedule_depth", "stage_imbalance", ...
std::string_view CauseName(Cause cause);

struct RootCause {
  Cause cause = Cause::kScheduleDepth;
  Severity severity = Severity::kInfo;
  std::vector<int32_t> ranks;
  // Idle rank time per complete iteration its own finding accounts for (symptoms not added: they
  // overlap it).
  TimeNs cost_per_iteration_ns = 0;
  // Predicted iteration time saved by the fix; nullopt when not predicted.
  std::optional<TimeNs> saving_per_iteration_ns;
  // With a saving: the iteration it is predicted from (the model as measured; for host_bound,
  // the model with the host gaps put back; for unexplained, the measured median) and the
  // iteration after the fix.
  TimeNs iteration_before_ns = 0;
  bool before_is_measured = false;
  TimeNs iteration_after_ns = 0;
  std::string summary;           // what it is, in plain words
  std::string fix;               // what the prediction assumes, or why there is none
  std::string next_step;         // what to try
  std::vector<size_t> findings;  // indices into the findings given: its evidence and symptoms
};

struct Input {
  const std::vector<findings::Finding>* findings = nullptr;  // the pipeline's, by cost
  const bubble::Result* bubble = nullptr;
  const schedule_inference::Result* shape = nullptr;  // null when not inferred
  const std::vector<int32_t>* stage_order = nullptr;  // rank of each stage
  const std::vector<link_stats::Link>* links = nullptr;
  const whatif::Model* model = nullptr;            // null when the job cannot be modelled
  const whatif::Result* depth_remedies = nullptr;  // null when not predicted
  // The slowest stage at the mean through `model` (job::Pipeline::slowest_stage_effect): the
  // stage_imbalance cause's saving; null when not predicted.
  const rebalance::ImbalanceEffect* slowest_stage_effect = nullptr;
  const rebalance::Result* rebalance = nullptr;  // null without layer counts
  // The suggested move through the model (job::RebalanceFigures::predicted); may be null.
  const whatif::Result* rebalance_predicted = nullptr;
  // The smallest share of the measured iteration the time no cause explains must reach to be a
  // cause of its own (below it: jitter).
  double unexplained_min_fraction = 0.05;
};

struct Result {
  // Causes with a predicted saving first, by saving; then the rest by cost. Every finding is in
  // exactly one cause.
  std::vector<RootCause> causes;
};

Result Analyze(const Input& input);

}  // namespace bubblescope::root_causes
