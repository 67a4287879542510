// job_parts.h: a job cut into parts by PlanParts, each part analysed alone on the job's
// decisions and the parts merged, gives the whole job's analysis down to the bytes of its text,
// JSON and HTML reports; and the plan's parts are the job's pipelines.
#include "job/job_parts.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "job/job_reports.h"
#include "job/sim_job.h"
#include "simulator/simulator.h"

namespace bubblescope::job {
namespace {

using sim::Schedule;

using crossrank_testing::DataParallelJob;

Options TestOptions() {
  Options options;
  options.tradeoff = true;  // the HTML's predictions too
  return options;
}

// The job analysed as `analyze --mpi` does: facts and headers per rank, the plan, each part from
// copies of its ranks alone, then the merge.
struct InParts {
  PartPlan plan;
  Result result;
};

InParts AnalyzeInParts(Trace trace, const Options& options) {
  InParts out;
  std::vector<RankFacts> facts;
  Trace headers;
  for (const Rank& rank : trace.ranks) {
    facts.push_back(FactsOf(rank, options.iterations));
    headers.ranks.push_back(RankHeader(rank));
  }
  out.plan = PlanParts(headers, facts, options);
  std::vector<PartResult> parts;
  for (const std::vector<size_t>& positions : out.plan.parts) {
    Trace part;
    for (size_t position : positions) part.ranks.push_back(std::move(trace.ranks[position]));
    absl::StatusOr<PartResult> analysed =
        AnalyzePart(part, positions, out.plan.decisions, options);
    EXPECT_TRUE(analysed.ok()) << analysed.status();
    if (analysed.ok()) parts.push_back(*std::move(analysed));
  }
  // The merge takes the parts in any order.
  std::reverse(parts.begin(), parts.end());
  out.result = MergeParts(headers, std::move(parts), options);
  return out;
}

// `make` builds the job (twice: ranks are not copied).
void ExpectSameReports(const std::function<Trace()>& make, size_t parts) {
  const Options options = TestOptions();
  const Trace trace = make();
  absl::StatusOr<Result> whole = Analyze(trace, options);
  ASSERT_TRUE(whole.ok()) << whole.status();
  const InParts in_parts = AnalyzeInParts(make(), options);
  ASSERT_EQ(in_parts.plan.parts.size(), parts);
  const JobReports expected = ReportsOf(*whole, /*with_html=*/true);
  const JobReports got = ReportsOf(in_parts.result, /*with_html=*/true);
  EXPECT_EQ(got.pipelines, expected.pipelines);
  EXPECT_TRUE(got.text == expected.text);  // not EXPECT_EQ: the reports are long
  EXPECT_TRUE(got.json == expected.json);
  EXPECT_TRUE(got.html == expected.html);
  // The part's positions are the job's: every pipeline's ranks are where the trace has them.
  for (const Pipeline& pipeline : in_parts.result.pipelines) {
    const p2p_graph::Pipeline& found = pipeline.crossrank.pipeline;
    ASSERT_EQ(found.positions.size(), found.stage_order().size());
    for (size_t s = 0; s < found.positions.size(); ++s) {
      EXPECT_EQ(trace.ranks[found.positions[s]].rank, found.stage_order()[s]);
    }
  }
}

TEST(JobPartsTest, EachPipelineIsAPartAndTheReportsAreTheWholeJobs) {
  for (const auto& [replicas, schedule] : std::vector<std::pair<int32_t, Schedule>>{
           {6, Schedule::k1F1B}, {3, Schedule::kInterleaved1F1B}}) {
    SCOPED_TRACE(absl::StrCat(int{replicas}, " pipelines of ",
                              std::string(sim::ScheduleName(schedule))));
    const auto make = [replicas, schedule] { return DataParallelJob(replicas, schedule); };
    ExpectSameReports(make, static_cast<size_t>(replicas));
    const InParts in_parts = AnalyzeInParts(make(), TestOptions());
    EXPECT_EQ(in_parts.plan.decisions.step_source, iterations::StepSource::kProfilerSteps);
    EXPECT_TRUE(in_parts.plan.decisions.peers_recorded);
    // Replica j holds ranks 4j .. 4j+3, in trace order.
    for (size_t j = 0; j < in_parts.plan.parts.size(); ++j) {
      EXPECT_EQ(in_parts.plan.parts[j], (std::vector<size_t>{4 * j, 4 * j + 1, 4 * j + 2,
                                                             4 * j + 3}));
    }
  }
}

TEST(JobPartsTest, RanksWithoutTrafficGoInBatchesNoLargerThanAPipeline) {
  // Five ranks with no recorded activity (say, data loaders profiled too): ids 8 .. 12.
  const auto make = [] {
    Trace trace = DataParallelJob(2, Schedule::k1F1B);
    for (int32_t id = 8; id < 13; ++id) {
      Rank quiet;
      quiet.rank = id;
      quiet.source_path = absl::StrCat("quiet", id, ".json");
      trace.ranks.push_back(std::move(quiet));
    }
    for (Rank& rank : trace.ranks) rank.world_size = 13;
    return trace;
  };
  ExpectSameReports(make, 2 + 2);  // two pipelines, then 4 + 1 quiet ranks
}

TEST(JobPartsTest, CutShortRankAndStepsDecidedByTheWholeJob) {
  // The job's reference step is read over every pipeline: a rank cut short moves it in all.
  const auto cut = [] {
    Trace trace = DataParallelJob(3, Schedule::k1F1B);
    trace.ranks[5].stats.Add(ImportCounter::kTruncated, 1, 1000);
    return trace;
  };
  ExpectSameReports(cut, 3);
  // Without profiler steps the job's repeating schedule is found over every rank.
  const auto stepless = [&cut] {
    Trace trace = cut();
    for (Rank& rank : trace.ranks) rank.steps.clear();
    return trace;
  };
  ExpectSameReports(stepless, 3);
  EXPECT_EQ(AnalyzeInParts(stepless(), TestOptions()).plan.decisions.step_source,
            iterations::StepSource::kRepeatingSchedule);
}

TEST(JobPartsTest, WithoutRecordedPeersTheJobIsAnalysedWhole) {
  Trace trace = DataParallelJob(2, Schedule::k1F1B);
  for (Rank& rank : trace.ranks) {
    for (CommInfo& comm : rank.comms) comm.peer = -1;
  }
  const InParts in_parts = AnalyzeInParts(std::move(trace), TestOptions());
  EXPECT_TRUE(in_parts.plan.parts.empty());
  EXPECT_FALSE(in_parts.plan.decisions.peers_recorded);
}

}  // namespace
}  // namespace bubblescope::job
