// What makes a multi-node job hard, as the simulator writes it (config.h, "HostClock" and the
// options after it): hosts' clocks offset and drifting on every time their ranks write, long
// gaps between iterations, transfers of varying length, all-reduce members ending apart, and
// process groups without descriptions. Expected values are worked out from the config.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "schedule_engine/sim_test_util.h"
#include "synth/synthetic_job.h"

namespace bubblescope::sim {
namespace {

// Four ranks, two a host; host 1's clock runs 1 ms ahead and gains 100 ppm.
Config TwoHosts() {
  Config config = testing::IdealConfig(Schedule::k1F1B, 4, 4, 100'000, 200'000);
  config.iterations = 3;
  config.link = Link{100.0, 1'000};
  config.activation_bytes = int64_t{1} << 20;
  config.ranks_per_host = 2;
  config.host_clocks = {Config::HostClock{0, 0.0}, Config::HostClock{1'000'000, 100.0}};
  config.iteration_gap_ns = 10'000'000'000;  // 10 s
  return config;
}

const Rank& RankOf(const Trace& trace, int32_t id) {
  return *std::find_if(trace.ranks.begin(), trace.ranks.end(),
                       [id](const Rank& rank) { return rank.rank == id; });
}

// Every step a rank writes is its true step on its host's clock: host 0 as is, host 1 shifted
// by 1 ms + 100e-6 x (t - start), so its third iteration, 20 s in, is 1 ms + 2 ms ahead.
TEST(HostClockTest, EveryTimeIsWrittenOnItsHostsClock) {
  const Config config = TwoHosts();
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  for (int32_t rank = 0; rank < 4; ++rank) {
    const std::vector<StepRecord>& truth =
        simulation->records.ranks[static_cast<size_t>(rank)].steps;
    const Rank& written = RankOf(simulation->trace, rank);
    EXPECT_EQ(written.host, rank < 2 ? "sim-host-0" : "sim-host-1");
    ASSERT_EQ(written.steps.size(), truth.size());
    for (size_t i = 0; i < truth.size(); ++i) {
      const TimeNs since = truth[i].start - config.start_time_ns;
      const TimeNs host_offset =
          rank < 2
              ? 0
              : 1'000'000 + static_cast<TimeNs>(std::llround(100e-6 * static_cast<double>(since)));
      EXPECT_EQ(written.steps[i].start, truth[i].start + host_offset) << rank << " " << i;
    }
  }
  // Iteration 2 starts at least 2 x 10 s after iteration 0: the gaps.
  const std::vector<StepRecord>& steps = simulation->records.ranks[0].steps;
  EXPECT_GE(steps[2].start - steps[0].start, 20'000'000'000);
  EXPECT_EQ(steps[1].start, steps[0].end + config.iteration_gap_ns);
  // On host 1 the drift adds up over the 20 s: 2 ms more than the offset alone.
  EXPECT_EQ(RecordedTime(config, 0, 2, steps[2].start) - steps[2].start,
            1'000'000 + static_cast<TimeNs>(std::llround(
                            100e-6 * static_cast<double>(steps[2].start - config.start_time_ns))));
  // Without names the clocks stay, the names go.
  Config unnamed = config;
  unnamed.write_host_names = false;
  absl::StatusOr<Simulation> anonymous = Simulate(unnamed);
  ASSERT_TRUE(anonymous.ok()) << anonymous.status();
  EXPECT_EQ(RankOf(anonymous->trace, 2).host, "");
  EXPECT_EQ(RankOf(anonymous->trace, 2).steps[2].start,
            RankOf(simulation->trace, 2).steps[2].start);
}

// Transfers vary in length (both ends together), and the all-reduce's members end apart by up to
// the tail, after the common end of the reduction.
TEST(HostClockTest, TransfersVaryAndCollectivesEndApart) {
  Config config = TwoHosts();
  config.host_clocks.clear();
  config.transfer_spread = 0.5;
  config.collective_tail_ns = 50'000;
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  // 1 MiB at 100 Gbit/s: 83,887 ns + 1 us latency = 84,887 ns, scaled by 1 +- 0.5. A transfer
  // runs from the later of its two kernels' starts to their common end: the k-th send 0 -> 1
  // against the k-th receive on rank 1 from rank 0.
  std::vector<const KernelRecord*> sends;
  std::vector<const KernelRecord*> recvs;
  for (const KernelRecord& kernel : simulation->records.ranks[0].kernels) {
    if (kernel.role == KernelRole::kSend && kernel.peer_rank == 1) sends.push_back(&kernel);
  }
  for (const KernelRecord& kernel : simulation->records.ranks[1].kernels) {
    if (kernel.role == KernelRole::kRecv && kernel.peer_rank == 0) recvs.push_back(&kernel);
  }
  ASSERT_EQ(sends.size(), recvs.size());
  std::set<TimeNs> durations;
  for (size_t k = 0; k < sends.size(); ++k) {
    EXPECT_EQ(sends[k]->end, recvs[k]->end);
    const TimeNs spent = sends[k]->end - std::max(sends[k]->start, recvs[k]->start);
    EXPECT_GE(spent, 84'887 / 2);
    EXPECT_LE(spent, 84'887 * 3 / 2 + 1);
    durations.insert(spent);
  }
  EXPECT_GT(durations.size(), 3u);
  for (int32_t iteration = 0; iteration < config.iterations; ++iteration) {
    std::vector<TimeNs> ends;
    for (const RankRecord& rank : simulation->records.ranks) {
      for (const KernelRecord& kernel : rank.kernels) {
        if (kernel.role == KernelRole::kAllReduce && kernel.iteration == iteration) {
          ends.push_back(kernel.end);
        }
      }
    }
    ASSERT_EQ(ends.size(), 4u);
    const auto [low, high] = std::minmax_element(ends.begin(), ends.end());
    EXPECT_GT(*high - *low, 0) << iteration;
    EXPECT_LE(*high - *low, config.collective_tail_ns) << iteration;
  }
}

// Groups without descriptions (torch before 2.4): the same groups, none described.
TEST(HostClockTest, GroupsWithoutDescriptions) {
  Config config = TwoHosts();
  config.parallel.data = 2;
  config.parallel.dp_sync_ns = 10'000;
  config.ranks_per_host = 4;
  config.host_clocks.clear();
  absl::StatusOr<Simulation> described = Simulate(config);
  config.describe_groups = false;
  absl::StatusOr<Simulation> bare = Simulate(config);
  ASSERT_TRUE(described.ok() && bare.ok());
  const Rank& with = described->trace.ranks[0];
  const Rank& without = bare->trace.ranks[0];
  ASSERT_EQ(with.process_groups.size(), without.process_groups.size());
  bool any_described = false;
  for (size_t g = 0; g < with.process_groups.size(); ++g) {
    any_described |= !with.process_groups[g].description.empty();
    EXPECT_EQ(without.process_groups[g].description, "");
    EXPECT_EQ(without.process_groups[g].ranks, with.process_groups[g].ranks);
  }
  EXPECT_TRUE(any_described);
}

// One host's clock per host: a wrong count is refused, naming the field.
TEST(HostClockTest, OneClockPerHost) {
  Config config = TwoHosts();
  config.host_clocks.push_back(Config::HostClock{});
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_FALSE(simulation.ok());
  EXPECT_NE(simulation.status().message().find("host_clocks has 3 entries"), std::string::npos);
}

}  // namespace
}  // namespace bubblescope::sim
