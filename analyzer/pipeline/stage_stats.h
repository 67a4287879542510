// Per-stage F / B / W compute statistics and the slowest stage, from measured pipeline ops.
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/pipeline_op.h"
#include "pipeline/schedule_inference.h"

namespace bubblescope::pipeline {

// `stage_order` gives the rank of each pipeline position; ops of other ranks are ignored.
std::vector<schedule_inference::StageFigures> StageStats(const std::vector<PipelineOp>& ops,
                                                         const std::vector<int32_t>& stage_order);

// Fills slowest_stage / slowest_rank / slowest_excess_* of `result` from result->stages.
void FindSlowestStage(schedule_inference::Result* result);

}  // namespace bubblescope::pipeline
