// Hand-built traces for every bubble definition; each expected value is worked out in the
// comment beside it from the definitions in docs/bubble.md.
#include "analysis/bubble.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "support/job_helpers.h"
#include "support/timeline_fixtures.h"

namespace bubblescope::bubble {
namespace {

using namespace bubblescope::testing;  // NOLINT(build/namespaces): test builders only

Result AnalyzeOk(const Trace& trace, const std::vector<int32_t>& ranks = {}) {
  absl::StatusOr<Result> result = BubbleOf(trace, {}, ranks);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : Result{};
}

struct Split {
  TimeNs compute, idle, fill, drain, stall, comm_wait, empty;
};

void ExpectSplit(const RankIterationFigures& got, const Split& want) {
  EXPECT_EQ(got.split.compute, want.compute);
  EXPECT_EQ(got.split.idle, want.idle);
  EXPECT_EQ(got.split.fill, want.fill);
  EXPECT_EQ(got.split.drain, want.drain);
  EXPECT_EQ(got.split.stall, want.stall);
  EXPECT_EQ(got.split.comm_wait, want.comm_wait);
  EXPECT_EQ(got.split.empty, want.empty);
}

// Two GPU ranks, one iteration (no steps).
//   rank 0: compute [100,200) on stream 7 and [150,250) on stream 8 overlap -> [100,250), then
//           [300,400); comm [250,300) between them; comm [400,500) after the last compute.
//   rank 1: compute [200,300) and [450,600); comm [320,380); a memcpy [390,420) inside the
//           stall; a memcpy [600,650) that ends the window.
// window = [100, 650) = 550.
Trace TwoGpuRanks() {
  Trace trace;
  Rank r0;
  r0.rank = 0;
  r0.timelines.push_back(Stream(7, {Op(kCompute, 100, 200), Op(kCompute, 300, 400)}));
  r0.timelines.push_back(
      Stream(8, {Op(kCompute, 150, 250), Op(kComm, 250, 300), Op(kComm, 400, 500)}));
  trace.ranks.push_back(std::move(r0));
  Rank r1;
  r1.rank = 1;
  r1.timelines.push_back(Stream(7, {Op(kCompute, 200, 300), Op(kCompute, 450, 600)}));
  r1.timelines.push_back(Stream(9, {Op(kComm, 320, 380)}));
  r1.timelines.push_back(
      Stream(11, {Op(IntervalKind::kMemcpy, 390, 420), Op(IntervalKind::kMemcpy, 600, 650)}));
  trace.ranks.push_back(std::move(r1));
  return trace;
}

TEST(BubbleTest, WindowAndTheSplitOfIdleTime) {
  Result result = AnalyzeOk(TwoGpuRanks());
  EXPECT_EQ(result.step_source, iterations::StepSource::kWholeTrace);
  EXPECT_EQ(result.ranks, (std::vector<int32_t>{0, 1}));
  ASSERT_EQ(result.iterations.size(), 1u);
  const IterationFigures& it = result.iterations[0];
  EXPECT_TRUE(it.complete);
  EXPECT_EQ(it.window_start, 100);
  EXPECT_EQ(it.window_end, 650);
  ASSERT_EQ(it.ranks.size(), 2u);
  // rank 0: compute 150 + 100 = 250, idle 300; fill 0; drain 650 - 400 = 250;
  // stall [250,300) = 50, all of it under comm [250,300); comm [400,500) is in the drain.
  EXPECT_EQ(it.ranks[0].first_compute_start, 100);
  EXPECT_EQ(it.ranks[0].last_compute_end, 400);
  ExpectSplit(it.ranks[0], {250, 300, 0, 250, 50, 50, 0});
  // rank 1: compute 100 + 150 = 250, idle 300; fill 200 - 100 = 100; drain 650 - 600 = 50;
  // stall [300,450) = 150: comm [320,380) = 60, the rest 90 (the memcpy does not count as comm).
  EXPECT_EQ(it.ranks[1].first_compute_start, 200);
  EXPECT_EQ(it.ranks[1].last_compute_end, 600);
  ExpectSplit(it.ranks[1], {250, 300, 100, 50, 150, 60, 90});
  // 600 idle of 2 * 550.
  EXPECT_EQ(it.idle, 600);
  EXPECT_DOUBLE_EQ(it.bubble_fraction, 600.0 / 1100.0);
  EXPECT_DOUBLE_EQ(result.bubble_fraction, 600.0 / 1100.0);
  EXPECT_EQ(result.idle, 600);
  EXPECT_EQ(result.capacity, 1100);
  EXPECT_EQ(result.complete_iterations, 1);
  ASSERT_EQ(result.per_rank.size(), 2u);
  EXPECT_EQ(result.per_rank[1].window, 550);
  EXPECT_EQ(result.per_rank[1].split.comm_wait, 60);
  EXPECT_DOUBLE_EQ(result.per_rank[1].bubble_fraction, 300.0 / 550.0);
  EXPECT_EQ(result.per_rank[0].device, index::DeviceKind::kGpu);
}

// The spans behind those sums, in time order on the same two ranks.
TEST(BubbleTest, IdleSpansLieWhereTheSplitSays) {
  Result result = AnalyzeOk(TwoGpuRanks());
  ASSERT_EQ(result.iterations.size(), 1u);
  const IterationFigures& it = result.iterations[0];
  // rank 0: no fill (it starts the window); comm_wait [250,300); drain [400,650).
  EXPECT_EQ(it.ranks[0].idle_spans,
            (std::vector<IdleSpan>{{IdleKind::kCommWait, 250, 300}, {IdleKind::kDrain, 400, 650}}));
  // rank 1: fill [100,200); the stall [300,450) cut by comm [320,380) into empty [300,320),
  // comm_wait [320,380), empty [380,450); drain [600,650).
  EXPECT_EQ(it.ranks[1].idle_spans, (std::vector<IdleSpan>{{IdleKind::kFill, 100, 200},
                                                           {IdleKind::kEmpty, 300, 320},
                                                           {IdleKind::kCommWait, 320, 380},
                                                           {IdleKind::kEmpty, 380, 450},
                                                           {IdleKind::kDrain, 600, 650}}));
  EXPECT_EQ(it.ranks[0].comm_spans, (std::vector<TimeRange>{{250, 300}, {400, 500}}));
  EXPECT_EQ(it.ranks[1].comm_spans, (std::vector<TimeRange>{{320, 380}}));
  EXPECT_EQ(IdleKindName(IdleKind::kCommWait), "comm_wait");
}

// Several waits inside one gap and waits across gaps: each gap is cut at every one.
TEST(BubbleTest, EveryWaitInEveryGapIsItsOwnSpan) {
  Trace trace;
  Rank rank;
  // compute [0,100), [200,300), [400,500); comm [110,120), [130,140) in the first gap, and
  // [250,450) across the second compute into the second gap: it waits [300,400).
  rank.timelines.push_back(
      Stream(7, {Op(kCompute, 0, 100), Op(kCompute, 200, 300), Op(kCompute, 400, 500)}));
  rank.timelines.push_back(Stream(8, {Op(kComm, 110, 120), Op(kComm, 130, 140)}));
  rank.timelines.push_back(Stream(9, {Op(kComm, 250, 450)}));
  trace.ranks.push_back(std::move(rank));
  Result result = AnalyzeOk(trace);
  ASSERT_EQ(result.iterations.size(), 1u);
  const RankIterationFigures& figures = result.iterations[0].ranks[0];
  EXPECT_EQ(figures.idle_spans, (std::vector<IdleSpan>{{IdleKind::kEmpty, 100, 110},
                                                       {IdleKind::kCommWait, 110, 120},
                                                       {IdleKind::kEmpty, 120, 130},
                                                       {IdleKind::kCommWait, 130, 140},
                                                       {IdleKind::kEmpty, 140, 200},
                                                       {IdleKind::kCommWait, 300, 400}}));
  // Overlapping or not, the union of its communication.
  EXPECT_EQ(figures.comm_spans, (std::vector<TimeRange>{{110, 120}, {130, 140}, {250, 450}}));
  // stall 100 + 100; comm_wait 10 + 10 + 100.
  ExpectSplit(figures, {300, 200, 0, 0, 200, 120, 80});
}

TEST(BubbleTest, CommOverlappingComputeIsNotAWait) {
  Trace trace;
  Rank rank;
  // compute [0,100) and [200,300); comm [50,250) runs under compute for 100 of its 200 ns.
  rank.timelines.push_back(Stream(7, {Op(kCompute, 0, 100), Op(kCompute, 200, 300)}));
  rank.timelines.push_back(Stream(8, {Op(kComm, 50, 250)}));
  trace.ranks.push_back(std::move(rank));
  Result result = AnalyzeOk(trace);
  ASSERT_EQ(result.iterations.size(), 1u);
  ExpectSplit(result.iterations[0].ranks[0], {200, 100, 0, 0, 100, 100, 0});
}

// `interval` as a communication op of `kind` in process group `group` of `rank`.
Interval InGroup(Rank* rank, Interval interval, CommKind kind, uint32_t group) {
  CommInfo info;
  info.kind = kind;
  info.process_group = group;
  rank->comms.push_back(info);
  interval.comm = static_cast<uint32_t>(rank->comms.size() - 1);
  return interval;
}

// A Megatron-style stage: tensor-parallel all-reduces between and under its compute, one wait on
// a pipeline receive, the data-parallel gradient all-reduce after its last backward.
//   compute [0,100), [200,300), [400,500); TP [100,150) and [250,350) on stream 8, TP [260,280)
//   on stream 10 (under both: counted once); a receive [350,380); DP all-reduce [500,600).
// work = compute + TP = [0,150) + [200,350) + [400,500) = 400, of it 100 TP not under compute.
// window [0,600): idle 200 = drain [500,600) 100 + stall [150,200) and [350,400) 100; comm_wait
// the receive's 30, empty 70; the DP sync runs through the whole drain: 100.
Trace TensorParallelStage(std::string description) {
  Trace trace;
  Rank rank;
  rank.rank = 0;
  rank.world_size = 4;
  rank.process_groups.push_back(ProcessGroup{"2", {0, 1}, description});
  rank.process_groups.push_back(ProcessGroup{"3", {0, 2}, "DATA_PARALLEL_GROUP"});
  rank.timelines.push_back(
      Stream(7, {Op(kCompute, 0, 100), Op(kCompute, 200, 300), Op(kCompute, 400, 500)}));
  rank.timelines.push_back(
      Stream(8, {InGroup(&rank, Op(kComm, 100, 150), CommKind::kAllReduce, 0),
                 InGroup(&rank, Op(kComm, 250, 350), CommKind::kAllReduce, 0),
                 InGroup(&rank, Op(kComm, 500, 600), CommKind::kAllReduce, 1)}));
  rank.timelines.push_back(Stream(9, {Op(kComm, 350, 380)}));
  rank.timelines.push_back(
      Stream(10, {InGroup(&rank, Op(kComm, 260, 280), CommKind::kAllReduce, 0)}));
  rank.steps.push_back(ProfilerStep{0, 0, 1000});  // one iteration, whatever repeats in it
  trace.ranks.push_back(std::move(rank));
  return trace;
}

TEST(BubbleTest, InStageCommunicationIsWorkAndTheDpSyncIsItsOwnShare) {
  Result result = AnalyzeOk(TensorParallelStage("TENSOR_MODEL_PARALLEL_GROUP"));
  ASSERT_EQ(result.iterations.size(), 1u);
  const RankIterationFigures& figures = result.iterations[0].ranks[0];
  ExpectSplit(figures, {300, 200, 0, 100, 100, 30, 70});
  EXPECT_EQ(figures.split.in_stage_comm, 100);
  EXPECT_EQ(figures.split.dp_sync, 100);
  EXPECT_EQ(figures.split.compute + figures.split.in_stage_comm + figures.split.idle,
            result.iterations[0].window());
  EXPECT_EQ(figures.idle_spans, (std::vector<IdleSpan>{{IdleKind::kEmpty, 150, 200},
                                                       {IdleKind::kCommWait, 350, 380},
                                                       {IdleKind::kEmpty, 380, 400},
                                                       {IdleKind::kDrain, 500, 600}}));
  EXPECT_EQ(result.per_rank[0].split.in_stage_comm, 100);
  EXPECT_EQ(result.per_rank[0].split.dp_sync, 100);
  // 200 idle of 600.
  EXPECT_DOUBLE_EQ(result.bubble_fraction, 200.0 / 600.0);
}

// The same group described "undefined": its layout (ranks 0,1) only suggests tensor
// parallelism, a guess that changes no figure, so the all-reduces stay communication: work is
// the compute's 300; idle 300 = drain 100 + stall [100,200) and [300,400) 200, of which comm
// runs [100,150), [300,380): comm_wait 130, empty 70.
TEST(BubbleTest, AGuessedGroupRoleChangesNoFigure) {
  Result result = AnalyzeOk(TensorParallelStage("undefined"));
  const RankIterationFigures& figures = result.iterations[0].ranks[0];
  ExpectSplit(figures, {300, 300, 0, 100, 200, 130, 70});
  EXPECT_EQ(figures.split.in_stage_comm, 0);
  EXPECT_EQ(figures.split.dp_sync, 100);
}

// A gloo rank waits for a transfer inside its gloo:recv range, which outlasts the c10d::recv_
// that posted it: compute [0,100) and [200,300); send [100,102), then recv_ [102,110) whose
// gloo:recv runs [105,180). The gap [100,200) is comm_wait [100,180) 80 and empty 20 (the first
// transfer is a send, so the fill ends at the first work, 0).
TEST(BubbleTest, AGlooRangeIsCommunicationOnACpuRank) {
  Trace trace;
  Rank rank;
  rank.rank = 0;
  rank.timelines.push_back(Thread(
      1, {Op(kCpu, 0, 100), InGroup(&rank, Op(kCpuComm, 100, 102), CommKind::kSend, kNoIndex),
          InGroup(&rank, Op(kCpuComm, 102, 110), CommKind::kRecv, kNoIndex), Op(kCpu, 200, 300)}));
  rank.annotations.push_back(CpuRange(&rank, "gloo:recv", 105, 180));
  rank.annotations.back().thread_or_stream = 1;  // the model thread's own range
  rank.steps.push_back(ProfilerStep{0, 0, 1000});
  trace.ranks.push_back(std::move(rank));
  Result result = AnalyzeOk(trace);
  ASSERT_EQ(result.iterations.size(), 1u);
  ExpectSplit(result.iterations[0].ranks[0], {200, 100, 0, 0, 100, 80, 20});
  EXPECT_EQ(result.iterations[0].ranks[0].comm_spans, (std::vector<TimeRange>{{100, 180}}));
}

// A rank whose first transfer is a receive is filling until its first compute once that
// receive has completed: its first forward needs the input. torch's pipelining on gloo splits
// the batch (compute [0,5)) and posts the receive (recv_ [10,20), gloo:recv [15,100)) before
// its first forward [100,200): window [0,200), work 105, idle 95, all of it fill ([5,100));
// no stall, so no comm_wait although the receive runs through it.
TEST(BubbleTest, ARankWhoseFirstTransferIsAReceiveFillsUntilItsFirstComputeAfterIt) {
  Trace trace;
  Rank rank;
  rank.rank = 0;
  rank.timelines.push_back(
      Thread(1, {Op(kCpu, 0, 5), InGroup(&rank, Op(kCpuComm, 10, 20), CommKind::kRecv, kNoIndex),
                 Op(kCpu, 100, 200)}));
  rank.annotations.push_back(CpuRange(&rank, "gloo:recv", 15, 100));
  rank.annotations.back().thread_or_stream = 1;
  rank.steps.push_back(ProfilerStep{0, 0, 1000});
  trace.ranks.push_back(std::move(rank));
  Result result = AnalyzeOk(trace);
  ASSERT_EQ(result.iterations.size(), 1u);
  ExpectSplit(result.iterations[0].ranks[0], {105, 95, 95, 0, 0, 0, 0});
  EXPECT_EQ(result.iterations[0].ranks[0].idle_spans,
            (std::vector<IdleSpan>{{IdleKind::kFill, 5, 100}}));
}

TEST(BubbleTest, RankWithoutComputeIsIdleForTheWholeWindowAsFill) {
  Trace trace = TwoGpuRanks();
  Rank r2;
  r2.rank = 2;
  r2.timelines.push_back(Stream(7, {Op(kComm, 150, 180)}));  // communication only
  trace.ranks.push_back(std::move(r2));
  Result result = AnalyzeOk(trace);
  const IterationFigures& it = result.iterations[0];
  ASSERT_EQ(it.ranks.size(), 3u);
  ExpectSplit(it.ranks[2], {0, 550, 550, 0, 0, 0, 0});
  EXPECT_EQ(it.ranks[2].first_compute_start, 0);
  EXPECT_EQ(it.ranks[2].last_compute_end, 0);
  // 300 + 300 + 550 idle of 3 * 550.
  EXPECT_DOUBLE_EQ(it.bubble_fraction, 1150.0 / 1650.0);
}

// Two ranks, ProfilerSteps 0..2; GPU kernels without launch records go by their own start.
//   step 0: rank 0 computes [0,100), rank 1 [100,200): window 200, idle 100 + 100.
//   step 1: rank 0 computes [1000,1300), rank 1 [1000,1100): window 300, idle 0 + 200.
//   step 2: rank 1's file was cut short, so step 2 is incomplete and left out of the totals.
Trace ThreeSteps() {
  Trace trace;
  for (int32_t id : {0, 1}) {
    Rank rank;
    rank.rank = id;
    rank.steps = {{0, 0, 50}, {1, 1000, 1050}, {2, 2000, 2050}};
    if (id == 0) {
      rank.timelines.push_back(
          Stream(7, {Op(kCompute, 0, 100), Op(kCompute, 1000, 1300), Op(kCompute, 2000, 2100)}));
      rank.memory = {{10, 500, 800, 0}, {20, 700, 600, 0}};
    } else {
      rank.timelines.push_back(
          Stream(7, {Op(kCompute, 100, 200), Op(kCompute, 1000, 1100), Op(kCompute, 2100, 2150)}));
      rank.stats.Bump(ImportCounter::kTruncated, 99);
    }
    trace.ranks.push_back(std::move(rank));
  }
  return trace;
}

TEST(BubbleTest, TotalsAreRatiosOfSumsOverCompleteIterations) {
  Result result = AnalyzeOk(ThreeSteps());
  EXPECT_EQ(result.step_source, iterations::StepSource::kProfilerSteps);
  ASSERT_EQ(result.iterations.size(), 3u);
  EXPECT_TRUE(result.iterations[0].complete);
  EXPECT_TRUE(result.iterations[1].complete);
  EXPECT_FALSE(result.iterations[2].complete);
  // The incomplete iteration is still measured: window [2000,2150), idle 50 + 100.
  EXPECT_EQ(result.iterations[2].window(), 150);
  EXPECT_EQ(result.iterations[2].idle, 150);
  EXPECT_EQ(result.complete_iterations, 2);
  // (200 + 200) / (2 * (200 + 300)) = 0.4, not the mean of 0.5 and 1/3.
  EXPECT_EQ(result.idle, 400);
  EXPECT_EQ(result.capacity, 1000);
  EXPECT_DOUBLE_EQ(result.bubble_fraction, 0.4);
  // rank 0: 100 idle of 500; rank 1: 300 of 500.
  ASSERT_EQ(result.per_rank.size(), 2u);
  EXPECT_EQ(result.per_rank[0].window, 500);
  EXPECT_EQ(result.per_rank[0].split.idle, 100);
  EXPECT_DOUBLE_EQ(result.per_rank[0].bubble_fraction, 0.2);
  EXPECT_EQ(result.per_rank[1].split.idle, 300);
  EXPECT_EQ(result.per_rank[1].split.fill, 100);
  EXPECT_EQ(result.per_rank[1].split.drain, 200);
  EXPECT_DOUBLE_EQ(result.per_rank[1].bubble_fraction, 0.6);
  // Windows {200, 300}: p50 is the 1st, p90 the 2nd smallest.
  EXPECT_EQ(result.latency.iterations, 2);
  EXPECT_EQ(result.latency.p50, 200);
  EXPECT_EQ(result.latency.p90, 300);
  EXPECT_EQ(result.latency.max, 300);
  // Peaks come from different samples; rank 1 has none.
  EXPECT_EQ(result.per_rank[0].memory.allocated_bytes, 700);
  EXPECT_EQ(result.per_rank[0].memory.reserved_bytes, 800);
  EXPECT_EQ(result.per_rank[1].memory.allocated_bytes, -1);
  EXPECT_EQ(result.per_rank[1].memory.reserved_bytes, -1);
}

TEST(BubbleTest, LatencyPercentilesAreNearestRank) {
  // Ten iterations with windows 100, 200, ..., 1000 on one rank, listed out of order in time.
  Trace trace;
  Rank rank;
  std::vector<Interval> kernels;
  for (int64_t i = 0; i < 10; ++i) {
    TimeNs start = 10000 * i;
    TimeNs length = 100 * ((i * 7) % 10 + 1);  // a permutation of 100..1000
    rank.steps.push_back({i, start, start + 10});
    kernels.push_back(Op(kCompute, start, start + length));
  }
  rank.timelines.push_back(Stream(7, std::move(kernels)));
  trace.ranks.push_back(std::move(rank));
  Result result = AnalyzeOk(trace);
  EXPECT_EQ(result.latency.iterations, 10);
  EXPECT_EQ(result.latency.p50, 500);  // 5th of 10
  EXPECT_EQ(result.latency.p90, 900);  // 9th of 10
  EXPECT_EQ(result.latency.max, 1000);
  EXPECT_DOUBLE_EQ(result.bubble_fraction, 0.0);
}

TEST(BubbleTest, LateKernelCountsInTheIterationThatLaunchedIt) {
  // Step 0 launches a kernel at 90 that runs [150,250), after step 1 began at 100; step 1's own
  // kernel runs [120,140). By launch, step 0's window is [10,250) and step 1's [120,140).
  Trace trace;
  Rank rank;
  rank.steps = {{0, 0, 100}, {1, 100, 200}};
  rank.timelines.push_back(
      Thread(1, {Op(kRuntime, 5, 8, 1), Op(kRuntime, 90, 95, 2), Op(kRuntime, 110, 115, 3)}));
  rank.timelines.push_back(
      Stream(7, {Op(kCompute, 10, 50, 1), Op(kCompute, 120, 140, 3), Op(kCompute, 150, 250, 2)}));
  trace.ranks.push_back(std::move(rank));
  Result result = AnalyzeOk(trace);
  ASSERT_EQ(result.iterations.size(), 2u);
  EXPECT_EQ(result.iterations[0].window_start, 10);
  EXPECT_EQ(result.iterations[0].window_end, 250);
  // compute 40 + 100 of 240: the stall [50,150) is empty (step 1's kernel is not step 0's).
  ExpectSplit(result.iterations[0].ranks[0], {140, 100, 0, 0, 100, 0, 100});
  EXPECT_EQ(result.iterations[1].window(), 20);
  ExpectSplit(result.iterations[1].ranks[0], {20, 0, 0, 0, 0, 0, 0});
}

TEST(BubbleTest, UnassignedOpsAreCountedPerRank) {
  Trace trace = ThreeSteps();
  trace.ranks[1].timelines[0].intervals.insert(trace.ranks[1].timelines[0].intervals.begin(),
                                               Op(kCompute, -500, -400));
  Result result = AnalyzeOk(trace);
  EXPECT_EQ(result.per_rank[0].unassigned_intervals, 0);
  EXPECT_EQ(result.per_rank[1].unassigned_intervals, 1);
  // The unassigned kernel widens no window.
  EXPECT_EQ(result.iterations[0].window_start, 0);
}

TEST(BubbleTest, CpuOnlyRankIsMeasuredOnItsModelThread) {
  Trace trace;
  Rank rank;
  // Top-level compute [0,100) (with a nested comm op, which is not a wait: the op around it
  // computes), a top-level c10d op [150,250), compute [300,400). Thread 2 covers less.
  rank.timelines.push_back(Thread(
      1, {Op(kCpu, 0, 100), Op(kCpuComm, 10, 20), Op(kCpuComm, 150, 250), Op(kCpu, 300, 400)}));
  rank.timelines.push_back(Thread(2, {Op(kCpu, 0, 50), Op(kCpu, 420, 500)}));
  trace.ranks.push_back(std::move(rank));
  Result result = AnalyzeOk(trace);
  ASSERT_EQ(result.iterations.size(), 1u);
  EXPECT_EQ(result.iterations[0].window(), 400);
  // stall [100,300) = 200: 100 under the c10d op, 100 with nothing.
  ExpectSplit(result.iterations[0].ranks[0], {200, 200, 0, 0, 200, 100, 100});
  EXPECT_EQ(result.per_rank[0].device, index::DeviceKind::kCpu);
}

// The pipeline is the ranks the driver groups, in stage order; others are left out.
TEST(BubbleTest, OnlyThePipelinesRanksCount) {
  Trace trace = TwoGpuRanks();
  Rank r2;
  r2.rank = 2;
  r2.steps = {{0, 0, 10}};  // gives the trace steps, which ranks 0 and 1 do not have
  r2.timelines.push_back(Stream(7, {Op(kCompute, 0, 1000)}));
  trace.ranks.push_back(std::move(r2));

  Result result = AnalyzeOk(trace, {1, 0});
  EXPECT_EQ(result.ranks, (std::vector<int32_t>{1, 0}));
  // Ranks 0 and 1 have no step (the steps of rank 2, outside this pipeline, make steps the
  // source), so they have no iteration at all: no totals.
  EXPECT_TRUE(result.iterations.empty());
  EXPECT_EQ(result.complete_iterations, 0);
  EXPECT_EQ(result.per_rank[0].unassigned_intervals, 5);  // all of rank 1's ops
  EXPECT_DOUBLE_EQ(result.bubble_fraction, 0.0);

  result = AnalyzeOk(trace, {2});
  ASSERT_EQ(result.iterations.size(), 1u);
  EXPECT_TRUE(result.iterations[0].complete);  // complete for the pipeline of rank 2 alone
  EXPECT_EQ(result.iterations[0].window(), 1000);
  ASSERT_EQ(result.per_rank.size(), 1u);
  EXPECT_EQ(result.per_rank[0].rank, 2);
  EXPECT_EQ(result.per_rank[0].unassigned_intervals, 0);
}

TEST(BubbleTest, AnInvalidIterationMarkerIsAnError) {
  iterations::Options bad_marker;
  bad_marker.iteration_marker = "[";
  EXPECT_EQ(BubbleOf(TwoGpuRanks(), bad_marker).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(BubbleTest, EmptyTraceHasNoBubble) {
  Result result = AnalyzeOk(Trace{});
  EXPECT_TRUE(result.iterations.empty());
  EXPECT_EQ(result.complete_iterations, 0);
  EXPECT_DOUBLE_EQ(result.bubble_fraction, 0.0);
  EXPECT_EQ(result.latency.max, 0);
}

}  // namespace
}  // namespace bubblescope::bubble
