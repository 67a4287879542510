// A rank whose file was cut short keeps its place in the pipeline: the simulated 1F1B job of
// sample_traces/sim_1f1b_p4_m8 (p = 4, 3 profiled iterations) with rank 2's file cut. Kineto
// (and the simulator) write a rank's CPU events before its kernels, so a cut at half the bytes
// keeps all 3 ProfilerStep ranges but only the kernels of the first 26 ms of iteration 0: no
// iteration of rank 2 is whole. A cut at 80 % keeps iterations 0 and 1 whole and loses 2.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/trace_loader.h"
#include "report/job_report.h"
#include "support/job_helpers.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::testing::HasSubstr;

const std::string kRun = std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/sim_1f1b_p4_m8";

job::Result AnalyzeWithRank2Cut(const testing::TempDir& dir, double kept_fraction) {
  for (int rank : {0, 1, 3}) {
    const std::string name = "rank" + std::to_string(rank) + ".pt.trace.json.gz";
    dir.Write(name, testing::ReadFile(kRun + "/" + name));
  }
  // The clock base first, so the cut keeps it: a cut that loses it leaves the rank out
  // (its clock unknown), which tests/readers cover.
  const std::string whole = testing::WithClockBaseFirst(
      testing::Gunzip(testing::ReadFile(kRun + "/rank2.pt.trace.json.gz")));
  const auto kept = static_cast<size_t>(kept_fraction * static_cast<double>(whole.size()));
  dir.Write("rank2.pt.trace.json", whole.substr(0, kept));
  LoadOptions options;
  options.jobs = 2;
  absl::StatusOr<Trace> trace = LoadTrace({dir.path()}, options);
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (!trace.ok()) return {};
  return testing::AnalyzeJob(*trace);
}

TEST(CutShortRankTest, KeepsItsStageWhenCutBeforeItsFirstTransfer) {
  testing::TempDir dir;
  const job::Result job = AnalyzeWithRank2Cut(dir, 0.5);
  ASSERT_EQ(job.pipelines.size(), 1u);
  const job::Pipeline& pipeline = job.pipelines[0];
  EXPECT_EQ(pipeline.crossrank.pipeline.stage_order(), (std::vector<int32_t>{0, 1, 2, 3}));
  ASSERT_TRUE(pipeline.shape.has_value());
  EXPECT_EQ(pipeline.shape->p, 4);
  EXPECT_EQ(pipeline.cut_short_ranks, (std::vector<int32_t>{2}));
  EXPECT_EQ(pipeline.bubble.iterations.size(), 3u);
  EXPECT_EQ(pipeline.bubble.complete_iterations, 0);
  EXPECT_TRUE(job.job.ranks_without_p2p.empty());
  const std::string headline = DiagnosisText(job);
  EXPECT_THAT(headline, HasSubstr("(p=4 m=8 v=1 1f1b): no complete iteration to measure: 3 "
                                  "iterations (from profiler_steps) found, none on every "
                                  "pipeline rank"));
  EXPECT_THAT(headline, HasSubstr("cut short: the trace of rank 2 ends early; it keeps its stage, "
                                  "and 3 of 3 iterations are left out"));
}

TEST(CutShortRankTest, ItsPartialIterationsAreLeftOut) {
  testing::TempDir cut_dir;
  const job::Result cut = AnalyzeWithRank2Cut(cut_dir, 0.8);
  LoadOptions options;
  options.jobs = 2;
  absl::StatusOr<Trace> whole_trace = LoadTrace({kRun}, options);
  ASSERT_TRUE(whole_trace.ok()) << whole_trace.status();
  const job::Result whole = testing::AnalyzeJob(*whole_trace);
  ASSERT_EQ(cut.pipelines.size(), 1u);
  ASSERT_EQ(whole.pipelines.size(), 1u);
  const bubble::Result& bubble = cut.pipelines[0].bubble;
  EXPECT_EQ(cut.pipelines[0].crossrank.pipeline.stage_order(), (std::vector<int32_t>{0, 1, 2, 3}));
  ASSERT_EQ(bubble.iterations.size(), 3u);
  EXPECT_EQ(bubble.complete_iterations, 2);
  EXPECT_FALSE(bubble.iterations[2].complete);
  // The whole iterations are the uncut job's, to the nanosecond.
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(bubble.iterations[i].complete);
    EXPECT_EQ(bubble.iterations[i].window(), whole.pipelines[0].bubble.iterations[i].window());
    EXPECT_EQ(bubble.iterations[i].idle, whole.pipelines[0].bubble.iterations[i].idle);
  }
  EXPECT_THAT(DiagnosisText(cut), HasSubstr("1 of 3 iterations are left out"));
}

}  // namespace
}  // namespace bubblescope
