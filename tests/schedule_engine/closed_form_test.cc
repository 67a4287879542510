// Textbook bubble fractions on ideal jobs (free links, no launch gap, no optimizer, no jitter,
// uniform stages): (p-1)/(m+p-1) for GPipe and 1F1B, (p-1)/(v*m+p-1) for interleaved 1F1B and
// looped GPipe (v chunks per rank) with m >= p. The comparisons are exact in integers:
// idle * (v*m+idle slots) == capacity * idle slots.
#include <algorithm>
#include <cstdint>
#include <tuple>

#include "gtest/gtest.h"
#include "schedule_engine/sim_test_util.h"
#include "synth/synthetic_job.h"

namespace bubblescope::sim {
namespace {

using testing::IdealConfig;

struct Costs {
  TimeNs forward;
  TimeNs backward;
};

constexpr Costs kCostPairs[] = {{100, 100}, {100, 300}, {500, 200}};

// `idle_slots` per rank, in units of one chunk's F+B: p-1 unless a test works out another.
void ExpectTextbookBubble(const Config& config, int64_t idle_slots) {
  const int64_t slots = int64_t{config.virtual_stages} * config.microbatches + idle_slots;
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const Truth& truth = simulation->truth;
  ASSERT_EQ(truth.iterations.size(), 1u);
  // Makespan: (v*m + p-1) slots of one chunk's F+B.
  const TimeNs chunk = config.costs[0].forward / config.virtual_stages +
                       config.costs[0].backward / config.virtual_stages;
  EXPECT_EQ(truth.iterations[0].window(), slots * chunk);
  EXPECT_EQ(truth.idle_ns * slots, truth.capacity_ns * idle_slots);
  const double bubble = static_cast<double>(idle_slots) / static_cast<double>(slots);
  EXPECT_NEAR(truth.bubble_fraction, bubble, 1e-12);
  EXPECT_NEAR(truth.theoretical_bubble_fraction, bubble, 1e-12);
  // Free links: a rank never waits inside its own busy period beyond the pipeline shape, and
  // every rank computes exactly v*m chunks of F and B.
  for (const RankIterationTruth& rank : truth.iterations[0].ranks) {
    EXPECT_EQ(rank.split.compute, config.microbatches * int64_t{config.virtual_stages} * chunk);
  }
}

class GpipeAnd1F1BTest
    : public ::testing::TestWithParam<std::tuple<Schedule, int32_t, int32_t, Costs>> {};

TEST_P(GpipeAnd1F1BTest, BubbleIsPMinusOneOverMPlusPMinusOne) {
  auto [schedule, p, m, costs] = GetParam();
  ExpectTextbookBubble(IdealConfig(schedule, p, m, costs.forward, costs.backward), p - 1);
}

INSTANTIATE_TEST_SUITE_P(Ideal, GpipeAnd1F1BTest,
                         ::testing::Combine(::testing::Values(Schedule::kGpipe, Schedule::k1F1B),
                                            ::testing::Values(2, 4, 8),
                                            ::testing::Values(1, 4, 8, 32),
                                            ::testing::ValuesIn(kCostPairs)));

class InterleavedTest
    : public ::testing::TestWithParam<std::tuple<int32_t, int32_t, int32_t, Costs>> {};

TEST_P(InterleavedTest, BubbleIsPMinusOneOverVMPlusPMinusOne) {
  auto [p, v, multiple, costs] = GetParam();
  // Costs scaled by v so every chunk costs a whole number of ns.
  ExpectTextbookBubble(IdealConfig(Schedule::kInterleaved1F1B, p, p * multiple, costs.forward * v,
                                   costs.backward * v, v),
                       p - 1);
}

INSTANTIATE_TEST_SUITE_P(Ideal, InterleavedTest,
                         ::testing::Combine(::testing::Values(2, 4, 8), ::testing::Values(2, 3),
                                            ::testing::Values(1, 2, 4),
                                            ::testing::ValuesIn(kCostPairs)));

class LoopedGpipeTest
    : public ::testing::TestWithParam<std::tuple<int32_t, int32_t, int32_t, Costs>> {};

// GPipe over v chunks per rank (torch's ScheduleLoopedBFS), by hand with f and b one chunk's F and
// B: microbatch 0 reaches the last stage's chunk 0 after p-1 forward slots; each chunk after the
// first starts there max(m, p) slots after the one before (stage 0 moves on when it has run its
// m forwards and microbatch 0 has come round the p ranks); the last chunk then runs m forwards.
// The backwards mirror it, so the makespan is (f+b)(p-1 + m + (v-1)·max(m, p)) and every rank
// computes v·m·(f+b): p-1 + (v-1)·max(0, p-m) idle slots, (p-1)/(v·m+p-1) when m >= p.
TEST_P(LoopedGpipeTest, BubbleCountsTheChunkRoundTrips) {
  auto [p, v, m, costs] = GetParam();
  const int64_t idle_slots = p - 1 + int64_t{v - 1} * std::max(0, p - m);
  ExpectTextbookBubble(
      IdealConfig(Schedule::kGpipe, p, m, costs.forward * v, costs.backward * v, v), idle_slots);
  EXPECT_NEAR(ClosedFormIdealBubble(Schedule::kGpipe, p, v, m),
              static_cast<double>(idle_slots) / static_cast<double>(v * m + idle_slots), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Ideal, LoopedGpipeTest,
                         ::testing::Combine(::testing::Values(2, 4, 8), ::testing::Values(2, 3),
                                            ::testing::Values(1, 2, 4, 8, 32),
                                            ::testing::ValuesIn(kCostPairs)));

TEST(ClosedFormTest, SingleStageHasNoBubble) {
  for (Schedule schedule :
       {Schedule::kGpipe, Schedule::k1F1B, Schedule::kZeroBubbleH1, Schedule::kForwardOnly}) {
    Config config = IdealConfig(schedule, 1, 3, 100, 200);
    config.costs[0].weight_grad = 50;
    absl::StatusOr<Simulation> simulation = Simulate(config);
    ASSERT_TRUE(simulation.ok()) << simulation.status();
    EXPECT_EQ(simulation->truth.idle_ns, 0) << ScheduleName(schedule);
    EXPECT_EQ(simulation->truth.theoretical_bubble_fraction, 0.0);
  }
}

TEST(ClosedFormTest, ZeroBubbleH1MakespanByHand) {
  // p=2, m=2, F=B=W=100 per stage, ideal links. Stage 0: F0 F1 B0 W0 B1 W1 (lag 0: each W right
  // after its B); stage 1: F0 B0 F1 B1 W0 W1 (lag 1: W0 after B1, W1 at the end).
  //   s0: F0 [0,100] F1 [100,200]
  //   s1: F0 [100,200] B0 [200,300] F1 [300,400] B1 [400,500] W0 [500,600] W1 [600,700]
  //   s0: B0 [300,400] W0 [400,500] B1 [500,600] W1 [600,700]
  // Window 700; compute 600 on each stage; idle 100 + 100: (p-1)/(3m+p-1) = 1/7 of 1400.
  Config config = IdealConfig(Schedule::kZeroBubbleH1, 2, 2, 100, 100);
  for (StageCost& cost : config.costs) cost.weight_grad = 100;
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const IterationTruth& iteration = simulation->truth.iterations[0];
  EXPECT_EQ(iteration.window(), 700);
  EXPECT_EQ(iteration.ranks[0].split.compute, 600);
  EXPECT_EQ(iteration.ranks[0].split.fill, 0);
  EXPECT_EQ(iteration.ranks[0].split.drain, 0);
  EXPECT_EQ(iteration.ranks[0].split.stall, 100);  // [200,300]
  EXPECT_EQ(iteration.ranks[1].split.fill, 100);
  EXPECT_EQ(iteration.ranks[1].split.drain, 0);
  EXPECT_EQ(iteration.ranks[1].split.stall, 0);
  EXPECT_EQ(simulation->truth.idle_ns, 200);
  EXPECT_EQ(simulation->truth.capacity_ns, 1400);
  // An ideal job: its own bubble is the schedule's ideal.
  EXPECT_DOUBLE_EQ(simulation->truth.theoretical_bubble_fraction, 1.0 / 7.0);
}

// The schedule's own bubble (ScheduleIdealBubble) ignores links, host delays and imbalance: the
// mean stage costs on free links. zb-h1 with mean F = B = W and m >= p: (p-1)/(3m+p-1); the
// other schedules: (p-1)/(v*m+p-1).
TEST(ClosedFormTest, ScheduleIdealBubbleIsTheScheduleOnMeanCostsAndFreeLinks) {
  for (const int32_t p : {2, 4, 8}) {
    for (const int32_t m : {8, 16}) {
      SCOPED_TRACE(::testing::Message() << "p=" << p << " m=" << m);
      Config config = IdealConfig(Schedule::kZeroBubbleH1, p, m, 1000, 1000);
      for (StageCost& cost : config.costs) cost.weight_grad = 1000;
      // Stage 0 slower and stage 1 faster by the same amount: the means stay 1000.
      config.costs[0] = StageCost{1300, 1300, 1300};
      config.costs[1] = StageCost{700, 700, 700};
      config.link = Link{1.0, 40'000};
      config.activation_bytes = 1 << 20;
      config.launch_gap_ns = 5'000;
      config.jitter = 0.1;
      EXPECT_DOUBLE_EQ(ScheduleIdealBubble(config),
                       static_cast<double>(p - 1) / static_cast<double>(3 * m + p - 1));
      config.schedule = Schedule::k1F1B;
      EXPECT_DOUBLE_EQ(ScheduleIdealBubble(config),
                       static_cast<double>(p - 1) / static_cast<double>(m + p - 1));
    }
  }
}

}  // namespace
}  // namespace bubblescope::sim
