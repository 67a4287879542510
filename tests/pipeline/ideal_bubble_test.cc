// The bubble each schedule leaves by itself: the closed form where it holds; for zero-bubble
// schedules ZB-H1 simulated on the mean stage times, else the closed form as an upper bound.
#include "pipeline/ideal_bubble.h"

#include "gtest/gtest.h"
#include "pipeline/schedule_inference.h"

namespace bubblescope::pipeline {
namespace {

schedule_inference::Result Shape(schedule_inference::ScheduleFamily family, int32_t p, int32_t v,
                                 int32_t m) {
  schedule_inference::Result shape;
  shape.family = family;
  shape.p = p;
  shape.v = v;
  shape.m = m;
  return shape;
}

TEST(IdealBubbleTest, ClosedForm) {
  EXPECT_DOUBLE_EQ(ClosedFormBubbleFraction(4, 1, 8), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(ClosedFormBubbleFraction(4, 2, 8), 3.0 / 19.0);
  EXPECT_DOUBLE_EQ(ClosedFormBubbleFraction(1, 1, 8), 0.0);
  EXPECT_DOUBLE_EQ(ClosedFormBubbleFraction(4, 1, 0), 0.0);
  using F = schedule_inference::ScheduleFamily;
  for (F family : {F::kGpipe, F::k1F1B, F::kInterleaved, F::kForwardOnly}) {
    const IdealBubble ideal = IdealBubbleOf(Shape(family, 4, family == F::kInterleaved ? 2 : 1, 8));
    EXPECT_EQ(ideal.source, IdealSource::kClosedForm);
    EXPECT_DOUBLE_EQ(ideal.fraction, family == F::kInterleaved ? 3.0 / 19.0 : 3.0 / 11.0);
  }
}

// Zero-bubble schedules place weight-gradient work in the bubble. With one chunk per rank and
// reliable per-stage times the schedule is simulated as ZB-H1 on the mean times: equal F, B and
// W give (p-1)/(3m+p-1) (p=4, m=8: 3/27), whatever the stages' spread around the mean.
TEST(IdealBubbleTest, ZeroBubbleWithOneChunkIsSimulatedOnTheMeanTimes) {
  schedule_inference::Result shape = Shape(schedule_inference::ScheduleFamily::kZeroBubble, 4, 1, 8);
  for (int32_t s = 0; s < 4; ++s) {
    schedule_inference::StageFigures stage;
    stage.stage = s;
    const double spread = s == 0 ? 300.0 : s == 1 ? -300.0 : 0.0;
    stage.forward.mean_ns = 1000.0 + spread;
    stage.backward.mean_ns = 1000.0 + spread;
    stage.weight_grad.mean_ns = 1000.0 + spread;
    shape.stages.push_back(stage);
  }
  IdealBubble ideal = IdealBubbleOf(shape);
  EXPECT_EQ(ideal.source, IdealSource::kSimulated);
  EXPECT_DOUBLE_EQ(ideal.fraction, 3.0 / 27.0);

  // Op counts that do not fit make the times unreliable: the closed form, as an upper bound.
  shape.stage_counts_fit = false;
  ideal = IdealBubbleOf(shape);
  EXPECT_EQ(ideal.source, IdealSource::kUpperBound);
  EXPECT_DOUBLE_EQ(ideal.fraction, 3.0 / 11.0);
}

// Without per-stage times, or with several chunks per rank (zero-bubble placements the
// simulator does not model), the closed form stands, as an upper bound.
TEST(IdealBubbleTest, ZeroBubbleOtherwiseGetsTheClosedFormAsAnUpperBound) {
  for (int32_t v : {1, 2}) {
    const IdealBubble ideal =
        IdealBubbleOf(Shape(schedule_inference::ScheduleFamily::kZeroBubble, 2, v, 4));
    EXPECT_EQ(ideal.source, IdealSource::kUpperBound);
    EXPECT_DOUBLE_EQ(ideal.fraction, 1.0 / (4.0 * v + 1.0));
  }
}

}  // namespace
}  // namespace bubblescope::pipeline
