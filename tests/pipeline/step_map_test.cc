// StepMap and the reference iteration, on hand-made step lists.
#include "pipeline/step_map.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "gtest/gtest.h"

namespace bubblescope::pipeline {
namespace {

using iterations::StepStart;

constexpr TimeNs kOpen = std::numeric_limits<TimeNs>::min();

TEST(StepMapTest, WithoutStepsEveryMomentIsStepZero) {
  const StepMap map;
  EXPECT_EQ(map.At(kOpen), 0);
  EXPECT_EQ(map.At(0), 0);
  EXPECT_EQ(map.At(std::numeric_limits<TimeNs>::max()), 0);
  EXPECT_EQ(StepMap::FromIterations({}, 7).At(123), 0);
}

TEST(StepMapTest, ProfilerStepsCountByPositionFromTheFirst) {
  Rank rank;
  rank.steps = {ProfilerStep{12, 100, 190}, ProfilerStep{13, 200, 290}, ProfilerStep{14, 300, 390}};
  const StepMap map = StepMap::FromProfilerSteps(rank);
  EXPECT_EQ(map.At(50), 0);   // before the first step: still step 0
  EXPECT_EQ(map.At(100), 0);
  EXPECT_EQ(map.At(195), 0);  // the gap after a step stays with it
  EXPECT_EQ(map.At(200), 1);
  EXPECT_EQ(map.At(299), 1);
  EXPECT_EQ(map.At(1000), 2);
}

TEST(StepMapTest, IterationsCountFromTheReferenceAndSkipPartialPeriods) {
  // A repeating schedule: a partial warm-up from the beginning, periods 0..2, a partial tail.
  const std::vector<StepStart> steps = {{-1, kOpen, true}, {0, 1000, false}, {1, 2000, false},
                                        {2, 3000, false}, {3, 4000, true}};
  const StepMap map = StepMap::FromIterations(steps, 1);
  EXPECT_EQ(map.At(500), std::nullopt);  // warm-up
  EXPECT_EQ(map.At(1000), -1);
  EXPECT_EQ(map.At(2500), 0);            // iteration 1 is the reference
  EXPECT_EQ(map.At(3999), 1);
  EXPECT_EQ(map.At(4000), std::nullopt);  // tail
}

TEST(StepMapTest, MomentsBeforeTheFirstStepBelongToNone) {
  const std::vector<StepStart> steps = {{5, 1000, false}, {6, 2000, false}};
  const StepMap map = StepMap::FromIterations(steps, 5);
  EXPECT_EQ(map.At(999), std::nullopt);
  EXPECT_EQ(map.At(1000), 0);
  EXPECT_EQ(map.At(2000), 1);
}

TEST(StepMapTest, DistantStepNumbersStayInRange) {
  const std::vector<StepStart> steps = {{std::numeric_limits<int64_t>::min(), 0, false},
                                        {std::numeric_limits<int64_t>::max(), 10, false}};
  const StepMap map = StepMap::FromIterations(steps, 0);
  EXPECT_EQ(map.At(5), std::numeric_limits<int32_t>::min() + 1);
  EXPECT_EQ(map.At(10), std::numeric_limits<int32_t>::max());
  // The subtraction itself would overflow int64.
  const StepMap far = StepMap::FromIterations(steps, 1000);
  EXPECT_EQ(far.At(5), std::numeric_limits<int32_t>::min() + 1);
  const StepMap far_below = StepMap::FromIterations(steps, -1000);
  EXPECT_EQ(far_below.At(10), std::numeric_limits<int32_t>::max());
}

// Two ranks; iteration `number` with `present` / `partial` per rank.
iterations::Iteration MakeIteration(int64_t number, std::vector<bool> present,
                                    std::vector<bool> partial = {false, false}) {
  iterations::Iteration iteration;
  iteration.number = number;
  iteration.ranks.resize(present.size());
  for (size_t r = 0; r < present.size(); ++r) {
    iteration.ranks[r].present = present[r];
    iteration.ranks[r].partial = partial[r];
  }
  return iteration;
}

TEST(ReferenceIterationTest, FirstCompleteOnThePipelinesRanks) {
  iterations::Result assignment;
  assignment.iterations = {MakeIteration(2, {true, false}),
                           MakeIteration(3, {true, true}, {true, false}),
                           MakeIteration(4, {true, true}), MakeIteration(5, {true, true})};
  EXPECT_EQ(ReferenceIteration(assignment, {0, 1}), 4);
  // Rank 0 alone has every iteration, whole from 2 on.
  EXPECT_EQ(ReferenceIteration(assignment, {0}), 2);
}

TEST(ReferenceIterationTest, FallsBackToPresentThenToTheFirst) {
  iterations::Result assignment;
  assignment.iterations = {MakeIteration(0, {true, false}),
                           MakeIteration(1, {true, true}, {true, true})};
  EXPECT_EQ(ReferenceIteration(assignment, {0, 1}), 1);  // on both ranks, though partial
  assignment.iterations = {MakeIteration(0, {true, false}), MakeIteration(1, {false, true})};
  EXPECT_EQ(ReferenceIteration(assignment, {0, 1}), 0);
  assignment.iterations.clear();
  EXPECT_EQ(ReferenceIteration(assignment, {0, 1}), -1);
}

}  // namespace
}  // namespace bubblescope::pipeline
