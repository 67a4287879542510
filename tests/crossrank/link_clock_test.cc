// Link figures and slow-link marking on hand-made transfers, each expected value worked out by
// hand in the comments.
#include <cstdint>
#include <vector>

#include "crossrank/clock_alignment.h"
#include "crossrank/link_stats.h"
#include "crossrank/p2p_matching.h"
#include "gtest/gtest.h"
#include "support/transfer_fixtures.h"

namespace bubblescope {
namespace {

using bubblescope::testing::Make;

TEST(LinkStatsTest, TransferTimeStartsAtTheLaterPost) {
  // Rank 1's clock is 1000 ns ahead. Aligned: send 0..300, recv 100..300 -> transfer from 100
  // (later post) to 300 = 200 ns; 1000 bytes * 8 / 200 = 40 Gbit/s; receiver waited 0, sender
  // 100. Second: send 1000..1100, recv 400..1100 -> transfer 100 ns (80 Gbit/s), receiver waited
  // 600. Median (nearest rank, 1st of 2) 40 and p10 40; transfer median 100.
  std::vector<p2p_matching::Transfer> transfers = {Make(0, 1, 0, 300, 1100, 1300, true),
                                                   Make(0, 1, 1000, 1100, 1400, 2100, true)};
  std::vector<clock_alignment::RankOffset> offsets = {
      {.rank = 0, .verdict = clock_alignment::Verdict::kSameClock, .aligned = true},
      {.rank = 1,
       .verdict = clock_alignment::Verdict::kApplied,
       .aligned = true,
       .offset_ns = 1000}};
  std::vector<link_stats::Link> links =
      link_stats::Analyze(transfers, clock_alignment::AsClockOffsets(offsets));
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].transfers, 2);
  EXPECT_EQ(links[0].bytes, 2000);
  EXPECT_EQ(links[0].transfer_median_ns, 100);
  EXPECT_DOUBLE_EQ(links[0].gbps_median, 40.0);
  EXPECT_DOUBLE_EQ(links[0].gbps_p10, 40.0);
  EXPECT_EQ(links[0].sender_wait_ns, 100);
  EXPECT_EQ(links[0].receiver_wait_ns, 600);
}

// A transfer is judged only when its two clocks' uncertainty is at most a tenth of its duration.
// Two transfers of 1000 ns (send and receive posted together, 8000 bits: 8 Gbit/s). Rank 1's
// clock may be 150 ns off: 150 > 1000 / 10, so neither is judged and the link cannot be; 100 ns
// is exactly a tenth: both judged. Two ranks on one clock node agree exactly, whatever either's
// error against the reference.
TEST(LinkStatsTest, JudgedOnlyWhereTheClocksAllow) {
  const std::vector<p2p_matching::Transfer> transfers = {Make(0, 1, 0, 1000, 0, 1000, true),
                                                         Make(0, 1, 5000, 6000, 5000, 6000, true)};
  const ClockOffsets clocks;
  std::vector<link_stats::Link> links =
      link_stats::Analyze(transfers, clocks, {{0, 0, 0}, {1, 1, 150}});
  ASSERT_EQ(links.size(), 1u);
  EXPECT_TRUE(links[0].clock_limited);
  EXPECT_EQ(links[0].clock_uncertainty_ns, 150);
  EXPECT_EQ(links[0].judged_transfers, 0);
  EXPECT_EQ(links[0].timed_transfers, 2);
  EXPECT_EQ(links[0].bandwidth_samples, 0);
  EXPECT_EQ(links[0].transfer_median_all_ns, 1000);

  links = link_stats::Analyze(transfers, clocks, {{0, 0, 0}, {1, 1, 100}});
  EXPECT_FALSE(links[0].clock_limited);
  EXPECT_EQ(links[0].judged_transfers, 2);
  EXPECT_DOUBLE_EQ(links[0].gbps_median, 8.0);

  links = link_stats::Analyze(transfers, clocks, {{0, 3, 5000}, {1, 3, 5000}});
  EXPECT_FALSE(links[0].clock_limited);
  EXPECT_EQ(links[0].clock_uncertainty_ns, 0);
}

link_stats::Link LinkOf(int32_t src, double gbps, int64_t bytes) {
  link_stats::Link link;
  link.src = src;
  link.dst = src + 1;
  link.bandwidth_samples = 1;
  link.gbps_median = gbps;
  link.median_message_bytes = bytes;
  return link;
}

TEST(LinkStatsTest, SlowOnlyAgainstEnoughLinksOfItsSize) {
  // Size class 1 MiB: 100, 100, 30 -> reference (2nd of 3) 100; 30 < 50 is slow. Class 1 KiB:
  // only two links (100 and 10): no reference, nothing flagged.
  std::vector<link_stats::Link> a = {LinkOf(0, 100.0, 1 << 20), LinkOf(1, 30.0, 1 << 20),
                                     LinkOf(2, 10.0, 1024)};
  std::vector<link_stats::Link> b = {LinkOf(0, 100.0, 1 << 20), LinkOf(1, 100.0, 1024)};
  link_stats::MarkSlowLinks({&a, &b}, link_stats::SlowOptions{});
  EXPECT_FALSE(a[0].slow);
  EXPECT_TRUE(a[1].slow);
  EXPECT_DOUBLE_EQ(a[1].reference_gbps, 100.0);
  EXPECT_EQ(a[1].reference_links, 3);
  EXPECT_FALSE(a[2].slow);
  EXPECT_EQ(a[2].reference_links, 2);
  EXPECT_FALSE(b[0].slow);
  EXPECT_FALSE(b[1].slow);
  link_stats::MarkSlowLinks({&a, &b}, link_stats::SlowOptions{.threshold = 0.25});
  EXPECT_FALSE(a[1].slow);  // 30 >= 25
}

// The p2p ops of one rank, as p2p_graph lists them.
p2p_graph::RankOps OpsOf(int32_t rank, std::vector<p2p_graph::P2pOp> ops) {
  return p2p_graph::RankOps{.rank = rank, .ops = std::move(ops)};
}

p2p_graph::P2pOp Op(bool send, int32_t peer, TimeNs start, TimeNs end, int64_t batch = -1) {
  return p2p_graph::P2pOp{.send = send,
                          .peer = peer,
                          .bytes = 1000,
                          .rendezvous = true,
                          .batch = batch,
                          .start = start,
                          .end = end};
}

// Megatron's interleaved batches: rank 1's batch [100, 1000] receives X from rank 0 and sends Z
// to rank 2, so it ends when the later of the two does and times neither. Rank 0's send of X
// [100, 400] and rank 2's receive of Z [200, 1000] are kernels of their own. Ranks 0 and 1 then
// exchange W and Y in mirrored batches holding exactly those two transfers: they time both.
// Links 0->1 and 1->2 count X and Z as transfers with bytes but no transfer time; 0->1 is timed
// by W alone: posts at 2000 and 2100, end 2600, 500 ns, 1000 B * 8 / 500 = 16 Gbit/s.
TEST(LinkStatsTest, BatchesWithTwoPeersTimeNoTransfer) {
  p2p_graph::Result graph;
  graph.ranks = {
      OpsOf(0, {Op(true, 1, 100, 400), Op(true, 1, 2000, 2600, 5), Op(false, 1, 2000, 2600, 5)}),
      OpsOf(1, {Op(false, 0, 100, 1000, 3), Op(true, 2, 100, 1000, 3), Op(false, 0, 2100, 2600, 8),
                Op(true, 0, 2100, 2600, 8)}),
      OpsOf(2, {Op(false, 1, 200, 1000)})};
  const p2p_matching::Result matching = p2p_matching::Analyze(graph, {});
  ASSERT_EQ(matching.transfers.size(), 4u);   // 0->1 X and W, 1->0 Y, 1->2 Z
  EXPECT_FALSE(matching.transfers[0].timed);  // X
  EXPECT_TRUE(matching.transfers[1].timed);   // W
  EXPECT_TRUE(matching.transfers[2].timed);   // Y
  EXPECT_FALSE(matching.transfers[3].timed);  // Z
  std::vector<link_stats::Link> links = link_stats::Analyze(matching.transfers, ClockOffsets{});
  ASSERT_EQ(links.size(), 3u);
  EXPECT_EQ(links[0].transfers, 2);
  EXPECT_EQ(links[0].timed_transfers, 1);
  EXPECT_EQ(links[0].bytes, 2000);
  EXPECT_EQ(links[0].transfer_median_ns, 500);
  EXPECT_DOUBLE_EQ(links[0].gbps_median, 16.0);
  EXPECT_EQ(links[2].src, 1);
  EXPECT_EQ(links[2].dst, 2);
  EXPECT_EQ(links[2].timed_transfers, 0);
  EXPECT_EQ(links[2].bandwidth_samples, 0);
  EXPECT_EQ(links[2].transfer_total_ns, 0);
  // A link without timed transfers is never slow nor a reference for the others.
  links[0].gbps_median = 1.0;
  std::vector<link_stats::Link> healthy = {LinkOf(5, 100.0, 1000), LinkOf(7, 100.0, 1000)};
  link_stats::MarkSlowLinks({&links, &healthy}, link_stats::SlowOptions{});
  EXPECT_TRUE(links[0].slow);
  EXPECT_FALSE(links[2].slow);
  // 0->1 (now 1 Gbit/s), 1->0 (Y: posts 2000 and 2100, end 2600: 16 Gbit/s) and the two
  // healthy links, not 1->2: reference = 2nd of [1, 16, 100, 100] = 16, and 1 < 0.5 * 16.
  EXPECT_EQ(links[0].reference_links, 4);
  EXPECT_DOUBLE_EQ(links[0].reference_gbps, 16.0);
}

}  // namespace
}  // namespace bubblescope
