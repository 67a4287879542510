// Memory peaks worked out from the programs: a stage's stash peaks at the number of forwards it
// runs before releasing the first one.
#include "schedule_engine/memory.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "schedule_engine/sim_test_util.h"
#include "synth/synthetic_job.h"

namespace bubblescope::sim {
namespace {

using testing::IdealConfig;

constexpr int64_t kMiB = int64_t{1} << 20;

absl::StatusOr<Simulation> RunWithMemory(Config config, int64_t weights, int64_t stash) {
  config.weights_bytes.assign(static_cast<size_t>(config.stages), weights);
  config.activation_stash_bytes = stash;
  return Simulate(config);
}

TEST(MemoryTest, OneForwardOneBackwardStashesPMinusSMicrobatches) {
  // p=4, m=8: stage s runs min(m, p-1-s) warm-up forwards plus one before its first B.
  absl::StatusOr<Simulation> simulation =
      RunWithMemory(IdealConfig(Schedule::k1F1B, 4, 8, 100, 200), 3 * kMiB, kMiB);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const int64_t expected_allocated[] = {7 * kMiB, 6 * kMiB, 5 * kMiB, 4 * kMiB};
  const int64_t expected_reserved[] = {8 * kMiB, 6 * kMiB, 6 * kMiB, 4 * kMiB};  // 2 MiB steps
  for (int32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(simulation->truth.memory[static_cast<size_t>(r)].peak_allocated_bytes,
              expected_allocated[r])
        << "rank " << r;
    EXPECT_EQ(simulation->truth.memory[static_cast<size_t>(r)].peak_reserved_bytes,
              expected_reserved[r])
        << "rank " << r;
    const std::vector<MemorySample>& samples =
        simulation->trace.ranks[static_cast<size_t>(r)].memory;
    ASSERT_EQ(samples.size(), 17u);  // the initial sample + one per stash and per release
    EXPECT_EQ(samples.front().allocated_bytes, 3 * kMiB);
    EXPECT_EQ(samples.back().allocated_bytes, 3 * kMiB);             // everything released
    EXPECT_EQ(samples.back().reserved_bytes, expected_reserved[r]);  // reserved never shrinks
    EXPECT_EQ(samples.front().device, 0);
  }
}

TEST(MemoryTest, OneForwardOneBackwardWithFewMicrobatches) {
  // m=2 < p-s for the first stages: the stash is capped by m.
  absl::StatusOr<Simulation> simulation =
      RunWithMemory(IdealConfig(Schedule::k1F1B, 4, 2, 100, 200), 0, kMiB);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const int64_t expected[] = {2 * kMiB, 2 * kMiB, 2 * kMiB, kMiB};
  for (int32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(simulation->truth.memory[static_cast<size_t>(r)].peak_allocated_bytes, expected[r]);
  }
}

TEST(MemoryTest, GpipeStashesEveryMicrobatch) {
  absl::StatusOr<Simulation> simulation =
      RunWithMemory(IdealConfig(Schedule::kGpipe, 3, 5, 100, 200), kMiB, 3 * kMiB);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  for (const RankMemoryTruth& memory : simulation->truth.memory) {
    EXPECT_EQ(memory.peak_allocated_bytes, 16 * kMiB);  // 1 + 5 * 3
    EXPECT_EQ(memory.peak_reserved_bytes, 16 * kMiB);
  }
}

TEST(MemoryTest, ZeroBubbleReleasesAtWeightGrad) {
  // p=3, m=4 programs (program_test): stage 0 F0 F1 F2 B0 W0 F3 ... holds 3 before W0 and 3
  // again after F3; stage 1 F0 F1 B0 F2 B1 W0 F3 ... holds 3; stage 2 F0 B0 F1 B1 F2 B2 W0 F3
  // ... holds 3 (its W's come s = 2 backwards late). 1F1B would hold 3, 2, 1: ZB-H1 keeps the
  // first stage's peak and raises the others' to it.
  Config config = IdealConfig(Schedule::kZeroBubbleH1, 3, 4, 100, 100);
  for (StageCost& cost : config.costs) cost.weight_grad = 100;
  absl::StatusOr<Simulation> simulation = RunWithMemory(config, 0, kMiB);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  EXPECT_EQ(simulation->truth.memory[0].peak_allocated_bytes, 3 * kMiB);
  EXPECT_EQ(simulation->truth.memory[1].peak_allocated_bytes, 3 * kMiB);
  EXPECT_EQ(simulation->truth.memory[2].peak_allocated_bytes, 3 * kMiB);
}

TEST(MemoryTest, InterleavedStashesWarmupPlusOneChunks) {
  // p=2, v=2, m=4: warm-up 4 and 2 chunk forwards, then one more before the first B.
  absl::StatusOr<Simulation> simulation =
      RunWithMemory(IdealConfig(Schedule::kInterleaved1F1B, 2, 4, 200, 400, 2), 0, kMiB);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  EXPECT_EQ(simulation->truth.memory[0].peak_allocated_bytes, 5 * kMiB);
  EXPECT_EQ(simulation->truth.memory[1].peak_allocated_bytes, 3 * kMiB);
}

TEST(MemoryTest, ForwardOnlyHoldsOneActivation) {
  absl::StatusOr<Simulation> simulation =
      RunWithMemory(IdealConfig(Schedule::kForwardOnly, 2, 6, 100, 100), 4 * kMiB, kMiB);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  for (const RankMemoryTruth& memory : simulation->truth.memory) {
    EXPECT_EQ(memory.peak_allocated_bytes, 5 * kMiB);
  }
}

TEST(MemoryTest, ReleaseBeforeStashAtTheSameInstant) {
  // Stage 1 of a 2-stage 1F1B job with free links runs B0 then F1 back to back: B0's release
  // and F1's stash share a timestamp, and the release must come first.
  absl::StatusOr<Simulation> simulation =
      RunWithMemory(IdealConfig(Schedule::k1F1B, 2, 3, 100, 100), 0, kMiB);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const std::vector<MemorySample>& samples = simulation->trace.ranks[1].memory;
  for (size_t i = 1; i < samples.size(); ++i) {
    EXPECT_LE(samples[i - 1].time, samples[i].time);
    EXPECT_LE(samples[i].allocated_bytes, kMiB) << "sample " << i;
  }
}

}  // namespace
}  // namespace bubblescope::sim
