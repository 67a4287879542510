// Findings: the few plain-language statements a pipeline's bubble figures and inferred shape
// support, each with what it costs, so a report can lead with the largest loss.
//
// Kinds (cost_ns is time the pipeline's ranks spend idle because of it, summed over the complete
// iterations and the ranks, so costs of different kinds compare directly):
//  - "pipeline_depth": the bubble the schedule itself implies, (p-1)/(v·m+p-1) of the window;
//    cost = that share of the capacity (p × window, summed). With what-if predictions, the
//    remedy quotes what they predict (bubble and iteration) instead of a general hint.
//  - "excess_bubble": measured bubble above the theoretical one by more than
//    Options::excess_bubble_min_points percentage points; cost = the excess share of capacity.
//  - "stage_imbalance": the slowest stage's mean F+B+W per microbatch exceeds the mean over
//    stages by at least Options::imbalance_min_percent; cost = the saving the simulator
//    predicts with that stage at the mean (ImbalanceEffect: p × the iteration it adds, per
//    complete iteration), else that excess × m × iterations. With an ImbalanceEffect that
//    predicts no shorter iteration at the mean, no finding (the other stages do not wait for
//    it); otherwise the message gives the bubble the simulator says it causes when the stage at
//    the mean lowers it (it can rise: the stage at the mean does less work).
//  - "comm_wait": one per rank whose stall spent in communication, beyond the stall the
//    schedule's own run leaves its stage (pipeline::IdealBubble::stage_stall_ns, when known),
//    exceeds Options::comm_wait_min_fraction of its window; cost = that excess. The schedule's
//    own waits are its depth (pipeline_depth), expected, never a warning.
//  - "host_bound": one per rank whose empty stall (nothing computing or communicating) exceeds
//    Options::host_bound_min_fraction of its window; cost = that empty time.
//  - "recompute" (info): activation checkpointing reruns forwards in the backward
//    (index/recompute_regions.h); cost = the recomputed forward per microbatch of every stage
//    (whatif::StageModel::recompute_ns) × m × complete iterations: rank time spent computing
//    twice, the price of the activations it does not keep.
//  - "incomplete_iterations" (info): iterations left out of every total; cost 0.
//  - "schedule_unknown" (info): the shape could not be inferred, so the kinds needing it are
//    missing; cost 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/bubble.h"
#include "bubblescope/import_stats.h"
#include "bubblescope/trace.h"
#include "pipeline/ideal_bubble.h"
#include "pipeline/rebalance.h"
#include "pipeline/schedule_inference.h"
#include "whatif/whatif.h"

namespace bubblescope::findings {

// Nanoseconds as milliseconds, for the numbers findings' messages format: one conversion for
// every finding.
inline double Ms(double ns) { return ns / 1e6; }

enum class Kind : uint8_t {
  kPipelineDepth,
  kExcessBubble,
  kStageImbalance,
  kCommWait,
  kHostBound,
  kIncompleteIterations,
  kScheduleUnknown,
  kSlowLink,      // findings/link_findings.h
  kLateSender,    // findings/link_findings.h
  kUnmatchedP2p,  // findings/link_findings.h
  kRecompute,
};

// The stable snake_case name reports print ("pipeline_depth", "slow_link", ...).
std::string_view KindName(Kind kind);

struct Options {
  double excess_bubble_min_points = 2.0;  // percentage points of the window
  double imbalance_min_percent = 10.0;    // of the mean stage time per microbatch
  double comm_wait_min_fraction = 0.05;   // of the rank's window
  double host_bound_min_fraction = 0.05;  // of the rank's window
  // Why the shape passed to Analyze is null (e.g. the inference error); quoted in the
  // "schedule_unknown" finding.
  std::string shape_unknown_reason;
};

using rebalance::ImbalanceEffect;

struct Finding {
  Kind kind = Kind::kPipelineDepth;
  Severity severity = Severity::kInfo;  // info or warning
  std::string message;                  // plain words, times in ms
  std::vector<int32_t> ranks;  // the ranks concerned; every pipeline rank for pipeline-wide kinds
  TimeNs cost_ns = 0;
};

struct Result {
  std::vector<Finding> findings;  // by cost_ns descending; equal costs keep the order above
};

// `shape` may be null (inference failed): only the kinds that need no shape are produced.
// `ideal` (the schedule's own bubble, pipeline/ideal_bubble.h) is given with the shape, and
// with it `excess_bubble_fraction`, the measured bubble above it as the job driver stores it
// (job::Pipeline::excess_bubble_fraction, the one figure every report quotes).
// `imbalance` may be null (not simulated).
// `depth_remedies` may be null: what-if predictions (whatif/whatif.h) of configurations with a
// shallower schedule bubble, which the pipeline_depth finding quotes.
// `model` may be null: the what-if model of the job, whose per-stage recomputation the
// recompute finding reports.
Result Analyze(const bubble::Result& bubble, const schedule_inference::Result* shape,
               const pipeline::IdealBubble* ideal, std::optional<double> excess_bubble_fraction,
               const Options& options, const ImbalanceEffect* imbalance = nullptr,
               const whatif::Result* depth_remedies = nullptr,
               const whatif::Model* model = nullptr);

}  // namespace bubblescope::findings
