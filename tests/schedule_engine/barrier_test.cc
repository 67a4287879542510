// The iteration-end all-reduce (Config::iteration_barrier): timelines worked
// out by hand from engine.h, the textbook bubble for any number of iterations
// on free links, and the kernel's trace metadata.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "schedule_engine/sim_test_util.h"
#include "synth/synthetic_job.h"
#include "synth/trace_builder.h"

namespace bubblescope::sim {
namespace {

using testing::IdealConfig;

Simulation MustSimulate(const Config& config) {
  absl::StatusOr<Simulation> simulation = Simulate(config);
  EXPECT_TRUE(simulation.ok()) << simulation.status();
  return simulation.ok() ? *std::move(simulation) : Simulation{};
}

// The all-reduce kernels of `rank`, in time order.
std::vector<const Interval*> AllReduces(const Rank& rank) {
  std::vector<const Interval*> found;
  for (const Timeline& timeline : rank.timelines) {
    for (const Interval& interval : timeline.intervals) {
      const CommInfo* comm = rank.comm(interval);
      if (comm != nullptr && comm->kind == CommKind::kAllReduce) found.push_back(&interval);
    }
  }
  return found;
}

// p=2, m=1, gpipe, one kernel per op, launch gap 10, F=100, B=200, 1000-byte
// messages over an 8 Gbit/s link with 50 ns latency (1050 ns per transfer), two
// iterations. The all-reduce moves 4 bytes: 50 + ceil(32 / 8) = 54 ns after the
// last rank posts it.
//   rank 0 launches F0 [0,10], send [10,20], recv [20,30], B0 [30,40],
//   all-reduce [40,50]. rank 1 launches recv [0,10], F0 [10,20], B0 [20,30],
//   send [30,40], all-reduce [40,50]. Device (as without the barrier): r0 F0
//   [10,110], B0 [2510,2710]; r1 F0 [1160,1260], B0 [1260,1460], its send
//   [1460,2510]. r1 posts the all-reduce when B0 ends (1460), r0 when B0 ends
//   (2710): both end at 2764. Both ranks' iteration 0 is [0,2764]; iteration 1
//   repeats it shifted by 2764.
TEST(BarrierTest, TwoStagesByHand) {
  Config config = IdealConfig(Schedule::kGpipe, 2, 1, 100, 200);
  config.kernels_per_op = 1;
  config.launch_gap_ns = 10;
  config.activation_bytes = 1000;
  config.link = Link{8.0, 50};
  config.start_time_ns = 0;
  config.iterations = 2;
  Simulation simulation = MustSimulate(config);
  ASSERT_EQ(simulation.trace.ranks.size(), 2u);
  for (const Rank& rank : simulation.trace.ranks) {
    SCOPED_TRACE("rank " + std::to_string(rank.rank));
    std::vector<const Interval*> all_reduces = AllReduces(rank);
    ASSERT_EQ(all_reduces.size(), 2u);
    EXPECT_EQ(all_reduces[0]->start, rank.rank == 0 ? 2710 : 1460);
    EXPECT_EQ(all_reduces[0]->end, 2764);
    EXPECT_EQ(all_reduces[1]->start, 2764 + (rank.rank == 0 ? 2710 : 1460));
    EXPECT_EQ(all_reduces[1]->end, 2 * 2764);
    ASSERT_EQ(rank.steps.size(), 2u);
    EXPECT_EQ(rank.steps[0].start, 0);
    EXPECT_EQ(rank.steps[0].end, 2764);
    EXPECT_EQ(rank.steps[1].start, 2764);
    EXPECT_EQ(rank.steps[1].end, 2 * 2764);
  }
  const Truth& truth = simulation.truth;
  for (int32_t i = 0; i < 2; ++i) {
    const IterationTruth& iteration = truth.iterations[static_cast<size_t>(i)];
    EXPECT_EQ(iteration.window_start, 10 + 2764 * i);
    EXPECT_EQ(iteration.window_end, 2764 * (i + 1));
    const RankIterationTruth& r0 = iteration.ranks[0];
    EXPECT_EQ(r0.split.compute, 300);
    EXPECT_EQ(r0.split.fill, 0);
    EXPECT_EQ(r0.split.drain, 54);  // its own wait: the all-reduce's latency
    EXPECT_EQ(r0.split.stall, 2400);
    EXPECT_EQ(r0.split.comm_wait, 2400);
    EXPECT_EQ(r0.split.empty, 0);
    const RankIterationTruth& r1 = iteration.ranks[1];
    EXPECT_EQ(r1.split.fill, 1150);
    EXPECT_EQ(r1.split.drain,
              2764 - 1460);  // spinning in the all-reduce until rank 0 posts it
    EXPECT_EQ(r1.split.stall, 0);
  }
  EXPECT_EQ(truth.idle_ns, 2 * (2 * 2754 - 600));
  EXPECT_EQ(truth.capacity_ns, 2 * 2 * 2754);
}

// The same job without the barrier: rank 1 finishes iteration 0 at 2510 and
// posts iteration 1's recv at 2520, while rank 0 still runs B0 until 2710, so
// the windows overlap.
TEST(BarrierTest, WithoutItTheNextIterationStartsEarly) {
  Config config = IdealConfig(Schedule::kGpipe, 2, 1, 100, 200);
  config.kernels_per_op = 1;
  config.launch_gap_ns = 10;
  config.activation_bytes = 1000;
  config.link = Link{8.0, 50};
  config.start_time_ns = 0;
  config.iterations = 2;
  config.iteration_barrier = false;
  Simulation simulation = MustSimulate(config);
  EXPECT_TRUE(AllReduces(simulation.trace.ranks[0]).empty());
  EXPECT_EQ(simulation.trace.ranks[1].steps[1].start, 2510);
  EXPECT_EQ(simulation.truth.iterations[0].window_end, 2710);
  EXPECT_EQ(simulation.truth.iterations[1].window_start, 2520);
}

// One rank: the all-reduce is only its latency. F [0,100], B [100,300],
// all-reduce [300,330].
TEST(BarrierTest, SingleRankWaitsOnlyForTheLatency) {
  Config config = IdealConfig(Schedule::kGpipe, 1, 1, 100, 200);
  config.kernels_per_op = 1;
  config.link = Link{std::numeric_limits<double>::infinity(), 30};
  config.start_time_ns = 0;
  config.iterations = 3;
  Simulation simulation = MustSimulate(config);
  const Rank& rank = simulation.trace.ranks[0];
  ASSERT_EQ(rank.steps.size(), 3u);
  EXPECT_EQ(rank.steps[2].start, 660);
  EXPECT_EQ(rank.steps[2].end, 990);
  for (const IterationTruth& iteration : simulation.truth.iterations) {
    EXPECT_EQ(iteration.window(), 330);
    EXPECT_EQ(iteration.ranks[0].split.drain, 30);
    EXPECT_EQ(iteration.ranks[0].split.idle, 30);
  }
}

// Free links, no launch gap, uniform stages, K iterations: every iteration is
// the textbook pipeline, (v*m + p-1) chunk slots long, starting on every rank
// when the previous one ends. For gpipe and 1f1b stage s starts s forwards late
// and ends s backwards early (its drain includes the all-reduce spin).
class TextbookIterationsTest
    : public ::testing::TestWithParam<std::tuple<Schedule, int32_t, int32_t, int32_t>> {};

TEST_P(TextbookIterationsTest, EveryIterationIsTheTextbookPipeline) {
  auto [schedule, p, m, iterations] = GetParam();
  const int32_t v = schedule == Schedule::kInterleaved1F1B ? 2 : 1;
  const TimeNs forward = 100;
  const TimeNs backward = 300;
  Config config = IdealConfig(schedule, p, v == 1 ? m : p * m, forward * v, backward * v, v);
  config.iterations = iterations;
  ASSERT_TRUE(config.iteration_barrier);
  Simulation simulation = MustSimulate(config);
  const int64_t slots = int64_t{v} * config.microbatches + p - 1;
  const TimeNs window = slots * (forward + backward);
  const Truth& truth = simulation.truth;
  ASSERT_EQ(truth.iterations.size(), static_cast<size_t>(iterations));
  for (int32_t i = 0; i < iterations; ++i) {
    const IterationTruth& iteration = truth.iterations[static_cast<size_t>(i)];
    EXPECT_EQ(iteration.window_start, config.start_time_ns + i * window) << "iteration " << i;
    EXPECT_EQ(iteration.window(), window) << "iteration " << i;
    for (const RankIterationTruth& rank : iteration.ranks) {
      if (v == 1) {
        EXPECT_EQ(rank.split.fill, rank.stage * forward);
        EXPECT_EQ(rank.split.drain, rank.stage * backward);
      }
    }
    for (const Rank& rank : simulation.trace.ranks) {
      EXPECT_EQ(rank.steps[static_cast<size_t>(i)].start, config.start_time_ns + i * window);
    }
  }
  EXPECT_EQ(truth.capacity_ns, int64_t{iterations} * p * window);
  EXPECT_EQ(truth.idle_ns * slots, truth.capacity_ns * (p - 1));
}

INSTANTIATE_TEST_SUITE_P(FreeLinks, TextbookIterationsTest,
                         ::testing::Combine(::testing::Values(Schedule::kGpipe, Schedule::k1F1B,
                                                              Schedule::kInterleaved1F1B),
                                            ::testing::Values(2, 4), ::testing::Values(1, 4, 8),
                                            ::testing::Values(2, 3)));

TEST(BarrierTest, TraceMetadata) {
  Config config = IdealConfig(Schedule::k1F1B, 3, 4, 1000, 2000);
  config.iterations = 2;
  config.link = Link{100.0, 2000};  // the all-reduce: 2000 + ceil(32 / 100) = 2001 ns
  config.jitter = 0.1;
  Simulation simulation = MustSimulate(config);
  std::vector<TimeNs> ends[2];
  std::vector<TimeNs> starts[2];
  for (const Rank& rank : simulation.trace.ranks) {
    SCOPED_TRACE("rank " + std::to_string(rank.rank));
    std::vector<const Interval*> all_reduces = AllReduces(rank);
    ASSERT_EQ(all_reduces.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      const Interval& interval = *all_reduces[i];
      EXPECT_EQ(rank.name(interval.name),
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL("
                "ncclDevKernelArgsStorage<4096ul>)");
      EXPECT_EQ(interval.kind, IntervalKind::kCommKernel);
      const CommInfo& comm = *rank.comm(interval);
      EXPECT_EQ(comm.bytes, 4);
      EXPECT_EQ(comm.peer, -1);
      EXPECT_EQ(comm.group_size, 3);
      EXPECT_EQ(rank.name(comm.collective), "allreduce");
      EXPECT_EQ(rank.name(comm.dtype), "Float");
      ASSERT_NE(comm.process_group, kNoIndex);
      EXPECT_EQ(rank.process_groups[comm.process_group].ranks, (std::vector<int32_t>{0, 1, 2}));
      EXPECT_EQ(rank.steps[i].end,
                interval.end);  // the synchronize waits for it
      starts[i].push_back(interval.start);
      ends[i].push_back(interval.end);
    }
    bool on_collective_stream = false;
    for (const Timeline& timeline : rank.timelines) {
      if (timeline.id == StreamId(StreamRole::kCollective)) {
        on_collective_stream = timeline.intervals.size() == 2;
      }
    }
    EXPECT_TRUE(on_collective_stream);
  }
  for (size_t i = 0; i < 2; ++i) {
    TimeNs last_post = std::max({starts[i][0], starts[i][1], starts[i][2]});
    for (TimeNs end : ends[i]) EXPECT_EQ(end, last_post + 2001);
    EXPECT_EQ(simulation.truth.iterations[i].window_end, last_post + 2001);
  }
  EXPECT_LE(simulation.truth.iterations[0].window_end, simulation.truth.iterations[1].window_start);
}

}  // namespace
}  // namespace bubblescope::sim
