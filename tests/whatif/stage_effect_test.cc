// The slowest stage's effect through the what-if model, against figures worked out by hand:
// p=4, m=8 1F1B on free links, every stage F = 1000 ns and B = 2000 ns but stage 2 at twice that.
#include "whatif/stage_effect.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace bubblescope::whatif {
namespace {

Model FourStages() {
  Model model;
  model.schedule = sim::Schedule::k1F1B;
  model.p = 4;
  model.m = 8;
  for (int32_t s = 0; s < 4; ++s) {
    const double scale = s == 2 ? 2.0 : 1.0;
    model.stages.push_back(
        StageModel{.rank = s, .forward_ns = 1000 * scale, .backward_ns = 2000 * scale});
  }
  return WithFreeLinks(model);
}

TEST(StageEffectTest, SlowestStageAtTheMeanByHand) {
  absl::StatusOr<rebalance::ImbalanceEffect> effect = EffectOfStageAtMean(FourStages(), 2);
  ASSERT_TRUE(effect.ok()) << effect.status();
  EXPECT_EQ(effect->stage, 2);
  // Worked out by walking 1F1B's op order per stage (p-1-s warm-up forwards, one forward one
  // backward, then the cool-down backwards), each op starting when its stage is free and its
  // input has arrived (free links). As measured: 55000 ns; compute 8 x (3 x 3000 + 6000) =
  // 120000 of 4 x 55000 rank time.
  EXPECT_EQ(effect->iteration_ns, 55000);
  EXPECT_NEAR(effect->bubble_fraction, 1.0 - 120000.0 / 220000.0, 1e-9);
  // Stage 2 at the mean: F = (3 x 1000 + 2000) / 4 = 1250, B = 2500: 38250 ns; compute
  // 8 x (3 x 3000 + 3750) = 102000 of 4 x 38250.
  EXPECT_EQ(effect->iteration_at_mean_ns, 38250);
  EXPECT_NEAR(effect->bubble_fraction_at_mean, 1.0 - 102000.0 / 153000.0, 1e-9);
}

TEST(StageEffectTest, AStageOutsideTheModelIsRefused) {
  EXPECT_EQ(EffectOfStageAtMean(FourStages(), 4).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(EffectOfStageAtMean(FourStages(), -1).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace bubblescope::whatif
