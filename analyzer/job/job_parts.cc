#include "job/job_parts.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <utility>

#include "analysis/repeating_schedule.h"
#include "common/disjoint_sets.h"
#include "common/status_macros.h"
#include "index/group_roles.h"
#include "index/rank_index.h"
#include "job/job_stages.h"
#include "pipeline/step_map.h"

namespace bubblescope::job {
namespace {

// The step source FindSteps would choose over the whole job (iterations.h): the marker; else the
// profiler steps when any rank has one; else the repeating schedule when every rank with traffic
// (every rank, without any) repeats one; else the whole trace.
iterations::StepSource DecideStepSource(const std::vector<RankFacts>& facts,
                                        const Options& options) {
  if (options.iterations.iteration_marker.has_value()) return iterations::StepSource::kMarker;
  if (std::any_of(facts.begin(), facts.end(),
                  [](const RankFacts& rank) { return !rank.own_steps.empty(); })) {
    return iterations::StepSource::kProfilerSteps;
  }
  const bool any_traffic =
      std::any_of(facts.begin(), facts.end(), [](const RankFacts& rank) { return rank.has_p2p; });
  bool every_rank_repeats = !facts.empty();
  for (const RankFacts& rank : facts) {
    if (rank.has_p2p || !any_traffic) every_rank_repeats = every_rank_repeats && rank.repeats;
  }
  return every_rank_repeats ? iterations::StepSource::kRepeatingSchedule
                            : iterations::StepSource::kWholeTrace;
}

// pipeline::ReferenceSteps' shared number over the ranks with traffic, from their facts.
std::optional<int64_t> DecideReference(const std::vector<RankFacts>& facts,
                                       iterations::StepSource source) {
  if (source == iterations::StepSource::kRepeatingSchedule) return std::nullopt;
  // The whole trace is one step 0 on every rank.
  static const std::vector<iterations::StepStart> kWholeTraceStep = {{0, 0, false}};
  std::vector<pipeline::RankStepNumbers> ranks;
  for (const RankFacts& rank : facts) {
    if (!rank.has_p2p) continue;
    ranks.push_back(
        {source == iterations::StepSource::kWholeTrace ? &kWholeTraceStep : &rank.own_steps,
         rank.cut_short});
  }
  return pipeline::SharedReference(ranks);
}

// The smallest rank id of a pipeline's stages: the order p2p_graph lists pipelines in.
int32_t FirstRank(const Pipeline& pipeline) {
  const std::vector<int32_t>& order = pipeline.crossrank.pipeline.stage_order();
  return *std::min_element(order.begin(), order.end());
}

}  // namespace

RankFacts FactsOf(const Rank& rank, const iterations::Options& options) {
  RankFacts facts;
  const index::RankIndex index = index::BuildRank(rank);
  facts.has_p2p = index.HasP2p();
  facts.cut_short = iterations::CutShort(rank);
  for (const index::DeviceOp& op : index.ops) {
    if (op.is_p2p() && !op.in_optimizer && op.peer >= 0) facts.recorded_peers.push_back(op.peer);
  }
  std::sort(facts.recorded_peers.begin(), facts.recorded_peers.end());
  facts.recorded_peers.erase(std::unique(facts.recorded_peers.begin(), facts.recorded_peers.end()),
                             facts.recorded_peers.end());
  facts.own_steps =
      iterations::OwnSteps(rank, options).value_or(std::vector<iterations::StepStart>{});
  // Only a job without any step reads the schedule, and only then is it worth detecting.
  if (facts.own_steps.empty() && !options.iteration_marker.has_value()) {
    facts.repeats = repeating_schedule::DetectRank(index, {}).found;
  }
  return facts;
}

PartPlan PlanParts(const Trace& headers, const std::vector<RankFacts>& facts,
                   const Options& options) {
  PartPlan plan;
  const size_t n = headers.ranks.size();
  if (facts.size() != n) return plan;
  plan.decisions.step_source = DecideStepSource(facts, options);
  plan.decisions.shared_reference = DecideReference(facts, plan.decisions.step_source);
  plan.decisions.peers_recorded =
      std::any_of(facts.begin(), facts.end(),
                  [](const RankFacts& rank) { return !rank.recorded_peers.empty(); });
  const bool any_traffic =
      std::any_of(facts.begin(), facts.end(), [](const RankFacts& rank) { return rank.has_p2p; });
  if (!plan.decisions.peers_recorded || !any_traffic) return plan;

  // The p2p graph's components, joined as p2p_graph joins them: by every recorded peer in the job.
  std::map<int32_t, size_t> position_of;
  for (size_t i = 0; i < n; ++i) position_of[headers.ranks[i].rank] = i;
  DisjointSets components(n);
  for (size_t i = 0; i < n; ++i) {
    for (int32_t peer : facts[i].recorded_peers) {
      const auto found = position_of.find(peer);
      if (found != position_of.end()) components.Join(i, found->second);
    }
  }
  std::map<size_t, std::vector<size_t>> members_of_root;
  std::vector<size_t> roots;  // in the order of their first member
  for (size_t i = 0; i < n; ++i) {
    std::vector<size_t>& members = members_of_root[components.Find(i)];
    if (members.empty()) roots.push_back(components.Find(i));
    members.push_back(i);
  }
  // Every component with traffic is one part; the ranks without any (each a component of its
  // own) go in batches no larger than the largest of those.
  size_t largest = 1;
  std::vector<size_t> quiet;
  for (size_t root : roots) {
    std::vector<size_t>& members = members_of_root[root];
    if (std::none_of(members.begin(), members.end(), [&](size_t i) { return facts[i].has_p2p; })) {
      quiet.insert(quiet.end(), members.begin(), members.end());
      continue;
    }
    largest = std::max(largest, members.size());
    plan.parts.push_back(std::move(members));
  }
  for (size_t start = 0; start < quiet.size(); start += largest) {
    const size_t end = std::min(quiet.size(), start + largest);
    plan.parts.emplace_back(quiet.begin() + static_cast<std::ptrdiff_t>(start),
                            quiet.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return plan;
}

JobDecisions WithDataGroups(JobDecisions decisions, const Trace& headers,
                            const std::vector<ClockEvidence>& parts) {
  std::vector<std::vector<int32_t>> stage_orders;
  for (const ClockEvidence& part : parts) {
    for (const ClockEvidence::PipelineTransfers& pipeline : part.pipelines) {
      stage_orders.push_back(pipeline.ranks);
    }
  }
  // The job's order of pipelines (by their lowest rank), whatever the parts' order.
  std::sort(stage_orders.begin(), stage_orders.end(),
            [](const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
              const auto lowest = [](const std::vector<int32_t>& order) {
                return order.empty() ? std::numeric_limits<int32_t>::max()
                                     : *std::min_element(order.begin(), order.end());
              };
              return lowest(a) < lowest(b);
            });
  std::vector<std::vector<index::GroupRoleInfo>> roles;
  roles.reserve(headers.ranks.size());
  for (const Rank& rank : headers.ranks) roles.push_back(index::ClassifyGroups(rank));
  std::vector<const std::vector<index::GroupRoleInfo>*> role_pointers;
  for (const std::vector<index::GroupRoleInfo>& rank_roles : roles) {
    role_pointers.push_back(&rank_roles);
  }
  decisions.data_parallel_groups = InferredDataGroups(headers, role_pointers, stage_orders);
  return decisions;
}

absl::StatusOr<ClockEvidence> PartClockEvidence(const Trace& part, const JobDecisions& decisions,
                                                const Options& options) {
  BUBBLESCOPE_ASSIGN_OR_RETURN(JobInputs inputs, DeriveInputs(part, options, &decisions));
  return ClockEvidenceOf(inputs, MatchTransfers(inputs, options));
}

absl::StatusOr<PartResult> AnalyzePart(const Trace& part, const std::vector<size_t>& positions,
                                       const JobDecisions& decisions,
                                       const clock_alignment::JobClocks& clocks,
                                       const Options& options) {
  BUBBLESCOPE_ASSIGN_OR_RETURN(JobInputs inputs, DeriveInputs(part, options, &decisions));
  PartResult out;
  out.positions = positions;
  out.ranks = rank_summary::Analyze(part, inputs.index);
  BUBBLESCOPE_ASSIGN_OR_RETURN(std::vector<Pipeline> pipelines,
                               AnalyzePipelines(inputs, options, &clocks));
  out.pipelines = std::move(pipelines);
  for (Pipeline& pipeline : out.pipelines) {
    for (size_t& position : pipeline.crossrank.pipeline.positions) position = positions[position];
  }
  out.ranks_without_p2p = std::move(inputs.graph.ranks_without_p2p);
  out.kept_cut_short = std::move(inputs.graph.kept_cut_short);
  out.notes = std::move(inputs.graph.notes);
  return out;
}

Result MergeParts(const Trace& headers, std::vector<PartResult> parts, const Options& options) {
  Result result;
  result.profiler_cycles = headers.profiler_cycles;
  SummaryInputs summary{.trace = &headers, .roles = {}, .ranks_without_p2p = {}, .notes = {}};
  // The notes as p2p_graph orders them over the whole job: one per rank kept though cut short,
  // in trace order, then the others in pipeline order.
  std::vector<std::pair<int32_t, std::string>> cut_short_notes;
  std::vector<std::pair<int32_t, std::vector<std::string>>> pipeline_notes;
  for (PartResult& part : parts) {
    for (rank_summary::RankFigures& figures : part.ranks.ranks) {
      result.ranks.ranks.push_back(std::move(figures));
    }
    summary.ranks_without_p2p.insert(summary.ranks_without_p2p.end(),
                                     part.ranks_without_p2p.begin(), part.ranks_without_p2p.end());
    const size_t kept = std::min(part.kept_cut_short.size(), part.notes.size());
    for (size_t k = 0; k < kept; ++k) {
      cut_short_notes.emplace_back(part.kept_cut_short[k], std::move(part.notes[k]));
    }
    if (part.notes.size() > kept) {
      pipeline_notes.emplace_back(
          part.pipelines.empty() ? std::numeric_limits<int32_t>::max()
                                 : FirstRank(part.pipelines.front()),
          std::vector<std::string>(
              std::make_move_iterator(part.notes.begin() + static_cast<std::ptrdiff_t>(kept)),
              std::make_move_iterator(part.notes.end())));
    }
    for (Pipeline& pipeline : part.pipelines) result.pipelines.push_back(std::move(pipeline));
  }
  const auto by_rank = [](const auto& a, const auto& b) { return a.first < b.first; };
  std::stable_sort(cut_short_notes.begin(), cut_short_notes.end(), by_rank);
  std::stable_sort(pipeline_notes.begin(), pipeline_notes.end(), by_rank);
  for (auto& [rank, note] : cut_short_notes) summary.notes.push_back(std::move(note));
  for (auto& [rank, notes] : pipeline_notes) {
    for (std::string& note : notes) summary.notes.push_back(std::move(note));
  }
  std::stable_sort(result.ranks.ranks.begin(), result.ranks.ranks.end(),
                   [](const rank_summary::RankFigures& a, const rank_summary::RankFigures& b) {
                     return a.rank < b.rank;
                   });
  std::sort(summary.ranks_without_p2p.begin(), summary.ranks_without_p2p.end());
  std::stable_sort(
      result.pipelines.begin(), result.pipelines.end(),
      [](const Pipeline& a, const Pipeline& b) { return FirstRank(a) < FirstRank(b); });

  FinishPipelines(result.pipelines, options);
  std::vector<std::vector<index::GroupRoleInfo>> roles;
  roles.reserve(headers.ranks.size());
  for (const Rank& rank : headers.ranks) roles.push_back(index::ClassifyGroups(rank));
  for (const std::vector<index::GroupRoleInfo>& rank_roles : roles) {
    summary.roles.push_back(&rank_roles);
  }
  SummarizeJob(summary, result);
  return result;
}

}  // namespace bubblescope::job
