// Context parallelism in the simulator, worked out by hand on one stage: ring attention's
// attention steps, KV exchanges and their waits, the truth's in-stage share, and the transfers
// the trace shows for them (Transformer Engine's order, peers and batching).
#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "schedule_engine/sim_test_util.h"
#include "synth/synthetic_job.h"
#include "synth/trace_builder.h"

namespace bubblescope::sim {
namespace {

// One stage, one microbatch (F0 then B0), one kernel per op, free links: F = 900 ns,
// B = 1800 ns, each KV exchange 400 ns.
Config RingConfig(int32_t context) {
  Config config = testing::IdealConfig(Schedule::k1F1B, 1, 1, 900, 1800);
  config.kernels_per_op = 1;
  config.iteration_barrier = false;
  config.parallel.context = context;
  config.parallel.context_exchange_ns = 400;
  return config;
}

TEST(ContextParallelTest, RingStepsWaitForTheExchangeBeforeThem) {
  absl::StatusOr<Simulation> simulation = Simulate(RingConfig(2));
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const TimeNs t0 = 1'000'000;
  // Forward: 3 pieces of 300 (2 attention steps, the closing piece), 1 exchange beside step 0;
  // step 1 waits for it until 400. Backward from 1000: pieces of 600, an exchange beside each
  // step (E1 after step 0, at 1600); step 1 waits for E0 (1400: no wait), the closing piece for
  // E1 (2000) and step 1 (2200).
  using Span = std::tuple<KernelRole, TimeNs, TimeNs>;
  const std::vector<Span> want = {
      {KernelRole::kContextParallel, 0, 400},     {KernelRole::kCompute, 0, 300},
      {KernelRole::kCompute, 400, 700},           {KernelRole::kCompute, 700, 1000},
      {KernelRole::kContextParallel, 1000, 1400}, {KernelRole::kCompute, 1000, 1600},
      {KernelRole::kContextParallel, 1600, 2000}, {KernelRole::kCompute, 1600, 2200},
      {KernelRole::kCompute, 2200, 2800}};
  std::vector<Span> got;
  for (const KernelRecord& kernel : simulation->records.ranks[0].kernels) {
    got.emplace_back(kernel.role, kernel.start - t0, kernel.end - t0);
  }
  EXPECT_EQ(got, want);
  // The forward's 100 ns wait is the stage's own communication, not idle.
  const RankIterationTruth& rank = simulation->truth.iterations[0].ranks[0];
  EXPECT_EQ(rank.split.compute, 2700);
  EXPECT_EQ(rank.split.in_stage_comm, 100);
  EXPECT_EQ(rank.split.idle, 0);
  EXPECT_EQ(simulation->trace.ranks.size(), 2u);
}

// The transfers of one rank's exchanges: (kernel stream, collective, src, dst) in start order.
std::vector<std::tuple<int64_t, std::string, int32_t, int32_t>> RingTransfers(const Rank& rank) {
  std::vector<std::tuple<int64_t, std::string, int32_t, int32_t>> transfers;
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind != TimelineKind::kGpuStream) continue;
    for (const Interval& kernel : timeline.intervals) {
      if (kernel.comm == kNoIndex) continue;
      const CommInfo& info = rank.comms[kernel.comm];
      if (info.process_group == kNoIndex ||
          rank.process_groups[info.process_group].description != "CONTEXT_PARALLEL_GROUP") {
        continue;
      }
      const bool send = info.kind == CommKind::kSend;
      transfers.emplace_back(timeline.id, std::string(rank.names.Get(info.collective)),
                             send ? rank.rank : info.peer, send ? info.peer : rank.rank);
    }
  }
  return transfers;
}

TEST(ContextParallelTest, TwoRanksBatchTheirExchange) {
  absl::StatusOr<Simulation> simulation = Simulate(RingConfig(2));
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  // Next and previous are the same rank: one batch_isend_irecv kernel per exchange, on one
  // stream, naming only the group (no peer: -1).
  using Transfer = std::tuple<int64_t, std::string, int32_t, int32_t>;
  const Transfer batch{StreamId(StreamRole::kContextParallel), "coalesced", -1, 1};
  EXPECT_EQ(RingTransfers(simulation->trace.ranks[1]),
            (std::vector<Transfer>{batch, batch, batch}));
}

TEST(ContextParallelTest, LargerRingsSendAndReceiveOnTheirPairsStreams) {
  absl::StatusOr<Simulation> simulation = Simulate(RingConfig(4));
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  ASSERT_EQ(simulation->trace.ranks.size(), 4u);
  // CP rank 1 (odd: receives first). Forward (3 exchanges): KV to 2 on the stream shared with
  // 2, from 0 on the one shared with 0; backward (4 exchanges): to 0, from 2.
  const int64_t with_next = StreamId(StreamRole::kContextParallel);
  const int64_t with_prev = StreamId(StreamRole::kContextParallelPrev);
  using Transfer = std::tuple<int64_t, std::string, int32_t, int32_t>;
  std::vector<Transfer> want;
  for (int32_t i = 0; i < 3; ++i) {
    want.emplace_back(with_next, "send", 1, 2);
    want.emplace_back(with_prev, "recv", 0, 1);
  }
  for (int32_t i = 0; i < 4; ++i) {
    want.emplace_back(with_next, "recv", 2, 1);
    want.emplace_back(with_prev, "send", 1, 0);
  }
  std::vector<Transfer> got = RingTransfers(simulation->trace.ranks[1]);
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace bubblescope::sim
