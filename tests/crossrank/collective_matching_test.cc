// Collectives as clock evidence, on hand-made ranks: which kernels are matched, and how
// clock_alignment uses them. Expected values are read off the construction.
#include "crossrank/collective_matching.h"

#include <cstdint>
#include <string>
#include <vector>

#include "crossrank/clock_alignment.h"
#include "gtest/gtest.h"
#include "index/rank_index.h"
#include "support/timeline_fixtures.h"

namespace bubblescope::collective_matching {
namespace {

using namespace bubblescope::testing;  // NOLINT(build/namespaces): test builders only

// A collective kernel of `kind` on the group at `group` (an index into the rank's groups).
Interval Collective(Rank* rank, CommKind kind, uint32_t group, TimeNs start, TimeNs end) {
  Interval interval = Op(kComm, start, end);
  interval.comm = static_cast<uint32_t>(rank->comms.size());
  rank->comms.push_back(CommInfo{.process_group = group, .kind = kind});
  return interval;
}

// Rank `id` runs (on its own clock, `offset` ahead of true time): two all-reduces of the group
// of ranks {0, 1, 2} ending at true 1000 and 3000, a broadcast of a group without ranks or name,
// and a send (point-to-point, not a collective); with `extra`, an all-reduce of the group {0, 1}
// that rank 0 did not record.
Rank MakeRank(int32_t id, TimeNs offset, bool extra) {
  Rank rank;
  rank.rank = id;
  rank.process_groups.push_back(ProcessGroup{"pp", {2, 0, 1}});
  rank.process_groups.push_back(ProcessGroup{"pair", {0, 1}});
  rank.process_groups.push_back(ProcessGroup{"", {}});
  std::vector<Interval> kernels = {
      Collective(&rank, CommKind::kAllReduce, 0, 900 + offset, 1000 + offset),
      Collective(&rank, CommKind::kBroadcast, 2, 1500 + offset, 1600 + offset),
      Collective(&rank, CommKind::kSend, 0, 2000 + offset, 2100 + offset),
      Collective(&rank, CommKind::kAllReduce, 0, 2500 + offset, 3000 + offset)};
  if (extra) kernels.push_back(Collective(&rank, CommKind::kAllReduce, 1, 4000, 4100));
  rank.timelines.push_back(Stream(7, kernels));
  return rank;
}

TEST(CollectiveMatchingTest, KthCollectiveOfAGroupOnEachMember) {
  Trace trace;
  trace.ranks.push_back(MakeRank(0, 0, false));
  trace.ranks.push_back(MakeRank(1, 700, true));
  trace.ranks.push_back(MakeRank(2, -300, false));
  const index::TraceIndex index = index::Build(trace);
  const std::vector<MatchedEnds> matches = Analyze(trace, index, {.ranks = {0, 1, 2}});
  // Group {0,1,2}: each member against rank 0, two all-reduces each. The {0,1} group has one
  // collective on rank 1 and none on rank 0: nothing. The unnamed group and the send: nothing.
  ASSERT_EQ(matches.size(), 4u);
  EXPECT_EQ(matches[0].a, 0);
  EXPECT_EQ(matches[0].b, 1);
  EXPECT_EQ(matches[0].b_end - matches[0].a_end, 700);
  EXPECT_EQ(matches[0].b_duration, 100);
  EXPECT_EQ(matches[1].b_end - matches[1].a_end, 700);
  EXPECT_EQ(matches[1].b_duration, 500);
  EXPECT_EQ(matches[2].b, 2);
  EXPECT_EQ(matches[2].b_end - matches[2].a_end, -300);

  // Only the pipeline's ranks are matched.
  EXPECT_EQ(Analyze(trace, index, {.ranks = {1, 2}}).size(), 2u);

  // The clocks: no transfer at all, so the collectives place ranks 1 and 2.
  const clock_alignment::Result clocks =
      clock_alignment::Analyze({}, clock_alignment::Options{.ranks = {0, 1, 2}}, matches);
  ASSERT_EQ(clocks.offsets.size(), 3u);
  EXPECT_TRUE(clocks.offsets[1].aligned);
  EXPECT_EQ(clocks.offsets[1].offset_ns, 700);
  EXPECT_EQ(clocks.offsets[1].uncertainty_ns, 0);
  EXPECT_EQ(clocks.offsets[1].samples, 2);
  EXPECT_EQ(clocks.offsets[2].offset_ns, -300);
}

// Collectives that carry their group's sequence number (Kineto's "Seq") pair by it, even when
// one rank's window started later: rank 0 recorded all-reduces 4, 5 and 6 of the group {0, 1}
// ending at true 1000, 2000 and 3000; rank 1, 700 ns ahead, recorded only 5 and 6, and a 9 that
// rank 0 did not. By position nothing would pair (3 against 3 kernels, but not the same ones).
TEST(CollectiveMatchingTest, SequenceNumbersPairAcrossWindows) {
  auto make = [](int32_t id, TimeNs offset, std::vector<std::pair<int64_t, TimeNs>> ends) {
    Rank rank;
    rank.rank = id;
    rank.process_groups.push_back(ProcessGroup{"pair", {0, 1}});
    std::vector<Interval> kernels;
    for (const auto& [seq, end] : ends) {
      Interval interval = Op(kComm, end - 100 + offset, end + offset);
      interval.comm = static_cast<uint32_t>(rank.comms.size());
      rank.comms.push_back(CommInfo{.process_group = 0, .kind = CommKind::kAllReduce, .seq = seq});
      kernels.push_back(interval);
    }
    rank.timelines.push_back(Stream(7, kernels));
    return rank;
  };
  Trace trace;
  trace.ranks.push_back(make(0, 0, {{4, 1000}, {5, 2000}, {6, 3000}}));
  trace.ranks.push_back(make(1, 700, {{5, 2000}, {6, 3000}, {9, 4000}}));
  const index::TraceIndex index = index::Build(trace);
  const std::vector<MatchedEnds> matches = Analyze(trace, index, {.ranks = {0, 1}});
  ASSERT_EQ(matches.size(), 2u);
  for (const MatchedEnds& match : matches) {
    EXPECT_TRUE(match.by_id);
    EXPECT_EQ(match.b_end - match.a_end, 700);
  }
  EXPECT_EQ(matches[0].a_end, 2000);
  const clock_alignment::Result clocks =
      clock_alignment::Analyze({}, clock_alignment::Options{.ranks = {0, 1}}, matches);
  EXPECT_EQ(clocks.offsets[1].source, clock_alignment::Source::kMatchedIds);
  EXPECT_EQ(clocks.offsets[1].offset_ns, 700);

  // One kernel without a number: the pair falls back to position, and 3 against 3 kernels of
  // different collectives would pair wrongly, so equal counts are all position can check.
  trace.ranks[1].comms.back().seq = -1;
  const std::vector<MatchedEnds> by_position =
      Analyze(trace, index::Build(trace), {.ranks = {0, 1}});
  ASSERT_EQ(by_position.size(), 3u);
  EXPECT_FALSE(by_position[0].by_id);
}

// A pair whose transfers give rendezvous samples keeps them; collectives speak only where the
// transfers do not.
TEST(CollectiveMatchingTest, TransfersComeFirst) {
  p2p_matching::Transfer transfer;
  transfer.src = 0;
  transfer.dst = 1;
  transfer.send =
      p2p_graph::P2pOp{.send = true, .peer = 1, .rendezvous = true, .start = 100, .end = 200};
  transfer.recv = p2p_graph::P2pOp{
      .send = false, .peer = 0, .rendezvous = true, .start = 150, .end = 250};  // d = +50
  // Kernels of 1000 ns: long enough that no end precedes another member's start.
  const std::vector<MatchedEnds> collectives = {
      {.a = 0, .b = 1, .a_end = 1000, .b_end = 1400, .b_duration = 1000, .a_duration = 1000},
      {.a = 0, .b = 2, .a_end = 1000, .b_end = 900, .b_duration = 1000, .a_duration = 1000}};
  const clock_alignment::Result clocks = clock_alignment::Analyze(
      {transfer}, clock_alignment::Options{.ranks = {0, 1, 2}}, collectives);
  ASSERT_EQ(clocks.offsets.size(), 3u);
  EXPECT_EQ(clocks.offsets[1].offset_ns, 50);    // the transfer, not the collective's +400
  EXPECT_EQ(clocks.offsets[2].offset_ns, -100);  // rank 2 has only the collective
  EXPECT_EQ(clocks.offsets[2].samples, 1);
}

}  // namespace
}  // namespace bubblescope::collective_matching
