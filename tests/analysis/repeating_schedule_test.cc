// Iterations from the repeating schedule: periods, cuts, partial ends and numbering across ranks,
// on hand-made ranks whose iterations are known by construction.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/iterations.h"
#include "gtest/gtest.h"
#include "support/job_helpers.h"
#include "support/timeline_fixtures.h"

namespace bubblescope::iterations {
namespace {

using namespace bubblescope::testing;  // NOLINT(build/namespaces): test builders only

Interval Named(Rank* rank, IntervalKind kind, std::string_view name, TimeNs start) {
  Interval interval = Op(kind, start, start + 50);
  interval.name = rank->names.Intern(name);
  return interval;
}

// Iteration k issues compute A, compute B and a receive C at base, base+100, base+200 with
// base = first_base + 1000 k; the next iteration comes 800 ns after C, so the cut belongs before A.
// `warm_up` adds a one-off op W at 0; `trailing_ab` adds A and B of one more iteration.
Rank RepeatingRank(int32_t id, TimeNs first_base, int iterations, bool warm_up, bool trailing_ab) {
  Rank rank;
  rank.rank = id;
  std::vector<Interval> compute;
  std::vector<Interval> comm;
  if (warm_up) compute.push_back(Named(&rank, kCompute, "W", 0));
  for (int k = 0; k <= iterations; ++k) {
    const TimeNs base = first_base + 1000 * k;
    if (k == iterations && !trailing_ab) break;
    compute.push_back(Named(&rank, kCompute, "A", base));
    compute.push_back(Named(&rank, kCompute, "B", base + 100));
    if (k < iterations) comm.push_back(Named(&rank, kComm, "C", base + 200));
  }
  rank.timelines.push_back(Stream(7, std::move(compute)));
  rank.timelines.push_back(Stream(8, std::move(comm)));
  return rank;
}

using testing::GroupIterations;
using testing::IterationsOf;

// Starts of the device ops the rank at `rank` has in an iteration, in start order.
std::vector<TimeNs> Starts(const GroupIterations& group, size_t iteration, size_t rank) {
  std::vector<TimeNs> starts;
  const size_t position = group.assignment.positions[rank];
  for (uint32_t op : group.assignment.iterations[iteration].ranks[rank].ops) {
    starts.push_back(group.index.ranks[position].ops[op].start);
  }
  return starts;
}

TEST(RepeatingScheduleTest, WarmUpAndATrailingPartIterationAreKeptApartAndIncomplete) {
  Trace trace;
  trace.ranks.push_back(RepeatingRank(0, 100, 3, /*warm_up=*/true, /*trailing_ab=*/true));
  absl::StatusOr<GroupIterations> result = IterationsOf(trace);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->assignment.source, StepSource::kRepeatingSchedule);
  // W | A B C | A B C | A B C | A B: numbers -1, 0, 1, 2, 3.
  ASSERT_EQ(result->assignment.iterations.size(), 5u);
  EXPECT_EQ(result->assignment.iterations[0].number, -1);
  EXPECT_EQ(result->assignment.iterations[4].number, 3);
  EXPECT_EQ(Starts(*result, 0, 0), (std::vector<TimeNs>{0}));
  EXPECT_EQ(Starts(*result, 1, 0), (std::vector<TimeNs>{100, 200, 300}));
  EXPECT_EQ(Starts(*result, 3, 0), (std::vector<TimeNs>{2100, 2200, 2300}));
  EXPECT_EQ(Starts(*result, 4, 0), (std::vector<TimeNs>{3100, 3200}));
  std::vector<bool> complete;
  for (const Iteration& iteration : result->assignment.iterations)
    complete.push_back(iteration.complete);
  EXPECT_EQ(complete, (std::vector<bool>{false, true, true, true, false}));
  EXPECT_EQ(result->assignment.ranks[0].steps, 3);
  EXPECT_EQ(result->assignment.ranks[0].unassigned, 0);
}

// A gloo-like rank that blocks in a receive mid-iteration: A, receive C, then B only 800 ns
// later, and the next iteration 200 ns after B. The longest gap is inside the iteration, yet a
// trace that is exactly whole periods (a profiler window of whole steps) is cut at its start.
TEST(RepeatingScheduleTest, ATraceOfWholePeriodsIsCutAtItsStartNotAtTheLongestGap) {
  for (int iterations : {2, 3}) {
    SCOPED_TRACE(std::to_string(iterations) + " iterations");
    Trace trace;
    Rank rank;
    rank.rank = 0;
    std::vector<Interval> compute;
    std::vector<Interval> comm;
    for (int k = 0; k < iterations; ++k) {
      const TimeNs base = 100 + 1100 * k;
      compute.push_back(Named(&rank, kCompute, "A", base));
      comm.push_back(Named(&rank, kComm, "C", base + 100));
      compute.push_back(Named(&rank, kCompute, "B", base + 900));
    }
    rank.timelines.push_back(Stream(7, std::move(compute)));
    rank.timelines.push_back(Stream(8, std::move(comm)));
    trace.ranks.push_back(std::move(rank));
    absl::StatusOr<GroupIterations> result = IterationsOf(trace);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->assignment.source, StepSource::kRepeatingSchedule);
    ASSERT_EQ(result->assignment.iterations.size(), static_cast<size_t>(iterations));
    for (int k = 0; k < iterations; ++k) {
      const TimeNs base = 100 + 1100 * k;
      EXPECT_TRUE(result->assignment.iterations[k].complete);
      EXPECT_EQ(Starts(*result, k, 0), (std::vector<TimeNs>{base, base + 100, base + 900}));
    }
  }
}

// A one-off warm-up op before the loop and a checkpoint (X, Y) after it: neither end of the trace
// is periodic, so only a stretch anchored inside it finds the iterations.
TEST(RepeatingScheduleTest, WarmUpAndANonPeriodicEndTogether) {
  Trace trace;
  Rank rank = RepeatingRank(0, 100, 4, /*warm_up=*/true, /*trailing_ab=*/false);
  std::vector<Interval>& compute = rank.timelines[0].intervals;
  compute.push_back(Named(&rank, kCompute, "X", 4100));
  compute.push_back(Named(&rank, kCompute, "Y", 4200));
  trace.ranks.push_back(std::move(rank));
  absl::StatusOr<GroupIterations> result = IterationsOf(trace);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->assignment.source, StepSource::kRepeatingSchedule);
  // W | A B C | A B C | A B C | A B C | X Y: numbers -1, 0 .. 3, 4.
  ASSERT_EQ(result->assignment.iterations.size(), 6u);
  EXPECT_EQ(result->assignment.iterations[0].number, -1);
  EXPECT_EQ(Starts(*result, 0, 0), (std::vector<TimeNs>{0}));
  EXPECT_EQ(Starts(*result, 1, 0), (std::vector<TimeNs>{100, 200, 300}));
  EXPECT_EQ(Starts(*result, 4, 0), (std::vector<TimeNs>{3100, 3200, 3300}));
  EXPECT_EQ(Starts(*result, 5, 0), (std::vector<TimeNs>{4100, 4200}));
  std::vector<bool> complete;
  for (const Iteration& iteration : result->assignment.iterations)
    complete.push_back(iteration.complete);
  EXPECT_EQ(complete, (std::vector<bool>{false, true, true, true, true, false}));
  EXPECT_EQ(result->assignment.ranks[0].steps, 4);
}

TEST(RepeatingScheduleTest, RanksAreNumberedByTheIterationTheyOverlap) {
  Trace trace;
  trace.ranks.push_back(RepeatingRank(0, 100, 3, false, false));
  // Rank 1 joins in the second iteration of rank 0 (its ops at 1150, 2150, 3150).
  trace.ranks.push_back(RepeatingRank(1, 1150, 3, false, false));
  absl::StatusOr<GroupIterations> result = IterationsOf(trace);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->assignment.source, StepSource::kRepeatingSchedule);
  ASSERT_EQ(result->assignment.iterations.size(), 4u);
  EXPECT_EQ(result->assignment.iterations[1].number, 1);
  EXPECT_EQ(Starts(*result, 1, 1), (std::vector<TimeNs>{1150, 1250, 1350}));
  EXPECT_EQ(Starts(*result, 3, 1), (std::vector<TimeNs>{3150, 3250, 3350}));
  std::vector<bool> complete;
  for (const Iteration& iteration : result->assignment.iterations)
    complete.push_back(iteration.complete);
  // Iteration 0 lacks rank 1 and iteration 3 lacks rank 0.
  EXPECT_EQ(complete, (std::vector<bool>{false, true, true, false}));
}

TEST(RepeatingScheduleTest, NoRepeatOrAOneOpPeriodLeavesTheWholeTrace) {
  Trace distinct;
  Rank rank;
  std::vector<Interval> ops = {Named(&rank, kCompute, "A", 0), Named(&rank, kCompute, "B", 100),
                               Named(&rank, kComm, "C", 200), Named(&rank, kCompute, "D", 300)};
  rank.timelines.push_back(Stream(7, std::move(ops)));
  distinct.ranks.push_back(std::move(rank));
  absl::StatusOr<GroupIterations> result = IterationsOf(distinct);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->assignment.source, StepSource::kWholeTrace);

  // The same kernel over and over is one op per period: a microbatch at most, not an iteration.
  Trace same;
  Rank one;
  std::vector<Interval> repeated;
  for (TimeNs t = 0; t < 1000; t += 100) repeated.push_back(Named(&one, kCompute, "A", t));
  one.timelines.push_back(Stream(7, std::move(repeated)));
  same.ranks.push_back(std::move(one));
  result = IterationsOf(same);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->assignment.source, StepSource::kWholeTrace);
}

TEST(RepeatingScheduleTest, ARankWithoutARepeatKeepsTheWholeTraceForAll) {
  Trace trace;
  trace.ranks.push_back(RepeatingRank(0, 100, 3, false, false));
  Rank odd;
  odd.rank = 1;
  std::vector<Interval> ops = {Named(&odd, kCompute, "X", 100), Named(&odd, kComm, "Y", 900)};
  odd.timelines.push_back(Stream(7, std::move(ops)));
  trace.ranks.push_back(std::move(odd));
  absl::StatusOr<GroupIterations> result = IterationsOf(trace);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->assignment.source, StepSource::kWholeTrace);
  ASSERT_EQ(result->assignment.iterations.size(), 1u);
}

}  // namespace
}  // namespace bubblescope::iterations
