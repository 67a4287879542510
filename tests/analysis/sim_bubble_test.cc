// The bubble analysis of simulated traces against the simulator's own Truth, which the simulator
// computes from its engine records without any analyzer code (schedule_engine/truth.h). Every
// figure is expected to match exactly: the simulated clocks are shared, so nothing needs aligning.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/bubble.h"
#include "gtest/gtest.h"
#include "schedule_engine/sim_test_util.h"
#include "support/job_helpers.h"
#include "synth/synthetic_job.h"

namespace bubblescope::bubble {
namespace {

using sim::Schedule;

// A job with every source of irregularity the simulator has: uneven stages, jitter, launch gaps,
// an optimizer step, a slow default link and a slower one between stages 0 and 1, memory, and a
// stage order that is not the rank order.
sim::Config RealisticConfig(Schedule schedule, int32_t p, int32_t m, int32_t v = 0) {
  sim::Config config;
  config.schedule = schedule;
  config.stages = p;
  config.microbatches = m;
  config.virtual_stages = v > 0 ? v : schedule == Schedule::kInterleaved1F1B ? 2 : 1;
  config.iterations = 3;
  for (int32_t s = 0; s < p; ++s) {
    config.costs.push_back(
        sim::StageCost{.forward = 1000 + 100 * s, .backward = 2000 + 50 * s, .weight_grad = 700});
  }
  config.kernels_per_op = 3;
  config.activation_bytes = 1 << 16;
  config.link = sim::Link{.gbps = 400.0, .latency_ns = 300};
  int32_t first = p - 1;  // stages run on ranks p-1, 0, 1, ..., p-2
  for (int32_t s = 0; s < p; ++s) config.stage_to_rank.push_back(s == 0 ? first : s - 1);
  config.link_overrides.push_back(
      sim::LinkOverride{.src_rank = config.stage_to_rank[0],
                        .dst_rank = config.stage_to_rank[p > 1 ? 1 : 0],
                        .link = sim::Link{.gbps = 25.0, .latency_ns = 2000}});
  // m = 8 jobs launch slower than their kernels run, so the device starves (empty stall).
  config.launch_gap_ns = m == 8 ? 700 : 40;
  config.optimizer_ns = schedule == Schedule::kForwardOnly ? 0 : 1500;
  config.jitter = 0.2;
  config.seed = static_cast<uint64_t>(p * 100 + m);
  config.weights_bytes.assign(static_cast<size_t>(p), int64_t{3} << 20);
  config.activation_stash_bytes = int64_t{1} << 20;
  return config;
}

// Free links, no launch gap, no optimizer, no jitter, one iteration, uniform stages.
sim::Config IdealConfig(Schedule schedule, int32_t p, int32_t m, int32_t v) {
  sim::Config config;
  config.schedule = schedule;
  config.stages = p;
  config.microbatches = m;
  config.virtual_stages = v;
  config.iterations = 1;
  config.costs.assign(static_cast<size_t>(p),
                      sim::StageCost{.forward = 600 * v, .backward = 1200 * v, .weight_grad = 0});
  config.activation_bytes = 4096;
  config.link = sim::Link{.gbps = std::numeric_limits<double>::infinity(), .latency_ns = 0};
  return config;
}

// The figures summed over every rank and iteration of a job, to show what the grid exercises.
struct StallParts {
  TimeNs comm_wait = 0;
  TimeNs empty = 0;
};

void ExpectMatchesTruth(sim::Simulation& simulation, StallParts* parts,
                        iterations::StepSource step_source) {
  const sim::Truth& truth = simulation.truth;
  Trace& trace = simulation.trace;
  // Without profiler steps the iterations must come from the repeating schedule, and every figure
  // must come out the same.
  if (step_source != iterations::StepSource::kProfilerSteps) {
    for (Rank& rank : trace.ranks) rank.steps.clear();
  }
  absl::StatusOr<Result> result = testing::BubbleOf(trace);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->step_source, step_source);
  ASSERT_EQ(result->iterations.size(), truth.iterations.size());
  EXPECT_EQ(result->complete_iterations, static_cast<int64_t>(truth.iterations.size()));
  for (size_t i = 0; i < truth.iterations.size(); ++i) {
    const IterationFigures& got = result->iterations[i];
    const sim::IterationTruth& want = truth.iterations[i];
    SCOPED_TRACE(absl::StrCat("iteration ", want.iteration));
    EXPECT_EQ(got.number, want.iteration);
    EXPECT_TRUE(got.complete);
    EXPECT_EQ(got.window_start, want.window_start);
    EXPECT_EQ(got.window_end, want.window_end);
    EXPECT_EQ(got.idle, want.idle);
    EXPECT_NEAR(got.bubble_fraction, want.bubble_fraction, 0.005);
    EXPECT_DOUBLE_EQ(got.bubble_fraction, want.bubble_fraction);
    ASSERT_EQ(got.ranks.size(), want.ranks.size());
    for (size_t r = 0; r < want.ranks.size(); ++r) {
      const RankIterationFigures& g = got.ranks[r];
      const sim::RankIterationTruth& w = want.ranks[r];
      SCOPED_TRACE(absl::StrCat("rank ", w.rank));
      EXPECT_EQ(g.rank, w.rank);
      EXPECT_TRUE(g.present);
      EXPECT_EQ(g.first_compute_start, w.first_compute_start);
      EXPECT_EQ(g.last_compute_end, w.last_compute_end);
      EXPECT_EQ(g.split.compute, w.split.compute);
      EXPECT_EQ(g.split.idle, w.split.idle);
      EXPECT_EQ(g.split.fill, w.split.fill);
      EXPECT_EQ(g.split.drain, w.split.drain);
      EXPECT_EQ(g.split.stall, w.split.stall);
      EXPECT_EQ(g.split.comm_wait, w.split.comm_wait);
      EXPECT_EQ(g.split.empty, w.split.empty);
      parts->comm_wait += g.split.comm_wait;
      parts->empty += g.split.empty;
    }
  }
  EXPECT_EQ(result->idle, truth.idle_ns);
  EXPECT_EQ(result->capacity, truth.capacity_ns);
  EXPECT_DOUBLE_EQ(result->bubble_fraction, truth.bubble_fraction);
  EXPECT_EQ(result->latency.iterations, static_cast<int64_t>(truth.iterations.size()));
  EXPECT_EQ(result->latency.p50, truth.latency_p50_ns);
  EXPECT_EQ(result->latency.p90, truth.latency_p90_ns);
  EXPECT_EQ(result->latency.max, truth.latency_max_ns);
  ASSERT_EQ(result->per_rank.size(), truth.memory.size());
  for (size_t r = 0; r < truth.memory.size(); ++r) {
    EXPECT_EQ(result->per_rank[r].rank, truth.memory[r].rank);
    EXPECT_EQ(result->per_rank[r].memory.allocated_bytes, truth.memory[r].peak_allocated_bytes);
    EXPECT_EQ(result->per_rank[r].memory.reserved_bytes, truth.memory[r].peak_reserved_bytes);
    EXPECT_EQ(result->per_rank[r].unassigned_intervals, 0);
  }
}

class SimulatedScheduleTest : public ::testing::TestWithParam<Schedule> {
 protected:
  void ExpectGridMatchesTruth(iterations::StepSource step_source);
};

TEST_P(SimulatedScheduleTest, EveryFigureMatchesTheSimulatorTruth) {
  ExpectGridMatchesTruth(iterations::StepSource::kProfilerSteps);
}

TEST_P(SimulatedScheduleTest, IterationsFromTheRepeatingScheduleMatchTheProfilerSteps) {
  ExpectGridMatchesTruth(iterations::StepSource::kRepeatingSchedule);
}

void SimulatedScheduleTest::ExpectGridMatchesTruth(iterations::StepSource step_source) {
  const Schedule schedule = GetParam();
  StallParts parts;
  for (const sim::testing::GridJob& job : sim::testing::GridJobs(schedule)) {
    SCOPED_TRACE(
        absl::StrCat(std::string(sim::ScheduleName(schedule)), " p=", job.p, " m=", job.m));
    absl::StatusOr<sim::Simulation> simulation =
        sim::Simulate(RealisticConfig(schedule, job.p, job.m));
    ASSERT_TRUE(simulation.ok()) << simulation.status();
    ExpectMatchesTruth(*simulation, &parts, step_source);
  }
  // Slow links make receives wait and launch gaps starve the device, so both parts of the stall
  // occur somewhere in the grid: the exact matches above are not all zeros.
  EXPECT_GT(parts.comm_wait, 0);
  EXPECT_GT(parts.empty, 0);
}

INSTANTIATE_TEST_SUITE_P(AllSchedules, SimulatedScheduleTest,
                         ::testing::ValuesIn(sim::testing::kAllSchedules),
                         sim::testing::ScheduleTestName);

// GPipe over v = 2, 3 chunks per rank (torch's ScheduleLoopedBFS): every figure of the realistic
// job against the truth, iterations from profiler steps and from the repeating schedule.
TEST(SimulatedLoopedGpipeTest, EveryFigureMatchesTheSimulatorTruth) {
  for (iterations::StepSource source :
       {iterations::StepSource::kProfilerSteps, iterations::StepSource::kRepeatingSchedule}) {
    StallParts parts;
    for (const sim::testing::GridJob& job : sim::testing::LoopedGpipeJobs()) {
      SCOPED_TRACE(absl::StrCat("gpipe p=", job.p, " m=", job.m, " v=", job.v));
      absl::StatusOr<sim::Simulation> simulation =
          sim::Simulate(RealisticConfig(Schedule::kGpipe, job.p, job.m, job.v));
      ASSERT_TRUE(simulation.ok()) << simulation.status();
      ExpectMatchesTruth(*simulation, &parts, source);
    }
    EXPECT_GT(parts.comm_wait, 0);
    EXPECT_GT(parts.empty, 0);
  }
}

// The textbook bubble, worked out from the formula alone: `idle_slots` slots of one chunk's
// F+B per rank beside its v*m busy ones (p-1 but for looped GPipe with m < p).
void ExpectClosedForm(Schedule schedule, int32_t p, int32_t m, int32_t v, int32_t idle_slots = -1) {
  if (idle_slots < 0) idle_slots = p - 1;
  SCOPED_TRACE(
      absl::StrCat(std::string(sim::ScheduleName(schedule)), " p=", p, " m=", m, " v=", v));
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(IdealConfig(schedule, p, m, v));
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  absl::StatusOr<Result> result = testing::BubbleOf(simulation->trace);
  ASSERT_TRUE(result.ok()) << result.status();
  const double expected = static_cast<double>(idle_slots) / static_cast<double>(v * m + idle_slots);
  EXPECT_NEAR(result->bubble_fraction, expected, 0.001);
  // One microbatch's F+B on one chunk is 1800 ns; the window is v*m+idle_slots of those.
  ASSERT_EQ(result->iterations.size(), 1u);
  EXPECT_EQ(result->iterations[0].window(), int64_t{1800} * (v * m + idle_slots));
}

TEST(ClosedFormBubbleTest, GpipeAnd1F1B) {
  for (Schedule schedule : {Schedule::kGpipe, Schedule::k1F1B}) {
    for (const sim::testing::GridJob& job : sim::testing::GridJobs(schedule)) {
      ExpectClosedForm(schedule, job.p, job.m, 1);
    }
  }
}

// Looped GPipe: (p-1)/(v*m+p-1) when m >= p; with m < p stage 0 waits p-m slots before each
// chunk after the first for microbatch 0 to come round, forward and backward (docs/bubble.md).
TEST(ClosedFormBubbleTest, LoopedGpipe) {
  for (int32_t p : {2, 4, 8}) {
    for (int32_t m : {1, 2, 4, 8}) {
      for (int32_t v : {2, 3}) {
        ExpectClosedForm(Schedule::kGpipe, p, m, v, p - 1 + (v - 1) * std::max(0, p - m));
      }
    }
  }
}

TEST(ClosedFormBubbleTest, Interleaved) {
  for (const sim::testing::GridJob& job : sim::testing::GridJobs(Schedule::kInterleaved1F1B)) {
    for (int32_t v : {2, 3}) ExpectClosedForm(Schedule::kInterleaved1F1B, job.p, job.m, v);
  }
}

}  // namespace
}  // namespace bubblescope::bubble
