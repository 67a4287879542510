#include "analysis/device_activity.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "analysis/timeline_fixtures.h"
#include "gtest/gtest.h"

namespace bubblescope::device_activity {
namespace {

using namespace bubblescope::testing;  // NOLINT(build/namespaces): test builders only

struct Expected {
  TimeNs start;
  TimeNs end;
  ActivityClass activity;
  int64_t correlation;
};

void ExpectIntervals(const Rank& rank, const RankActivity& activity,
                     const std::vector<Expected>& expected) {
  ASSERT_EQ(activity.intervals.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(i);
    const DeviceInterval& got = activity.intervals[i];
    EXPECT_EQ(got.start, expected[i].start);
    EXPECT_EQ(got.end, expected[i].end);
    EXPECT_EQ(got.activity, expected[i].activity);
    EXPECT_EQ(got.correlation, expected[i].correlation);
    // The indices lead back to the very interval of the rank.
    const Interval& source = rank.timelines[got.timeline].intervals[got.interval];
    EXPECT_EQ(source.start, expected[i].start);
    EXPECT_EQ(source.end, expected[i].end);
  }
}

TEST(DeviceActivityTest, GpuRankTakesEveryStreamAndNoCpuWork) {
  Rank rank;
  rank.rank = 4;
  rank.timelines.push_back(Thread(1, {Op(kCpu, 0, 1000), Op(kRuntime, 5, 9, 11)}));
  rank.timelines.push_back(Stream(7, {Op(kCompute, 100, 200, 11), Op(kComm, 300, 400, 12),
                                      Op(IntervalKind::kMemset, 500, 510)}));
  rank.timelines.push_back(
      Stream(8, {Op(kCompute, 100, 250, 13), Op(IntervalKind::kMemcpy, 240, 260),
                 Op(kCompute, 600, 600, 14)}));
  RankActivity activity = ForRank(rank);
  EXPECT_EQ(activity.rank, 4);
  EXPECT_EQ(activity.kind, DeviceKind::kGpu);
  EXPECT_EQ(activity.model_thread, -1);
  // Start order across streams; equal starts put the longer first; zero-length ops are kept.
  ExpectIntervals(rank, activity,
                  {{100, 250, ActivityClass::kCompute, 13},
                   {100, 200, ActivityClass::kCompute, 11},
                   {240, 260, ActivityClass::kCopy, 0},
                   {300, 400, ActivityClass::kComm, 12},
                   {500, 510, ActivityClass::kCopy, 0},
                   {600, 600, ActivityClass::kCompute, 14}});
}

// Thread 2 runs the model: its top-level ops cover 200 ns; thread 1 covers 100, thread 3 spans
// the longest time (1100) but covers 105.
Rank GlooRank() {
  Rank rank;
  rank.rank = 1;
  rank.timelines.push_back(Stream(7, {}));  // a stream without activity does not make a GPU rank
  rank.timelines.push_back(Thread(1, {Op(kCpu, 0, 100), Op(kCpuComm, 50, 60)}));
  std::vector<Interval> model_ops = {
      Op(kRuntime, 0, 1000),  // not a CPU op: neither counted nor a parent
      Op(kCpu, 0, 80),        // top-level
      Op(kCpuComm, 10, 30),   //   nested comm
      Op(kCpuComm, 90, 130),  // top-level comm
      Op(kCpu, 120, 200),     // top-level: overlaps [90,130) but is not inside it
      Op(kCpu, 125, 130),     //   nested
      Op(kCpu, 300, 310),     // top-level
  };
  rank.timelines.push_back(Thread(2, std::move(model_ops)));
  rank.timelines.push_back(Thread(3, {Op(kCpu, 0, 5), Op(kCpu, 1000, 1100)}));
  return rank;
}

TEST(DeviceActivityTest, CpuRankUsesTheTopLevelOpsOfTheModelThread) {
  Rank rank = GlooRank();
  RankActivity activity = ForRank(rank);
  EXPECT_EQ(activity.kind, DeviceKind::kCpu);
  EXPECT_EQ(activity.model_thread, 2);
  ExpectIntervals(rank, activity,
                  {{0, 80, ActivityClass::kCompute, 0},
                   {90, 130, ActivityClass::kComm, 0},
                   {120, 200, ActivityClass::kCompute, 0},
                   {300, 310, ActivityClass::kCompute, 0}});
}

TEST(DeviceActivityTest, CpuRankDoesNotDependOnIntervalOrder) {
  Rank rank = GlooRank();
  for (Timeline& timeline : rank.timelines) {
    std::reverse(timeline.intervals.begin(), timeline.intervals.end());
  }
  RankActivity activity = ForRank(rank);
  EXPECT_EQ(activity.model_thread, 2);
  ExpectIntervals(rank, activity,
                  {{0, 80, ActivityClass::kCompute, 0},
                   {90, 130, ActivityClass::kComm, 0},
                   {120, 200, ActivityClass::kCompute, 0},
                   {300, 310, ActivityClass::kCompute, 0}});
}

TEST(DeviceActivityTest, RankWithoutAnyOpHasNoDevice) {
  Rank rank;
  rank.timelines.push_back(Thread(1, {Op(kRuntime, 0, 10)}));
  RankActivity activity = ForRank(rank);
  EXPECT_EQ(activity.kind, DeviceKind::kCpu);
  EXPECT_EQ(activity.model_thread, -1);
  EXPECT_TRUE(activity.intervals.empty());
}

TEST(DeviceActivityTest, AnalyzeKeepsTraceOrder) {
  Trace trace;
  trace.ranks.push_back(GlooRank());
  trace.ranks.back().rank = 0;
  Rank gpu;
  gpu.rank = 1;
  gpu.timelines.push_back(Stream(7, {Op(kCompute, 0, 10)}));
  trace.ranks.push_back(std::move(gpu));
  Result result = Analyze(trace, Options{});
  ASSERT_EQ(result.ranks.size(), 2u);
  EXPECT_EQ(result.ranks[0].rank, 0);
  EXPECT_EQ(result.ranks[0].kind, DeviceKind::kCpu);
  EXPECT_EQ(result.ranks[0].intervals.size(), 4u);
  EXPECT_EQ(result.ranks[1].rank, 1);
  EXPECT_EQ(result.ranks[1].kind, DeviceKind::kGpu);
  EXPECT_EQ(result.ranks[1].intervals.size(), 1u);
}

}  // namespace
}  // namespace bubblescope::device_activity
