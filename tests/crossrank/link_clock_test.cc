// Clock alignment, link figures and slow-link marking on hand-made transfers, each expected value
// worked out by hand in the comments.
#include <cstdint>
#include <vector>

#include "crossrank/clock_alignment.h"
#include "crossrank/link_stats.h"
#include "crossrank/p2p_matching.h"
#include "gtest/gtest.h"

namespace bubblescope {
namespace {

p2p_matching::Transfer Make(int32_t src, int32_t dst, TimeNs send_start, TimeNs send_end,
                            TimeNs recv_start, TimeNs recv_end, bool rendezvous,
                            int64_t bytes = 1000) {
  p2p_matching::Transfer transfer;
  transfer.src = src;
  transfer.dst = dst;
  transfer.send = p2p_graph::P2pOp{.send = true, .peer = dst, .bytes = bytes,
                                   .rendezvous = rendezvous, .start = send_start,
                                   .end = send_end};
  transfer.recv = p2p_graph::P2pOp{.send = false, .peer = src, .bytes = bytes,
                                   .rendezvous = rendezvous, .start = recv_start,
                                   .end = recv_end};
  return transfer;
}

TEST(ClockAlignmentTest, RendezvousMedianOfBothDirections) {
  // Rank 1 runs 500 ns ahead: every end pair differs by 500, except one outlier at 540 (d = 540)
  // and one reverse transfer (1 -> 0) whose ends differ by -500 (d = +500).
  std::vector<p2p_matching::Transfer> transfers = {
      Make(0, 1, 100, 200, 550, 700, true), Make(0, 1, 300, 400, 850, 900, true),
      Make(0, 1, 1000, 1100, 1500, 1640, true), Make(1, 0, 2600, 2700, 2050, 2200, true)};
  clock_alignment::Result result =
      clock_alignment::Analyze(transfers, clock_alignment::Options{.ranks = {0, 1}});
  ASSERT_EQ(result.offsets.size(), 2u);
  EXPECT_TRUE(result.offsets[0].aligned);
  EXPECT_EQ(result.offsets[0].offset_ns, 0);
  EXPECT_TRUE(result.offsets[1].aligned);
  EXPECT_EQ(result.offsets[1].offset_ns, 500);     // samples 500, 500, 540, 500: median 500
  EXPECT_EQ(result.offsets[1].uncertainty_ns, 40);  // the outlier's distance
  EXPECT_EQ(result.offsets[1].samples, 4);
}

// Samples on both sides of 0 support no offset: the clocks stay as recorded, flagged. Their
// median (+300) would have moved rank 1 although one transfer says it runs 400 ns behind.
TEST(ClockAlignmentTest, SamplesOnBothSidesOfZeroKeepTheRecordedClocks) {
  // d samples (recv.end - send.end): +3000, +5000, -3900; causality (recv.end - send.start)
  // gives d <= 4000, 6000 and 1100, so d <= 1100, which allows 0. The receives last 500, 1000
  // and 50 ns (median 500): the 5000 ns spread is far beyond, so the samples disagree: a guess.
  std::vector<p2p_matching::Transfer> transfers = {
      Make(0, 1, 1000, 2000, 4500, 5000, true), Make(0, 1, 10000, 11000, 15000, 16000, true),
      Make(0, 1, 20000, 25000, 21050, 21100, true)};
  clock_alignment::Result result =
      clock_alignment::Analyze(transfers, clock_alignment::Options{.ranks = {0, 1}});
  ASSERT_EQ(result.offsets.size(), 2u);
  EXPECT_EQ(result.offsets[1].offset_ns, 0);
  EXPECT_TRUE(result.offsets[1].as_recorded);
  EXPECT_EQ(result.offsets[1].uncertainty_ns, 5000);  // the farthest sample
  EXPECT_FALSE(result.offsets[0].as_recorded);

  // All samples on one side: the median is applied and nothing is flagged.
  transfers.pop_back();
  result = clock_alignment::Analyze(transfers, clock_alignment::Options{.ranks = {0, 1}});
  EXPECT_EQ(result.offsets[1].offset_ns, 3000);  // samples 3000, 5000: the lower median
  EXPECT_FALSE(result.offsets[1].as_recorded);

  // Ends a few hundred ns apart either way around long receives: one clock, no guess.
  transfers = {Make(0, 1, 0, 10000, 0, 10200, true), Make(0, 1, 20000, 30000, 20000, 29700, true)};
  result = clock_alignment::Analyze(transfers, clock_alignment::Options{.ranks = {0, 1}});
  EXPECT_EQ(result.offsets[1].offset_ns, 0);
  EXPECT_EQ(result.offsets[1].uncertainty_ns, 300);
  EXPECT_FALSE(result.offsets[1].as_recorded);
}

// A batch kernel ends with its last transfer. Rank 1 runs 500 ns ahead. Rank 0's batch holds
// a send X to rank 1 and a receive Y from it, on true time [100, 2000]: X completes at 900,
// Y at 2000. Rank 1 runs each in a kernel of its own: recv X true [50, 900] (recorded
// [550, 1400]), send Y true [1000, 2000] (recorded [1500, 2500]). Per transfer, X's ends would
// say d = 1400 - 2000 = -600; the batch's one sample is max(1400, 2500) - 2000 = +500.
TEST(ClockAlignmentTest, BatchKernelGivesOneSampleFromItsLastTransfer) {
  p2p_matching::Transfer x = Make(0, 1, 100, 2000, 550, 1400, true);
  p2p_matching::Transfer y = Make(1, 0, 1500, 2500, 100, 2000, true);
  x.send.batch = 7;
  y.recv.batch = 7;
  clock_alignment::Result result =
      clock_alignment::Analyze({x, y}, clock_alignment::Options{.ranks = {0, 1}});
  ASSERT_EQ(result.offsets.size(), 2u);
  EXPECT_EQ(result.offsets[1].offset_ns, 500);
  EXPECT_EQ(result.offsets[1].uncertainty_ns, 0);
  EXPECT_EQ(result.offsets[1].samples, 1);
}

// Two neighbours exchanging in mirrored batches (Megatron's send_forward_recv_backward against
// send_backward_recv_forward) end together: rank 1, 300 ns ahead, records its batch at
// [400, 2300] for rank 0's [100, 2000]. Each batch gives a sample: +300 twice.
TEST(ClockAlignmentTest, MirroredBatchesEndTogether) {
  p2p_matching::Transfer x = Make(0, 1, 100, 2000, 400, 2300, true);
  p2p_matching::Transfer y = Make(1, 0, 400, 2300, 100, 2000, true);
  x.send.batch = 1;
  y.recv.batch = 1;
  x.recv.batch = 4;
  y.send.batch = 4;
  clock_alignment::Result result =
      clock_alignment::Analyze({x, y}, clock_alignment::Options{.ranks = {0, 1}});
  ASSERT_EQ(result.offsets.size(), 2u);
  EXPECT_EQ(result.offsets[1].offset_ns, 300);
  EXPECT_EQ(result.offsets[1].uncertainty_ns, 0);
  EXPECT_EQ(result.offsets[1].samples, 2);
}

// A batch with two peers says when its later transfer ended, not which: no sample. Rank 1's
// batch [100, 1000] receives X from rank 0 (its own send kernel [100, 400]) and sends Z to
// rank 2 (a receive kernel [200, 1000]); all clocks agree. Only causality is left: d <= 900 on
// both pairs, which allows the shared clock. Per transfer, X alone would have said d = +600.
TEST(ClockAlignmentTest, BatchWithTwoPeersGivesNoSample) {
  p2p_matching::Transfer x = Make(0, 1, 100, 400, 100, 1000, true);
  p2p_matching::Transfer z = Make(1, 2, 100, 1000, 200, 1000, true);
  x.recv.batch = 3;
  z.send.batch = 3;
  clock_alignment::Result result =
      clock_alignment::Analyze({x, z}, clock_alignment::Options{.ranks = {0, 1, 2}});
  ASSERT_EQ(result.offsets.size(), 3u);
  for (size_t i = 1; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_TRUE(result.offsets[i].aligned);
    EXPECT_EQ(result.offsets[i].offset_ns, 0);
    EXPECT_EQ(result.offsets[i].samples, 0);
  }
  EXPECT_EQ(result.offsets[1].uncertainty_ns, 900);
  EXPECT_EQ(result.offsets[2].uncertainty_ns, 1800);  // 900 on each edge of the chain
}

TEST(ClockAlignmentTest, BufferedOpsUseOnlyCausality) {
  // gloo-style: no rendezvous. 0 -> 1: recv ends at 900 (rank 1's clock), send started at 1000
  // (rank 0's clock), so d <= -100: rank 1 is at least 100 ns behind. 1 -> 0: recv end 5000 on
  // rank 0, send start 4800 on rank 1: -d <= 200, d >= -200. d = -100, the bound nearest 0;
  // uncertainty = distance to the farther bound, 100.
  std::vector<p2p_matching::Transfer> transfers = {Make(0, 1, 1000, 1010, 850, 900, false),
                                                   Make(1, 0, 4800, 4810, 4700, 5000, false)};
  clock_alignment::Result result =
      clock_alignment::Analyze(transfers, clock_alignment::Options{.ranks = {0, 1}});
  EXPECT_EQ(result.offsets[1].offset_ns, -100);
  EXPECT_EQ(result.offsets[1].uncertainty_ns, 100);
  EXPECT_EQ(result.offsets[1].samples, 0);
}

TEST(ClockAlignmentTest, UnreachedRankStaysUnaligned) {
  std::vector<p2p_matching::Transfer> transfers = {Make(0, 1, 0, 10, 0, 10, true)};
  clock_alignment::Result result =
      clock_alignment::Analyze(transfers, clock_alignment::Options{.ranks = {0, 1, 2}});
  EXPECT_TRUE(result.offsets[1].aligned);
  EXPECT_FALSE(result.offsets[2].aligned);
  EXPECT_EQ(result.offsets[2].offset_ns, 0);
}

TEST(LinkStatsTest, TransferTimeStartsAtTheLaterPost) {
  // Rank 1's clock is 1000 ns ahead. Aligned: send 0..300, recv 100..300 -> transfer from 100
  // (later post) to 300 = 200 ns; 1000 bytes * 8 / 200 = 40 Gbit/s; receiver waited 0, sender
  // 100. Second: send 1000..1100, recv 400..1100 -> transfer 100 ns (80 Gbit/s), receiver waited
  // 600. Median (nearest rank, 1st of 2) 40 and p10 40; transfer median 100.
  std::vector<p2p_matching::Transfer> transfers = {Make(0, 1, 0, 300, 1100, 1300, true),
                                                   Make(0, 1, 1000, 1100, 1400, 2100, true)};
  std::vector<clock_alignment::RankOffset> offsets = {{.rank = 0, .aligned = true},
                                                      {.rank = 1, .aligned = true,
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
  return p2p_graph::P2pOp{.send = send, .peer = peer, .bytes = 1000, .rendezvous = true,
                          .batch = batch, .start = start, .end = end};
}

// Megatron's interleaved batches: rank 1's batch [100, 1000] receives X from rank 0 and sends Z
// to rank 2, so it ends when the later of the two does and times neither. Rank 0's send of X
// [100, 400] and rank 2's receive of Z [200, 1000] are kernels of their own. Ranks 0 and 1 then
// exchange W and Y in mirrored batches holding exactly those two transfers: they time both.
// Links 0->1 and 1->2 count X and Z as transfers with bytes but no transfer time; 0->1 is timed
// by W alone: posts at 2000 and 2100, end 2600, 500 ns, 1000 B * 8 / 500 = 16 Gbit/s.
TEST(LinkStatsTest, BatchesWithTwoPeersTimeNoTransfer) {
  p2p_graph::Result graph;
  graph.ranks = {OpsOf(0, {Op(true, 1, 100, 400), Op(true, 1, 2000, 2600, 5),
                           Op(false, 1, 2000, 2600, 5)}),
                 OpsOf(1, {Op(false, 0, 100, 1000, 3), Op(true, 2, 100, 1000, 3),
                           Op(false, 0, 2100, 2600, 8), Op(true, 0, 2100, 2600, 8)}),
                 OpsOf(2, {Op(false, 1, 200, 1000)})};
  const p2p_matching::Result matching = p2p_matching::Analyze(graph, {});
  ASSERT_EQ(matching.transfers.size(), 4u);  // 0->1 X and W, 1->0 Y, 1->2 Z
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
