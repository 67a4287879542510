#include "whatif/stage_effect.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace bubblescope::whatif {

absl::StatusOr<rebalance::ImbalanceEffect> EffectOfStageAtMean(const Model& model,
                                                               int32_t stage) {
  if (stage < 0 || stage >= static_cast<int32_t>(model.stages.size())) {
    return absl::FailedPreconditionError(
        absl::StrCat("stage ", stage, " is not one of the model's ", model.stages.size()));
  }
  absl::StatusOr<Prediction> measured = PredictAsMeasured(model);
  if (!measured.ok()) return measured.status();
  absl::StatusOr<Prediction> at_mean = PredictAsMeasured(WithStageAtMean(model, stage));
  if (!at_mean.ok()) return at_mean.status();
  return rebalance::ImbalanceEffect{.stage = stage,
                                    .iteration_ns = measured->iteration_ns,
                                    .bubble_fraction = measured->bubble_fraction,
                                    .iteration_at_mean_ns = at_mean->iteration_ns,
                                    .bubble_fraction_at_mean = at_mean->bubble_fraction};
}

}  // namespace bubblescope::whatif
