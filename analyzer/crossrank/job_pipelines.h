// The job as a whole: every pipeline found in the p2p graph, each on its own aligned clock and
// analysed on its own (bubble, shape, findings, links), plus the job summary and, when no rank
// has p2p traffic, a summary of the collectives (docs/cross-rank.md).
//
// Per pipeline, in this order: match its transfers, estimate its ranks' clock offsets, copy its
// ranks onto the first stage's clock (ranks no transfer reaches stay as they are), then measure
// the bubble and infer the shape on that copy, measure the links and attribute stalls. Slow links
// are judged against every link of the job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/bubble.h"
#include "analysis/findings.h"
#include "bubblescope/trace.h"
#include "crossrank/clock_alignment.h"
#include "crossrank/link_findings.h"
#include "crossrank/link_stats.h"
#include "crossrank/p2p_graph.h"
#include "crossrank/p2p_matching.h"
#include "crossrank/stall_attribution.h"
#include "pipeline/schedule_inference.h"

namespace bubblescope::job_pipelines {

struct Options {
  iterations::Options iterations;
  link_stats::SlowOptions slow;
  link_findings::Options link_findings;
  findings::Options findings;
};

// What the cross-rank analysis adds to one pipeline's bubble figures.
struct CrossRankFigures {
  p2p_graph::Pipeline pipeline;
  std::vector<clock_alignment::RankOffset> offsets;  // in stage order
  std::vector<link_stats::Link> links;
  stall_attribution::Result stalls;
  std::vector<p2p_matching::Unmatched> unmatched;
  int64_t ops_without_peer = 0;
};

struct PipelineAnalysis {
  bubble::Result bubble;
  std::optional<schedule_inference::Result> shape;
  // The bubble the slowest stage causes (rebalance::EffectOfSlowestStage); nullopt when the
  // stage imbalance is below the findings threshold or could not be simulated.
  std::optional<findings::ImbalanceEffect> slowest_stage_effect;
  findings::Result findings;  // bubble findings and link findings, by cost
  CrossRankFigures crossrank;
};

// Communication of one kind over every rank: what a job without pipelines did instead.
struct CollectiveSummary {
  std::string kind;  // CommKindName, or the collective's own name when its kind is unknown
  int64_t count = 0;
  int64_t bytes = 0;  // of the ops with a known size
  int64_t sized = 0;  // ops with a known size (0: the traces record no sizes for this kind)
  TimeNs time_ns = 0;  // summed durations
};

struct JobSummary {
  int32_t pipelines = 0;
  std::vector<int32_t> ranks_without_p2p;
  int32_t worst_pipeline = -1;  // index of the largest bubble fraction; -1 without pipelines
  double worst_bubble_fraction = 0.0;
  double best_bubble_fraction = 0.0;
  double bubble_spread = 0.0;  // worst - best
  std::vector<CollectiveSummary> collectives;  // only when there is no pipeline; by time desc
  std::vector<std::string> notes;
};

struct Result {
  std::vector<PipelineAnalysis> pipelines;
  JobSummary job;
};

// InvalidArgumentError for an invalid iteration marker; everything else is a figure or a note.
absl::StatusOr<Result> Analyze(const Trace& trace, const Options& options);

// Counts, bytes and time of every non-p2p communication op of the trace's device activity.
std::vector<CollectiveSummary> SummarizeCollectives(const Trace& trace);

}  // namespace bubblescope::job_pipelines
