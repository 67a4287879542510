#include "compare/diff.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace bubblescope::compare {
namespace {

// Comparisons of figures read back from JSON decimals: a difference this small is rounding.
constexpr double kSpreadSlack = 1e-9;

// The figure from the pipelines present, nullopt for a missing side.
Change Of(const PipelineFigures* a, const PipelineFigures* b,
          const std::function<std::optional<double>(const PipelineFigures&)>& figure) {
  return Change{.a = a == nullptr ? std::nullopt : figure(*a),
                .b = b == nullptr ? std::nullopt : figure(*b),
                .spread = std::nullopt};
}

// A figure that needs a complete iteration (the bubble, the latency): nullopt without one, so
// no comparison ever reads the zeros a pipeline without one carries.
std::optional<double> Measured(const PipelineFigures& pipeline, double value) {
  if (!pipeline.no_complete_iteration.empty()) return std::nullopt;
  return value;
}

// max - min of `value` over the complete iterations; nullopt with fewer than two.
std::optional<double> IterationRange(const PipelineFigures* pipeline,
                                     double IterationFigures::*value) {
  if (pipeline == nullptr) return std::nullopt;
  std::optional<double> low;
  std::optional<double> high;
  int complete = 0;
  for (const IterationFigures& iteration : pipeline->iterations) {
    if (!iteration.complete) continue;
    ++complete;
    const double x = iteration.*value;
    low = low.has_value() ? std::min(*low, x) : x;
    high = high.has_value() ? std::max(*high, x) : x;
  }
  if (complete < 2) return std::nullopt;
  return *high - *low;
}

std::optional<double> LargerSpread(std::optional<double> a, std::optional<double> b) {
  if (!a.has_value()) return b;
  if (!b.has_value()) return a;
  return std::max(*a, *b);
}

std::string ShapeText(const std::optional<int32_t>& value) {
  return value.has_value() ? absl::StrCat(*value) : "-";
}

void AddShapeChanges(const PipelineFigures& a, const PipelineFigures& b, PipelineDiff* diff) {
  auto add = [&](std::string figure, std::string text_a, std::string text_b) {
    if (text_a != text_b) {
      diff->shape_changes.push_back(
          ShapeChange{.figure = std::move(figure), .a = std::move(text_a), .b = std::move(text_b)});
    }
  };
  add("p", ShapeText(a.stages), ShapeText(b.stages));
  add("m", ShapeText(a.microbatches), ShapeText(b.microbatches));
  add("v", ShapeText(a.virtual_stages), ShapeText(b.virtual_stages));
  add("schedule", a.schedule.value_or("-"), b.schedule.value_or("-"));
}

// Position of `rank` in the pipeline's stage order; -1 when it is not a pipeline rank.
int32_t PositionOf(const PipelineFigures& pipeline, int32_t rank) {
  auto found = std::find(pipeline.ranks.begin(), pipeline.ranks.end(), rank);
  return found == pipeline.ranks.end() ? -1 : static_cast<int32_t>(found - pipeline.ranks.begin());
}

// Each stage's figures by pipeline position: the report's stage, else the rank's place in the
// stage order.
std::map<int32_t, const StageFigures*> StagesByPosition(const PipelineFigures* pipeline) {
  std::map<int32_t, const StageFigures*> stages;
  if (pipeline == nullptr) return stages;
  for (const StageFigures& stage : pipeline->stage_figures) {
    const int32_t position = stage.stage.value_or(PositionOf(*pipeline, stage.rank));
    if (position >= 0) stages.emplace(position, &stage);
  }
  return stages;
}

std::vector<StageDiff> DiffStages(const PipelineFigures* a, const PipelineFigures* b) {
  const std::map<int32_t, const StageFigures*> stages_a = StagesByPosition(a);
  const std::map<int32_t, const StageFigures*> stages_b = StagesByPosition(b);
  std::map<int32_t, StageDiff> by_position;
  auto fill = [&](const std::map<int32_t, const StageFigures*>& stages, bool side_a) {
    for (const auto& [position, figures] : stages) {
      StageDiff& diff = by_position[position];
      diff.stage = position;
      (side_a ? diff.rank_a : diff.rank_b) = figures->rank;
      auto set = [side_a](Change& change, std::optional<double> value) {
        (side_a ? change.a : change.b) = value;
      };
      set(diff.bubble_fraction, Measured(*(side_a ? a : b), figures->bubble_fraction));
      set(diff.peak_allocated_bytes, figures->peak_allocated_bytes);
      set(diff.peak_reserved_bytes, figures->peak_reserved_bytes);
      set(diff.forward_us, figures->forward_us);
      set(diff.backward_us, figures->backward_us);
      set(diff.weight_grad_us, figures->weight_grad_us);
    }
  };
  fill(stages_a, true);
  fill(stages_b, false);
  std::vector<StageDiff> diffs;
  for (auto& entry : by_position) diffs.push_back(std::move(entry.second));
  return diffs;
}

std::vector<LinkDiff> DiffLinks(const PipelineFigures* a, const PipelineFigures* b) {
  std::map<std::pair<int32_t, int32_t>, LinkDiff> by_positions;
  auto fill = [&](const PipelineFigures* pipeline, bool side_a) {
    if (pipeline == nullptr) return;
    for (const LinkFigures& link : pipeline->links) {
      const int32_t src = PositionOf(*pipeline, link.src);
      const int32_t dst = PositionOf(*pipeline, link.dst);
      if (src < 0 || dst < 0) continue;
      LinkDiff& diff = by_positions[{src, dst}];
      diff.src_stage = src;
      diff.dst_stage = dst;
      (side_a ? diff.ranks_a : diff.ranks_b) = std::make_pair(link.src, link.dst);
      (side_a ? diff.transfer_us_median.a : diff.transfer_us_median.b) = link.transfer_us_median;
      (side_a ? diff.gbps_median.a : diff.gbps_median.b) = link.gbps_median;
      (side_a ? diff.wait_us.a : diff.wait_us.b) = link.wait_us;
      (side_a ? diff.slow_a : diff.slow_b) = link.slow;
    }
  };
  fill(a, true);
  fill(b, false);
  std::vector<LinkDiff> diffs;
  for (auto& entry : by_positions) diffs.push_back(std::move(entry.second));
  return diffs;
}

// "kind|all" for a finding over the whole pipeline, else "kind|" and its ranks' positions.
std::string FindingKey(const PipelineFigures& pipeline, const FindingFigures& finding) {
  std::vector<int32_t> positions;
  for (int32_t rank : finding.ranks) positions.push_back(PositionOf(pipeline, rank));
  std::vector<int32_t> sorted = positions;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  const bool whole = sorted.size() == pipeline.ranks.size() && !sorted.empty() &&
                     sorted.front() == 0 &&
                     sorted.back() == static_cast<int32_t>(pipeline.ranks.size()) - 1;
  return absl::StrCat(finding.kind, "|", whole ? "all" : absl::StrJoin(positions, ","));
}

std::vector<FindingDiff> DiffFindings(const PipelineFigures* a, const PipelineFigures* b) {
  std::vector<FindingDiff> appeared;
  std::vector<FindingDiff> disappeared;
  std::vector<FindingDiff> persisting;
  std::vector<bool> used_b(b == nullptr ? 0 : b->findings.size(), false);
  if (a != nullptr) {
    for (const FindingFigures& finding_a : a->findings) {
      FindingDiff diff{
          .change = FindingChange::kDisappeared,
          .kind = finding_a.kind,
          .severity = finding_a.severity,
          .message = finding_a.message,
          .ranks_a = finding_a.ranks,
          .ranks_b = {},
          .cost_us = Change{.a = finding_a.cost_us, .b = std::nullopt, .spread = std::nullopt}};
      const std::string key = FindingKey(*a, finding_a);
      for (size_t j = 0; b != nullptr && j < b->findings.size(); ++j) {
        if (used_b[j] || FindingKey(*b, b->findings[j]) != key) continue;
        used_b[j] = true;
        const FindingFigures& finding_b = b->findings[j];
        diff.change = FindingChange::kPersisting;
        diff.severity = finding_b.severity;
        diff.message = finding_b.message;
        diff.ranks_b = finding_b.ranks;
        diff.cost_us.b = finding_b.cost_us;
        break;
      }
      (diff.change == FindingChange::kPersisting ? persisting : disappeared)
          .push_back(std::move(diff));
    }
  }
  for (size_t j = 0; j < used_b.size(); ++j) {
    if (used_b[j]) continue;
    const FindingFigures& finding_b = b->findings[j];
    appeared.push_back(FindingDiff{
        .change = FindingChange::kAppeared,
        .kind = finding_b.kind,
        .severity = finding_b.severity,
        .message = finding_b.message,
        .ranks_a = {},
        .ranks_b = finding_b.ranks,
        .cost_us = Change{.a = std::nullopt, .b = finding_b.cost_us, .spread = std::nullopt}});
  }
  std::vector<FindingDiff> all = std::move(appeared);
  for (auto* group : {&disappeared, &persisting}) {
    for (FindingDiff& diff : *group) all.push_back(std::move(diff));
  }
  return all;
}

PipelineDiff DiffPipelines(const PipelineFigures* a, const PipelineFigures* b) {
  PipelineDiff diff;
  if (a != nullptr) diff.ranks_a = a->ranks;
  if (b != nullptr) diff.ranks_b = b->ranks;
  if (a != nullptr && b != nullptr) AddShapeChanges(*a, *b, &diff);
  if (a != nullptr) diff.no_complete_iteration_a = a->no_complete_iteration;
  if (b != nullptr) diff.no_complete_iteration_b = b->no_complete_iteration;
  diff.bubble_fraction =
      Of(a, b, [](const PipelineFigures& p) { return Measured(p, p.bubble_fraction); });
  diff.theoretical_bubble_fraction =
      Of(a, b, [](const PipelineFigures& p) { return p.theoretical_bubble_fraction; });
  diff.excess_bubble_fraction = Of(a, b, [](const PipelineFigures& p) {
    return p.no_complete_iteration.empty() ? p.excess_bubble_fraction : std::nullopt;
  });
  diff.latency_p50_us =
      Of(a, b, [](const PipelineFigures& p) { return Measured(p, p.latency_p50_us); });
  diff.latency_p90_us =
      Of(a, b, [](const PipelineFigures& p) { return Measured(p, p.latency_p90_us); });
  diff.latency_max_us =
      Of(a, b, [](const PipelineFigures& p) { return Measured(p, p.latency_max_us); });
  diff.complete_iterations =
      Of(a, b, [](const PipelineFigures& p) { return static_cast<double>(p.complete_iterations); });
  // The theoretical bubble is the schedule's own: it has no iteration-to-iteration spread.
  const std::optional<double> bubble_spread =
      LargerSpread(IterationRange(a, &IterationFigures::bubble_fraction),
                   IterationRange(b, &IterationFigures::bubble_fraction));
  const std::optional<double> window_spread =
      LargerSpread(IterationRange(a, &IterationFigures::window_us),
                   IterationRange(b, &IterationFigures::window_us));
  diff.bubble_fraction.spread = bubble_spread;
  diff.excess_bubble_fraction.spread = bubble_spread;
  for (Change* latency : {&diff.latency_p50_us, &diff.latency_p90_us, &diff.latency_max_us}) {
    latency->spread = window_spread;
  }
  diff.stages = DiffStages(a, b);
  diff.links = DiffLinks(a, b);
  diff.findings = DiffFindings(a, b);
  return diff;
}

std::vector<int32_t> Sorted(std::vector<int32_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

}  // namespace

std::optional<double> Change::Relative() const {
  if (!Both() || *a == 0.0) return std::nullopt;
  return Delta() / *a;
}

bool Change::WithinSpread() const {
  return Both() && spread.has_value() && std::abs(Delta()) <= *spread + kSpreadSlack;
}

std::string_view PairingName(Pairing pairing) {
  switch (pairing) {
    case Pairing::kSameRanks:
      return "same_ranks";
    case Pairing::kSameRankSet:
      return "same_rank_set";
    case Pairing::kSameStageCount:
      return "same_stage_count";
    case Pairing::kPosition:
      return "position";
    case Pairing::kOnlyA:
      return "only_a";
    case Pairing::kOnlyB:
      return "only_b";
  }
  return "unknown";
}

std::string_view FindingChangeName(FindingChange change) {
  switch (change) {
    case FindingChange::kAppeared:
      return "appeared";
    case FindingChange::kDisappeared:
      return "disappeared";
    case FindingChange::kPersisting:
      return "persisting";
  }
  return "unknown";
}

DiffResult Diff(const RunFigures& a, const RunFigures& b) {
  DiffResult result{.source_a = a.source, .source_b = b.source, .pipelines = {}};
  const size_t count_a = a.pipelines.size();
  const size_t count_b = b.pipelines.size();
  std::vector<std::optional<size_t>> partner(count_a);
  std::vector<Pairing> how(count_a, Pairing::kOnlyA);
  std::vector<bool> used_b(count_b, false);
  // Strongest evidence first, so a weaker rule never takes a pipeline a stronger one would pair.
  const std::vector<
      std::pair<Pairing, std::function<bool(const PipelineFigures&, const PipelineFigures&)>>>
      rules = {
          {Pairing::kSameRanks,
           [](const PipelineFigures& x, const PipelineFigures& y) { return x.ranks == y.ranks; }},
          {Pairing::kSameRankSet,
           [](const PipelineFigures& x, const PipelineFigures& y) {
             return Sorted(x.ranks) == Sorted(y.ranks);
           }},
          {Pairing::kSameStageCount,
           [](const PipelineFigures& x, const PipelineFigures& y) {
             return x.ranks.size() == y.ranks.size();
           }},
          {Pairing::kPosition, [](const PipelineFigures&, const PipelineFigures&) { return true; }},
      };
  for (const auto& rule : rules) {
    for (size_t i = 0; i < count_a; ++i) {
      if (partner[i].has_value()) continue;
      for (size_t j = 0; j < count_b; ++j) {
        if (used_b[j] || !rule.second(a.pipelines[i], b.pipelines[j])) continue;
        partner[i] = j;
        how[i] = rule.first;
        used_b[j] = true;
        break;
      }
    }
  }
  std::vector<PipelineDiff> only_a;
  for (size_t i = 0; i < count_a; ++i) {
    const PipelineFigures* pipeline_b =
        partner[i].has_value() ? &b.pipelines[*partner[i]] : nullptr;
    PipelineDiff diff = DiffPipelines(&a.pipelines[i], pipeline_b);
    diff.pairing = how[i];
    diff.index_a = static_cast<int32_t>(i);
    if (partner[i].has_value()) diff.index_b = static_cast<int32_t>(*partner[i]);
    (pipeline_b == nullptr ? only_a : result.pipelines).push_back(std::move(diff));
  }
  for (PipelineDiff& diff : only_a) result.pipelines.push_back(std::move(diff));
  for (size_t j = 0; j < count_b; ++j) {
    if (used_b[j]) continue;
    PipelineDiff diff = DiffPipelines(nullptr, &b.pipelines[j]);
    diff.pairing = Pairing::kOnlyB;
    diff.index_b = static_cast<int32_t>(j);
    result.pipelines.push_back(std::move(diff));
  }
  return result;
}

std::string PipelineLabel(const PipelineDiff& pipeline) {
  if (!pipeline.index_b.has_value())
    return absl::StrCat("pipeline ", *pipeline.index_a, " (A only)");
  if (!pipeline.index_a.has_value())
    return absl::StrCat("pipeline ", *pipeline.index_b, " (B only)");
  if (*pipeline.index_a == *pipeline.index_b) return absl::StrCat("pipeline ", *pipeline.index_a);
  return absl::StrCat("pipeline ", *pipeline.index_a, " -> ", *pipeline.index_b);
}

}  // namespace bubblescope::compare
