#include "pipeline/stage_order.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "pipeline/p2p_structure.h"

namespace bubblescope::pipeline {

std::string_view ShapeSourceName(ShapeSource source) {
  switch (source) {
    case ShapeSource::kAnnotations:
      return "annotations";
    case ShapeSource::kP2p:
      return "p2p";
  }
  return "unknown";
}

absl::StatusOr<std::vector<int32_t>> StagedPlacement(const std::vector<PipelineOp>& ops,
                                                     size_t rank_count) {
  std::map<int32_t, int32_t> rank_of_stage;
  for (const PipelineOp& op : ops) {
    auto [it, inserted] = rank_of_stage.emplace(op.virtual_stage, op.rank);
    if (!inserted && it->second != op.rank) {
      return absl::FailedPreconditionError(absl::StrCat(
          "annotations put stage ", op.virtual_stage, " on ranks ", it->second, " and ", op.rank));
    }
  }
  const int32_t stage_count = rank_of_stage.empty() ? 0 : rank_of_stage.rbegin()->first + 1;
  if (rank_count == 0 || rank_of_stage.size() != static_cast<size_t>(stage_count) ||
      stage_count % static_cast<int32_t>(rank_count) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("annotated stages do not form 0..S-1 with S a multiple of p = ", rank_count));
  }
  std::vector<int32_t> placement;
  for (const auto& [stage, rank] : rank_of_stage) placement.push_back(rank);
  return placement;
}

StageOrder FindStageOrder(const std::vector<IssuedTimeline>& timelines,
                          const std::vector<std::vector<PipelineOp>>& annotated,
                          const std::optional<std::vector<int32_t>>& chain) {
  StageOrder order;
  std::vector<PipelineOp> staged;
  size_t ranks_with_staged = 0;
  for (const std::vector<PipelineOp>& ops : annotated) {
    bool any = false;
    for (const PipelineOp& op : ops) {
      if (op.virtual_stage < 0) continue;
      staged.push_back(op);
      any = true;
    }
    ranks_with_staged += any ? 1 : 0;
  }
  if (!timelines.empty() && ranks_with_staged == timelines.size()) {
    absl::StatusOr<std::vector<int32_t>> placement = StagedPlacement(staged, timelines.size());
    if (placement.ok()) {
      order.known = true;
      order.source = ShapeSource::kAnnotations;
      for (int32_t rank : *placement) {
        // Ranks in order of their lowest virtual stage.
        if (std::find(order.ranks.begin(), order.ranks.end(), rank) == order.ranks.end()) {
          order.ranks.push_back(rank);
        }
      }
      order.virtual_stage_ranks = *std::move(placement);
      return order;
    }
    order.annotation_problem = std::string(placement.status().message());
  }

  order.source = ShapeSource::kP2p;
  if (chain.has_value()) {
    order.known = true;
    order.ranks = *chain;
    return order;
  }
  absl::StatusOr<std::vector<int32_t>> inferred = InferStageOrder(timelines);
  if (inferred.ok()) {
    order.known = true;
    order.ranks = *std::move(inferred);
    return order;
  }
  order.problem = std::string(inferred.status().message());
  for (const IssuedTimeline& timeline : timelines) order.ranks.push_back(timeline.rank);
  std::sort(order.ranks.begin(), order.ranks.end());
  return order;
}

}  // namespace bubblescope::pipeline
