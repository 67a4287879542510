// Per-stage F / B / W compute statistics and the slowest stage, from measured pipeline ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/pipeline_op.h"
#include "pipeline/schedule_inference.h"

namespace bubblescope::pipeline {

// `stage_order` gives the rank of each pipeline position; ops of other ranks are ignored. Ops
// run overlapped with another (PipelineOp::overlapped) are counted, but their shared compute is
// left out of the times.
std::vector<schedule_inference::StageFigures> StageStats(const std::vector<PipelineOp>& ops,
                                                         const std::vector<int32_t>& stage_order);

// Empty when the stages' op counts fit the schedule: every stage ran as many forwards, as many
// backwards, a backward per forward (or none: inference) and at most a weight-gradient op per
// backward (one per input-gradient-only backward; DualPipeV mixes them with full backwards). Else
// what does not fit, e.g. "backward counts 48/6/6/24 for 24 forwards per stage".
std::string OpCountMisfit(const std::vector<schedule_inference::StageFigures>& stages);

// Fills slowest_stage / slowest_rank / slowest_excess_* of `result` from result->stages.
void FindSlowestStage(schedule_inference::Result* result);

}  // namespace bubblescope::pipeline
