#include "watch/rank_window.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace bubblescope::watch {
namespace {

// A rank part with one CPU thread (a step range and a launch) and one stream (a send kernel of
// process group `group`), all within [start, start + 100).
Rank Part(int64_t step, TimeNs start, const std::string& group) {
  Rank rank;
  rank.rank = 3;
  rank.host = "node7";
  const NameId step_name = rank.names.Intern("ProfilerStep#" + std::to_string(step));
  const NameId launch = rank.names.Intern("cudaLaunchKernel");
  const NameId kernel = rank.names.Intern("ncclDevKernel_SendRecv");
  const NameId send = rank.names.Intern("send");
  rank.process_groups.push_back({.name = group, .ranks = {3, 4}});
  rank.comms.push_back(
      {.bytes = 64, .peer = 4, .process_group = 0, .collective = send, .kind = CommKind::kSend});
  Timeline& cpu = rank.timelines.emplace_back();
  cpu.kind = TimelineKind::kCpuThread;
  cpu.pid = 10;
  cpu.id = 11;
  cpu.intervals.push_back({.start = start + 10,
                           .end = start + 15,
                           .correlation = step + 1,
                           .name = launch,
                           .kind = IntervalKind::kRuntime});
  Timeline& stream = rank.timelines.emplace_back();
  stream.kind = TimelineKind::kGpuStream;
  stream.device = 0;
  stream.id = 7;
  stream.intervals.push_back({.start = start + 20,
                              .end = start + 90,
                              .correlation = step + 1,
                              .name = kernel,
                              .comm = 0,
                              .kind = IntervalKind::kCommKernel});
  rank.annotations.push_back({.start = start, .end = start + 100, .name = step_name});
  rank.steps.push_back({.number = step, .start = start, .end = start + 100});
  rank.memory.push_back({.time = start + 50, .allocated_bytes = 1000 + step, .device = 0});
  return rank;
}

const Timeline& Of(const Rank& rank, TimelineKind kind) {
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind == kind) return timeline;
  }
  ADD_FAILURE() << "no such timeline";
  return rank.timelines.at(0);
}
const Timeline& Stream(const Rank& rank) { return Of(rank, TimelineKind::kGpuStream); }
const Timeline& Thread(const Rank& rank) { return Of(rank, TimelineKind::kCpuThread); }

TEST(RankWindowTest, AppendedPartsShareTimelinesNamesAndGroups) {
  Rank held;
  AppendRank(held, Part(0, 0, "pp"));
  AppendRank(held, Part(1, 100, "pp"));
  AppendRank(held, Part(2, 200, "dp"));
  EXPECT_EQ(held.rank, 3);
  EXPECT_EQ(held.host, "node7");
  ASSERT_EQ(held.timelines.size(), 2u);  // one thread and one stream, matched across parts
  ASSERT_EQ(Stream(held).intervals.size(), 3u);
  ASSERT_EQ(held.process_groups.size(), 2u);  // "pp" once, then "dp"
  ASSERT_EQ(held.comms.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const Interval& kernel = Stream(held).intervals[i];
    EXPECT_EQ(kernel.start, static_cast<TimeNs>(100 * i + 20));
    EXPECT_EQ(held.name(kernel.name), "ncclDevKernel_SendRecv");
    ASSERT_EQ(kernel.comm, i);
    EXPECT_EQ(held.name(held.comm(kernel)->collective), "send");
    EXPECT_EQ(held.comm(kernel)->process_group, i < 2 ? 0u : 1u);
  }
  ASSERT_EQ(held.steps.size(), 3u);
  EXPECT_EQ(held.steps[2].number, 2);
  EXPECT_EQ(held.name(held.annotations[1].name), "ProfilerStep#1");
  // The three kernel, launch, send names once, and three step names (plus the empty name).
  EXPECT_EQ(held.names.size(), 7u);
}

TEST(RankWindowTest, PartsReadOutOfOrderAreSortedBack) {
  Rank held;
  AppendRank(held, Part(1, 100, "pp"));
  AppendRank(held, Part(0, 0, "pp"));
  EXPECT_EQ(held.steps[0].number, 0);
  EXPECT_EQ(Thread(held).intervals[0].start, 10);
  EXPECT_EQ(held.annotations[0].start, 0);
  EXPECT_EQ(held.memory[0].time, 50);
}

TEST(RankWindowTest, TrimmingDropsTheOldStepsAndWhatOnlyTheyNamed) {
  Rank held;
  for (int64_t step = 0; step < 4; ++step) AppendRank(held, Part(step, 100 * step, "pp"));
  TrimRankBefore(held, 200);
  ASSERT_EQ(held.steps.size(), 2u);
  EXPECT_EQ(held.steps[0].number, 2);
  EXPECT_EQ(Thread(held).intervals.size(), 2u);
  ASSERT_EQ(Stream(held).intervals.size(), 2u);
  EXPECT_EQ(held.annotations.size(), 2u);
  EXPECT_EQ(held.memory.size(), 2u);
  // Two comms left, re-indexed from 0; names: empty, 3 kept op names, 2 step names.
  ASSERT_EQ(held.comms.size(), 2u);
  EXPECT_EQ(Stream(held).intervals[0].comm, 0u);
  EXPECT_EQ(Stream(held).intervals[1].comm, 1u);
  EXPECT_EQ(held.names.size(), 6u);
  EXPECT_EQ(held.name(held.annotations[0].name), "ProfilerStep#2");
  EXPECT_EQ(held.name(held.comm(Stream(held).intervals[1])->collective), "send");
  EXPECT_EQ(held.name(Stream(held).intervals[0].name), "ncclDevKernel_SendRecv");
}

TEST(RankWindowTest, AnIntervalAcrossTheCutIsKeptWhole) {
  Rank held = Part(0, 0, "pp");
  TrimRankBefore(held, 50);  // the kernel runs 20..90
  ASSERT_EQ(Stream(held).intervals.size(), 1u);
  EXPECT_EQ(Stream(held).intervals[0].start, 20);
  EXPECT_TRUE(Thread(held).intervals.empty());  // the launch ended at 15
  EXPECT_TRUE(held.steps.empty());
}

TEST(RankWindowTest, AStepIsSettledOnceTheNextHasBegunOrTheFileIsFinished) {
  Rank held;
  EXPECT_EQ(SettledStep(held, true), std::nullopt);
  AppendRank(held, Part(5, 0, "pp"));
  EXPECT_EQ(SettledStep(held, false), std::nullopt);
  EXPECT_EQ(SettledStep(held, true), 5);
  AppendRank(held, Part(6, 100, "pp"));
  EXPECT_EQ(SettledStep(held, false), 5);
  EXPECT_EQ(SettledStep(held, true), 6);
  EXPECT_EQ(StepStart(held, 6), 100);
  EXPECT_EQ(StepStart(held, 7), std::nullopt);
}

}  // namespace
}  // namespace bubblescope::watch
