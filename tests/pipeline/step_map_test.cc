// StepMap and each rank's reference step, on hand-made step lists.
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
  EXPECT_EQ(StepMap::FromSteps({}, 7).At(123), 0);
}

TEST(StepMapTest, IterationsCountFromTheReferenceAndSkipPartialPeriods) {
  // A repeating schedule: a partial warm-up from the beginning, periods 0..2, a partial tail.
  const std::vector<StepStart> steps = {
      {-1, kOpen, true}, {0, 1000, false}, {1, 2000, false}, {2, 3000, false}, {3, 4000, true}};
  const StepMap map = StepMap::FromSteps(steps, 1);
  EXPECT_EQ(map.At(500), std::nullopt);  // warm-up
  EXPECT_EQ(map.At(1000), -1);
  EXPECT_EQ(map.At(2500), 0);  // iteration 1 is the reference
  EXPECT_EQ(map.At(3999), 1);
  EXPECT_EQ(map.At(4000), std::nullopt);  // tail
}

TEST(StepMapTest, MomentsBeforeTheFirstStepBelongToNone) {
  const std::vector<StepStart> steps = {{5, 1000, false}, {6, 2000, false}};
  const StepMap map = StepMap::FromSteps(steps, 5);
  EXPECT_EQ(map.At(999), std::nullopt);
  EXPECT_EQ(map.At(1000), 0);
  EXPECT_EQ(map.At(2000), 1);
}

TEST(StepMapTest, DistantStepNumbersStayInRange) {
  const std::vector<StepStart> steps = {{std::numeric_limits<int64_t>::min(), 0, false},
                                        {std::numeric_limits<int64_t>::max(), 10, false}};
  const StepMap map = StepMap::FromSteps(steps, 0);
  EXPECT_EQ(map.At(5), std::numeric_limits<int32_t>::min() + 1);
  EXPECT_EQ(map.At(10), std::numeric_limits<int32_t>::max());
  // The subtraction itself would overflow int64.
  const StepMap far = StepMap::FromSteps(steps, 1000);
  EXPECT_EQ(far.At(5), std::numeric_limits<int32_t>::min() + 1);
  const StepMap far_below = StepMap::FromSteps(steps, -1000);
  EXPECT_EQ(far_below.At(10), std::numeric_limits<int32_t>::max());
}

// A step list starting at 100 * number, one per number.
std::vector<StepStart> ProfilerSteps(std::vector<int64_t> numbers) {
  std::vector<StepStart> steps;
  for (int64_t number : numbers) steps.push_back({number, 100 * number, false});
  return steps;
}

Trace TwoRanks() {
  Trace trace;
  trace.ranks.resize(2);
  trace.ranks[0].rank = 0;
  trace.ranks[1].rank = 1;
  return trace;
}

TEST(ReferenceStepsTest, FirstStepWholeOnEveryPipelineRank) {
  Trace trace = TwoRanks();
  trace.ranks[1].stats.Bump(ImportCounter::kTruncated, 10);  // its last step, 5, is cut
  iterations::Steps steps;
  steps.source = iterations::StepSource::kProfilerSteps;
  steps.ranks = {ProfilerSteps({2, 3, 4, 5}), ProfilerSteps({3, 4, 5})};
  std::vector<StepMap> maps = ReferenceSteps(trace, steps, {0, 1});
  ASSERT_EQ(maps.size(), 2u);
  EXPECT_EQ(maps[0].At(300), 0);  // step 3, whole on both ranks, is the reference
  EXPECT_EQ(maps[0].At(200), -1);
  EXPECT_EQ(maps[1].At(350), 0);
  EXPECT_EQ(maps[1].At(500), 2);
  // Rank 0 alone has every step whole from 2 on; rank 1, outside, counts from its own first.
  maps = ReferenceSteps(trace, steps, {0});
  EXPECT_EQ(maps[0].At(200), 0);
  EXPECT_EQ(maps[1].At(300), 0);
}

TEST(ReferenceStepsTest, FallsBackToPresentThenToTheFirst) {
  Trace trace = TwoRanks();
  trace.ranks[1].stats.Bump(ImportCounter::kTruncated, 10);
  iterations::Steps steps;
  steps.source = iterations::StepSource::kProfilerSteps;
  // Step 1 is on both ranks but cut on rank 1, step 0 on rank 0 only: 1, present on both.
  steps.ranks = {ProfilerSteps({0, 1}), ProfilerSteps({1})};
  EXPECT_EQ(ReferenceSteps(trace, steps, {0, 1})[0].At(100), 0);
  // No step on both ranks: the first found.
  steps.ranks = {ProfilerSteps({0}), ProfilerSteps({1})};
  EXPECT_EQ(ReferenceSteps(trace, steps, {0, 1})[0].At(0), 0);
  EXPECT_EQ(ReferenceSteps(trace, steps, {0, 1})[1].At(100), 1);
}

TEST(ReferenceStepsTest, ARepeatingScheduleStartsEachRankAtItsFirstWholePeriod) {
  Trace trace = TwoRanks();
  iterations::Steps steps;
  steps.source = iterations::StepSource::kRepeatingSchedule;
  steps.ranks = {{{-1, kOpen, true}, {0, 1000, false}, {1, 2000, false}},
                 {{0, 1500, false}, {1, 2500, false}, {2, 3500, true}}};
  const std::vector<StepMap> maps = ReferenceSteps(trace, steps, {0, 1});
  EXPECT_EQ(maps[0].At(500), std::nullopt);
  EXPECT_EQ(maps[0].At(1000), 0);
  EXPECT_EQ(maps[1].At(1500), 0);
  EXPECT_EQ(maps[1].At(2600), 1);
  EXPECT_EQ(maps[1].At(3600), std::nullopt);
}

}  // namespace
}  // namespace bubblescope::pipeline
