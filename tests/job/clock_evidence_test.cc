// Clock evidence on whole jobs: real runs recorded on one machine keep their clocks, by their
// host name and, without it, because bounds of guessed peers are never applied; a simulated job
// on two hosts moves only the other host's ranks, onto the truth.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "loader/trace_loader.h"
#include "support/job_helpers.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

using clock_alignment::Source;
using clock_alignment::Verdict;

class RealRunClocksTest : public ::testing::TestWithParam<std::string> {};

// Every run of sample_traces/torch_cpu was recorded on one machine, whose name every file
// carries (host_name "vm"; the runs exported with torch's Python writer have none): no clock
// moves, each rank on the reference's clock by that fact. The same files without the name: the
// gloo transfers give only bounds through peers inferred from the schedule, which are never
// applied, so the figures are exactly those of the named run.
TEST_P(RealRunClocksTest, OneMachineKeepsItsClocks) {
  LoadOptions load;
  load.jobs = 2;
  absl::StatusOr<Trace> trace = LoadTrace(
      {std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/" + GetParam()}, load);
  ASSERT_TRUE(trace.ok()) << trace.status();
  const bool named_host = !trace->ranks.front().host.empty();
  for (const Rank& rank : trace->ranks) {
    EXPECT_EQ(rank.host, named_host ? "vm" : "") << rank.rank;
  }
  const job::Result named = testing::AnalyzeJob(*trace);
  ASSERT_FALSE(named.pipelines.empty());
  for (const job::Pipeline& pipeline : named.pipelines) {
    for (const clock_alignment::RankOffset& offset : pipeline.crossrank.offsets) {
      SCOPED_TRACE(absl::StrCat("rank ", offset.rank));
      EXPECT_EQ(offset.offset_ns, 0);
      if (!named_host) continue;
      EXPECT_TRUE(offset.aligned);
      EXPECT_EQ(offset.verdict, Verdict::kSameClock);
      EXPECT_TRUE(offset.source == Source::kReference || offset.source == Source::kSameHost);
    }
  }
  for (Rank& rank : trace->ranks) rank.host.clear();
  const job::Result unnamed = testing::AnalyzeJob(*trace);
  ASSERT_EQ(unnamed.pipelines.size(), named.pipelines.size());
  for (size_t p = 0; p < named.pipelines.size(); ++p) {
    for (const clock_alignment::RankOffset& offset : unnamed.pipelines[p].crossrank.offsets) {
      EXPECT_EQ(offset.offset_ns, 0) << offset.rank;
      EXPECT_FALSE(offset.applied()) << offset.rank;
    }
    EXPECT_EQ(unnamed.pipelines[p].bubble.bubble_fraction,
              named.pipelines[p].bubble.bubble_fraction);
  }
}

INSTANTIATE_TEST_SUITE_P(
    TorchCpu, RealRunClocksTest,
    ::testing::Values("gpipe_p2_m4", "1f1b_p4_m8", "1f1b_p4_m8_heavy2", "interleaved_p2_v2_m4",
                      "zb_p2_v2_m4", "zbv_p2_v2_m4", "dualpipev_p2_v2_m8", "dp2_1f1b_p2_m4",
                      "1f1b_p2_m4_recompute", "1f1b_p2_m4_recompute_nr", "gpipe_eval_p2_m4",
                      "gpipe_p3_m3_manual", "1f1b_p3_m3_shapes", "loopedbfs_p4_v2_m4",
                      "interleaved_p3_v2_m3_memory", "zb_p4_v2_m4_skipfirst", "zbv_p3_v2_m3",
                      "dualpipev_p3_v2_m6_tensorboard", "csv_1f1b_p3_m3_order201",
                      "csv_bfs_p3_v2_m3_order012120", "gpipe_p2_m2_stack"),
    [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

// Two hosts of two ranks each; host 1's clock runs 3 ms ahead of host 0's. Stage s runs on rank
// 3 - s, so the reference is rank 3 on host 1: rank 2 shares its clock (same host, offset 0),
// ranks 1 and 0 run 3 ms behind it, which their NCCL transfers with host 1 say exactly. The
// bubble on the aligned clock equals the simulator's truth.
TEST(TwoHostClocksTest, OnlyTheOtherHostMovesOntoTheTruth) {
  sim::Config config;
  config.stages = 4;
  config.microbatches = 8;
  config.iterations = 2;
  config.costs.assign(4, sim::StageCost{.forward = 200000, .backward = 400000, .weight_grad = 0});
  config.activation_bytes = int64_t{1} << 20;
  config.link = sim::Link{.gbps = 400.0, .latency_ns = 0};
  config.launch_gap_ns = 2000;
  config.jitter = 0.05;
  config.stage_to_rank = {3, 2, 1, 0};
  config.ranks_per_host = 2;
  config.clock_offsets_ns = {0, 0, 3'000'000, 3'000'000};
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const job::Result result = testing::AnalyzeJob(simulation->trace);
  ASSERT_EQ(result.pipelines.size(), 1u);
  const job::Pipeline& pipeline = result.pipelines[0];
  const std::vector<clock_alignment::RankOffset>& offsets = pipeline.crossrank.offsets;
  ASSERT_EQ(offsets.size(), 4u);  // in stage order: ranks 3, 2, 1, 0
  EXPECT_EQ(offsets[0].source, Source::kReference);
  EXPECT_EQ(offsets[1].source, Source::kSameHost);
  EXPECT_EQ(offsets[1].host, "sim-host-1");
  EXPECT_EQ(offsets[1].offset_ns, 0);
  for (size_t i = 2; i < 4; ++i) {
    SCOPED_TRACE(absl::StrCat("rank ", offsets[i].rank));
    EXPECT_EQ(offsets[i].source, Source::kRendezvous);
    EXPECT_EQ(offsets[i].verdict, Verdict::kApplied);
    EXPECT_EQ(offsets[i].offset_ns, -3'000'000);
    EXPECT_EQ(offsets[i].uncertainty_ns, 0);
    EXPECT_GT(offsets[i].samples, 0);
  }
  EXPECT_DOUBLE_EQ(pipeline.bubble.bubble_fraction, simulation->truth.bubble_fraction);
}

// Aligning never makes the bubble worse: over schedules, per-op and batched p2p, one host per
// rank or two ranks per host, and clocks from agreeing to 5 ms apart, the bubble the job reports
// is at least as near the simulator's truth as the bubble on the clocks as recorded (the same
// analysis with every offset 0).
TEST(TwoHostClocksTest, AligningNeverMakesTheBubbleWorse) {
  const std::vector<std::vector<TimeNs>> skews = {
      {0, 0, 0, 0}, {0, 0, 40'000, 40'000}, {-5'000'000, -5'000'000, 2'000'000, 2'000'000}};
  for (const sim::Schedule schedule :
       {sim::Schedule::k1F1B, sim::Schedule::kGpipe, sim::Schedule::kInterleaved1F1B}) {
    for (const sim::P2pStyle p2p : {sim::P2pStyle::kPerOp, sim::P2pStyle::kBatched}) {
      for (const int32_t ranks_per_host : {0, 2}) {
        for (const std::vector<TimeNs>& skew : skews) {
          SCOPED_TRACE(absl::StrCat(std::string(sim::ScheduleName(schedule)), " p2p ",
                                    static_cast<int>(p2p), " ranks/host ", ranks_per_host, " skew ",
                                    skew[2]));
          sim::Config config;
          config.schedule = schedule;
          config.stages = 4;
          config.virtual_stages = schedule == sim::Schedule::kInterleaved1F1B ? 2 : 1;
          config.microbatches = 8;
          config.iterations = 2;
          config.costs.assign(
              4, sim::StageCost{.forward = 150000, .backward = 300000, .weight_grad = 0});
          config.activation_bytes = int64_t{1} << 20;
          config.link = sim::Link{.gbps = 200.0, .latency_ns = 3000};
          config.launch_gap_ns = 2000;
          config.jitter = 0.1;
          config.p2p = p2p;
          config.ranks_per_host = ranks_per_host;
          config.clock_offsets_ns = skew;
          absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
          ASSERT_TRUE(simulation.ok()) << simulation.status();
          const job::Result result = testing::AnalyzeJob(simulation->trace);
          ASSERT_EQ(result.pipelines.size(), 1u);
          absl::StatusOr<bubble::Result> recorded = testing::BubbleOf(simulation->trace);
          ASSERT_TRUE(recorded.ok()) << recorded.status();
          const double truth = simulation->truth.bubble_fraction;
          EXPECT_LE(std::abs(result.pipelines[0].bubble.bubble_fraction - truth),
                    std::abs(recorded->bubble_fraction - truth) + 1e-12);
          // Clocks 5 ms apart make the recorded figure wrong: the comparison has teeth.
          if (skew[0] != 0) {
            EXPECT_GT(std::abs(recorded->bubble_fraction - truth), 0.01);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace bubblescope
