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
#include "synth/synthetic_job.h"

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
  std::vector<Trace> part_traces;
  std::vector<ClockEvidence> evidence;
  for (const std::vector<size_t>& positions : out.plan.parts) {
    Trace& part = part_traces.emplace_back();
    for (size_t position : positions) part.ranks.push_back(std::move(trace.ranks[position]));
    absl::StatusOr<ClockEvidence> part_evidence =
        PartClockEvidence(part, out.plan.decisions, options);
    EXPECT_TRUE(part_evidence.ok()) << part_evidence.status();
    if (part_evidence.ok()) evidence.push_back(*std::move(part_evidence));
  }
  // The clock model takes the parts' evidence in any order.
  std::reverse(evidence.begin(), evidence.end());
  const JobDecisions decisions = WithDataGroups(out.plan.decisions, headers, evidence);
  const clock_alignment::JobClocks clocks = FitJobClocks(std::move(evidence));
  std::vector<PartResult> parts;
  for (size_t k = 0; k < out.plan.parts.size(); ++k) {
    const std::vector<size_t>& positions = out.plan.parts[k];
    const Trace& part = part_traces[k];
    absl::StatusOr<PartResult> analysed = AnalyzePart(part, positions, decisions, clocks, options);
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
    SCOPED_TRACE(
        absl::StrCat(int{replicas}, " pipelines of ", std::string(sim::ScheduleName(schedule))));
    // Copies: clang before 16 cannot capture a structured binding.
    const auto make = [count = replicas, kind = schedule] { return DataParallelJob(count, kind); };
    ExpectSameReports(make, static_cast<size_t>(replicas));
    const InParts in_parts = AnalyzeInParts(make(), TestOptions());
    EXPECT_EQ(in_parts.plan.decisions.step_source, iterations::StepSource::kProfilerSteps);
    EXPECT_TRUE(in_parts.plan.decisions.peers_recorded);
    // Replica j holds ranks 4j .. 4j+3, in trace order.
    for (size_t j = 0; j < in_parts.plan.parts.size(); ++j) {
      EXPECT_EQ(in_parts.plan.parts[j],
                (std::vector<size_t>{4 * j, 4 * j + 1, 4 * j + 2, 4 * j + 3}));
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

// Three replicas of a 4-stage pipeline in Megatron's rank order, each stage's three ranks on one
// host, the four hosts' clocks milliseconds apart and drifting, over a trace of seconds: every
// pipeline crosses the same host pairs, so the job's clock model pools three pipelines'
// transfers (and the data-parallel all-reduces) per host pair.
Trace HostsWithDriftingClocks() {
  sim::Config config = crossrank_testing::FourStageHostJob();
  config.iterations = 4;
  config.launch_gap_ns = 2000;
  config.transfer_spread = 0.5;
  config.collective_tail_ns = 40'000;
  config.iteration_gap_ns = 2'000'000'000;
  config.parallel.data = 3;
  config.parallel.dp_sync_ns = 300'000;
  config.ranks_per_host = 3;
  config.host_clocks = {{0, 0.0}, {3'100'000, 18.0}, {-2'400'000, -11.0}, {4'700'000, 7.0}};
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  EXPECT_TRUE(simulation.ok()) << simulation.status();
  return simulation.ok() ? std::move(simulation->trace) : Trace{};
}

TEST(JobPartsTest, OneClockModelForTheWholeJobWhateverItsParts) {
  ExpectSameReports(HostsWithDriftingClocks, 3);
  // What the test guards: a pipeline's clocks fitted from its own part alone read otherwise.
  const Options options = TestOptions();
  Trace trace = HostsWithDriftingClocks();
  std::vector<RankFacts> facts;
  Trace headers;
  for (const Rank& rank : trace.ranks) {
    facts.push_back(FactsOf(rank, options.iterations));
    headers.ranks.push_back(RankHeader(rank));
  }
  const PartPlan plan = PlanParts(headers, facts, options);
  ASSERT_EQ(plan.parts.size(), 3u);
  Trace source = HostsWithDriftingClocks();  // ranks are not copied
  Trace part;
  for (size_t position : plan.parts[0]) part.ranks.push_back(std::move(source.ranks[position]));
  absl::StatusOr<ClockEvidence> own = PartClockEvidence(part, plan.decisions, options);
  ASSERT_TRUE(own.ok()) << own.status();
  std::vector<ClockEvidence> alone;
  alone.push_back(*std::move(own));
  absl::StatusOr<PartResult> part_alone =
      AnalyzePart(part, plan.parts[0], plan.decisions, FitJobClocks(std::move(alone)), options);
  ASSERT_TRUE(part_alone.ok()) << part_alone.status();
  absl::StatusOr<Result> whole = Analyze(trace, options);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_FALSE(whole->pipelines.empty());
  ASSERT_FALSE(part_alone->pipelines.empty());
  const std::vector<clock_alignment::RankOffset>& pooled = whole->pipelines[0].crossrank.offsets;
  const std::vector<clock_alignment::RankOffset>& single =
      part_alone->pipelines[0].crossrank.offsets;
  ASSERT_EQ(pooled.size(), single.size());
  bool differs = false;
  for (size_t s = 0; s < pooled.size(); ++s) {
    differs |=
        pooled[s].samples != single[s].samples || pooled[s].estimate_ns != single[s].estimate_ns;
  }
  EXPECT_TRUE(differs) << "the part's own evidence gives the job's clocks: the case tests nothing";
}

// Groups without descriptions: a part holds one pipeline and cannot see the data-parallel group
// joining it to the others; the job decides the groups from every part's stage orders, so each
// part measures its gradient sync as the whole job does.
TEST(JobPartsTest, DataParallelGroupsInferredFromStructureReadAsInTheWholeJob) {
  const auto make = [] {
    sim::Config config = crossrank_testing::FourStageHostJob();
    config.iterations = 2;
    config.parallel.data = 3;
    config.parallel.dp_sync_ns = 400'000;
    config.describe_groups = false;
    absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
    EXPECT_TRUE(simulation.ok()) << simulation.status();
    return simulation.ok() ? std::move(simulation->trace) : Trace{};
  };
  ExpectSameReports(make, 3);
  // What the test guards: the job's structure does give data-parallel groups here.
  const Options options = TestOptions();
  absl::StatusOr<Result> whole = Analyze(make(), options);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(whole->replica_sets.size(), 1u);
  TimeNs dp_sync = 0;
  for (const Pipeline& pipeline : whole->pipelines) {
    for (const bubble::IterationFigures& iteration : pipeline.bubble.iterations) {
      for (const bubble::RankIterationFigures& rank : iteration.ranks) {
        dp_sync += rank.split.dp_sync;
      }
    }
  }
  EXPECT_GT(dp_sync, 0);
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
