// Renders a pipeline's rebalance suggestion (pipeline/rebalance.h) as report text and as the
// "rebalance" member of a pipeline in the analyze JSON (docs/json-report.md).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "pipeline/rebalance.h"
#include "report/json_writer.h"

namespace bubblescope {

// The layer counts (the user's, or the job's own `bubblescope:layers=N` annotations) and what
// came of them: a result, or why none could be worked out (the shape or its per-stage times are
// unknown, or the annotations are incomplete, in which case layers_per_stage is empty).
struct RebalanceFigures {
  std::vector<int32_t> layers_per_stage;
  std::string layers_source = "user";  // "user" (--layers-per-stage) or "annotations"
  absl::StatusOr<rebalance::Result> result = absl::UnknownError("not analysed");
};

// "  rebalance (layers 8,8,8,8 from --layers-per-stage): move 2 layers from stage 2 (rank 2) to stage 1 ...\n".
std::string RebalanceText(const RebalanceFigures& figures);

// The value of the "rebalance" member: an object (its keys in docs/json-report.md).
void WriteRebalanceJson(const RebalanceFigures& figures, JsonWriter& json);

}  // namespace bubblescope
