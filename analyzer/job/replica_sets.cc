#include "job/replica_sets.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <numeric>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "common/disjoint_sets.h"
#include "common/percentile.h"
#include "job/job.h"

namespace bubblescope::job {
namespace {

using ShapeKey = std::tuple<int32_t, int32_t, int32_t, int>;  // p, m, v, family

// Pipelines whose stages can be matched position by position: a complete iteration to measure,
// a shape, and a stage order read or derived from recorded facts (a guessed order would pair
// the wrong stages).
bool Foldable(const Pipeline& pipeline) {
  const inference_evidence::Strength order = pipeline.evidence.stage_order.strength;
  return pipeline.no_complete_iteration.empty() && pipeline.bubble.complete_iterations > 0 &&
         pipeline.shape.has_value() && pipeline.shape->p > 0 &&
         pipeline.crossrank.pipeline.order.known &&
         (order == inference_evidence::Strength::kRead ||
          order == inference_evidence::Strength::kStrong) &&
         static_cast<int32_t>(pipeline.crossrank.pipeline.stage_order().size()) ==
             pipeline.shape->p;
}

ShapeKey KeyOf(const Pipeline& pipeline) {
  const schedule_inference::Result& shape = *pipeline.shape;
  return {shape.p, shape.m, shape.v, static_cast<int>(shape.family)};
}

// The described data-parallel groups each rank is a member of (indices into `groups`).
std::unordered_map<int32_t, std::vector<size_t>> DataGroupsOfRanks(
    const std::vector<index::JobGroup>& groups) {
  std::unordered_map<int32_t, std::vector<size_t>> of_rank;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (index::AppliedRole(groups[g].role) != index::GroupRole::kData) continue;
    const std::vector<int32_t>& members = index::MembersOf(groups[g]);
    if (members.size() < 2) continue;
    for (int32_t rank : members) of_rank[rank].push_back(g);
  }
  for (auto& [rank, list] : of_rank) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return of_rank;
}

// A data-parallel group both ranks belong to, or -1.
int64_t SharedGroup(const std::unordered_map<int32_t, std::vector<size_t>>& of_rank, int32_t a,
                    int32_t b) {
  const auto in_a = of_rank.find(a);
  const auto in_b = of_rank.find(b);
  if (in_a == of_rank.end() || in_b == of_rank.end()) return -1;
  for (size_t g : in_a->second) {
    if (std::binary_search(in_b->second.begin(), in_b->second.end(), g)) {
      return static_cast<int64_t>(g);
    }
  }
  return -1;
}

// (value, pipeline) pairs to their spread.
Spread SpreadOf(std::vector<std::pair<double, int32_t>> values) {
  Spread spread;
  if (values.empty()) return spread;
  std::sort(values.begin(), values.end());
  const std::pair<double, int32_t>& low = values.front();
  // The largest value held by the lowest pipeline index.
  const auto high = std::lower_bound(values.begin(), values.end(),
                                     std::pair<double, int32_t>{values.back().first, INT32_MIN});
  std::vector<double> sorted;
  sorted.reserve(values.size());
  for (const auto& [value, pipeline] : values) sorted.push_back(value);
  spread.min = low.first;
  spread.min_pipeline = low.second;
  spread.median = NearestRankOfSorted(sorted, 50);
  spread.max = high->first;
  spread.max_pipeline = high->second;
  return spread;
}

const bubble::RankTotals* TotalsOf(const Pipeline& pipeline, int32_t rank) {
  for (const bubble::RankTotals& totals : pipeline.bubble.per_rank) {
    if (totals.rank == rank) return &totals;
  }
  return nullptr;
}

const schedule_inference::StageFigures* StageFiguresOf(const Pipeline& pipeline, int32_t stage) {
  for (const schedule_inference::StageFigures& figures : pipeline.shape->stages) {
    if (figures.stage == stage) return &figures;
  }
  return nullptr;
}

// A figure of every replica, or nullopt when one replica lacks it.
std::optional<Spread> SpreadOver(
    const std::vector<int32_t>& members,
    const std::function<std::optional<double>(int32_t pipeline)>& figure) {
  std::vector<std::pair<double, int32_t>> values;
  for (int32_t member : members) {
    const std::optional<double> value = figure(member);
    if (!value.has_value()) return std::nullopt;
    values.emplace_back(*value, member);
  }
  return SpreadOf(std::move(values));
}

StageSpread StageOf(const std::vector<Pipeline>& pipelines, const std::vector<int32_t>& members,
                    int32_t stage) {
  StageSpread out;
  out.stage = stage;
  auto rank_of = [&](int32_t member) {
    return pipelines[static_cast<size_t>(member)]
        .crossrank.pipeline.stage_order()[static_cast<size_t>(stage)];
  };
  for (int32_t member : members) out.ranks.push_back(rank_of(member));
  // Every member's stage rank has totals (the bubble covers the pipeline's ranks); a missing
  // one would leave the figure out rather than invent it.
  auto per_iteration = [&](TimeNs IdleSplit::*field) {
    return SpreadOver(members,
                      [&](int32_t member) -> std::optional<double> {
                        const Pipeline& pipeline = pipelines[static_cast<size_t>(member)];
                        const bubble::RankTotals* totals = TotalsOf(pipeline, rank_of(member));
                        if (totals == nullptr) return std::nullopt;
                        return static_cast<double>(totals->split.*field) /
                               static_cast<double>(pipeline.bubble.complete_iterations);
                      })
        .value_or(Spread{});
  };
  out.bubble_fraction = SpreadOver(members, [&](int32_t member) -> std::optional<double> {
                          const bubble::RankTotals* totals =
                              TotalsOf(pipelines[static_cast<size_t>(member)], rank_of(member));
                          if (totals == nullptr) return std::nullopt;
                          return totals->bubble_fraction;
                        }).value_or(Spread{});
  out.compute_ns = per_iteration(&IdleSplit::compute);
  out.fill_ns = per_iteration(&IdleSplit::fill);
  out.drain_ns = per_iteration(&IdleSplit::drain);
  out.comm_wait_ns = per_iteration(&IdleSplit::comm_wait);
  out.empty_ns = per_iteration(&IdleSplit::empty);
  auto op_mean = [&](schedule_inference::OpStats schedule_inference::StageFigures::*op) {
    return SpreadOver(members, [&](int32_t member) -> std::optional<double> {
      const schedule_inference::StageFigures* figures =
          StageFiguresOf(pipelines[static_cast<size_t>(member)], stage);
      if (figures == nullptr || (figures->*op).count == 0) return std::nullopt;
      return (figures->*op).mean_ns;
    });
  };
  out.forward_ns = op_mean(&schedule_inference::StageFigures::forward);
  out.backward_ns = op_mean(&schedule_inference::StageFigures::backward);
  out.weight_grad_ns = op_mean(&schedule_inference::StageFigures::weight_grad);
  out.peak_allocated_bytes = SpreadOver(members, [&](int32_t member) -> std::optional<double> {
    const bubble::RankTotals* totals =
        TotalsOf(pipelines[static_cast<size_t>(member)], rank_of(member));
    if (totals == nullptr || totals->memory.allocated_bytes < 0) return std::nullopt;
    return static_cast<double>(totals->memory.allocated_bytes);
  });
  return out;
}

ReplicaSet SetOf(const std::vector<Pipeline>& pipelines, std::vector<int32_t> members,
                 std::vector<std::string> descriptions) {
  ReplicaSet set;
  set.pipelines = std::move(members);
  std::sort(descriptions.begin(), descriptions.end());
  descriptions.erase(std::unique(descriptions.begin(), descriptions.end()), descriptions.end());
  set.group_descriptions = std::move(descriptions);
  auto at = [&](int32_t member) -> const Pipeline& {
    return pipelines[static_cast<size_t>(member)];
  };
  set.bubble_fraction =
      *SpreadOver(set.pipelines, [&](int32_t m) { return at(m).bubble.bubble_fraction; });
  set.worst_pipeline = set.bubble_fraction.max_pipeline;
  set.excess_bubble_fraction =
      SpreadOver(set.pipelines, [&](int32_t m) { return at(m).excess_bubble_fraction; });
  set.latency_p50_ns = *SpreadOver(
      set.pipelines, [&](int32_t m) { return static_cast<double>(at(m).bubble.latency.p50); });
  const int32_t p = at(set.pipelines.front()).shape->p;
  for (int32_t stage = 0; stage < p; ++stage) {
    set.stages.push_back(StageOf(pipelines, set.pipelines, stage));
  }
  return set;
}

}  // namespace

std::vector<ReplicaSet> FoldReplicas(const std::vector<Pipeline>& pipelines,
                                     const std::vector<index::JobGroup>& groups) {
  const std::unordered_map<int32_t, std::vector<size_t>> of_rank = DataGroupsOfRanks(groups);
  if (of_rank.empty()) return {};
  // The foldable pipelines by the rank of their first stage.
  std::unordered_map<int32_t, int32_t> by_first_rank;
  for (size_t i = 0; i < pipelines.size(); ++i) {
    if (!Foldable(pipelines[i])) continue;
    by_first_rank.emplace(pipelines[i].crossrank.pipeline.stage_order().front(),
                          static_cast<int32_t>(i));
  }
  DisjointSets sets(pipelines.size());
  std::vector<std::vector<size_t>> joined_by(pipelines.size());  // groups that joined each
  for (size_t g = 0; g < groups.size(); ++g) {
    if (index::AppliedRole(groups[g].role) != index::GroupRole::kData) continue;
    const std::vector<int32_t>& members = index::MembersOf(groups[g]);
    // The pipelines this group holds the first stage of, by shape; each is tried against the
    // first of its shape, so the work is linear in the members.
    std::vector<std::pair<ShapeKey, int32_t>> firsts;
    for (int32_t rank : members) {
      const auto found = by_first_rank.find(rank);
      if (found != by_first_rank.end()) {
        firsts.emplace_back(KeyOf(pipelines[static_cast<size_t>(found->second)]), found->second);
      }
    }
    std::sort(firsts.begin(), firsts.end());
    firsts.erase(std::unique(firsts.begin(), firsts.end()), firsts.end());
    size_t anchor = 0;  // the first pipeline of the run of firsts[k]'s shape
    for (size_t k = 1; k < firsts.size(); ++k) {
      if (firsts[k].first != firsts[anchor].first) {
        anchor = k;
        continue;
      }
      const Pipeline& a = pipelines[static_cast<size_t>(firsts[anchor].second)];
      const Pipeline& b = pipelines[static_cast<size_t>(firsts[k].second)];
      std::vector<size_t> shared;
      for (size_t s = 0; s < a.crossrank.pipeline.stage_order().size(); ++s) {
        const int64_t group = SharedGroup(of_rank, a.crossrank.pipeline.stage_order()[s],
                                          b.crossrank.pipeline.stage_order()[s]);
        if (group < 0) break;
        shared.push_back(static_cast<size_t>(group));
      }
      if (shared.size() != a.crossrank.pipeline.stage_order().size()) continue;
      sets.Join(static_cast<size_t>(firsts[anchor].second), static_cast<size_t>(firsts[k].second));
      for (const int32_t index : {firsts[anchor].second, firsts[k].second}) {
        std::vector<size_t>& list = joined_by[static_cast<size_t>(index)];
        list.insert(list.end(), shared.begin(), shared.end());
      }
    }
  }
  // Each group's members ascending, the groups by their first member.
  std::vector<std::vector<int32_t>> members(pipelines.size());
  std::vector<size_t> roots;
  for (size_t i = 0; i < pipelines.size(); ++i) {
    const size_t root = sets.Find(i);
    if (members[root].empty()) roots.push_back(root);
    members[root].push_back(static_cast<int32_t>(i));
  }
  std::vector<ReplicaSet> out;
  for (size_t root : roots) {
    if (members[root].size() < 2) continue;
    std::vector<std::string> descriptions;
    bool inferred = false;
    for (int32_t member : members[root]) {
      for (size_t g : joined_by[static_cast<size_t>(member)]) {
        inferred |= groups[g].role.source == index::RoleSource::kStructure;
        if (!groups[g].description.empty()) descriptions.push_back(groups[g].description);
      }
    }
    out.push_back(SetOf(pipelines, std::move(members[root]), std::move(descriptions)));
    out.back().inferred_from_ranks = inferred;
  }
  return out;
}

void FoldRankSummaries(const rank_summary::Result& ranks, std::vector<ReplicaSet>& sets) {
  std::unordered_map<int32_t, const rank_summary::RankFigures*> of_rank;
  for (const rank_summary::RankFigures& figures : ranks.ranks) of_rank[figures.rank] = &figures;
  for (ReplicaSet& set : sets) {
    set.rank_summaries.clear();
    for (const StageSpread& stage : set.stages) {
      // The stage's rank in each replica, with the replica (pipeline) it is in.
      std::vector<std::pair<const rank_summary::RankFigures*, int32_t>> members;
      for (size_t i = 0; i < stage.ranks.size() && i < set.pipelines.size(); ++i) {
        const auto found = of_rank.find(stage.ranks[i]);
        if (found == of_rank.end()) break;
        members.emplace_back(found->second, set.pipelines[i]);
      }
      if (members.empty() || members.size() != stage.ranks.size()) continue;
      const auto over =
          [&members](
              const std::function<std::optional<double>(const rank_summary::RankFigures&)>& value) {
            std::vector<std::pair<double, int32_t>> values;
            for (const auto& [figures, pipeline] : members) {
              const std::optional<double> v = value(*figures);
              if (!v.has_value()) return std::optional<Spread>();
              values.emplace_back(*v, pipeline);
            }
            return std::optional<Spread>(SpreadOf(std::move(values)));
          };
      const auto number = [&over](auto member) {
        return *over([member](const rank_summary::RankFigures& figures) {
          return std::optional<double>(static_cast<double>(figures.*member));
        });
      };
      const auto peak = [&over](int64_t rank_summary::RankFigures::*member) {
        return over([member](const rank_summary::RankFigures& figures) {
          return figures.*member < 0 ? std::nullopt
                                     : std::optional<double>(static_cast<double>(figures.*member));
        });
      };
      RankSummarySpread out;
      out.stage = stage.stage;
      out.ranks = stage.ranks;
      out.span_ns = number(&rank_summary::RankFigures::span);
      out.compute_ns = number(&rank_summary::RankFigures::compute);
      out.comm_ns = number(&rank_summary::RankFigures::comm);
      out.memcpy_ns = number(&rank_summary::RankFigures::memcpy);
      out.idle_ns = number(&rank_summary::RankFigures::idle);
      out.idle_fraction = *over([](const rank_summary::RankFigures& figures) {
        return std::optional<double>(figures.span > 0 ? static_cast<double>(figures.idle) /
                                                            static_cast<double>(figures.span)
                                                      : 0.0);
      });
      out.kernels = number(&rank_summary::RankFigures::kernels);
      out.comm_ops = number(&rank_summary::RankFigures::comm_ops);
      out.memcpys = number(&rank_summary::RankFigures::memcpys);
      out.steps = number(&rank_summary::RankFigures::steps);
      out.peak_allocated_bytes = peak(&rank_summary::RankFigures::peak_allocated_bytes);
      out.peak_reserved_bytes = peak(&rank_summary::RankFigures::peak_reserved_bytes);
      set.rank_summaries.push_back(std::move(out));
    }
  }
}

std::vector<int32_t> PipelinesByBubble(const std::vector<Pipeline>& pipelines) {
  std::vector<int32_t> order(pipelines.size());
  std::iota(order.begin(), order.end(), 0);
  auto measured = [&](int32_t i) {
    return pipelines[static_cast<size_t>(i)].no_complete_iteration.empty();
  };
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (measured(a) != measured(b)) return measured(a);
    if (!measured(a)) return false;
    return pipelines[static_cast<size_t>(a)].bubble.bubble_fraction >
           pipelines[static_cast<size_t>(b)].bubble.bubble_fraction;
  });
  return order;
}

}  // namespace bubblescope::job
