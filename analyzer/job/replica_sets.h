// Data-parallel replicas among a job's pipelines, and the spread of their figures
// (docs/analyze.md, "Large jobs"). A DP x PP job of 1,024 ranks has 128 pipelines that run the
// same stages on different data; read one by one they hide what matters, which replica and
// which stage is off. This groups them once, for every report to read:
//
// Two pipelines are replicas when both have a complete iteration, a known stage order and the
// same shape (p, m, v and schedule family), and at every stage position their two ranks are
// members of one process group whose role, read from its description, is data parallel
// (index/group_roles.h: DATA_PARALLEL_GROUP, a DeviceMesh "dp" dimension, ...). A role guessed
// from the rank layout never joins pipelines. Without any described data-parallel group, the
// groups inferred from the job's structure (index::InferDataParallelGroups: one same-stage rank
// of each of several pipelines, one reading for the whole job) join them, and the set says so.
// Replicas of replicas are one set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/rank_summary.h"
#include "index/group_roles.h"

namespace bubblescope::job {

struct Pipeline;

// One figure over a set's replicas: the smallest, the nearest-rank median (the ceil(n/2)-th
// smallest, common/percentile.h) and the largest value, and the pipelines (indices into
// Result::pipelines) holding the smallest and the largest (the lowest index among equals).
struct Spread {
  double min = 0.0;
  double median = 0.0;
  double max = 0.0;
  int32_t min_pipeline = -1;
  int32_t max_pipeline = -1;
};

// One stage position over the replicas. Times are per complete iteration (each replica's sum
// over its complete iterations divided by their count), so replicas that completed different
// numbers of iterations compare.
struct StageSpread {
  int32_t stage = 0;
  std::vector<int32_t> ranks;  // the stage's rank in each replica, in ReplicaSet::pipelines order
  Spread bubble_fraction;      // the rank's idle / window
  Spread compute_ns;
  Spread fill_ns;
  Spread drain_ns;
  Spread comm_wait_ns;
  Spread empty_ns;
  // The stage's mean op time per microbatch (schedule_inference::StageFigures); only when every
  // replica measured ops of that kind on the stage.
  std::optional<Spread> forward_ns;
  std::optional<Spread> backward_ns;
  std::optional<Spread> weight_grad_ns;
  // Only when every replica's rank has memory samples.
  std::optional<Spread> peak_allocated_bytes;
};

// One stage position over the replicas as a large job's per-rank table folds it: each figure of
// the per-rank summary (rank_summary::RankFigures, over the whole trace) over the replicas' ranks
// at that stage. Spread::min_pipeline and max_pipeline name the replica holding each end.
struct RankSummarySpread {
  int32_t stage = 0;
  std::vector<int32_t> ranks;  // as StageSpread::ranks
  Spread span_ns;
  Spread compute_ns;
  Spread comm_ns;
  Spread memcpy_ns;
  Spread idle_ns;
  Spread idle_fraction;  // idle / span; 0 for an empty span
  Spread kernels;
  Spread comm_ops;
  Spread memcpys;
  Spread steps;
  // Only when every replica's rank has memory samples.
  std::optional<Spread> peak_allocated_bytes;
  std::optional<Spread> peak_reserved_bytes;
};

struct ReplicaSet {
  std::vector<int32_t> pipelines;  // indices into Result::pipelines, ascending; at least two
  // The descriptions of the data-parallel groups that join them ("DATA_PARALLEL_GROUP"), sorted.
  // Empty for groups without a description.
  std::vector<std::string> group_descriptions;
  // The groups that join them carry no description: their data-parallel role was inferred from
  // their ranks (index::RoleSource::kStructure).
  bool inferred_from_ranks = false;
  // The replica with the largest bubble fraction (the lowest index among equals).
  int32_t worst_pipeline = -1;
  Spread bubble_fraction;
  // Measured minus the schedule's own bubble; only when every replica has its ideal bubble.
  std::optional<Spread> excess_bubble_fraction;
  Spread latency_p50_ns;
  std::vector<StageSpread> stages;  // stage 0 first
  // Stage 0 first; filled by FoldRankSummaries.
  std::vector<RankSummarySpread> rank_summaries;
};

// The replica sets of `pipelines` (Result::pipelines) given the job's process groups
// (JobSummary::process_groups), ordered by their first pipeline. Linear in the groups' members
// times the stage count.
std::vector<ReplicaSet> FoldReplicas(const std::vector<Pipeline>& pipelines,
                                     const std::vector<index::JobGroup>& groups);

// Each set's rank_summaries from the job's per-rank summary (a rank the summary lacks leaves its
// stage out).
void FoldRankSummaries(const rank_summary::Result& ranks, std::vector<ReplicaSet>& sets);

// Every pipeline's index, largest bubble fraction first (the lower index among equals), those
// without a complete iteration (no bubble to rank) last in index order.
std::vector<int32_t> PipelinesByBubble(const std::vector<Pipeline>& pipelines);

}  // namespace bubblescope::job
