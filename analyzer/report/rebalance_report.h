// Renders a pipeline's rebalance suggestion (job::RebalanceFigures, pipeline/rebalance.h) as
// report text and as the "rebalance" member of a pipeline in the analyze JSON
// (docs/json-report.md).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "job/job.h"
#include "text/json_writer.h"

namespace bubblescope {

// "  rebalance (layers 8,8,8,8 from --layers-per-stage): move 2 layers from stage 2 (rank 2)
// to stage 1 ...\n".
std::string RebalanceText(const job::RebalanceFigures& figures);

// The value of the "rebalance" member: an object (its keys in docs/json-report.md).
void WriteRebalanceJson(const job::RebalanceFigures& figures, JsonWriter& json);

}  // namespace bubblescope
