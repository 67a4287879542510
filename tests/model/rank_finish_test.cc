#include "bubblescope/rank_finish.h"

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace bubblescope {
namespace {

Interval Span(TimeNs start, TimeNs end, int64_t correlation = 0) {
  Interval interval;
  interval.start = start;
  interval.end = end;
  interval.correlation = correlation;
  return interval;
}

std::vector<std::pair<TimeNs, TimeNs>> Spans(const std::vector<Interval>& intervals) {
  std::vector<std::pair<TimeNs, TimeNs>> spans;
  for (const Interval& interval : intervals) spans.emplace_back(interval.start, interval.end);
  return spans;
}

// By start; at one start the longer first; equal ones keep the order they were read in.
TEST(RankFinishTest, IntervalsSortByStartThenLongerFirstStably) {
  std::vector<Interval> intervals = {Span(30, 40), Span(10, 12, 1), Span(10, 20), Span(10, 12, 2),
                                     Span(5, 50)};
  SortIntervals(&intervals);
  EXPECT_EQ(Spans(intervals), (std::vector<std::pair<TimeNs, TimeNs>>{
                                  {5, 50}, {10, 20}, {10, 12}, {10, 12}, {30, 40}}));
  EXPECT_EQ(intervals[2].correlation, 1);
  EXPECT_EQ(intervals[3].correlation, 2);
  EXPECT_TRUE(IntervalBefore(Span(10, 20), Span(10, 12)));
  EXPECT_FALSE(IntervalBefore(Span(10, 12), Span(10, 12)));
}

TEST(RankFinishTest, SpanProblemsAreTheCountersReadersBump) {
  EXPECT_EQ(SpanProblem(10, 10), std::nullopt);
  EXPECT_EQ(SpanProblem(10, 9), ImportCounter::kNegativeDuration);
  EXPECT_EQ(SpanProblem(-kMaxTimeNs, kMaxTimeNs), std::nullopt);
  EXPECT_EQ(SpanProblem(0, kMaxTimeNs + 1), ImportCounter::kTimeOutOfRange);
  EXPECT_EQ(SpanProblem(-kMaxTimeNs - 1, 0), ImportCounter::kTimeOutOfRange);
  EXPECT_EQ(CheckedAdd(INT64_MAX, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd(-5, 7), 2);
}

TEST(RankFinishTest, AProcessGroupIsKeptOnceAndFilledInAsItIsLearnt) {
  Rank rank;
  ProcessGroupTable groups(&rank);
  const std::vector<int32_t> pipeline = {0, 4};
  EXPECT_EQ(groups.Add("3", "", nullptr), 0u);
  EXPECT_EQ(groups.Add("3", "PIPELINE_MODEL_PARALLEL_GROUP", &pipeline), 0u);
  EXPECT_EQ(groups.Add("3", "other", nullptr), 0u);
  ASSERT_EQ(rank.process_groups.size(), 1u);
  EXPECT_EQ(rank.process_groups[0].ranks, pipeline);
  EXPECT_EQ(rank.process_groups[0].description, "PIPELINE_MODEL_PARALLEL_GROUP");  // the first
  // Unnamed: one group per rank list, else per description, else the one unknown group.
  EXPECT_EQ(groups.Add("", "", &pipeline), 1u);
  EXPECT_EQ(groups.Add("", "mesh_tp", &pipeline), 1u);
  EXPECT_EQ(groups.Add("", "mesh_tp", nullptr), 2u);
  EXPECT_EQ(groups.Add("", "", nullptr), 3u);
  EXPECT_EQ(groups.Add("", "", nullptr), 3u);
  ASSERT_EQ(rank.process_groups.size(), 4u);
  EXPECT_EQ(rank.process_groups[1].name, "");
  EXPECT_EQ(rank.process_groups[1].description, "mesh_tp");
}

TEST(RankFinishTest, FinishPutsTheRankInTheModelsOrders) {
  Rank rank;
  Timeline cpu{.kind = TimelineKind::kCpuThread, .device = -1, .pid = 7, .id = 2, .intervals = {}};
  Timeline other_cpu = cpu;
  other_cpu.id = 1;
  Timeline stream{.kind = TimelineKind::kGpuStream,
                  .device = 1,
                  .pid = 0,
                  .id = 3,
                  .intervals = {Span(20, 30), Span(10, 15)}};
  Timeline first_stream = stream;
  first_stream.device = 0;
  first_stream.id = 9;
  rank.timelines = {cpu, stream, other_cpu, first_stream};
  rank.annotations = {Annotation{.start = 5, .end = 6}, Annotation{.start = 1, .end = 2},
                      Annotation{.start = 1, .end = 9}};
  rank.steps = {ProfilerStep{.number = 2, .start = 50, .end = 60},
                ProfilerStep{.number = 1, .start = 10, .end = 50}};
  rank.memory = {MemorySample{.time = 9}, MemorySample{.time = 3}};
  FinishRank(FinishOptions(), &rank);
  ASSERT_EQ(rank.timelines.size(), 4u);
  EXPECT_EQ(rank.timelines[0].device, 0);  // GPU streams by device, then stream
  EXPECT_EQ(rank.timelines[1].device, 1);
  EXPECT_EQ(rank.timelines[2].id, 1);  // then CPU threads by pid, then tid
  EXPECT_EQ(rank.timelines[3].id, 2);
  EXPECT_EQ(Spans(rank.timelines[1].intervals),
            (std::vector<std::pair<TimeNs, TimeNs>>{{10, 15}, {20, 30}}));
  EXPECT_EQ(rank.annotations[0].end, 9);
  EXPECT_EQ(rank.annotations[1].end, 2);
  EXPECT_EQ(rank.annotations[2].start, 5);
  EXPECT_EQ(rank.steps[0].number, 1);
  EXPECT_EQ(rank.memory[0].time, 3);
  EXPECT_EQ(rank.stats.count(ImportCounter::kTimeOutOfRange), 0u);
}

// The base moves every time; what it moves out of the model's range is dropped and counted
// once per item, at the base's own offset in the file.
TEST(RankFinishTest, TheBaseMovesEveryTimeAndDropsWhatLeavesTheRange) {
  Rank rank;
  const TimeNs near_top = kMaxTimeNs - 1000;
  rank.timelines.push_back(Timeline{.kind = TimelineKind::kGpuStream,
                                    .device = 0,
                                    .pid = 0,
                                    .id = 7,
                                    .intervals = {Span(100, 200), Span(near_top, near_top)}});
  rank.annotations = {Annotation{.start = 10, .end = near_top}};
  rank.steps = {ProfilerStep{.number = 1, .start = 0, .end = 300}};
  rank.memory = {MemorySample{.time = near_top}, MemorySample{.time = 40}};
  FinishRank(FinishOptions{.base_ns = 5000, .base_offset = 77}, &rank);
  EXPECT_EQ(Spans(rank.timelines[0].intervals),
            (std::vector<std::pair<TimeNs, TimeNs>>{{5100, 5200}}));
  EXPECT_TRUE(rank.annotations.empty());
  ASSERT_EQ(rank.steps.size(), 1u);
  EXPECT_EQ(rank.steps[0].end, 5300);
  ASSERT_EQ(rank.memory.size(), 1u);
  EXPECT_EQ(rank.memory[0].time, 5040);
  EXPECT_EQ(rank.stats.count(ImportCounter::kTimeOutOfRange), 3u);
  EXPECT_EQ(rank.stats.first_offset(ImportCounter::kTimeOutOfRange), 77);
}

// torch closes a profiler window the training loop left early with a step in which nothing runs:
// a step whose slot (to the next step's start; the last, to the end of time) holds no interval
// of any timeline is dropped and counted; one holding even a CPU op is kept.
TEST(RankFinishTest, AStepInWhichTheRankRecordedNothingIsDroppedAndCounted) {
  Rank rank;
  rank.timelines.push_back(Timeline{.kind = TimelineKind::kCpuThread,
                                    .device = -1,
                                    .pid = 1,
                                    .id = 1,
                                    .intervals = {Span(10, 40), Span(55, 58)}});
  rank.timelines.push_back(Timeline{.kind = TimelineKind::kGpuStream,
                                    .device = 0,
                                    .pid = 0,
                                    .id = 7,
                                    .intervals = {Span(45, 49)}});
  // Step 2 holds only the CPU op at 55 (kept), step 3 nothing at all, step 4 only a kernel that
  // began before it (dropped: what began in step 1 is step 1's).
  rank.steps = {ProfilerStep{.number = 1, .start = 0, .end = 50},
                ProfilerStep{.number = 2, .start = 50, .end = 60},
                ProfilerStep{.number = 3, .start = 60, .end = 61},
                ProfilerStep{.number = 4, .start = 70, .end = 71}};
  FinishRank(FinishOptions(), &rank);
  ASSERT_EQ(rank.steps.size(), 2u);
  EXPECT_EQ(rank.steps[0].number, 1);
  EXPECT_EQ(rank.steps[1].number, 2);
  EXPECT_EQ(rank.stats.count(ImportCounter::kEmptyProfilerStep), 2u);
  EXPECT_EQ(CounterSpec(ImportCounter::kEmptyProfilerStep).severity, Severity::kInfo);
}

// A file cut short may have lost its last step's events: its steps are all kept.
TEST(RankFinishTest, AFileCutShortKeepsItsSteps) {
  Rank rank;
  rank.timelines.push_back(Timeline{.kind = TimelineKind::kCpuThread,
                                    .device = -1,
                                    .pid = 1,
                                    .id = 1,
                                    .intervals = {Span(10, 40)}});
  rank.steps = {ProfilerStep{.number = 1, .start = 0, .end = 50},
                ProfilerStep{.number = 2, .start = 50, .end = 60}};
  rank.stats.Bump(ImportCounter::kTruncated, 900);
  FinishRank(FinishOptions(), &rank);
  EXPECT_EQ(rank.steps.size(), 2u);
  EXPECT_EQ(rank.stats.count(ImportCounter::kEmptyProfilerStep), 0u);
}

// A step number the rank already has, and a step that begins before the one before it ends,
// are kept and counted as warnings, which the report's headline names: duplicated numbers read
// silently gave a bubble of 69.6%. Steps 1, 2 and 2 again (10 to 20 overlapping 15 to 30) and
// a third 2 (40 to 50): two duplicates, one overlap.
TEST(RankFinishTest, DuplicateAndOverlappingStepsAreCountedAsWarnings) {
  Rank rank;
  rank.timelines.push_back(
      Timeline{.kind = TimelineKind::kCpuThread,
               .device = -1,
               .pid = 1,
               .id = 1,
               .intervals = {Span(1, 2), Span(11, 12), Span(16, 17), Span(41, 42)}});
  rank.steps = {ProfilerStep{.number = 1, .start = 0, .end = 10},
                ProfilerStep{.number = 2, .start = 10, .end = 20},
                ProfilerStep{.number = 2, .start = 15, .end = 30},
                ProfilerStep{.number = 2, .start = 40, .end = 50}};
  FinishRank(FinishOptions(), &rank);
  EXPECT_EQ(rank.steps.size(), 4u);
  EXPECT_EQ(rank.stats.count(ImportCounter::kDuplicateProfilerStep), 2u);
  EXPECT_EQ(rank.stats.count(ImportCounter::kOverlappingProfilerStep), 1u);
  EXPECT_EQ(CounterSpec(ImportCounter::kDuplicateProfilerStep).severity, Severity::kWarning);
  EXPECT_EQ(CounterSpec(ImportCounter::kOverlappingProfilerStep).severity, Severity::kWarning);
  EXPECT_TRUE(rank.stats.HasAtLeast(Severity::kWarning));

  // Distinct numbers back to back (one ends where the next begins) are no problem.
  Rank clean;
  clean.timelines = rank.timelines;
  clean.steps = {ProfilerStep{.number = 1, .start = 0, .end = 10},
                 ProfilerStep{.number = 2, .start = 10, .end = 20}};
  FinishRank(FinishOptions(), &clean);
  EXPECT_FALSE(clean.stats.HasAtLeast(Severity::kWarning));
}

// Events within a day of zero beside events timed from the epoch cannot be on one clock: the
// fewer of the two kinds are counted, read before the base moves them. A boot clock (days of
// uptime) or the epoch alone, with or without a base, is one clock.
TEST(RankFinishTest, RelativeAndAbsoluteTimesInOneRankAreCounted) {
  constexpr TimeNs kEpoch = TimeNs{1'700'000'000} * 1'000'000'000;
  constexpr TimeNs kDay = TimeNs{86'400} * 1'000'000'000;
  auto rank_with = [](std::vector<Interval> intervals, std::vector<Annotation> annotations) {
    Rank rank;
    rank.timelines.push_back(Timeline{.kind = TimelineKind::kGpuStream,
                                      .device = 0,
                                      .pid = 0,
                                      .id = 7,
                                      .intervals = std::move(intervals)});
    rank.annotations = std::move(annotations);
    return rank;
  };
  Rank mixed = rank_with({Span(100, 200), Span(300, 400), Span(kEpoch, kEpoch + 50)},
                         {Annotation{.start = kEpoch + 10, .end = kEpoch + 20}});
  FinishRank(FinishOptions{.base_ns = 5000, .base_offset = 1}, &mixed);
  EXPECT_EQ(mixed.stats.count(ImportCounter::kMixedTimeBases), 2u);
  EXPECT_EQ(CounterSpec(ImportCounter::kMixedTimeBases).severity, Severity::kWarning);
  for (const std::vector<Interval>& one_clock :
       {std::vector<Interval>{Span(100, 200), Span(kDay - 1, kDay)},
        std::vector<Interval>{Span(kEpoch, kEpoch + 5), Span(kEpoch + 9, kEpoch + 10)},
        std::vector<Interval>{Span(3 * kDay, 3 * kDay + 5), Span(900 * kDay, 900 * kDay + 1)}}) {
    Rank rank = rank_with(one_clock, {});
    FinishRank(FinishOptions{.base_ns = 5000, .base_offset = 1}, &rank);
    EXPECT_EQ(rank.stats.count(ImportCounter::kMixedTimeBases), 0u) << one_clock.front().start;
  }
}

// A rank that launches kernels and records none of them (Kineto profiled without
// ProfilerActivity.CUDA: cudaLaunchKernel calls, a cuda_profiler_range, no kernel) counts each
// launch as a warning; other runtime calls are not launches. With one kernel recorded, or in a
// file cut short (whose cut may have taken the kernels), nothing is counted.
TEST(RankFinishTest, LaunchesOnARankWithoutDeviceActivityAreCounted) {
  const auto runtime_thread = [](Rank& rank) {
    Timeline thread{
        .kind = TimelineKind::kCpuThread, .device = -1, .pid = 1, .id = 1, .intervals = {}};
    for (const std::string_view name :
         {"cudaLaunchKernel", "cudaLaunchKernel", "cuLaunchKernel", "cudaGraphLaunch",
          "cudaMemcpyAsync", "cudaStreamSynchronize"}) {
      Interval call = Span(static_cast<TimeNs>(thread.intervals.size()) * 10,
                           static_cast<TimeNs>(thread.intervals.size()) * 10 + 5);
      call.kind = IntervalKind::kRuntime;
      call.name = rank.names.Intern(name);
      thread.intervals.push_back(call);
    }
    Interval op = Span(0, 60);
    op.kind = IntervalKind::kCpuOp;
    op.name = rank.names.Intern("cudaLaunchKernel");  // an op of that name is no runtime call
    thread.intervals.push_back(op);
    return thread;
  };
  Rank blind;
  blind.timelines.push_back(runtime_thread(blind));
  FinishRank(FinishOptions(), &blind);
  EXPECT_EQ(blind.stats.count(ImportCounter::kLaunchWithoutDeviceActivity), 4u);
  EXPECT_EQ(CounterSpec(ImportCounter::kLaunchWithoutDeviceActivity).severity, Severity::kWarning);
  EXPECT_EQ(CounterSpec(ImportCounter::kLaunchWithoutDeviceActivity).name,
            "launch_without_device_activity");

  Rank seen;
  seen.timelines.push_back(runtime_thread(seen));
  seen.timelines.push_back(Timeline{.kind = TimelineKind::kGpuStream,
                                    .device = 0,
                                    .pid = 0,
                                    .id = 7,
                                    .intervals = {Span(2, 4, 1)}});
  FinishRank(FinishOptions(), &seen);
  EXPECT_EQ(seen.stats.count(ImportCounter::kLaunchWithoutDeviceActivity), 0u);

  Rank cut;
  cut.timelines.push_back(runtime_thread(cut));
  cut.stats.Bump(ImportCounter::kTruncated, 100);
  FinishRank(FinishOptions(), &cut);
  EXPECT_EQ(cut.stats.count(ImportCounter::kLaunchWithoutDeviceActivity), 0u);
}

}  // namespace
}  // namespace bubblescope
