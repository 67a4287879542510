// job::Options::jobs: the ranks and pipelines analysed on several threads give the same result,
// down to the bytes of both reports, as on one.
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "job/job_reports.h"
#include "job/sim_job.h"
#include "report/pipeline_report.h"
#include "synth/synthetic_job.h"

namespace bubblescope::job {
namespace {

using sim::Schedule;

using crossrank_testing::DataParallelJob;

JobReports AnalyzeOn(const Trace& trace, int jobs) {
  Options options;
  options.jobs = jobs;
  options.tradeoff = true;  // the HTML's predictions too: the most work per pipeline
  absl::StatusOr<Result> result = Analyze(trace, options);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  return ReportsOf(*result, /*with_html=*/false);
}

TEST(JobThreadsTest, AnyNumberOfThreadsGivesTheSameReports) {
  for (const auto& [replicas, schedule, peers_recorded] :
       std::vector<std::tuple<int32_t, Schedule, bool>>{{6, Schedule::k1F1B, true},
                                                        {3, Schedule::kInterleaved1F1B, true},
                                                        {4, Schedule::k1F1B, false}}) {
    SCOPED_TRACE(absl::StrCat(int{replicas}, " pipelines of ",
                              std::string(sim::ScheduleName(schedule)),
                              peers_recorded ? "" : ", peers not recorded"));
    Trace trace = DataParallelJob(replicas, schedule);
    if (!peers_recorded) {
      for (Rank& rank : trace.ranks) {
        for (CommInfo& comm : rank.comms) comm.peer = -1;
      }
    }
    const JobReports one = AnalyzeOn(trace, 1);
    ASSERT_EQ(one.pipelines, static_cast<size_t>(replicas));  // the job is what it was built as
    for (int jobs : {2, 5, 0}) {
      SCOPED_TRACE(absl::StrCat("jobs ", jobs));
      const JobReports many = AnalyzeOn(trace, jobs);
      EXPECT_EQ(many.pipelines, one.pipelines);
      EXPECT_TRUE(many.text == one.text);  // not EXPECT_EQ: the reports are long
      EXPECT_TRUE(many.json == one.json);
    }
  }
}

// Options::progress: every rank indexed and every pipeline analysed is told once, counting up to
// the stage's total, one call at a time however many threads do the work; and the figures are
// the same with or without it.
TEST(JobThreadsTest, ProgressIsToldOncePerRankAndPipelineOneCallAtATime) {
  const Trace trace = DataParallelJob(5, Schedule::k1F1B);
  std::map<std::string, std::vector<std::pair<size_t, size_t>>> told;  // stage -> (done, total)
  std::atomic<int> inside{0};
  bool overlapped = false;
  Options options;
  options.jobs = 3;
  options.progress = [&](const Progress& progress) {
    overlapped |= inside.fetch_add(1) != 0;
    told[std::string(progress.stage)].emplace_back(progress.done, progress.total);
    inside.fetch_sub(1);
  };
  absl::StatusOr<Result> result = Analyze(trace, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(overlapped);
  const std::map<std::string, size_t> totals = {{"indexing ranks", 20}, {"analysing pipelines", 5}};
  ASSERT_EQ(told.size(), totals.size());
  for (const auto& [stage, total] : totals) {
    SCOPED_TRACE(stage);
    const std::vector<std::pair<size_t, size_t>>& calls = told[stage];
    ASSERT_EQ(calls.size(), total);
    for (size_t k = 0; k < total; ++k) EXPECT_EQ(calls[k], std::make_pair(k + 1, total));
  }
  const SummaryReportOptions report;
  EXPECT_TRUE(AnalyzeJson(*result, report).value_or("a") ==
              AnalyzeJson(*Analyze(trace, Options{}), report).value_or("b"));
}

}  // namespace
}  // namespace bubblescope::job
