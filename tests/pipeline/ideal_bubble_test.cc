// The bubble each schedule leaves by itself: the closed form where it holds, an upper bound
// for zero-bubble schedules.
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

// Zero-bubble schedules place weight-gradient work in the bubble; how much depends on the
// placement, which is not modelled: the closed form stands, as an upper bound, for every v.
TEST(IdealBubbleTest, ZeroBubbleGetsTheClosedFormAsAnUpperBound) {
  for (int32_t v : {1, 2}) {
    const IdealBubble ideal =
        IdealBubbleOf(Shape(schedule_inference::ScheduleFamily::kZeroBubble, 2, v, 4));
    EXPECT_EQ(ideal.source, IdealSource::kUpperBound);
    EXPECT_DOUBLE_EQ(ideal.fraction, 1.0 / (4.0 * v + 1.0));
  }
}

}  // namespace
}  // namespace bubblescope::pipeline
