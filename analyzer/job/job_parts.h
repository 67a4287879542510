// A job analysed part by part (`analyze --mpi`, docs/scale.md), with the result Analyze gives for
// the whole job, in the memory of one part at a time.
//
// Where the ranks are read, each one's facts (RankFacts: its traffic, the peers it records, its
// steps) are kept beside its header (RankHeader, bubblescope/trace.h: the rank without its
// events). From every rank's header and facts, PlanParts makes the decisions the whole job makes
// once (where steps come from, the reference step, whether peers are recorded) and cuts the job
// into parts: each pipeline with the ranks its transfers name (a component of the p2p graph drawn
// from recorded peers, exactly as p2p_graph draws it), and the ranks without traffic in batches no
// larger. Each part is analysed alone on those decisions (AnalyzePart: the driver's own stages), so
// its pipeline's figures are those of the whole job's analysis; MergeParts then runs what reads the
// whole job (slow links against every link, root causes, the summary, the replica sets) once.
// The clocks are one model for the whole job (clock_alignment.h): each part's evidence is read
// first (PartClockEvidence: its transfers and collective kernels, small beside its events), the
// model fitted from all of it (FitJobClocks), and only then are the parts analysed on it, so a
// part's ranks are read twice.
//
// A job whose pipelines cannot be drawn from recorded peers (no rank records one: they are then
// read from the rhythm or the declared groups of every rank's transfers), or that has no
// pipeline at all (its collectives are read over every rank), has no parts: it is analysed whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/iterations.h"
#include "analysis/rank_summary.h"
#include "bubblescope/trace.h"
#include "crossrank/clock_alignment.h"
#include "crossrank/collective_matching.h"
#include "crossrank/p2p_matching.h"
#include "index/group_roles.h"
#include "job/job.h"

namespace bubblescope::job {

// A process group as every member declares it: its ranks, name and description.
using DataGroupKey = std::tuple<std::vector<int32_t>, std::string, std::string>;

// The groups without a description that the job's structure shows to be data parallel
// (index::InferDataParallelGroups over every pipeline's stage order); `roles` is parallel to
// trace.ranks (only their headers are read). Empty where the layout admits no one reading.
std::set<DataGroupKey> InferredDataGroups(
    const Trace& trace, const std::vector<const std::vector<index::GroupRoleInfo>*>& roles,
    const std::vector<std::vector<int32_t>>& stage_orders);

// What the whole job decides once from all its ranks, handed to a part of it analysed alone so
// that the part's ranks are read as they would be among all the others.
struct JobDecisions {
  iterations::StepSource step_source = iterations::StepSource::kWholeTrace;
  // The reference step number (pipeline::SharedReference); unused for a repeating schedule.
  std::optional<int64_t> shared_reference;
  bool peers_recorded = false;  // any rank of the job records a p2p peer
  // InferredDataGroups over every part's pipelines: known only once every part's clock evidence
  // (which carries its pipelines' stage orders) is read, so set then (WithDataGroups).
  std::set<DataGroupKey> data_parallel_groups;
};

// What the job-wide decisions read of one rank.
struct RankFacts {
  bool has_p2p = false;    // a p2p op outside optimizer steps (index::RankIndex::HasP2p)
  bool cut_short = false;  // iterations::CutShort
  std::vector<int32_t> recorded_peers;  // the peers its p2p ops record, ascending, unique
  // iterations::OwnSteps: the marker's ranges or the profiler steps (none for a bad marker,
  // whose error the analysis of any part returns).
  std::vector<iterations::StepStart> own_steps;
  bool repeats = false;  // without own steps: its device ops repeat one schedule
};

// `options`: the job's iteration marker, if any.
RankFacts FactsOf(const Rank& rank, const iterations::Options& options);

struct PartPlan {
  // Positions in the job's trace, each part in trace order. Empty: analyse the job whole.
  std::vector<std::vector<size_t>> parts;
  JobDecisions decisions;
};

// `headers`: every rank of the job, in trace order (bubblescope::RankHeader is enough); `facts`:
// theirs.
PartPlan PlanParts(const Trace& headers, const std::vector<RankFacts>& facts,
                   const Options& options);

// What the ranks of a part (or of the whole job) give the job's clock model
// (clock_alignment::FitJob): each pipeline's transfers, and its ranks' collective kernels.
struct ClockEvidence {
  struct PipelineTransfers {
    std::vector<int32_t> ranks;      // in stage order
    std::vector<std::string> hosts;  // per rank of `ranks`, as its trace names it
    std::vector<p2p_matching::Transfer> transfers;
    bool peers_guessed = false;  // paired through peers or an order guessed, not recorded
  };
  std::vector<PipelineTransfers> pipelines;
  collective_matching::Kernels collectives;  // of the pipelines' ranks
};

// The job's clock model from every part's evidence (any order): the model Analyze fits over the
// whole job, since the evidence is taken in the job's order (pipelines by their lowest rank).
clock_alignment::JobClocks FitJobClocks(std::vector<ClockEvidence> parts);

// `decisions` with the data-parallel groups the job's structure gives, from every part's clock
// evidence (its pipelines' stage orders) and the job's headers.
JobDecisions WithDataGroups(JobDecisions decisions, const Trace& headers,
                            const std::vector<ClockEvidence>& parts);

// `part`'s clock evidence, read as AnalyzePart reads the part.
absl::StatusOr<ClockEvidence> PartClockEvidence(const Trace& part, const JobDecisions& decisions,
                                                const Options& options);

// What the job's result takes from one part.
struct PartResult {
  std::vector<size_t> positions;  // the part's ranks in the job's trace, in trace order
  rank_summary::Result ranks;
  std::vector<Pipeline> pipelines;  // their positions are the job's
  std::vector<int32_t> ranks_without_p2p;
  std::vector<int32_t> kept_cut_short;  // p2p_graph::Result::kept_cut_short
  std::vector<std::string> notes;       // the part's p2p_graph notes
};

// `part`: the ranks at `positions` of the job's trace, in that order, with their events;
// `clocks`: the job's clock model (FitJobClocks over every part).
absl::StatusOr<PartResult> AnalyzePart(const Trace& part, const std::vector<size_t>& positions,
                                       const JobDecisions& decisions,
                                       const clock_alignment::JobClocks& clocks,
                                       const Options& options);

// The job's result from every part of the plan (any order).
Result MergeParts(const Trace& headers, std::vector<PartResult> parts, const Options& options);

}  // namespace bubblescope::job
