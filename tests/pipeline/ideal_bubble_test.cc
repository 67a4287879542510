// The bubble each schedule leaves by itself: the closed form where it holds; for zero-bubble
// schedules ZB-H1 simulated on the mean stage times, else the closed form as an upper bound.
#include "pipeline/ideal_bubble.h"

#include <vector>

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

// Looped GPipe (torch's ScheduleLoopedBFS), worked out by hand (docs/bubble.md): with m >= p the
// textbook (p-1)/(v·m+p-1); with m < p stage 0 also waits p-m slots before each later chunk, so
// (p-1+(v-1)(p-m))/(v·m+p-1+(v-1)(p-m)): p=4, v=2, m=2 gives 5/9, p=4, v=3, m=1 gives 9/12.
TEST(IdealBubbleTest, LoopedGpipeByHand) {
  using F = schedule_inference::ScheduleFamily;
  EXPECT_DOUBLE_EQ(ClosedFormBubbleFraction(Shape(F::kGpipe, 4, 2, 8)), 3.0 / 19.0);
  EXPECT_DOUBLE_EQ(ClosedFormBubbleFraction(Shape(F::kGpipe, 4, 2, 4)), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(ClosedFormBubbleFraction(Shape(F::kGpipe, 4, 2, 2)), 5.0 / 9.0);
  EXPECT_DOUBLE_EQ(ClosedFormBubbleFraction(Shape(F::kGpipe, 4, 3, 1)), 9.0 / 12.0);
  EXPECT_DOUBLE_EQ(ClosedFormBubbleFraction(Shape(F::kGpipe, 2, 3, 1)), 3.0 / 6.0);
  // One chunk: the textbook form whatever m.
  EXPECT_DOUBLE_EQ(ClosedFormBubbleFraction(Shape(F::kGpipe, 4, 1, 2)), 3.0 / 5.0);

  // With per-stage times the schedule's own run gives each stage's stall: on equal stages at
  // m >= p stage s waits (p-1-s) slots between its last forward and its first backward (the
  // first backward comes back from the last stage), and the rest of its idle time is fill and
  // drain. p=2, v=2, m=4, F=100, B=200 per chunk: stage 0 stalls one slot, stage 1 none.
  schedule_inference::Result shape = Shape(F::kGpipe, 2, 2, 4);
  for (int32_t s = 0; s < 2; ++s) {
    schedule_inference::StageFigures stage;
    stage.stage = s;
    stage.forward.mean_ns = 100.0;
    stage.backward.mean_ns = 200.0;
    shape.stages.push_back(stage);
  }
  const IdealBubble ideal = IdealBubbleOf(shape);
  EXPECT_EQ(ideal.source, IdealSource::kClosedForm);
  EXPECT_DOUBLE_EQ(ideal.fraction, 1.0 / 9.0);
  // Makespan (p-1 + v·m) slots of 300 ns, and 2·v·m ops per stage.
  EXPECT_EQ(ideal.schedule_ns, 9 * 300);
  EXPECT_EQ(ideal.schedule.size(), 2u * 2 * 2 * 4);
  EXPECT_EQ(ideal.stage_stall_ns, (std::vector<TimeNs>{300, 0}));
}

// Zero-bubble schedules place weight-gradient work in the bubble. With one chunk per rank and
// reliable per-stage times the schedule is simulated as ZB-H1 on the mean times: equal F, B and
// W give (p-1)/(3m+p-1) (p=4, m=8: 3/27), whatever the stages' spread around the mean.
TEST(IdealBubbleTest, ZeroBubbleWithOneChunkIsSimulatedOnTheMeanTimes) {
  schedule_inference::Result shape =
      Shape(schedule_inference::ScheduleFamily::kZeroBubble, 4, 1, 8);
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
