// The report view: the figures the reports show that the job result does not hold as such,
// each worked out once, here, by one rule (docs/architecture.md). The text, JSON, Markdown and
// HTML writers (report/) read them and only spell them; none of them derives a figure of its
// own, so two formats can never show one figure two ways.
//
// A layer of its own under report/ rather than part of job::Result: these are readings of the
// result for people (a rank's place in a table, a stall spread over the iterations, the largest
// of a prediction's per-stage peaks), some of them of results that do not come from a job at
// all (`bubblescope whatif REPORT.json` predicts from a report read back), and none is an input
// to another analysis.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/bubble.h"
#include "analysis/rank_summary.h"
#include "bubblescope/import_stats.h"
#include "crossrank/stall_attribution.h"
#include "job/job.h"
#include "pipeline/stage_order.h"
#include "whatif/whatif.h"

namespace bubblescope::report_view {

// Where one rank sits in its pipeline's stage order.
struct RankPlace {
  int32_t rank = -1;
  // Its stage: its position in a known order, -1 when the order does not place it (the order is
  // unknown, the rank is not in it, or it holds one rank that no annotation made a stage: one
  // rank alone is no pipeline). What the per-rank table and the JSON's "stage" say.
  int32_t stage = -1;
  // Its position in the order's list of ranks, which for an unknown order is the ranks in id
  // order; -1 when not listed. Only where rows are placed (the HTML timeline's): a position in
  // an unknown order is no stage, so no report labels a rank by it.
  int32_t listed = -1;
};

// The places of a pipeline's ranks, looked up by rank.
class RankPlaces {
 public:
  RankPlaces() = default;
  explicit RankPlaces(const pipeline::StageOrder& order);

  // The rank's stage (RankPlace::stage); -1 when it has none.
  int32_t StageOf(int32_t rank) const;
  // The rank's position in the order's list (RankPlace::listed); -1 when not listed.
  int32_t ListedOf(int32_t rank) const;

 private:
  const RankPlace* Find(int32_t rank) const;

  std::vector<RankPlace> places_;  // in the order's list
};

// One receiver's stall on one sender, per complete iteration (over at least one, so a pipeline
// without a complete iteration shows its totals). Exact: the text rounds it to the microsecond,
// the JSON spells whole nanoseconds (the quotient truncated, as an integer division gives it).
struct StallPerIteration {
  int32_t rank = -1;  // the receiver
  int32_t peer = -1;  // the sender it waited for
  double total_ns = 0.0;
  double waiting_for_post_ns = 0.0;
  double in_transfer_ns = 0.0;
};

std::vector<StallPerIteration> StallsPerIteration(const stall_attribution::Result& stalls);

// How many severities an import counter can have (Severity, indexed by its value).
inline constexpr size_t kSeverityCount = static_cast<size_t>(Severity::kError) + 1;

// What the ranks' own figures come to over the job: their import counters by severity (the
// summary's first line and the JSON's import_issues), each info counter summed over the ranks
// with how many ranks have it (the text's one table of them; the JSON keeps them per file), the
// CPU-only ranks, and whether any rank has profiler steps (the ranks' tables then lead with the
// idle inside them), and for the Nsight exports' ranks what their ids and times rest on.
struct RanksTally {
  std::array<uint64_t, kSeverityCount> by_severity{};       // indexed by Severity
  std::array<uint64_t, kImportCounterCount> info_counts{};  // indexed by ImportCounter
  std::array<size_t, kImportCounterCount> info_ranks{};     // ranks whose count is not zero
  size_t cpu_ranks = 0;             // ranks whose timeline is a CPU thread's (no device activity)
  bool any_profiler_steps = false;  // some rank has step time (rank_summary::RankFigures)
  // Over the ranks read from Nsight exports (those with a time base), how many rest on each
  // rank-id source ("none" where a rank has none) and on each time base; both empty without one.
  std::map<std::string, size_t> nsys_rank_id_sources;
  std::map<std::string, size_t> nsys_time_bases;
};

RanksTally RanksTallyOf(const rank_summary::Result& result);

// A rank's device idle as shares: inside its profiler steps, and over its whole span (which also
// counts the set-up and the time between profiling cycles). Nullopt where the whole is zero.
struct IdleShares {
  std::optional<double> in_steps;
  std::optional<double> over_span;
};

IdleShares IdleSharesOf(const rank_summary::RankFigures& rank);

// Where a rank's window goes over the complete iterations: compute and each kind of idle as a
// share of the window (all zero when the window is).
struct WindowShares {
  double compute = 0.0;
  double fill = 0.0;
  double comm_wait = 0.0;
  double empty = 0.0;
  double drain = 0.0;
};

WindowShares WindowSharesOf(const bubble::RankTotals& rank);

// Where the bubble is: the rank that idles most and the one that idles least over the complete
// iterations (the per-rank bubble fraction; the first of equals).
struct IdleExtremes {
  int32_t most_idle_rank = -1;
  double most_idle_fraction = 0.0;
  int32_t least_idle_rank = -1;
  double least_idle_fraction = 0.0;
  bool every_rank_staged = false;  // every rank of the bubble has a stage (RankPlace::stage)
};

// Nullopt with fewer than two ranks.
std::optional<IdleExtremes> IdleExtremesOf(const bubble::Result& bubble, const RankPlaces& places);

// The largest predicted peak allocated over a prediction's stages; nullopt when its memory is
// unknown (no per-stage peaks).
std::optional<int64_t> LargestStagePeakBytes(const whatif::Prediction& prediction);

// The largest measured peak allocated over the what-if model's stages; nullopt when no stage's
// peak is known.
std::optional<int64_t> MeasuredPeakBytes(const whatif::Model& model);

// The ranks outside the trace that any pipeline exchanges p2p with, ascending, each once.
std::vector<int32_t> MissingPeersOfJob(const job::Result& result);

// What the reports show of one pipeline beyond its result.
struct PipelineView {
  RankPlaces places;
  std::vector<StallPerIteration> stalls;  // in the stall attribution's order
  std::optional<IdleExtremes> idle;
  // Iterations left out of every figure as partial (the bubble's iterations less its complete
  // ones).
  int64_t partial_iterations = 0;
  size_t typical_iteration = 0;  // TypicalIteration of the pipeline's bubble
};

PipelineView ViewOf(const job::Pipeline& pipeline);

// The iteration a picture of the pipeline shows first, the typical one: the first complete one
// whose window is the median; else the first complete one; else the first. An index into
// bubble.iterations; 0 when there is none.
size_t TypicalIteration(const bubble::Result& bubble);

// The job's findings over all its pipelines, costliest first; equal costs keep the pipelines'
// order and each pipeline's own. The JSON report's job-wide "findings" list. Points into `result`.
std::vector<const findings::Finding*> FindingsByCost(const job::Result& result);

// The whole view of a job, built once per report from its result: what every writer reads.
struct JobView {
  std::vector<PipelineView> pipelines;  // by index in result.pipelines
  RanksTally ranks;
  std::vector<int32_t> missing_peers;                      // MissingPeersOfJob
  std::vector<const findings::Finding*> findings_by_cost;  // FindingsByCost; into the result
};

JobView ViewOf(const job::Result& result);

}  // namespace bubblescope::report_view
