// Every schedule completes for many job shapes with slow links, launch gaps and uneven stages,
// and the truth obeys its own identities. The expected compute comes from the config alone.
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "schedule_engine/sim_test_util.h"
#include "synth/synthetic_job.h"

namespace bubblescope::sim {
namespace {

using testing::IdealConfig;

// Compute time one iteration of `stage` must contain: every op's cost (per chunk: cost / v,
// summed over v chunks) plus the optimizer.
TimeNs ExpectedCompute(const Config& config, int32_t stage) {
  const StageCost& cost = config.costs[static_cast<size_t>(stage)];
  const int64_t v = config.virtual_stages;
  const int64_t ops = int64_t{config.microbatches} * v;
  TimeNs total = ops * (cost.forward / v);
  if (config.schedule != Schedule::kForwardOnly) {
    total += ops * (cost.backward / v) + config.optimizer_ns;
  }
  if (config.schedule == Schedule::kZeroBubbleH1) total += ops * cost.weight_grad;
  return total;
}

void CheckShape(Schedule schedule, int32_t p, int32_t m, int32_t v) {
  SCOPED_TRACE(absl::StrCat(std::string(ScheduleName(schedule)), " p=", p, " m=", m, " v=", v));
  Config config = IdealConfig(schedule, p, m, 0, 0, v);
  for (int32_t s = 0; s < p; ++s) {
    // Uneven stages, divisible by every v used here.
    config.costs[static_cast<size_t>(s)] = StageCost{600 + 60 * s, 1200 - 60 * s, 300 + 30 * s};
  }
  config.iterations = 2;
  config.launch_gap_ns = 25;
  config.optimizer_ns = 90;
  config.activation_bytes = 50'000;
  config.link = Link{100.0, 700};  // 700 + 4000 ns per message
  if (p > 1) config.link_overrides.push_back({p - 1, 0, Link{25.0, 3000}});
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const Truth& truth = simulation->truth;
  ASSERT_EQ(truth.iterations.size(), 2u);
  TimeNs idle = 0;
  for (const IterationTruth& iteration : truth.iterations) {
    ASSERT_EQ(iteration.ranks.size(), static_cast<size_t>(p));
    for (const RankIterationTruth& rank : iteration.ranks) {
      EXPECT_EQ(rank.split.compute, ExpectedCompute(config, rank.stage)) << "rank " << rank.rank;
      EXPECT_GE(rank.split.fill, 0);
      EXPECT_GE(rank.split.drain, 0);
      EXPECT_GE(rank.split.stall, 0);
      EXPECT_GE(rank.split.comm_wait, 0);
      EXPECT_GE(rank.split.empty, 0);  // comm-only time lies inside the stalls
      EXPECT_EQ(rank.split.idle, rank.split.fill + rank.split.stall + rank.split.drain);
      EXPECT_EQ(rank.split.idle + rank.split.compute, iteration.window());
      idle += rank.split.idle;
    }
  }
  EXPECT_EQ(idle, truth.idle_ns);
  EXPECT_GE(truth.bubble_fraction, 0.0);
  EXPECT_LT(truth.bubble_fraction, 1.0);
  EXPECT_EQ(truth.latency_max_ns,
            std::max(truth.iterations[0].window(), truth.iterations[1].window()));
}

TEST(ShapesTest, EveryScheduleCompletes) {
  for (int32_t p = 1; p <= 5; ++p) {
    for (int32_t m = 1; m <= 7; ++m) {
      for (Schedule schedule :
           {Schedule::kGpipe, Schedule::k1F1B, Schedule::kZeroBubbleH1, Schedule::kForwardOnly}) {
        CheckShape(schedule, p, m, 1);
      }
    }
  }
}

TEST(ShapesTest, InterleavedCompletes) {
  for (int32_t p = 1; p <= 4; ++p) {
    for (int32_t v = 1; v <= 3; ++v) {
      for (int32_t multiple = 1; multiple <= 3; ++multiple) {
        CheckShape(Schedule::kInterleaved1F1B, p, p * multiple, v);
      }
    }
  }
}

}  // namespace
}  // namespace bubblescope::sim
