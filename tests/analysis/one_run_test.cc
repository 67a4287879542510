#include "analysis/one_run.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace bubblescope::one_run {
namespace {

constexpr TimeNs kSecond = 1'000'000'000;
// 2022-03-14 10:00 and 2024-06-02 08:00 UTC, in seconds since the epoch.
constexpr TimeNs kMarch2022 = TimeNs{1'647'252'000} * kSecond;
constexpr TimeNs kJune2024 = TimeNs{1'717'315'200} * kSecond;

struct RankFacts {
  int32_t id = 0;
  int32_t world_size = 2;
  std::string device = {};
  TimeNs start = 0;  // the span, on the rank's own clock
  TimeNs end = 0;
};

// A job of ranks with what their files say (one file each), and their spans as the per-rank
// summary gives them.
struct Job {
  Trace trace;
  rank_summary::Result summary;

  Rank& Add(const RankFacts& facts) {
    Rank& rank = trace.ranks.emplace_back();
    rank.rank = facts.id;
    rank.world_size = facts.world_size;
    rank.source_path = "rank" + std::to_string(facts.id) + ".json";
    if (!facts.device.empty()) rank.devices.push_back(DeviceInfo{.id = 0, .name = facts.device});
    rank_summary::RankFigures& figures = summary.ranks.emplace_back();
    figures.rank = facts.id;
    figures.span_start = facts.start;
    figures.span_end = facts.end;
    figures.span = facts.end - facts.start;
    return rank;
  }
  Result Compared() const { return Compare(trace, summary); }
};

// The case: a 2022 V100 trace and a 2024 A100 trace, both of world size 2. Their spans
// (2 s each) lie 810 days and 22 hours apart: no run of one job does that, so it is a proof;
// the GPU models differ, which alone is only a sign.
TEST(OneRunTest, TracesYearsApartCannotBeOneRun) {
  Job job;
  job.Add({.id = 0,
           .device = "Tesla V100-SXM2-16GB",
           .start = kMarch2022,
           .end = kMarch2022 + 2 * kSecond});
  job.Add({.id = 1,
           .device = "NVIDIA A100-SXM4-40GB",
           .start = kJune2024,
           .end = kJune2024 + 2 * kSecond});
  const Result result = job.Compared();
  EXPECT_TRUE(result.CannotBeOneRun());
  ASSERT_EQ(result.signs.size(), 2u);
  EXPECT_EQ(result.signs[0].kind, SignKind::kTimes);
  EXPECT_TRUE(result.signs[0].conclusive);
  EXPECT_EQ(result.signs[0].rank_a, 0);
  EXPECT_EQ(result.signs[0].rank_b, 1);
  EXPECT_EQ(result.signs[0].detail,
            "rank 0's events end 810 days before rank 1's begin (2022-03-14, 2024-06-02), "
            "without overlap");
  EXPECT_EQ(result.signs[1].kind, SignKind::kDevices);
  EXPECT_FALSE(result.signs[1].conclusive);
  EXPECT_EQ(result.signs[1].detail,
            "rank 0 runs on Tesla V100-SXM2-16GB, rank 1 on NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(SignKindName(SignKind::kTimes), "times");
}

// Spans that overlap, or lie apart by less than an hour (hosts' clocks skew, ranks start late),
// say nothing; 3 hours apart is a sign, not a proof. Spans near the clock's zero (relative
// clocks: Nsight's session start, a simulator's) are never compared: their zeros differ.
TEST(OneRunTest, SpansApartByHoursAreASignAndRelativeClocksAreNotCompared) {
  Job overlapping;
  overlapping.Add({.id = 0, .start = kJune2024, .end = kJune2024 + 10 * kSecond});
  overlapping.Add({.id = 1, .start = kJune2024 + 5 * kSecond, .end = kJune2024 + 20 * kSecond});
  overlapping.Add(
      {.id = 2, .start = kJune2024 + 30 * 60 * kSecond, .end = kJune2024 + 31 * 60 * kSecond});
  EXPECT_TRUE(overlapping.Compared().signs.empty());

  Job hours;
  hours.Add({.id = 0, .start = kJune2024, .end = kJune2024 + 10 * kSecond});
  hours.Add({.id = 1,
             .start = kJune2024 + (3 * 3600 + 10) * kSecond,
             .end = kJune2024 + (3 * 3600 + 20) * kSecond});
  const Result result = hours.Compared();
  EXPECT_FALSE(result.CannotBeOneRun());
  ASSERT_EQ(result.signs.size(), 1u);
  EXPECT_EQ(result.signs[0].kind, SignKind::kTimes);
  EXPECT_EQ(result.signs[0].detail,
            "rank 0's events end 3.0 hours before rank 1's begin, without overlap");

  Job relative;
  relative.Add({.id = 0, .start = 0, .end = 10 * kSecond});
  relative.Add({.id = 1, .start = 400 * 86'400 * kSecond, .end = 400 * 86'400 * kSecond + 1});
  EXPECT_TRUE(relative.Compared().signs.empty());
}

// One run names each process group once; torch numbers them alike on every rank. Group "1" as
// 0,2 on rank 0 (a data-parallel pair of a 2x2 job) and as 0,1,2,3 on rank 1 cannot both hold.
// A list that is the start of the other (an op's args may list fewer) is no disagreement, and
// neither are groups only one rank declares.
TEST(OneRunTest, OneGroupNameWithTwoMembershipsCannotBeOneRun) {
  Job job;
  job.Add({.id = 0, .world_size = 4}).process_groups = {
      {"0", {0, 1, 2, 3}}, {"1", {0, 2}}, {"3", {0, 1}}};
  job.Add({.id = 1, .world_size = 4}).process_groups = {{"0", {0, 1, 2, 3}}, {"1", {0, 1, 2, 3}}};
  Result result = job.Compared();
  EXPECT_TRUE(result.CannotBeOneRun());
  ASSERT_EQ(result.signs.size(), 1u);
  EXPECT_EQ(result.signs[0].kind, SignKind::kProcessGroups);
  EXPECT_EQ(result.signs[0].detail,
            "rank 0 declares process group '1' as ranks 0,2, rank 1 as ranks 0,1,2,3");

  job.trace.ranks[1].process_groups = {{"0", {0, 1, 2, 3}}, {"1", {0}}, {"2", {1, 3}}};
  EXPECT_TRUE(job.Compared().signs.empty());
}

// Different world sizes declared are a proof; ProfilerStep numbers with none in common, and one
// host and process named by two files, are signs.
TEST(OneRunTest, WorldSizesStepsAndProcesses) {
  Job job;
  Rank& first = job.Add({.id = 0, .world_size = 2});
  first.steps = {{.number = 5}, {.number = 7}};
  first.host = "node-a";
  first.pid = 4242;
  Rank& second = job.Add({.id = 1, .world_size = 4});
  second.steps = {{.number = 100}};
  second.host = "node-a";
  second.pid = 4242;
  const Result result = job.Compared();
  EXPECT_TRUE(result.CannotBeOneRun());
  ASSERT_EQ(result.signs.size(), 3u);
  EXPECT_EQ(result.signs[0].kind, SignKind::kWorldSize);
  EXPECT_TRUE(result.signs[0].conclusive);
  EXPECT_EQ(result.signs[0].detail, "rank 0 declares world size 2, rank 1 world size 4");
  EXPECT_EQ(result.signs[1].kind, SignKind::kSteps);
  EXPECT_FALSE(result.signs[1].conclusive);
  EXPECT_EQ(result.signs[1].detail,
            "rank 0 holds ProfilerSteps 5-7, rank 1 ProfilerStep 100, none in common");
  EXPECT_EQ(result.signs[2].kind, SignKind::kProcess);
  EXPECT_FALSE(result.signs[2].conclusive);
  EXPECT_EQ(result.signs[2].detail,
            "ranks 0 and 1 both name process 4242 on host node-a, from two files");
}

}  // namespace
}  // namespace bubblescope::one_run
