#include "analysis/rank_summary.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "support/timeline_fixtures.h"

namespace bubblescope::rank_summary {
namespace {

using testing::Op;
using testing::Stream;
using testing::Thread;

RankFigures AnalyzeOne(Rank rank) {
  Trace trace;
  trace.ranks.push_back(std::move(rank));
  Result result = Analyze(trace, index::Build(trace));
  EXPECT_EQ(result.ranks.size(), 1u);
  return result.ranks.empty() ? RankFigures{} : result.ranks.front();
}

constexpr IntervalKind kCompute = IntervalKind::kComputeKernel;
constexpr IntervalKind kComm = IntervalKind::kCommKernel;
constexpr IntervalKind kCpu = IntervalKind::kCpuOp;
constexpr IntervalKind kCpuComm = IntervalKind::kCpuCommOp;

Rank TwoStreamRank() {
  Rank rank;
  rank.rank = 3;
  rank.source_path = "/tmp/rank3.json";
  rank.timelines.push_back(
      Stream(7, {Op(kCompute, 100, 200), Op(kCompute, 150, 180), Op(kComm, 300, 400)}));
  rank.timelines.push_back(Stream(8, {Op(kCompute, 180, 250), Op(IntervalKind::kMemcpy, 240, 260),
                                      Op(kComm, 350, 450), Op(IntervalKind::kMemset, 500, 510)}));
  // CPU work of a GPU rank is not device activity, however long it is.
  rank.timelines.push_back(Thread(1, {Op(kCpu, 0, 10000), Op(IntervalKind::kRuntime, 5, 9)}));
  return rank;
}

TEST(RankSummaryTest, GpuRankUnionsOverlapsAcrossStreams) {
  RankFigures f = AnalyzeOne(TwoStreamRank());
  EXPECT_EQ(f.rank, 3);
  EXPECT_EQ(f.source_path, "/tmp/rank3.json");
  EXPECT_FALSE(f.cpu_timeline);
  // compute: [100,200) ∪ [150,180) ∪ [180,250) = [100,250)
  EXPECT_EQ(f.compute, 150);
  // comm: [300,400) ∪ [350,450) = [300,450)
  EXPECT_EQ(f.comm, 150);
  // copies: [240,260) + [500,510)
  EXPECT_EQ(f.memcpy, 30);
  EXPECT_EQ(f.span_start, 100);
  EXPECT_EQ(f.span_end, 510);
  EXPECT_EQ(f.span, 410);
  // busy: [100,260) ∪ [300,450) ∪ [500,510) = 160 + 150 + 10 = 320
  EXPECT_EQ(f.idle, 410 - 320);
  EXPECT_EQ(f.kernels, 5);
  EXPECT_EQ(f.comm_ops, 2);
  EXPECT_EQ(f.memcpys, 2);
  EXPECT_EQ(f.steps, 0);
  EXPECT_EQ(f.peak_allocated_bytes, -1);
  EXPECT_EQ(f.peak_reserved_bytes, -1);
}

// Idle inside the profiler steps, as a job without a pipeline leads with it: steps [50,220)
// and [280,600) overlap the span [100,510) in [100,220) and [280,510) = 120 + 230 = 350; the
// busy time inside them is [100,220) (120) and [300,450) ∪ [500,510) (160) = 280, so 70 idle.
TEST(RankSummaryTest, IdleInsideTheStepsIsMeasuredWithinTheSpan) {
  Rank rank = TwoStreamRank();
  rank.steps = {ProfilerStep{.number = 1, .start = 50, .end = 220},
                ProfilerStep{.number = 2, .start = 280, .end = 600}};
  RankFigures f = AnalyzeOne(std::move(rank));
  EXPECT_EQ(f.steps, 2);
  EXPECT_EQ(f.step_time, 350);
  EXPECT_EQ(f.step_idle, 70);
  EXPECT_EQ(f.idle, 90);  // over the whole span, as before
  // Without steps both are 0.
  RankFigures none = AnalyzeOne(TwoStreamRank());
  EXPECT_EQ(none.step_time, 0);
  EXPECT_EQ(none.step_idle, 0);
}

TEST(RankSummaryTest, ZeroLengthKernelStillBoundsTheSpan) {
  Rank rank = TwoStreamRank();
  rank.timelines[1].intervals.push_back(Op(kCompute, 600, 600));
  RankFigures f = AnalyzeOne(std::move(rank));
  EXPECT_EQ(f.span, 600 - 100);
  EXPECT_EQ(f.idle, 500 - 320);
  EXPECT_EQ(f.compute, 150);
  EXPECT_EQ(f.kernels, 6);
}

TEST(RankSummaryTest, StepsMemoryPeaksAndImportStatsAreCarried) {
  Rank rank = TwoStreamRank();
  rank.steps = {{1, 0, 10}, {2, 10, 20}, {3, 20, 30}};
  rank.memory = {{1, 10, 50, 0}, {2, 30, 40, 0}, {3, 20, 60, 0}};
  rank.stats.Bump(ImportCounter::kTruncated, 4096);
  rank.stats.set_truncation_detail("cut inside an event");
  RankFigures f = AnalyzeOne(std::move(rank));
  EXPECT_EQ(f.steps, 3);
  // The two peaks come from different samples.
  EXPECT_EQ(f.peak_allocated_bytes, 30);
  EXPECT_EQ(f.peak_reserved_bytes, 60);
  EXPECT_EQ(f.import_stats.count(ImportCounter::kTruncated), 1u);
  EXPECT_EQ(f.import_stats.first_offset(ImportCounter::kTruncated), 4096);
  EXPECT_EQ(f.import_stats.truncation_detail(), "cut inside an event");
}

// A CPU-only rank is measured on its host samples; a GPU rank on its device samples alone.
TEST(RankSummaryTest, HostMemoryIsTheCpuOnlyRanksPeak) {
  Rank cpu_rank;
  cpu_rank.timelines.push_back(Thread(1, {Op(kCpu, 0, 100)}));
  cpu_rank.memory = {{.time = 5, .allocated_bytes = 300, .reserved_bytes = 0, .host = true},
                     {.time = 6, .allocated_bytes = 900, .reserved_bytes = 0, .host = true},
                     {.time = 7, .allocated_bytes = 50, .reserved_bytes = 70, .device = 0}};
  RankFigures f = AnalyzeOne(std::move(cpu_rank));
  EXPECT_EQ(f.peak_allocated_bytes, 900);
  EXPECT_EQ(f.peak_reserved_bytes, 0);

  Rank gpu_rank;
  gpu_rank.timelines.push_back(Stream(7, {Op(kCompute, 0, 100)}));
  gpu_rank.memory = {{.time = 5, .allocated_bytes = 900, .reserved_bytes = 900, .host = true},
                     {.time = 7, .allocated_bytes = 50, .reserved_bytes = 70, .device = 0}};
  f = AnalyzeOne(std::move(gpu_rank));
  EXPECT_EQ(f.peak_allocated_bytes, 50);
  EXPECT_EQ(f.peak_reserved_bytes, 70);
}

TEST(RankSummaryTest, ZeroMemorySampleIsAKnownPeak) {
  Rank rank;
  rank.memory = {{5, 0, 0, 0}};
  RankFigures f = AnalyzeOne(std::move(rank));
  EXPECT_EQ(f.peak_allocated_bytes, 0);
  EXPECT_EQ(f.peak_reserved_bytes, 0);
}

TEST(RankSummaryTest, EmptyRankIsAllZero) {
  Rank rank;
  rank.rank = 0;
  RankFigures f = AnalyzeOne(std::move(rank));
  EXPECT_TRUE(f.cpu_timeline);
  EXPECT_EQ(f.span, 0);
  EXPECT_EQ(f.compute, 0);
  EXPECT_EQ(f.comm, 0);
  EXPECT_EQ(f.memcpy, 0);
  EXPECT_EQ(f.idle, 0);
  EXPECT_EQ(f.kernels, 0);
  EXPECT_EQ(f.comm_ops, 0);
  EXPECT_EQ(f.memcpys, 0);
  EXPECT_EQ(f.peak_allocated_bytes, -1);
}

// Thread 2 runs the model: its top-level ops cover 200 ns. Thread 1 covers 100, thread 3 has the
// longest span (1100) but covers 105, thread 4 has the most ops but covers 10.
Rank GlooRank() {
  Rank rank;
  rank.rank = 1;
  rank.backend = "gloo";
  rank.timelines.push_back(Stream(7, {}));  // a stream without activity does not make a GPU rank
  rank.timelines.push_back(Thread(1, {Op(kCpu, 0, 100), Op(kCpu, 10, 20), Op(kCpuComm, 50, 60)}));
  rank.timelines.push_back(Thread(
      2, {
             Op(IntervalKind::kRuntime, 0, 1000),  // not a CPU op: neither counted nor a parent
             Op(kCpu, 0, 80),                      // top-level
             Op(kCpuComm, 10, 30),                 //   nested comm
             Op(kCpu, 40, 70),                     //   nested
             Op(kCpuComm, 45, 50),                 //     nested comm
             Op(kCpuComm, 90, 130),                // top-level comm
             Op(kCpu, 120, 200),  // top-level: overlaps [90,130) but is not inside it
             Op(kCpu, 125, 130),  //   nested
             Op(kCpu, 300, 310),  // top-level
         }));
  rank.timelines.push_back(Thread(3, {Op(kCpu, 0, 5), Op(kCpu, 1000, 1100)}));
  std::vector<Interval> small;
  for (TimeNs t = 0; t < 20; t += 2) small.push_back(Op(kCpu, t, t + 1));
  rank.timelines.push_back(Thread(4, std::move(small)));
  return rank;
}

void ExpectGlooFigures(const RankFigures& f) {
  EXPECT_TRUE(f.cpu_timeline);
  EXPECT_EQ(f.span_start, 0);
  EXPECT_EQ(f.span_end, 310);
  EXPECT_EQ(f.span, 310);
  // top-level kCpuOp: [0,80) [120,200) [300,310)
  EXPECT_EQ(f.compute, 80 + 80 + 10);
  // every comm op: [10,30) [45,50) [90,130)
  EXPECT_EQ(f.comm, 20 + 5 + 40);
  // top-level union: [0,80) ∪ [90,200) ∪ [300,310) = 200
  EXPECT_EQ(f.idle, 310 - 200);
  EXPECT_EQ(f.kernels, 4);
  EXPECT_EQ(f.comm_ops, 3);
  EXPECT_EQ(f.memcpy, 0);
  EXPECT_EQ(f.memcpys, 0);
}

TEST(RankSummaryTest, CpuOnlyRankPicksTheThreadWithTheLargestTopLevelUnion) {
  ExpectGlooFigures(AnalyzeOne(GlooRank()));
}

TEST(RankSummaryTest, CpuOnlyRankDoesNotDependOnIntervalOrder) {
  Rank rank = GlooRank();
  for (Timeline& timeline : rank.timelines) {
    std::reverse(timeline.intervals.begin(), timeline.intervals.end());
  }
  ExpectGlooFigures(AnalyzeOne(std::move(rank)));
}

TEST(RankSummaryTest, SameStartAndIdenticalOpsNestInsideTheLongest) {
  Rank rank;
  // [0,50) twice and [0,20): only the first [0,50) is top-level; comm [0,20) still counts as comm.
  rank.timelines.push_back(Thread(1, {Op(kCpu, 0, 50), Op(kCpu, 0, 50), Op(kCpuComm, 0, 20)}));
  RankFigures f = AnalyzeOne(std::move(rank));
  EXPECT_EQ(f.kernels, 1);
  EXPECT_EQ(f.compute, 50);
  EXPECT_EQ(f.comm, 20);
  EXPECT_EQ(f.comm_ops, 1);
  EXPECT_EQ(f.span, 50);
  EXPECT_EQ(f.idle, 0);
}

TEST(RankSummaryTest, CpuThreadTieKeepsTheFirstThread) {
  Rank rank;
  rank.timelines.push_back(Thread(5, {Op(kCpuComm, 0, 10)}));
  rank.timelines.push_back(Thread(6, {Op(kCpu, 0, 10)}));
  RankFigures f = AnalyzeOne(std::move(rank));
  EXPECT_EQ(f.comm, 10);
  EXPECT_EQ(f.compute, 0);
}

TEST(RankSummaryTest, RanksKeepTraceOrder) {
  Trace trace;
  for (int32_t id : {0, 1, 2}) {
    Rank rank;
    rank.rank = id;
    rank.timelines.push_back(Stream(7, {Op(kCompute, 0, 10 * (id + 1))}));
    trace.ranks.push_back(std::move(rank));
  }
  Result result = Analyze(trace, index::Build(trace));
  ASSERT_EQ(result.ranks.size(), 3u);
  for (int32_t id : {0, 1, 2}) {
    EXPECT_EQ(result.ranks[static_cast<size_t>(id)].rank, id);
    EXPECT_EQ(result.ranks[static_cast<size_t>(id)].compute, 10 * (id + 1));
  }
}

}  // namespace
}  // namespace bubblescope::rank_summary
