// The bubble one stage causes, through the what-if model of the measured job (whatif.h: its
// per-stage F, B and W times and its measured links): the model as measured, then with that
// stage at the mean F, B and W over stages. The job driver works it out once for the slowest
// stage (job::Pipeline::slowest_stage_effect); the stage_imbalance finding and its root cause's
// saving both read that one prediction, so a report never quotes the fix from two models.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "pipeline/rebalance.h"
#include "whatif/whatif.h"

namespace bubblescope::whatif {

// FailedPreconditionError when `stage` is not one of the model's or the model cannot be
// simulated.
absl::StatusOr<rebalance::ImbalanceEffect> EffectOfStageAtMean(const Model& model, int32_t stage);

}  // namespace bubblescope::whatif
