#include "whatif/stage_effect.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace bubblescope::whatif {

absl::StatusOr<rebalance::ImbalanceEffect> EffectOfStageAtMean(const Model& model, int32_t stage) {
  if (stage < 0 || stage >= static_cast<int32_t>(model.stages.size())) {
    return absl::FailedPreconditionError(
        absl::StrCat("stage ", stage, " is not one of the model's ", model.stages.size()));
  }
  BUBBLESCOPE_ASSIGN_OR_RETURN(Prediction measured, PredictAsMeasured(model));
  BUBBLESCOPE_ASSIGN_OR_RETURN(Prediction at_mean,
                               PredictAsMeasured(WithStageAtMean(model, stage)));
  return rebalance::ImbalanceEffect{.stage = stage,
                                    .iteration_ns = measured.iteration_ns,
                                    .bubble_fraction = measured.bubble_fraction,
                                    .iteration_at_mean_ns = at_mean.iteration_ns,
                                    .bubble_fraction_at_mean = at_mean.bubble_fraction};
}

}  // namespace bubblescope::whatif
