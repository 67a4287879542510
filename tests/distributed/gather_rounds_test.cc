#include "distributed/gather_rounds.h"

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope::distributed {
namespace {

using ::testing::ElementsAre;

TEST(GatherRoundsTest, ChunksPerProcessKeepARoundWithinItsBytes) {
  EXPECT_EQ(PerProcessChunk(4, 1000), 250u);
  EXPECT_EQ(PerProcessChunk(3, 1000), 333u);
  EXPECT_EQ(PerProcessChunk(2000, 1000), 1u);  // never zero
  EXPECT_EQ(PerProcessChunk(1), kGatherRoundBytes);
}

TEST(GatherRoundsTest, RoundsMoveEveryByteOnceInOrder) {
  // Three processes with 0, 5 and 12 bytes at 4 bytes a round: 3 rounds.
  const std::vector<uint64_t> sizes = {0, 5, 12};
  ASSERT_EQ(RoundCount(sizes, 4), 3u);
  const GatherRound first = PlanRound(sizes, 4, 0);
  EXPECT_THAT(first.counts, ElementsAre(0, 4, 4));
  EXPECT_THAT(first.displacements, ElementsAre(0, 0, 4));
  EXPECT_EQ(first.total, 8u);
  const GatherRound second = PlanRound(sizes, 4, 1);
  EXPECT_THAT(second.counts, ElementsAre(0, 1, 4));
  EXPECT_THAT(second.displacements, ElementsAre(0, 0, 1));
  const GatherRound third = PlanRound(sizes, 4, 2);
  EXPECT_THAT(third.counts, ElementsAre(0, 0, 4));
  EXPECT_EQ(third.total, 4u);

  // Replaying the plan over real bytes gives each process's bytes back.
  const std::vector<std::string> sent = {"", "hello", "twelve bytes"};
  std::vector<std::string> received(3);
  for (size_t round = 0; round < 3; ++round) {
    const GatherRound plan = PlanRound(sizes, 4, round);
    std::string buffer;
    for (size_t p = 0; p < 3; ++p) {
      buffer += sent[p].substr(std::min<size_t>(4 * round, sent[p].size()),
                               static_cast<size_t>(plan.counts[p]));
    }
    ASSERT_EQ(buffer.size(), plan.total);
    for (size_t p = 0; p < 3; ++p) {
      received[p] += buffer.substr(static_cast<size_t>(plan.displacements[p]),
                                   static_cast<size_t>(plan.counts[p]));
    }
  }
  EXPECT_EQ(received, sent);
}

TEST(GatherRoundsTest, NothingToSendIsNoRound) {
  EXPECT_EQ(RoundCount({0, 0}, 4), 0u);
  EXPECT_EQ(RoundCount({}, 4), 0u);
}

// Bundles past 2 GiB (a process that read many large ranks): every round's counts and
// displacements fit an int, and the rounds cover every byte.
TEST(GatherRoundsTest, BundlesOverTwoGibibytesFitIntCounts) {
  const std::vector<uint64_t> sizes = {uint64_t{5} << 30, 17, uint64_t{3} << 31, 0};
  const uint64_t per_process = PerProcessChunk(4);
  const size_t rounds = RoundCount(sizes, per_process);
  EXPECT_EQ(rounds, 24u);  // the largest, 6 GiB, at 256 MiB a round
  std::vector<uint64_t> moved(sizes.size(), 0);
  for (size_t round = 0; round < rounds; ++round) {
    const GatherRound plan = PlanRound(sizes, per_process, round);
    EXPECT_LE(plan.total, uint64_t{INT_MAX});
    for (size_t p = 0; p < sizes.size(); ++p) {
      EXPECT_GE(plan.counts[p], 0);
      moved[p] += static_cast<uint64_t>(plan.counts[p]);
    }
  }
  EXPECT_EQ(moved, sizes);
}

}  // namespace
}  // namespace bubblescope::distributed
