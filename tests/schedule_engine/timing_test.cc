// Timelines worked out by hand from the semantics in engine.h (rendezvous, late posts, slow and
// overridden links, launch-bound iterations, the iteration-end all-reduce) and the truth figures
// that follow from them. The p2p tests turn the all-reduce off so each shows one mechanism.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "schedule_engine/sim_test_util.h"
#include "synth/synthetic_job.h"
#include "synth/trace_builder.h"

namespace bubblescope::sim {
namespace {

using testing::IdealConfig;

struct Span {
  TimeNs start;
  TimeNs end;
  friend bool operator==(const Span&, const Span&) = default;
};

std::ostream& operator<<(std::ostream& out, const Span& span) {
  return out << "[" << span.start << "," << span.end << "]";
}

// The intervals of one stream (or, with stream_id < 0, of the CPU thread) of `rank`.
std::vector<Span> Spans(const Trace& trace, int32_t rank, int64_t stream_id) {
  std::vector<Span> spans;
  for (const Timeline& timeline : trace.ranks[static_cast<size_t>(rank)].timelines) {
    bool wanted = stream_id < 0
                      ? timeline.kind == TimelineKind::kCpuThread
                      : timeline.kind == TimelineKind::kGpuStream && timeline.id == stream_id;
    if (!wanted) continue;
    for (const Interval& interval : timeline.intervals) {
      // On the CPU: the launches and syncs, not the c10d operators around p2p launches.
      if (interval.kind == IntervalKind::kCpuCommOp) continue;
      spans.push_back({interval.start, interval.end});
    }
  }
  return spans;
}

const int64_t kCompute = kComputeStreamId;
const int64_t kSendNext = StreamId(StreamRole::kSendNext);
const int64_t kRecvPrev = StreamId(StreamRole::kRecvPrev);
const int64_t kSendPrev = StreamId(StreamRole::kSendPrev);
const int64_t kRecvNext = StreamId(StreamRole::kRecvNext);

// The two-stage job of the next tests: `schedule` (gpipe and 1f1b are the same at m=1), p=2,
// m=1, one kernel per op, launch gap 10, F=100, B=200, every transfer 1050 ns, no all-reduce.
Config TwoStageSlowLinkConfig(Schedule schedule) {
  Config config = IdealConfig(schedule, 2, 1, 100, 200);
  config.kernels_per_op = 1;
  config.launch_gap_ns = 10;
  config.activation_bytes = 1000;
  config.link = Link{8.0, 50};
  config.start_time_ns = 0;
  config.iteration_barrier = false;
  return config;
}

// p=2, m=1, gpipe, one kernel per op, launch gap 10, F=100, B=200, 1000-byte messages over an
// 8 Gbit/s link with 50 ns latency: every transfer takes 50 + 1000*8/8 = 1050 ns.
//   rank 0 launches F0 [0,10], send [10,20], recv [20,30], B0 [30,40]; syncs from 40.
//   rank 1 launches recv [0,10], F0 [10,20], B0 [20,30], send [30,40]; syncs from 40.
//   r0 F0 [10,110]; its send starts at 110. r1's recv was posted at 10 (late send post):
//   the transfer runs 110..1160 and both end at 1160.
//   r1 F0 [1160,1260], B0 [1260,1460]; its send starts at 1460. r0's recv was posted when F0
//   ended (110): transfer 1460..2510. r0 B0 [2510,2710].
TEST(TimingTest, TwoStageSlowLinkLateSendPost) {
  const Config config = TwoStageSlowLinkConfig(Schedule::kGpipe);
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const Trace& trace = simulation->trace;
  EXPECT_EQ(Spans(trace, 0, kCompute), (std::vector<Span>{{10, 110}, {2510, 2710}}));
  EXPECT_EQ(Spans(trace, 0, kSendNext), (std::vector<Span>{{110, 1160}}));
  EXPECT_EQ(Spans(trace, 0, kRecvNext), (std::vector<Span>{{110, 2510}}));
  EXPECT_EQ(Spans(trace, 1, kRecvPrev), (std::vector<Span>{{10, 1160}}));
  EXPECT_EQ(Spans(trace, 1, kCompute), (std::vector<Span>{{1160, 1260}, {1260, 1460}}));
  EXPECT_EQ(Spans(trace, 1, kSendPrev), (std::vector<Span>{{1460, 2510}}));
  EXPECT_EQ(Spans(trace, 0, -1),
            (std::vector<Span>{{0, 10}, {10, 20}, {20, 30}, {30, 40}, {40, 2710}}));
  EXPECT_EQ(Spans(trace, 1, -1),
            (std::vector<Span>{{0, 10}, {10, 20}, {20, 30}, {30, 40}, {40, 2510}}));
  ASSERT_EQ(trace.ranks[1].steps.size(), 1u);
  EXPECT_EQ(trace.ranks[1].steps[0].start, 0);
  EXPECT_EQ(trace.ranks[1].steps[0].end, 2510);

  const IterationTruth& iteration = simulation->truth.iterations[0];
  EXPECT_EQ(iteration.window_start, 10);
  EXPECT_EQ(iteration.window_end, 2710);
  const RankIterationTruth& r0 = iteration.ranks[0];
  EXPECT_EQ(r0.split.compute, 300);
  EXPECT_EQ(r0.split.idle, 2400);
  EXPECT_EQ(r0.split.fill, 0);
  EXPECT_EQ(r0.split.drain, 0);
  EXPECT_EQ(r0.split.stall, 2400);
  EXPECT_EQ(r0.split.comm_wait, 2400);  // the union [110,2510] of its send and recv
  EXPECT_EQ(r0.split.empty, 0);
  const RankIterationTruth& r1 = iteration.ranks[1];
  EXPECT_EQ(r1.split.fill, 1150);
  EXPECT_EQ(r1.split.drain, 1250);
  EXPECT_EQ(r1.split.stall, 0);
  EXPECT_EQ(r1.split.comm_wait, 0);
  EXPECT_EQ(simulation->truth.idle_ns, 4800);
  EXPECT_EQ(simulation->truth.capacity_ns, 5400);
}

// p=2, m=2, gpipe, one kernel per op, no launch gap, 50 ns transfers. Stage 0: F=100, B=400;
// stage 1: F=1000, B=300.
//   r0 F0 [0,100] F1 [100,200]; sends start at 100 and 200.
//   r1 recv F0 posted at 0, meets the send at 100: [0,150]; F0 [150,1150]. The recv for F1 is
//   posted only when F0 ends (1150, a late recv post), so r0's second send runs [200,1200].
//   r1 F1 [1200,2200], B0 [2200,2500], B1 [2500,2800]; sends [2500,2550] and [2800,3000].
//   r0 recv B0 posted at 200 -> [200,2550]; B0 [2550,2950]; recv B1 posted at 2950 meets the
//   send (started 2800) -> [2950,3000]; B1 [3000,3400].
TEST(TimingTest, TwoStageLateRecvPost) {
  Config config = IdealConfig(Schedule::kGpipe, 2, 2, 100, 400);
  config.costs[1] = StageCost{1000, 300, 0};
  config.kernels_per_op = 1;
  config.link = Link{std::numeric_limits<double>::infinity(), 50};
  config.start_time_ns = 0;
  config.iteration_barrier = false;
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const Trace& trace = simulation->trace;
  EXPECT_EQ(Spans(trace, 0, kCompute),
            (std::vector<Span>{{0, 100}, {100, 200}, {2550, 2950}, {3000, 3400}}));
  EXPECT_EQ(Spans(trace, 0, kSendNext), (std::vector<Span>{{100, 150}, {200, 1200}}));
  EXPECT_EQ(Spans(trace, 0, kRecvNext), (std::vector<Span>{{200, 2550}, {2950, 3000}}));
  EXPECT_EQ(Spans(trace, 1, kRecvPrev), (std::vector<Span>{{0, 150}, {1150, 1200}}));
  EXPECT_EQ(Spans(trace, 1, kCompute),
            (std::vector<Span>{{150, 1150}, {1200, 2200}, {2200, 2500}, {2500, 2800}}));
  EXPECT_EQ(Spans(trace, 1, kSendPrev), (std::vector<Span>{{2500, 2550}, {2800, 3000}}));

  const IterationTruth& iteration = simulation->truth.iterations[0];
  EXPECT_EQ(iteration.window(), 3400);
  const RankIterationTruth& r0 = iteration.ranks[0];
  EXPECT_EQ(r0.split.compute, 1000);
  EXPECT_EQ(r0.split.stall, 2400);
  // Comm union [100,150] + [200,2550] + [2950,3000] = 2450, minus 50 overlapped by F1.
  EXPECT_EQ(r0.split.comm_wait, 2400);
  EXPECT_EQ(r0.split.empty, 0);
  const RankIterationTruth& r1 = iteration.ranks[1];
  EXPECT_EQ(r1.split.compute, 2600);
  EXPECT_EQ(r1.split.idle, 800);
  EXPECT_EQ(r1.split.fill, 150);
  EXPECT_EQ(r1.split.drain, 600);
  EXPECT_EQ(r1.split.stall, 50);
  EXPECT_EQ(r1.split.comm_wait, 50);  // the recv [1150,1200]; the send [2500,2550] overlaps B1
  EXPECT_EQ(r1.split.empty, 0);
  EXPECT_NEAR(simulation->truth.bubble_fraction, 3200.0 / 6800.0, 1e-12);
}

// The previous job with the directed link 1 -> 0 overridden to 500 ns: backward messages slow
// down, forward ones do not.
//   r0 recv B0 [200,3000] -> B0 [3000,3400]; recv B1 posted at 3400; r1's second send starts
//   at 3000 (after the first) -> transfer 3400..3900; B1 [3900,4300].
TEST(TimingTest, LinkOverrideIsDirected) {
  Config config = IdealConfig(Schedule::kGpipe, 2, 2, 100, 400);
  config.costs[1] = StageCost{1000, 300, 0};
  config.kernels_per_op = 1;
  config.link = Link{std::numeric_limits<double>::infinity(), 50};
  config.link_overrides.push_back(
      LinkOverride{1, 0, Link{std::numeric_limits<double>::infinity(), 500}});
  config.start_time_ns = 0;
  config.iteration_barrier = false;
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const Trace& trace = simulation->trace;
  EXPECT_EQ(Spans(trace, 1, kRecvPrev), (std::vector<Span>{{0, 150}, {1150, 1200}}));
  EXPECT_EQ(Spans(trace, 0, kRecvNext), (std::vector<Span>{{200, 3000}, {3400, 3900}}));
  EXPECT_EQ(Spans(trace, 1, kSendPrev), (std::vector<Span>{{2500, 3000}, {3000, 3900}}));
  EXPECT_EQ(Spans(trace, 0, kCompute),
            (std::vector<Span>{{0, 100}, {100, 200}, {3000, 3400}, {3900, 4300}}));
  EXPECT_EQ(simulation->truth.iterations[0].window_end, 4300);
}

// One stage, launch-bound: a 150 ns launch gap outruns 100 ns forwards.
//   Launches F0 [0,150] F1 [150,300] B0 [300,450] B1 [450,600] optimizer [600,750].
//   F0 [150,250] F1 [300,400] B0 [450,650] B1 [650,850] optimizer [850,900]; sync [750,900].
//   Window [150,900] = 750, compute 650, idle 100 = stall = empty (no comm). Each later
//   iteration is the same shifted by 900.
TEST(TimingTest, LaunchBoundIterations) {
  Config config = IdealConfig(Schedule::kGpipe, 1, 2, 100, 200);
  config.kernels_per_op = 1;
  config.launch_gap_ns = 150;
  config.optimizer_ns = 50;
  config.iterations = 3;
  config.start_time_ns = 0;
  config.iteration_barrier = false;
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const Rank& rank = simulation->trace.ranks[0];
  ASSERT_EQ(rank.steps.size(), 3u);
  for (int32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(rank.steps[static_cast<size_t>(i)].number, i);
    EXPECT_EQ(rank.steps[static_cast<size_t>(i)].start, 900 * i);
    EXPECT_EQ(rank.steps[static_cast<size_t>(i)].end, 900 * (i + 1));
  }
  std::vector<Span> compute = Spans(simulation->trace, 0, kCompute);
  ASSERT_EQ(compute.size(), 15u);
  EXPECT_EQ(compute[5], (Span{1050, 1150}));   // iteration 1's F0
  EXPECT_EQ(compute[14], (Span{2650, 2700}));  // iteration 2's optimizer
  std::vector<Span> cpu = Spans(simulation->trace, 0, -1);
  EXPECT_EQ(cpu[5], (Span{750, 900}));  // the first synchronize
  const Truth& truth = simulation->truth;
  for (const IterationTruth& iteration : truth.iterations) {
    EXPECT_EQ(iteration.window(), 750);
    EXPECT_EQ(iteration.ranks[0].split.compute, 650);
    EXPECT_EQ(iteration.ranks[0].split.stall, 100);
    EXPECT_EQ(iteration.ranks[0].split.empty, 100);
    EXPECT_EQ(iteration.ranks[0].split.comm_wait, 0);
  }
  EXPECT_EQ(truth.iterations[2].window_start, 1950);
  EXPECT_EQ(truth.latency_p50_ns, 750);
  EXPECT_EQ(truth.latency_p90_ns, 750);
  EXPECT_EQ(truth.latency_max_ns, 750);
  EXPECT_EQ(truth.idle_ns, 300);
  EXPECT_EQ(truth.capacity_ns, 2250);
}

// Per-stage op statistics: interleaved chunks cost cost / v, counted per chunk op.
TEST(TimingTest, StageStatisticsAndSlowestStage) {
  Config config = IdealConfig(Schedule::kInterleaved1F1B, 2, 4, 300, 600, 2);
  config.costs[1] = StageCost{400, 800, 0};
  config.iterations = 2;
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const Truth& truth = simulation->truth;
  ASSERT_EQ(truth.per_stage.size(), 2u);
  EXPECT_EQ(truth.per_stage[0].forward.count, 16);  // m * v * K
  EXPECT_EQ(truth.per_stage[0].forward.mean_ns, 150.0);
  EXPECT_EQ(truth.per_stage[0].forward.p90_ns, 150);
  EXPECT_EQ(truth.per_stage[0].backward.mean_ns, 300.0);
  EXPECT_EQ(truth.per_stage[0].weight_grad.count, 0);
  EXPECT_EQ(truth.per_stage[1].mean_total_ns, 600.0);
  EXPECT_EQ(truth.slowest_stage, 1);
  EXPECT_EQ(truth.schedule, "interleaved");
  EXPECT_EQ(truth.virtual_stages, 2);
  EXPECT_NEAR(truth.theoretical_bubble_fraction, 1.0 / 9.0, 1e-12);
}

TEST(TimingTest, NearestRankPercentile) {
  EXPECT_EQ(NearestRankPercentile({5, 1, 4, 2, 3}, 50), 3);  // ceil(2.5) = 3rd
  EXPECT_EQ(NearestRankPercentile({5, 1, 4, 2, 3}, 90), 5);  // ceil(4.5) = 5th
  EXPECT_EQ(NearestRankPercentile({10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, 90), 90);
  EXPECT_EQ(NearestRankPercentile({10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, 50), 50);
  EXPECT_EQ(NearestRankPercentile({7}, 0), 7);
  EXPECT_EQ(NearestRankPercentile({}, 50), 0);
}

// Batched p2p (engine.h, "Batched p2p"): the same job as TwoStageSlowLinkLateSendPost, with
// transfers issued through batch_isend_irecv. p=2, m=1, 1f1b, one kernel per op, launch gap 10,
// F=100, B=200, every transfer 1050 ns.
//   rank 0 slots: F0 launch [0,10], c10d send F0 [10,20], c10d recv B0 [20,30] (same neighbour:
//   one batch), batch launch [30,40], B0 launch [40,50]; syncs from 50.
//   rank 1 slots: c10d recv F0 [0,10], its batch launch [10,20], F0 [20,30], B0 [30,40], c10d
//   send B0 [40,50], its batch launch [50,60]; syncs from 60.
//   r0 F0 [10,110]; its batch starts at 110 (after F0). r1's recv batch starts at 20: F0's
//   transfer runs 110..1160, where r1's batch ends (its only transfer).
//   r1 F0 [1160,1260] (waits for the batch), B0 [1260,1460]; its send batch starts at 1460:
//   B0's transfer runs 1460..2510, ending both that batch and r0's (its last transfer).
//   r0 B0 [2510,2710].
TEST(TimingTest, BatchedP2pRunsEachBatchAsOneKernel) {
  Config config = TwoStageSlowLinkConfig(Schedule::k1F1B);
  config.p2p = P2pStyle::kBatched;
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const Trace& trace = simulation->trace;
  const int64_t batched = StreamId(StreamRole::kBatchedP2p);
  EXPECT_EQ(Spans(trace, 0, kCompute), (std::vector<Span>{{10, 110}, {2510, 2710}}));
  EXPECT_EQ(Spans(trace, 0, batched), (std::vector<Span>{{110, 2510}}));
  EXPECT_EQ(Spans(trace, 1, batched), (std::vector<Span>{{20, 1160}, {1460, 2510}}));
  EXPECT_EQ(Spans(trace, 1, kCompute), (std::vector<Span>{{1160, 1260}, {1260, 1460}}));
  EXPECT_EQ(Spans(trace, 0, -1), (std::vector<Span>{{0, 10}, {30, 40}, {40, 50}, {50, 2710}}));
  EXPECT_EQ(Spans(trace, 1, -1),
            (std::vector<Span>{{10, 20}, {20, 30}, {30, 40}, {50, 60}, {60, 2510}}));

  // Rank 0's CPU: each transfer is a c10d op with record_param_comms naming peer and size; the
  // batch is launched inside nccl:coalesced; its kernel names neither.
  const Rank& rank0 = trace.ranks[0];
  std::vector<std::string> queued;
  for (const Timeline& timeline : rank0.timelines) {
    if (timeline.kind != TimelineKind::kCpuThread) continue;
    for (const Interval& interval : timeline.intervals) {
      if (interval.kind != IntervalKind::kCpuCommOp) continue;
      const CommInfo* info = rank0.comm(interval);
      ASSERT_NE(info, nullptr);
      queued.push_back(absl::StrCat(std::string(rank0.name(interval.name)), " [", interval.start,
                                    ",", interval.end, "] peer ", info->peer, " bytes ",
                                    info->bytes));
    }
  }
  EXPECT_EQ(queued, (std::vector<std::string>{"c10d::send [10,20] peer -1 bytes -1",
                                              "record_param_comms [10,20] peer 1 bytes 1000",
                                              "c10d::recv_ [20,30] peer -1 bytes -1",
                                              "record_param_comms [20,30] peer 1 bytes 1000"}));
  ASSERT_EQ(rank0.annotations.size(), 1u);
  EXPECT_EQ(rank0.name(rank0.annotations[0].name), "nccl:coalesced");
  EXPECT_EQ(rank0.annotations[0].start, 30);
  EXPECT_EQ(rank0.annotations[0].end, 40);
  for (const Timeline& timeline : rank0.timelines) {
    if (timeline.id != batched) continue;
    const CommInfo* info = rank0.comm(timeline.intervals.at(0));
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->kind, CommKind::kSendRecv);
    EXPECT_EQ(info->peer, -1);
    EXPECT_EQ(info->bytes, -1);
  }

  // The truth: rank 0 idles [110,2510] inside its batch; rank 1 as in the per-op job.
  const IterationTruth& iteration = simulation->truth.iterations[0];
  EXPECT_EQ(iteration.window_start, 10);
  EXPECT_EQ(iteration.window_end, 2710);
  EXPECT_EQ(iteration.ranks[0].split.comm_wait, 2400);
  EXPECT_EQ(iteration.ranks[1].split.fill, 1150);
  EXPECT_EQ(iteration.ranks[1].split.drain, 1250);
}

}  // namespace
}  // namespace bubblescope::sim
