// The bubble analysis of the real PyTorch CPU pipeline runs in sample_traces/torch_cpu. Their
// timing is one noisy recording, so the checks are structural, plus the one figure record.py
// measured independently from each file in Python: per rank, the summed duration of the
// outermost non-c10d cpu_ops inside the ProfilerStep ranges (truth.json,
// measured_compute_ms_per_rank, rounded to the microsecond), which is the compute the model
// thread's top-level kCpuOp intervals must add up to. And how the rank's stall splits: a rank
// waits for a transfer inside its gloo:send / gloo:recv range, which outlasts the c10d op that
// posted it, so comm_wait is the stall under [op start, range end); the exact values come from
// torch_cpu_waits_reference.py, which works them out from the files with Python alone.
#include <cmath>
#include <string>
#include <vector>

#include "analysis/bubble.h"
#include "gtest/gtest.h"
#include "loader/trace_loader.h"
#include "support/job_helpers.h"

namespace bubblescope::bubble {
namespace {

struct CpuRun {
  std::string name;
  std::vector<double> compute_ms;  // truth.json measured_compute_ms_per_rank
  std::vector<TimeNs> comm_wait;   // torch_cpu_waits_reference.py, per rank
  std::vector<TimeNs> empty;
};

class RealCpuBubbleTest : public ::testing::TestWithParam<CpuRun> {};

TEST_P(RealCpuBubbleTest, StepsAreCompleteAndComputeMatchesTheRecorder) {
  const CpuRun& run = GetParam();
  LoadOptions load;
  load.jobs = 2;
  absl::StatusOr<Trace> trace = LoadTrace(
      {std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/" + run.name}, load);
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<Result> result = testing::BubbleOf(*trace);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->step_source, iterations::StepSource::kProfilerSteps);
  ASSERT_EQ(result->iterations.size(), 2u);
  EXPECT_EQ(result->iterations[0].number, 2);
  EXPECT_EQ(result->iterations[1].number, 3);
  EXPECT_EQ(result->complete_iterations, 2);
  ASSERT_EQ(result->per_rank.size(), run.compute_ms.size());
  for (size_t r = 0; r < run.compute_ms.size(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const RankTotals& totals = result->per_rank[r];
    EXPECT_EQ(totals.device, index::DeviceKind::kCpu);
    // Every op of the main thread lies inside a ProfilerStep range (README).
    EXPECT_EQ(totals.unassigned_intervals, 0);
    EXPECT_NEAR(static_cast<double>(totals.split.compute) / 1e6, run.compute_ms[r], 0.0015);
    EXPECT_EQ(totals.split.idle, totals.split.fill + totals.split.stall + totals.split.drain);
    EXPECT_EQ(totals.split.stall, totals.split.comm_wait + totals.split.empty);
    EXPECT_EQ(totals.split.comm_wait, run.comm_wait[r]);
    EXPECT_EQ(totals.split.empty, run.empty[r]);
  }
}

// The same files without their ProfilerStep ranges: the two profiled steps are the whole trace,
// and the repeating schedule must find them again, so every figure stays the same.
TEST_P(RealCpuBubbleTest, WithoutProfilerStepsTheRepeatingScheduleFindsTheSameIterations) {
  LoadOptions load;
  load.jobs = 2;
  absl::StatusOr<Trace> trace = LoadTrace(
      {std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/" + GetParam().name}, load);
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<Result> with_steps = testing::BubbleOf(*trace);
  ASSERT_TRUE(with_steps.ok()) << with_steps.status();
  for (Rank& rank : trace->ranks) rank.steps.clear();
  absl::StatusOr<Result> without = testing::BubbleOf(*trace);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->step_source, iterations::StepSource::kRepeatingSchedule);
  EXPECT_EQ(without->complete_iterations, 2);
  ASSERT_EQ(without->iterations.size(), with_steps->iterations.size());
  for (size_t i = 0; i < without->iterations.size(); ++i) {
    SCOPED_TRACE("iteration " + std::to_string(i));
    EXPECT_EQ(without->iterations[i].window_start, with_steps->iterations[i].window_start);
    EXPECT_EQ(without->iterations[i].window_end, with_steps->iterations[i].window_end);
    EXPECT_EQ(without->iterations[i].idle, with_steps->iterations[i].idle);
  }
  EXPECT_EQ(without->bubble_fraction, with_steps->bubble_fraction);
  EXPECT_EQ(without->latency.p50, with_steps->latency.p50);
  EXPECT_EQ(without->latency.max, with_steps->latency.max);
}

INSTANTIATE_TEST_SUITE_P(
    TorchCpu, RealCpuBubbleTest,
    ::testing::Values(
        CpuRun{"gpipe_p2_m4", {42.505, 76.895}, {275497197, 161444698}, {29793951, 28811835}},
        CpuRun{"1f1b_p4_m8",
               {121.006, 131.742, 98.63, 205.935},
               {893686916, 807718913, 769470353, 534074648},
               {32273532, 39427934, 62728624, 60389310}},
        CpuRun{"1f1b_p4_m8_heavy2",
               {144.13, 93.318, 332.604, 201.711},
               {956636418, 1000100109, 644464638, 652034787},
               {116277858, 43557719, 112665317, 104565410}},
        CpuRun{"interleaved_p2_v2_m4",
               {123.396, 241.248},
               {676311320, 505373660},
               {38041460, 2776775}},
        CpuRun{"zb_p2_v2_m4", {265.613, 420.988}, {870980849, 719116150}, {10528863, 2034243}},
        CpuRun{"zbv_p2_v2_m4", {179.551, 301.119}, {623649331, 459105722}, {6733678, 1586354}},
        CpuRun{"1f1b_p2_m4_recompute", {18.304, 17.391}, {10307619, 3899259}, {2813300, 2833376}},
        CpuRun{
            "1f1b_p2_m4_recompute_nr", {22.207, 21.633}, {14429354, 8021203}, {4653900, 4989258}}),
    [](const ::testing::TestParamInfo<CpuRun>& param) { return param.param.name; });

}  // namespace
}  // namespace bubblescope::bubble
