// Rank ids and peers from NCCL's payloads in Nsight Systems exports. A 2-way data-parallel,
// 2-stage pipeline job (4 ranks, each pipeline's p2p on its own two-rank communicator) written as
// one export holding every process, and as one export per rank: in the first every peer is
// resolved to its global rank (the file holds every member of every communicator); in the
// second only the world's are, and a pipeline's peers stay unknown (docs/nsight-systems.md).
#include <sqlite3.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "readers/nsys_reader.h"
#include "support/test_files.h"
#include "synth/synthetic_job.h"
#include "writers/nsys_writer.h"

namespace bubblescope {
namespace {

sim::Simulation Simulate() {
  sim::Config config;
  config.schedule = sim::Schedule::k1F1B;
  config.stages = 2;
  config.microbatches = 4;
  config.iterations = 2;
  config.parallel.data = 2;
  config.costs.assign(2, sim::StageCost{.forward = 4000, .backward = 8000});
  config.launch_gap_ns = 60;
  config.link = sim::Link{.gbps = 200.0, .latency_ns = 2000};
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  if (!simulation.ok()) {
    ADD_FAILURE() << simulation.status();
    return sim::Simulation{};
  }
  return std::move(*simulation);
}

// (correlation id, peer) of every point-to-point kernel of `rank`, by correlation id.
std::vector<std::pair<int64_t, int32_t>> P2pPeers(const Rank& rank) {
  std::vector<std::pair<int64_t, int32_t>> peers;
  for (const Timeline& timeline : rank.timelines) {
    for (const Interval& interval : timeline.intervals) {
      const CommInfo* comm = rank.comm(interval);
      if (interval.kind != IntervalKind::kCommKernel || comm == nullptr ||
          (comm->kind != CommKind::kSend && comm->kind != CommKind::kRecv)) {
        continue;
      }
      peers.emplace_back(interval.correlation, comm->peer);
    }
  }
  std::sort(peers.begin(), peers.end());
  return peers;
}

TEST(NsysRanksTest, OneExportOfEveryProcessResolvesEveryPeer) {
  sim::Simulation simulation = Simulate();
  ASSERT_EQ(simulation.trace.ranks.size(), 4u);
  testing::TempDir dir;
  const std::string path = dir.path() + "/node.sqlite";
  std::vector<const Rank*> ranks;
  for (const Rank& rank : simulation.trace.ranks) ranks.push_back(&rank);
  ASSERT_TRUE(WriteNsysSqlite(ranks, NsysWriteOptions{}, path).ok());
  absl::StatusOr<std::vector<Rank>> read = ReadNsysSqlite(path, NsysReadOptions{});
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 4u);
  for (const Rank& want : simulation.trace.ranks) {
    SCOPED_TRACE(want.rank);
    auto got = std::find_if(read->begin(), read->end(),
                            [&](const Rank& rank) { return rank.pid == want.pid; });
    ASSERT_NE(got, read->end());
    EXPECT_EQ(got->rank, want.rank);  // from the world communicator's payload
    EXPECT_EQ(got->world_size, 4);
    const std::vector<std::pair<int64_t, int32_t>> peers = P2pPeers(want);
    ASSERT_FALSE(peers.empty());
    EXPECT_EQ(P2pPeers(*got), peers);
    // The pipeline's communicator is a group whose members are all known.
    EXPECT_TRUE(std::any_of(got->process_groups.begin(), got->process_groups.end(),
                            [](const ProcessGroup& group) { return group.ranks.size() == 2; }));
  }
}

TEST(NsysRanksTest, OneExportPerRankLeavesSubCommunicatorPeersUnknown) {
  sim::Simulation simulation = Simulate();
  testing::TempDir dir;
  for (const Rank& want : simulation.trace.ranks) {
    SCOPED_TRACE(want.rank);
    const std::string path = absl::StrCat(dir.path(), "/rank", want.rank, ".sqlite");
    ASSERT_TRUE(WriteNsysSqlite(want, NsysWriteOptions{}, path).ok());
    absl::StatusOr<std::vector<Rank>> read = ReadNsysSqlite(path, NsysReadOptions{});
    ASSERT_TRUE(read.ok()) << read.status();
    ASSERT_EQ(read->size(), 1u);
    EXPECT_EQ(read->front().rank, want.rank);
    std::vector<std::pair<int64_t, int32_t>> unknown = P2pPeers(want);
    ASSERT_FALSE(unknown.empty());
    for (auto& [correlation, peer] : unknown) peer = -1;
    EXPECT_EQ(P2pPeers(read->front()), unknown);
  }
}

// A damaged payload claiming communicators of 2^31 - 1 ranks costs no memory for them: members
// are listed only where the file holds them all.
TEST(NsysRanksTest, HugeClaimedCommunicatorsCostNothing) {
  sim::Simulation simulation = Simulate();
  testing::TempDir dir;
  const std::string path = dir.path() + "/rank0.sqlite";
  // Without the launcher's environment, so that NCCL's records name the rank.
  ASSERT_TRUE(
      WriteNsysSqlite(simulation.trace.ranks[0], NsysWriteOptions{.environment = false}, path)
          .ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  // Header (domain 1, NCCL's init schema, 24 bytes at offset 32), then: communicator id, ranks
  // 0x7fffffff, rank 5, CUDA device 0, padding.
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE NVTX_EVENTS SET binaryData = X'0100000000000000020000010000000018"
                         "000000000000002000000000000000"
                         "0102030405060708FFFFFF7F050000000000000000000000' "
                         "WHERE text = 'ncclCommInitRank'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  absl::StatusOr<std::vector<Rank>> read = ReadNsysSqlite(path, NsysReadOptions{});
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ(read->front().rank, 5);
  EXPECT_EQ(read->front().world_size, 0x7fffffff);
  for (const ProcessGroup& group : read->front().process_groups) EXPECT_TRUE(group.ranks.empty());
}

}  // namespace
}  // namespace bubblescope
