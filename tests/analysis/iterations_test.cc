#include "analysis/iterations.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "support/job_helpers.h"
#include "support/timeline_fixtures.h"

namespace bubblescope::iterations {
namespace {

using namespace bubblescope::testing;  // NOLINT(build/namespaces): test builders only

// The iterations of every rank as one group, with the index their op numbers refer to.
struct Assigned {
  index::TraceIndex index;
  Result result;
};

Assigned AnalyzeOk(const Trace& trace, const Options& options = {},
                   const std::vector<int32_t>& ranks = {}) {
  absl::StatusOr<testing::GroupIterations> group = testing::IterationsOf(trace, options, ranks);
  EXPECT_TRUE(group.ok()) << group.status();
  if (!group.ok()) return {};
  return Assigned{std::move(group->index), std::move(group->assignment)};
}

// Starts of the device ops a rank (by position in the group) has in an iteration, in start order.
std::vector<TimeNs> Starts(const Assigned& assigned, size_t iteration, size_t rank) {
  std::vector<TimeNs> starts;
  const size_t position = assigned.result.positions[rank];
  for (uint32_t op : assigned.result.iterations[iteration].ranks[rank].ops) {
    starts.push_back(assigned.index.ranks[position].ops[op].start);
  }
  return starts;
}

// Steps 5 = [0, 100) and 6 = [110, 200) on the CPU; step 5's slot reaches 110.
Rank LaunchedRank() {
  Rank rank;
  rank.rank = 0;
  rank.steps = {{5, 0, 100}, {6, 110, 200}};
  std::vector<Interval> launches = {
      Op(kRuntime, -60, -55, 1),  // before the first step
      Op(kRuntime, 90, 95, 7),    // in step 5
      Op(kRuntime, 120, 125, 8),  // in step 6
  };
  std::vector<Interval> kernels = {
      Op(kCompute, -50, -40, 1),   // launched before step 5: unassigned
      Op(kCompute, 105, 108, 0),   // no correlation: own start, in step 5's slot
      Op(kCompute, 130, 140, 99),  // correlation without a launch record: own start, step 6
      Op(kCompute, 150, 170, 7),   // runs during step 6 but was launched in step 5
      Op(kCompute, 180, 190, 8),
  };
  rank.timelines.push_back(Thread(1, std::move(launches)));
  rank.timelines.push_back(Stream(7, std::move(kernels)));
  return rank;
}

TEST(IterationsTest, GpuOpsFollowTheirLaunchAndUnlaunchedOpsTheirStart) {
  Trace trace;
  trace.ranks.push_back(LaunchedRank());
  Assigned assigned = AnalyzeOk(trace);
  EXPECT_EQ(assigned.result.source, StepSource::kProfilerSteps);
  ASSERT_EQ(assigned.result.iterations.size(), 2u);
  EXPECT_EQ(assigned.result.iterations[0].number, 5);
  EXPECT_EQ(assigned.result.iterations[1].number, 6);
  EXPECT_EQ(Starts(assigned, 0, 0), (std::vector<TimeNs>{105, 150}));
  EXPECT_EQ(Starts(assigned, 1, 0), (std::vector<TimeNs>{130, 180}));
  ASSERT_EQ(assigned.result.ranks.size(), 1u);
  EXPECT_EQ(assigned.result.ranks[0].steps, 2);
  EXPECT_EQ(assigned.result.ranks[0].unassigned, 1);
  EXPECT_EQ(assigned.result.ranks[0].by_launch, 2);
  EXPECT_EQ(assigned.result.ranks[0].by_start, 2);
  EXPECT_TRUE(assigned.result.iterations[0].complete);
  EXPECT_TRUE(assigned.result.iterations[1].complete);
}

TEST(IterationsTest, WithoutStepsTheWholeTraceIsIterationZero) {
  Rank rank = LaunchedRank();
  rank.steps.clear();
  Trace trace;
  trace.ranks.push_back(std::move(rank));
  Assigned assigned = AnalyzeOk(trace);
  EXPECT_EQ(assigned.result.source, StepSource::kWholeTrace);
  ASSERT_EQ(assigned.result.iterations.size(), 1u);
  EXPECT_EQ(assigned.result.iterations[0].number, 0);
  EXPECT_TRUE(assigned.result.iterations[0].complete);
  EXPECT_EQ(Starts(assigned, 0, 0), (std::vector<TimeNs>{-50, 105, 130, 150, 180}));
  EXPECT_EQ(assigned.result.ranks[0].unassigned, 0);
  EXPECT_EQ(assigned.result.ranks[0].steps, 0);
}

Rank CpuRankWithSteps(int32_t id, std::vector<ProfilerStep> steps) {
  Rank rank;
  rank.rank = id;
  rank.steps = std::move(steps);
  std::vector<Interval> ops;
  for (const ProfilerStep& step : rank.steps) ops.push_back(Op(kCpu, step.start + 1, step.end - 1));
  rank.timelines.push_back(Thread(1, std::move(ops)));
  return rank;
}

TEST(IterationsTest, AnIterationMissingOnARankIsIncomplete) {
  Trace trace;
  trace.ranks.push_back(CpuRankWithSteps(0, {{1, 0, 10}, {2, 10, 20}, {3, 20, 30}}));
  trace.ranks.push_back(CpuRankWithSteps(1, {{1, 0, 10}, {2, 10, 20}}));
  Assigned assigned = AnalyzeOk(trace);
  ASSERT_EQ(assigned.result.iterations.size(), 3u);
  EXPECT_TRUE(assigned.result.iterations[0].complete);
  EXPECT_TRUE(assigned.result.iterations[1].complete);
  EXPECT_FALSE(assigned.result.iterations[2].complete);
  EXPECT_TRUE(assigned.result.iterations[2].ranks[0].present);
  EXPECT_FALSE(assigned.result.iterations[2].ranks[1].present);
  // Rank 0 alone, as a pipeline of its own, has all three.
  EXPECT_TRUE(AnalyzeOk(trace, {}, {0}).result.iterations[2].complete);
}

// A step in which a rank runs no compute holds none of the pipeline's work: no iteration counts
// it complete (torch's step that closes a profiler window the loop left early holds, at most,
// communication or bookkeeping).
TEST(IterationsTest, AStepWithoutComputeOnARankIsIncomplete) {
  Trace trace;
  trace.ranks.push_back(CpuRankWithSteps(0, {{1, 0, 10}, {2, 10, 20}}));
  trace.ranks.push_back(CpuRankWithSteps(1, {{1, 0, 10}, {2, 10, 20}}));
  // Rank 1's op in step 2 is a transfer, not compute.
  trace.ranks[1].timelines[0].intervals[1] = Op(kCpuComm, 11, 19);
  Assigned assigned = AnalyzeOk(trace);
  ASSERT_EQ(assigned.result.iterations.size(), 2u);
  EXPECT_TRUE(assigned.result.iterations[0].complete);
  EXPECT_FALSE(assigned.result.iterations[1].complete);
  EXPECT_TRUE(assigned.result.iterations[1].ranks[0].holds_work);
  EXPECT_FALSE(assigned.result.iterations[1].ranks[1].holds_work);
  EXPECT_TRUE(assigned.result.iterations[1].ranks[1].present);
}

TEST(IterationsTest, TheLastIterationOfATruncatedRankIsIncomplete) {
  Trace trace;
  trace.ranks.push_back(CpuRankWithSteps(0, {{1, 0, 10}, {2, 10, 20}, {3, 20, 30}}));
  trace.ranks.push_back(CpuRankWithSteps(1, {{1, 0, 10}, {2, 10, 20}, {3, 20, 30}}));
  trace.ranks[1].stats.Bump(ImportCounter::kTruncated, 123);
  Assigned assigned = AnalyzeOk(trace);
  ASSERT_EQ(assigned.result.iterations.size(), 3u);
  EXPECT_TRUE(assigned.result.iterations[0].complete);
  EXPECT_TRUE(assigned.result.iterations[1].complete);
  EXPECT_FALSE(assigned.result.iterations[2].complete);
  EXPECT_TRUE(assigned.result.iterations[2].ranks[1].present);
  EXPECT_TRUE(assigned.result.iterations[2].ranks[1].cut_short);
  EXPECT_FALSE(assigned.result.iterations[2].ranks[0].cut_short);
  EXPECT_TRUE(assigned.result.ranks[1].truncated);
  EXPECT_FALSE(assigned.result.ranks[0].truncated);
  // Its ops are still assigned: incomplete iterations are kept, only flagged.
  EXPECT_EQ(Starts(assigned, 2, 1), (std::vector<TimeNs>{21}));
}

TEST(IterationsTest, ARankWithoutStepsHasEveryOpUnassigned) {
  Trace trace;
  trace.ranks.push_back(CpuRankWithSteps(0, {{1, 0, 10}}));
  trace.ranks.push_back(CpuRankWithSteps(1, {}));
  trace.ranks[1].timelines[0].intervals = {Op(kCpu, 2, 5), Op(kCpu, 6, 8)};
  Assigned assigned = AnalyzeOk(trace);
  ASSERT_EQ(assigned.result.iterations.size(), 1u);
  EXPECT_FALSE(assigned.result.iterations[0].complete);
  EXPECT_EQ(assigned.result.ranks[1].unassigned, 2);
  EXPECT_TRUE(assigned.result.iterations[0].ranks[1].ops.empty());
}

TEST(IterationsTest, CpuOnlyRankGoesByTheOpsOwnStart) {
  Trace trace;
  Rank rank;
  rank.steps = {{0, 0, 100}, {1, 100, 200}};
  // The top-level op starting at 90 runs into step 1 but started in step 0.
  rank.timelines.push_back(
      Thread(1, {Op(kCpu, 10, 50), Op(kCpuComm, 90, 150), Op(kCpu, 95, 99), Op(kCpu, 160, 190)}));
  trace.ranks.push_back(std::move(rank));
  Assigned assigned = AnalyzeOk(trace);
  ASSERT_EQ(assigned.result.iterations.size(), 2u);
  EXPECT_EQ(Starts(assigned, 0, 0), (std::vector<TimeNs>{10, 90}));
  EXPECT_EQ(Starts(assigned, 1, 0), (std::vector<TimeNs>{160}));
  EXPECT_EQ(assigned.result.ranks[0].by_start, 3);
}

TEST(IterationsTest, MarkerRangesActAsStepsNumberedInOrder) {
  Rank rank;
  rank.steps = {{7, 0, 1000}};  // ignored once a marker is given
  rank.annotations.push_back(CpuRange(&rank, "train_step", 100, 200));
  rank.annotations.push_back(CpuRange(&rank, "optimizer", 150, 160));
  rank.annotations.push_back(CpuRange(&rank, "train_step", 300, 400));
  Annotation on_gpu = CpuRange(&rank, "train_step", 250, 260);
  on_gpu.scope = AnnotationScope::kGpu;  // GPU ranges are never steps
  rank.annotations.push_back(on_gpu);
  std::sort(rank.annotations.begin(), rank.annotations.end(),
            [](const Annotation& a, const Annotation& b) { return a.start < b.start; });
  rank.timelines.push_back(
      Thread(1, {Op(kCpu, 50, 60), Op(kCpu, 110, 120), Op(kCpu, 255, 258), Op(kCpu, 310, 320)}));
  Trace trace;
  trace.ranks.push_back(std::move(rank));
  Options options;
  options.iteration_marker = "^train_s.*p$";
  Assigned assigned = AnalyzeOk(trace, options);
  EXPECT_EQ(assigned.result.source, StepSource::kMarker);
  ASSERT_EQ(assigned.result.iterations.size(), 2u);
  EXPECT_EQ(assigned.result.iterations[0].number, 0);
  EXPECT_EQ(assigned.result.iterations[1].number, 1);
  EXPECT_EQ(Starts(assigned, 0, 0), (std::vector<TimeNs>{110, 255}));
  EXPECT_EQ(Starts(assigned, 1, 0), (std::vector<TimeNs>{310}));
  EXPECT_EQ(assigned.result.ranks[0].steps, 2);
  EXPECT_EQ(assigned.result.ranks[0].unassigned, 1);
}

TEST(IterationsTest, InvalidMarkerIsAnError) {
  Trace trace;
  trace.ranks.push_back(LaunchedRank());
  // Unbalanced, and a backreference (RE2 has none: rejected, not misread).
  for (const char* marker : {"step(", "(step)\\1"}) {
    Options options;
    options.iteration_marker = marker;
    absl::StatusOr<Steps> steps = FindSteps(trace, index::Build(trace), options, {});
    ASSERT_FALSE(steps.ok()) << marker;
    EXPECT_EQ(steps.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(steps.status().message().find(marker), std::string_view::npos);
  }
}

TEST(IterationsTest, ALongNameAndAStarredGroupNeitherHangNorOverflowTheStack) {
  // A backtracking matcher recurses once per repetition of "(1|2)*": a 300,000-character
  // annotation name took std::regex past the stack (SIGSEGV). The marker now runs in time
  // linear in the name, with no recursion.
  Rank rank;
  const std::string long_name = "step#" + std::string(300'000, '1');
  rank.annotations.push_back(CpuRange(&rank, long_name, 100, 200));
  rank.annotations.push_back(CpuRange(&rank, "step#12", 300, 400));
  rank.annotations.push_back(CpuRange(&rank, "step#13", 500, 600));
  rank.timelines.push_back(Thread(1, {Op(kCpu, 110, 120), Op(kCpu, 310, 320)}));
  Trace trace;
  trace.ranks.push_back(std::move(rank));
  Options options;
  options.iteration_marker = "^step#(1|2)*$";
  Assigned assigned = AnalyzeOk(trace, options);
  EXPECT_EQ(assigned.result.ranks[0].steps, 2);  // the long name and step#12; step#13 has a 3
  ASSERT_EQ(assigned.result.iterations.size(), 2u);
  EXPECT_EQ(Starts(assigned, 0, 0), (std::vector<TimeNs>{110}));
  EXPECT_EQ(Starts(assigned, 1, 0), (std::vector<TimeNs>{310}));
}

TEST(IterationsTest, EmptyTraceHasNoIterations) {
  Assigned assigned = AnalyzeOk(Trace{});
  EXPECT_TRUE(assigned.result.iterations.empty());
  EXPECT_TRUE(assigned.result.ranks.empty());
}

}  // namespace
}  // namespace bubblescope::iterations
