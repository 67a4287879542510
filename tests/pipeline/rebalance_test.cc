// Rebalance suggestions on hand-made pipeline shapes whose best move and predicted times are
// worked out by hand. GPipe on free links is two flow lines of m identical jobs: all forwards
// take sum(F_i) + (m - 1) * max(F_i), then all backwards sum(B_i) + (m - 1) * max(B_i).
#include "pipeline/rebalance.h"

#include <vector>

#include "gtest/gtest.h"

namespace bubblescope::rebalance {
namespace {

schedule_inference::OpStats Mean(double ns) {
  return {.count = 8, .mean_ns = ns, .p90_ns = static_cast<TimeNs>(ns)};
}

// p = 4, m = 8; every stage F = 1000, B = 2000 except `heavy` (F = 2000, B = 4000).
schedule_inference::Result Shape(int32_t heavy, schedule_inference::ScheduleFamily family =
                                                    schedule_inference::ScheduleFamily::kGpipe) {
  schedule_inference::Result shape;
  shape.p = 4;
  shape.v = 1;
  shape.m = 8;
  shape.family = family;
  for (int32_t s = 0; s < 4; ++s) {
    schedule_inference::StageFigures stage;
    stage.stage = s;
    stage.rank = 10 + s;
    const double scale = s == heavy ? 2.0 : 1.0;
    stage.forward = Mean(1000 * scale);
    stage.backward = Mean(2000 * scale);
    stage.mean_total_ns = 3000 * scale;
    shape.stages.push_back(stage);
  }
  return shape;
}

TEST(RebalanceTest, MovesLayersOffTheHeavyStageUntilItMatchesItsNeighbour) {
  absl::StatusOr<Result> result = Analyze(Shape(2), {.layers_per_stage = {8, 8, 8, 8}});
  ASSERT_TRUE(result.ok()) << result.status();
  // Now: forwards 5000 + 7 * 2000, backwards 10000 + 7 * 4000: 57000 ns; compute 8 * 15000 of
  // 4 * 57000.
  EXPECT_EQ(result->before.iteration_ns, 57000);
  EXPECT_NEAR(result->before.bubble_fraction, 1.0 - 120000.0 / 228000.0, 1e-9);
  // Layers cost 250 F + 500 B each on stage 2 and 125 F + 250 B elsewhere, and keep their cost
  // when moved, so the sums stay. To a neighbour, k layers give max F = max(2000 - 250k,
  // 1000 + 250k) >= 1500. Towards stage 0, stage 2 hands k layers to stage 1, which hands k of
  // its own to stage 0: F = (1000 + 125k, 1000 + 125k, 2000 - 250k, 1000), least max at k = 3:
  // (1375, 1375, 1250, 1000); B is twice that. 5000 + 7 * 1375 + 10000 + 7 * 2750 = 43875.
  ASSERT_TRUE(result->suggested);
  EXPECT_EQ(result->from_stage, 2);
  EXPECT_EQ(result->from_rank, 12);
  EXPECT_EQ(result->to_stage, 0);
  EXPECT_EQ(result->to_rank, 10);
  EXPECT_EQ(result->layers, 3);
  EXPECT_EQ(result->after.iteration_ns, 43875);
  EXPECT_NEAR(result->after.bubble_fraction, 1.0 - 120000.0 / (4 * 43875.0), 1e-9);
  EXPECT_EQ(result->layers_after, (std::vector<int32_t>{11, 8, 5, 8}));
  // Every stage can give 1..7 layers to each of 3 others.
  EXPECT_EQ(result->moves_simulated, 4 * 3 * 7);
}

TEST(RebalanceTest, OneFOneBIsSimulatedAsOneFOneB) {
  // Stage 2 (F 2000, B 4000) does F0 at [2000, 4000) and F1 at [4000, 6000); B0 needs stage 3's
  // B0: F0 there [4000, 5000), B0 [5000, 7000); so stage 2 waits 1000, then runs its remaining
  // 8 * 6000 - 4000 = 44000 without a gap (every later input is ready in time) to 51000; stages 1
  // and 0 then run the last B: 51000 + 2000 + 2000 = 55000.
  absl::StatusOr<Result> result = Analyze(Shape(2, schedule_inference::ScheduleFamily::k1F1B),
                                          {.layers_per_stage = {8, 8, 8, 8}});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->before.iteration_ns, 55000);
  ASSERT_TRUE(result->suggested);
  EXPECT_EQ(result->from_stage, 2);
  EXPECT_LT(result->after.iteration_ns, 55000);
}

TEST(RebalanceTest, ABalancedPipelineGetsNoSuggestion) {
  absl::StatusOr<Result> result = Analyze(Shape(-1), {.layers_per_stage = {4, 4, 4, 4}});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->before.iteration_ns, 4000 + 7 * 1000 + 8000 + 7 * 2000);
  EXPECT_FALSE(result->suggested);
  EXPECT_EQ(result->from_stage, -1);
  EXPECT_TRUE(result->layers_after.empty());
}

TEST(RebalanceTest, LayersPassThroughTheStagesInBetween) {
  // Stage 1 has one layer, so at most one layer can pass through it: moves across it stop at
  // k = 1. From 0: 7 to stage 1, 1 to 2, 1 to 3; stage 1 has no layer to spare; from 2: 7 to 1,
  // 7 to 3, 1 to 0; from 3: 7 to 2, 7 to 1, 1 to 0.
  absl::StatusOr<Result> result = Analyze(Shape(2), {.layers_per_stage = {8, 1, 8, 8}});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->moves_simulated, 9 + 0 + 15 + 15);
}

// Millions of layers per stage (the annotations allow a million, the flag two billion): the
// search stays bounded. As in the first test, moving k = x·L layers from stage 2 towards stage 0
// gives F = (1000 + 1000x, 1000 + 1000x, 2000 - 2000x, 1000), least max at x = 1/3: 1333.3 ns,
// rounded to 1333 (B twice that, 2667): 3 * 1333 + 1000 + 7 * 1333 + 3 * 2667 + 2000 + 7 * 2667
// = 43000 ns. Each stage time is rounded to a whole nanosecond, so k just around L / 3 can come
// out a few nanoseconds either side of that.
TEST(RebalanceTest, HugeLayerCountsAreSearchedInBoundedTime) {
  absl::StatusOr<Result> result =
      Analyze(Shape(2), {.layers_per_stage = {3'000'000, 3'000'000, 3'000'000, 3'000'000}});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->suggested);
  EXPECT_EQ(result->from_stage, 2);
  EXPECT_EQ(result->to_stage, 0);
  EXPECT_NEAR(static_cast<double>(result->after.iteration_ns), 43000.0, 4.0);
  EXPECT_NEAR(result->layers, 1'000'000, 1000);
  // 12 pairs, each a ternary search (2 moves per third cut off 3,000,000) and 64 tried one by
  // one: far below the 36 million moves of trying every k.
  EXPECT_LE(result->moves_simulated, 12 * (2 * 40 + 64));
  // Two billion layers on one stage: done as quickly, and the true bottleneck (stage 2, one
  // layer) has nothing to give.
  absl::StatusOr<Result> lopsided =
      Analyze(Shape(2), {.layers_per_stage = {2'000'000'000, 1, 1, 1}});
  ASSERT_TRUE(lopsided.ok()) << lopsided.status();
  EXPECT_FALSE(lopsided->suggested);
  EXPECT_LE(lopsided->moves_simulated, 12 * (2 * 60 + 64));
}

TEST(RebalanceTest, AGainBelowTheThresholdIsNotSuggested) {
  // The best gain is (57000 - 43875) / 57000 = 23.0%, so a 25% threshold refuses it.
  absl::StatusOr<Result> result =
      Analyze(Shape(2), {.layers_per_stage = {8, 8, 8, 8}, .min_gain = 0.25});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->suggested);
}

TEST(RebalanceTest, BadLayerCountsAndUnknownTimesAreErrors) {
  EXPECT_EQ(Analyze(Shape(2), {.layers_per_stage = {8, 8, 8}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Analyze(Shape(2), {.layers_per_stage = {8, 0, 8, 8}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  schedule_inference::Result no_times = Shape(2);
  no_times.stages.clear();
  EXPECT_EQ(Analyze(no_times, {.layers_per_stage = {8, 8, 8, 8}}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace bubblescope::rebalance
