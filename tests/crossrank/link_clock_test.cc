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
      {.rank = 1, .verdict = clock_alignment::Verdict::kApplied, .aligned = true,
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

}  // namespace
}  // namespace bubblescope
