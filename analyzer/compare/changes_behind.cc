#include "compare/changes_behind.h"

#include <algorithm>
#include <utility>

namespace bubblescope::compare {
namespace {

// A rise worth naming: on both sides, later longer, and more than the runs' own spread.
bool Rose(const Change& change) {
  return change.Both() && change.Delta() > 0.0 && !change.WithinSpread();
}

}  // namespace

std::vector<ChangeBehind> ChangesBehind(const PipelineDiff& pipeline, bool memory_check,
                                        std::optional<int32_t> stage) {
  std::vector<ChangeBehind> changes;
  for (const ShapeChange& shape : pipeline.shape_changes) {
    changes.push_back({.kind = ChangeBehind::Kind::kShape,
                       .figure = shape.figure,
                       .stage = 0,
                       .dst_stage = 0,
                       .change = {},
                       .a = shape.a,
                       .b = shape.b});
  }
  if (memory_check) return changes;
  std::vector<ChangeBehind> rises;
  for (const StageDiff& each : pipeline.stages) {
    if (stage.has_value() && each.stage != *stage) continue;
    const std::pair<const char*, const Change*> ops[] = {{"forward", &each.forward_us},
                                                         {"backward", &each.backward_us},
                                                         {"weight_grad", &each.weight_grad_us}};
    for (const auto& [figure, change] : ops) {
      if (!Rose(*change)) continue;
      rises.push_back({.kind = ChangeBehind::Kind::kStageOp,
                       .figure = figure,
                       .stage = each.stage,
                       .dst_stage = 0,
                       .change = *change,
                       .a = {},
                       .b = {}});
    }
  }
  for (const LinkDiff& link : pipeline.links) {
    if (stage.has_value() && link.src_stage != *stage && link.dst_stage != *stage) continue;
    if (!Rose(link.transfer_us_median)) continue;
    rises.push_back({.kind = ChangeBehind::Kind::kLink,
                     .figure = "transfer",
                     .stage = link.src_stage,
                     .dst_stage = link.dst_stage,
                     .change = link.transfer_us_median,
                     .a = {},
                     .b = {}});
  }
  // Largest rise in time first; ties in stage order, as found.
  std::stable_sort(rises.begin(), rises.end(), [](const ChangeBehind& x, const ChangeBehind& y) {
    return x.change.Delta() > y.change.Delta();
  });
  if (rises.size() > kChangesBehindShown) rises.resize(kChangesBehindShown);
  changes.insert(changes.end(), rises.begin(), rises.end());
  return changes;
}

}  // namespace bubblescope::compare
