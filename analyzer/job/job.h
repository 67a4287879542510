// The one job driver (docs/analyze.md, "How a job is analysed"): composes every analysis of a
// trace into one Result, computing each input once. The CLI, the fuzz targets, the benchmark and
// the tests all make this same call; reports only read what it returns.
//
// In this order:
//  1. the rank index (index/rank_index.h): device ops, launches, model threads, issue order;
//  2. the per-rank summary;
//  3. every rank's steps (iterations::FindSteps) and each rank's reference step
//     (pipeline::ReferenceSteps), then each rank's issued work and op annotations in that view;
//  4. the pipelines (p2p_graph): groups, each one's stage order (stage_order.h), peers;
//  5. per pipeline: send/recv matching, clock offsets (first stage's clock), the iteration
//     assignment on those clocks, the bubble, the shape (given the stage order), the slowest
//     stage's simulated effect, the rebalance suggestion, the schedule's ideal run and the
//     measured ops on the pipeline's clock (op_timeline.h), links and stall attribution, the
//     what-if model (built once; the rebalance move's and the depth remedies' predictions are
//     made on it), findings;
//  6. over the job: slow links against every link, link findings, each pipeline's root causes
//     (their savings predicted on its model), the job summary (with the declared world size
//     against the ranks loaded, whether the ranks' files can be one run's (one_run.h), and
//     the pipelines ranked by bubble), the data-parallel replica
//     sets with the spread of their figures (replica_sets.h), and the collectives of a job
//     without pipelines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/bubble.h"
#include "analysis/collectives.h"
#include "analysis/iterations.h"
#include "analysis/one_run.h"
#include "analysis/rank_summary.h"
#include "bubblescope/trace.h"
#include "crossrank/clock_alignment.h"
#include "crossrank/job_completeness.h"
#include "crossrank/link_stats.h"
#include "crossrank/p2p_matching.h"
#include "crossrank/plausibility.h"
#include "crossrank/stall_attribution.h"
#include "findings/findings.h"
#include "findings/link_findings.h"
#include "findings/root_causes.h"
#include "index/group_roles.h"
#include "job/replica_sets.h"
#include "pipeline/ideal_bubble.h"
#include "pipeline/inference_evidence.h"
#include "pipeline/op_timeline.h"
#include "pipeline/p2p_graph.h"
#include "pipeline/rebalance.h"
#include "pipeline/schedule_inference.h"
#include "whatif/whatif.h"

namespace bubblescope::job {

// How far an analysis has come (Options::progress): `done` of `total` items of one stage.
struct Progress {
  std::string_view stage;  // "indexing ranks", "analysing pipelines", ...
  size_t done = 0;
  size_t total = 0;
};

struct Options {
  iterations::Options iterations;
  link_stats::SlowOptions slow;
  link_findings::Options link_findings;
  findings::Options findings;
  // Model layers on each pipeline stage, first stage first, for the rebalance suggestion. Empty:
  // the ranks' own `bubblescope:layers=N` annotations, if every rank of a pipeline has one.
  std::vector<int32_t> layers_per_stage;
  // Also predict each pipeline's trade-off (whatif::TradeoffCandidates) for the pictures: a
  // dozen simulations per pipeline that only the HTML report draws.
  bool tradeoff = false;
  // Threads that the per-rank and per-pipeline analyses run on (the CLI's --jobs); 0: one per
  // core. The result is the same for any number: each rank's and each pipeline's figures are
  // worked out on their own and put together in trace order.
  int jobs = 1;
  // Told after each rank is indexed and each pipeline analysed, from the thread that did it and
  // never two calls at once (the CLI's progress line); empty: nobody is told. No figure depends
  // on it.
  std::function<void(const Progress&)> progress;
  // The job's clock model to analyse on instead of the one the trace's own evidence gives
  // (`watch`: the model fitted on the job's first iterations, reused on every later window of
  // them, docs/watch.md); null: fitted from the trace, as always. Not owned.
  const clock_alignment::JobClocks* clocks = nullptr;
  // When set, receives the model the trace's own evidence gives, whether or not `clocks` was
  // given (`watch` re-checks its reused model against it). Not owned.
  clock_alignment::JobClocks* own_clocks = nullptr;
};

enum class LayerCountSource : uint8_t { kUser, kAnnotations };

std::string_view LayerCountSourceName(LayerCountSource source);  // "user", "annotations"

// The layer counts (the user's, or the job's own `bubblescope:layers=N` annotations) and what
// came of them: a result, or why none could be worked out (the shape or its per-stage times are
// unknown, or the annotations are incomplete, in which case layers_per_stage is empty).
struct RebalanceFigures {
  std::vector<int32_t> layers_per_stage;
  LayerCountSource source = LayerCountSource::kUser;
  absl::StatusOr<rebalance::Result> result = absl::UnknownError("not analysed");
  // The suggested move through the what-if model (measured links, memory): baseline = the
  // measured split as modelled, candidates[0] = after the move. Only with a suggestion.
  std::optional<whatif::Result> predicted;
};

// What the cross-rank analysis adds to one pipeline's bubble figures.
struct CrossRankFigures {
  p2p_graph::Pipeline pipeline;
  std::vector<clock_alignment::RankOffset> offsets;  // in stage order
  // The most uncertainty an applied offset may have (clock_tolerance.h).
  TimeNs clock_tolerance_ns = 0;
  std::vector<link_stats::Link> links;
  stall_attribution::Result stalls;
  std::vector<p2p_matching::Unmatched> unmatched;
  int64_t ops_without_peer = 0;
  // Ranks outside the trace this pipeline's ranks exchange p2p with: stages not loaded.
  std::vector<int32_t> missing_peers;
  // Implausible links and clocks too uncertain to build findings on (crossrank/plausibility.h).
  plausibility::Result plausibility;
};

struct Pipeline {
  bubble::Result bubble;
  // Why the pipeline has no complete iteration, in words; empty when it has one. Without one,
  // its bubble and latency are no figures (bubble.* holds zeros): reports state this instead,
  // and diff and the gate refuse to read a figure there.
  std::string no_complete_iteration;
  std::optional<schedule_inference::Result> shape;  // nullopt when inference failed
  // The shape's ops on the pipeline's clock, labelled (pipeline/op_timeline.h); empty without
  // a shape.
  op_timeline::Result op_timeline;
  // The bubble the shape's schedule leaves by itself; with the shape only.
  std::optional<pipeline::IdealBubble> ideal;
  std::string shape_problem;  // why the shape could not be inferred; empty with a shape
  // Pipeline ranks whose file was cut short (in trace order): they keep their stage, and their
  // iterations from the cut on are left out of every figure.
  std::vector<int32_t> cut_short_ranks;
  // What the stage order, the peers and the schedule family rest on, and how strongly.
  inference_evidence::Evidence evidence;
  // The measured bubble above `ideal` (bubble_fraction - ideal->fraction), worked out once here:
  // the excess_bubble finding, the text, JSON and HTML reports all quote this figure. With
  // `ideal` only.
  std::optional<double> excess_bubble_fraction;
  // The bubble the slowest stage causes, through the what-if model of the measured job (`model`:
  // measured links, no host gaps), the one model the stage_imbalance finding and its cause's
  // saving both quote; nullopt when the stage imbalance is below the findings threshold or the
  // job cannot be modelled.
  std::optional<rebalance::ImbalanceEffect> slowest_stage_effect;
  std::optional<RebalanceFigures> rebalance;  // only with layer counts (user or annotations)
  // The what-if model of the measured job; nullopt (model_problem says why) when it cannot be
  // modelled.
  std::optional<whatif::Model> model;
  std::string model_problem;
  // Shallower configurations of the same samples (m x2 same global batch, interleaved v=2,
  // ZB-H1) predicted on the model.
  std::optional<whatif::Result> depth_remedies;
  // With Options::tradeoff and a model: the trade-off's predictions, or why there are none.
  std::optional<absl::StatusOr<whatif::Result>> tradeoff;
  findings::Result findings;   // bubble findings and link findings, by cost
  root_causes::Result causes;  // the findings grouped under their causes, by predicted saving
  CrossRankFigures crossrank;
};

struct JobSummary {
  int32_t pipelines = 0;
  std::vector<int32_t> ranks_without_p2p;
  int32_t worst_pipeline = -1;  // index of the largest bubble fraction; -1 without pipelines
  double worst_bubble_fraction = 0.0;
  double best_bubble_fraction = 0.0;
  double bubble_spread = 0.0;  // worst - best
  // Every pipeline's index, largest bubble first (PipelinesByBubble): the order in which a large
  // job's reports show pipelines in full.
  std::vector<int32_t> pipelines_by_bubble;
  // The declared world size against the ranks loaded.
  job_completeness::JobResult completeness;
  // What the ranks' files say of their job, compared: where they cannot be one run's, and the
  // weaker signs (analysis/one_run.h).
  one_run::Result one_run;
  // Only when there is no pipeline: what the job communicated instead, by time descending.
  std::vector<collectives::Summary> collectives;
  // Every process group the ranks declare, with its role (index/group_roles.h).
  std::vector<index::JobGroup> process_groups;
  std::vector<std::string> notes;
};

struct Result {
  rank_summary::Result ranks;
  std::vector<Pipeline> pipelines;
  JobSummary job;
  // The pipelines that are data-parallel copies of each other, with the spread of their figures
  // (replica_sets.h); empty when no data-parallel group (described, or inferred from the job's
  // structure: index::InferDataParallelGroups) joins two pipelines.
  std::vector<ReplicaSet> replica_sets;
  // The profiler cycles the inputs held, when several, and the one analysed (the loader's
  // choice, loader/profiler_cycles.h).
  ProfilerCycles profiler_cycles;

  // True when ranks the job declares are missing, or a pipeline exchanges p2p with a rank
  // outside the trace: its figures then cover the loaded ranks only.
  bool Incomplete() const;
};

// InvalidArgumentError for an invalid iteration marker or layer counts that do not fit a
// pipeline; everything else is a figure or a note.
absl::StatusOr<Result> Analyze(const Trace& trace, const Options& options);

}  // namespace bubblescope::job
