// The declared world size against the ranks loaded, and the peers outside the trace, on
// hand-made traces whose answers are read off their construction.
#include "crossrank/job_completeness.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/timeline_fixtures.h"

namespace bubblescope::job_completeness {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

Rank RankOf(int32_t id, int32_t world_size) {
  Rank rank;
  rank.rank = id;
  rank.world_size = world_size;
  return rank;
}

TEST(JobCompletenessTest, MissingRanksOfTheDeclaredWorld) {
  Trace trace;
  trace.ranks.push_back(RankOf(0, 8));
  trace.ranks.push_back(RankOf(3, 8));
  trace.ranks.push_back(RankOf(7, 8));
  const JobResult result = AnalyzeJob(trace);
  EXPECT_EQ(result.world_size, 8);
  EXPECT_THAT(result.missing_ranks, ElementsAre(1, 2, 4, 5, 6));
  EXPECT_FALSE(result.world_sizes_disagree);
}

TEST(JobCompletenessTest, NoDeclaredWorldSizeMeansNothingIsKnownMissing) {
  Trace trace;
  trace.ranks.push_back(RankOf(0, -1));
  trace.ranks.push_back(RankOf(5, 0));
  const JobResult result = AnalyzeJob(trace);
  EXPECT_EQ(result.world_size, -1);
  EXPECT_THAT(result.missing_ranks, IsEmpty());
}

TEST(JobCompletenessTest, DisagreeingWorldSizesTakeTheLargest) {
  Trace trace;
  trace.ranks.push_back(RankOf(0, 2));
  trace.ranks.push_back(RankOf(1, 4));
  const JobResult result = AnalyzeJob(trace);
  EXPECT_EQ(result.world_size, 4);
  EXPECT_TRUE(result.world_sizes_disagree);
  EXPECT_THAT(result.missing_ranks, ElementsAre(2, 3));
}

// Rank 9 in files declaring a world of 4 is not one of its ranks: 3 of the 4 are held, 3 is
// missing, 9 is outside (it was counted as one of the 4).
TEST(JobCompletenessTest, RanksOutsideTheDeclaredWorldAreNotCountedInIt) {
  Trace trace;
  for (int32_t id : {0, 1, 2, 9}) trace.ranks.push_back(RankOf(id, 4));
  const JobResult result = AnalyzeJob(trace);
  EXPECT_EQ(result.world_size, 4);
  EXPECT_EQ(result.ranks_in_world, 3);
  EXPECT_THAT(result.missing_ranks, ElementsAre(3));
  EXPECT_THAT(result.ranks_outside_world, ElementsAre(9));
}

// A world size as large as an int32 with one file: the list is capped, the work bounded.
TEST(JobCompletenessTest, AHugeDeclaredWorldIsBounded) {
  Trace trace;
  trace.ranks.push_back(RankOf(0, std::numeric_limits<int32_t>::max()));
  const JobResult result = AnalyzeJob(trace);
  EXPECT_EQ(result.missing_ranks.size(), 4096u);
  EXPECT_EQ(result.missing_ranks.front(), 1);
  EXPECT_EQ(result.missing_ranks.back(), 4096);
}

// Rank 1 sends to 2 (loaded) and 3 (not), receives from 9 (not); its optimizer-step traffic
// with 5 and the transfer without a peer do not count.
TEST(JobCompletenessTest, PeersOutsideTheTrace) {
  Trace trace;
  trace.ranks.push_back(RankOf(1, -1));
  trace.ranks.push_back(RankOf(2, -1));
  index::TraceIndex index;
  index.ranks.resize(2);
  index.ranks[0].rank = 1;
  index.ranks[1].rank = 2;
  auto p2p = [](CommKind kind, int32_t peer, bool in_optimizer = false) {
    index::DeviceOp op;
    op.op_class = index::OpClass::kComm;
    op.comm = kind;
    op.peer = peer;
    op.in_optimizer = in_optimizer;
    return op;
  };
  index.ranks[0].ops = {p2p(CommKind::kSend, 2),
                        p2p(CommKind::kSend, 3),
                        p2p(CommKind::kRecv, 9),
                        p2p(CommKind::kSend, 3),
                        p2p(CommKind::kSend, 5, /*in_optimizer=*/true),
                        p2p(CommKind::kRecv, -1),
                        p2p(CommKind::kAllReduce, 7)};
  EXPECT_THAT(PeersOutsideTrace(trace, index, {1, 2}), ElementsAre(3, 9));
  EXPECT_THAT(PeersOutsideTrace(trace, index, {2}), IsEmpty());
}

}  // namespace
}  // namespace bubblescope::job_completeness
