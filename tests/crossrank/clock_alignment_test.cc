// Clock alignment on hand-made transfers and collectives: which evidence places each rank, and
// whether its offset is applied. Every expected value is worked out by hand in the comments.
#include "crossrank/clock_alignment.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "crossrank/collective_matching.h"
#include "crossrank/p2p_matching.h"
#include "gtest/gtest.h"
#include "support/transfer_fixtures.h"

namespace bubblescope::clock_alignment {
namespace {

using bubblescope::testing::Make;
using bubblescope::testing::Timed;

Options Ranks(std::vector<int32_t> ranks) { return Options{.ranks = std::move(ranks)}; }

// Ranks 0 and 1 aligned from `transfers`: rank 1 moved by exactly `offset`, from `samples`.
void ExpectRankOneExactlyAt(const std::vector<p2p_matching::Transfer>& transfers, TimeNs offset,
                            int64_t samples) {
  const Result result = Analyze(transfers, Ranks({0, 1}));
  ASSERT_EQ(result.offsets.size(), 2u);
  EXPECT_EQ(result.offsets[1].verdict, Verdict::kApplied);
  EXPECT_EQ(result.offsets[1].offset_ns, offset);
  EXPECT_EQ(result.offsets[1].uncertainty_ns, 0);
  EXPECT_EQ(result.offsets[1].samples, samples);
}

TEST(ClockAlignmentTest, RendezvousMedianOfBothDirections) {
  // Rank 1 runs 500 ns ahead: every end pair differs by 500, except one outlier at 540 (d = 540)
  // and one reverse transfer (1 -> 0) whose ends differ by -500 (d = +500).
  const std::vector<p2p_matching::Transfer> transfers = {
      Make(0, 1, 100, 200, 550, 700, true), Make(0, 1, 300, 400, 850, 900, true),
      Make(0, 1, 1000, 1100, 1500, 1640, true), Make(1, 0, 2600, 2700, 2050, 2200, true)};
  const Result result = Analyze(transfers, Ranks({0, 1}));
  ASSERT_EQ(result.offsets.size(), 2u);
  EXPECT_EQ(result.offsets[0].source, Source::kReference);
  EXPECT_EQ(result.offsets[0].verdict, Verdict::kSameClock);
  EXPECT_TRUE(result.offsets[0].aligned);
  EXPECT_EQ(result.offsets[0].offset_ns, 0);
  // Samples 500, 500, 540, 500: median 500, the outlier 40 away. 500 >= 2 x 40: applied.
  EXPECT_EQ(result.offsets[1].source, Source::kRendezvous);
  EXPECT_EQ(result.offsets[1].verdict, Verdict::kApplied);
  EXPECT_TRUE(result.offsets[1].aligned);
  EXPECT_EQ(result.offsets[1].offset_ns, 500);
  EXPECT_EQ(result.offsets[1].uncertainty_ns, 40);
  EXPECT_EQ(result.offsets[1].samples, 4);
  EXPECT_EQ(result.offsets[1].ErrorBound(), 40);
}

// Samples on both sides of 0 support no offset; samples too spread to exclude the recorded
// clocks keep them too.
TEST(ClockAlignmentTest, RecordedClocksStayUnlessTheEvidenceExcludesThem) {
  // d samples (recv.end - send.end): +3000, +5000, -3900; causality (recv.end - send.start)
  // gives d <= 4000, 6000 and 1100, so d <= 1100, which allows 0. The receives last 500, 1000
  // and 50 ns (median 500): the 5000 ns spread is far beyond, so the samples disagree: rank 1 is
  // not aligned, and its clock stays as recorded.
  std::vector<p2p_matching::Transfer> transfers = {Make(0, 1, 1000, 2000, 4500, 5000, true),
                                                   Make(0, 1, 10000, 11000, 15000, 16000, true),
                                                   Make(0, 1, 20000, 25000, 21050, 21100, true)};
  Result result = Analyze(transfers, Ranks({0, 1}));
  EXPECT_EQ(result.offsets[1].verdict, Verdict::kDisagree);
  EXPECT_FALSE(result.offsets[1].aligned);
  EXPECT_TRUE(result.offsets[1].as_recorded);
  EXPECT_EQ(result.offsets[1].offset_ns, 0);
  EXPECT_EQ(result.offsets[1].uncertainty_ns, 5000);  // the farthest sample
  EXPECT_FALSE(result.offsets[0].as_recorded);

  // Samples 3000 and 5000: the lower median 3000, uncertain by 2000. The truth lies in
  // [1000, 5000]; moving by 3000 could land 2000 off when the clocks are really 1000 apart, as
  // far as staying: 3000 < 2 x 2000, so the recorded clocks stay, consistent with the evidence.
  transfers.pop_back();
  result = Analyze(transfers, Ranks({0, 1}));
  EXPECT_EQ(result.offsets[1].verdict, Verdict::kConsistent);
  EXPECT_TRUE(result.offsets[1].aligned);
  EXPECT_EQ(result.offsets[1].estimate_ns, 3000);
  EXPECT_EQ(result.offsets[1].uncertainty_ns, 2000);
  EXPECT_EQ(result.offsets[1].offset_ns, 0);
  EXPECT_FALSE(result.offsets[1].as_recorded);

  // Ends a few hundred ns apart either way around long receives: one clock, no guess.
  transfers = {Make(0, 1, 0, 10000, 0, 10200, true), Make(0, 1, 20000, 30000, 20000, 29700, true)};
  result = Analyze(transfers, Ranks({0, 1}));
  EXPECT_EQ(result.offsets[1].verdict, Verdict::kConsistent);
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
  ExpectRankOneExactlyAt(Timed({x, y}), 500, 1);
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
  ExpectRankOneExactlyAt(Timed({x, y}), 300, 2);
}

// A batch with two peers says when its later transfer ended, not which: no sample. Rank 1's
// batch [100, 1000] receives X from rank 0 (its own send kernel [100, 400]) and sends Z to
// rank 2 (a receive kernel [200, 1000]). Only causality is left: d <= 900 on both pairs, a bound
// on one side, which says nothing about how far apart the clocks may be: unbounded, not aligned.
TEST(ClockAlignmentTest, BoundOnOneSideIsNoEstimate) {
  p2p_matching::Transfer x = Make(0, 1, 100, 400, 100, 1000, true);
  p2p_matching::Transfer z = Make(1, 2, 100, 1000, 200, 1000, true);
  x.recv.batch = 3;
  z.send.batch = 3;
  const Result result = Analyze(Timed({x, z}), Ranks({0, 1, 2}));
  ASSERT_EQ(result.offsets.size(), 3u);
  for (size_t i = 1; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(result.offsets[i].source, Source::kCausalityBounds);
    EXPECT_EQ(result.offsets[i].verdict, Verdict::kLoose);
    EXPECT_FALSE(result.offsets[i].aligned);
    EXPECT_EQ(result.offsets[i].offset_ns, 0);
    EXPECT_EQ(result.offsets[i].estimate_ns, 0);  // 0 is within the one bound
    EXPECT_EQ(result.offsets[i].uncertainty_ns, kUnbounded);
    EXPECT_EQ(result.offsets[i].samples, 0);
  }
}

// gloo-style buffered ops: no rendezvous. 0 -> 1: recv ends at 900 (rank 1's clock), send
// started at 1000 (rank 0's clock), so d <= -100. 1 -> 0: recv end 5000 on rank 0, send start
// 4800 on rank 1: -d <= 200, d >= -200. d is in [-200, -100]: -150, uncertain by 50, and
// 150 >= 2 x 50, so with recorded peers it is applied. From guessed peers the same bounds
// prove nothing: a wrong pairing bounds the wrong clocks.
TEST(ClockAlignmentTest, BoundsOnBothSidesOnlyFromRecordedPeers) {
  const std::vector<p2p_matching::Transfer> transfers = {Make(0, 1, 1000, 1010, 850, 900, false),
                                                         Make(1, 0, 4800, 4810, 4700, 5000, false)};
  Result result = Analyze(transfers, Ranks({0, 1}));
  EXPECT_EQ(result.offsets[1].source, Source::kCausalityBounds);
  EXPECT_EQ(result.offsets[1].verdict, Verdict::kApplied);
  EXPECT_EQ(result.offsets[1].offset_ns, -150);
  EXPECT_EQ(result.offsets[1].uncertainty_ns, 50);
  EXPECT_EQ(result.offsets[1].samples, 0);

  Options guessed = Ranks({0, 1});
  guessed.peers_guessed = true;
  result = Analyze(transfers, guessed);
  EXPECT_EQ(result.offsets[1].verdict, Verdict::kGuessedPeers);
  EXPECT_FALSE(result.offsets[1].aligned);
  EXPECT_EQ(result.offsets[1].estimate_ns, -150);
  EXPECT_EQ(result.offsets[1].offset_ns, 0);

  // A trace whose times start at its own zero has no recorded clock worth keeping: the guess is
  // applied, and said to be one.
  guessed.own_zero = {true, true};
  result = Analyze(transfers, guessed);
  EXPECT_EQ(result.offsets[1].verdict, Verdict::kGuessApplied);
  EXPECT_FALSE(result.offsets[1].aligned);
  EXPECT_TRUE(result.offsets[1].applied());
  EXPECT_EQ(result.offsets[1].offset_ns, -150);
}

// Rank 1's clock starts 2 ms ahead and gains 40 ppm (40 ns per ms): a transfer every 10 s for
// 100 s, each ending together (rendezvous) at true time T = k * 10 s, so its sample is
// d(T) = 2,000,000 + 40e-6 * T ns: 2.0 ms at the start, 6.0 ms at the end. A constant would be
// off by 2 ms at either end; the line is exact. Its rate is per unit of rank 1's own time, which
// itself runs 40 ppm fast: 40 / 1.00004 ppm. The evidence spans [0 + d, 100 s + d] on rank 1's
// clock, its anchor the middle (50 s + 4 ms): there d = 4.0 ms.
TEST(ClockAlignmentTest, DriftIsFittedAsARate) {
  std::vector<p2p_matching::Transfer> transfers;
  constexpr TimeNs kStep = 10'000'000'000;
  for (TimeNs k = 0; k <= 10; ++k) {
    const TimeNs end = k * kStep;
    const TimeNs d = 2'000'000 + end * 40 / 1'000'000;
    transfers.push_back(Make(0, 1, end - 1'000'000, end, end - 1'000'000 + d, end + d, true));
  }
  const Result result = Analyze(transfers, Ranks({0, 1}));
  const RankOffset& rank1 = result.offsets[1];
  EXPECT_EQ(rank1.verdict, Verdict::kApplied);
  EXPECT_EQ(rank1.source, Source::kRendezvous);
  EXPECT_NEAR(rank1.rate * 1e6, 40.0 / 1.00004, 1e-6);
  // The samples lie on the line; what is left is the chaining bound (clock_alignment.cc,
  // ChainSlack): 2 x 40 ppm x 4 ms = 320 ns, plus 2 x (40 ppm)^2 x 50 s = 160 ns.
  EXPECT_LE(rank1.uncertainty_ns, 481);
  // Every time moves by the line: at the first transfer's end 2.0 ms, at the last 6.0 ms.
  const ClockOffsets clocks = AsClockOffsets(result.offsets);
  EXPECT_NEAR(static_cast<double>(clocks.Of(1).At(2'000'000)), 2'000'000.0, 2.0);
  EXPECT_NEAR(static_cast<double>(clocks.Of(1).At(10 * kStep + 6'000'000)), 6'000'000.0, 2.0);
  EXPECT_NEAR(static_cast<double>(rank1.estimate_ns), 4'000'000.0, 2.0);
}

// Item 2 of issue 37: two all-reduce ends say rank 1 runs 900 us behind (d = -900 us), but the
// members do different work after the reduction; the transfers say ~0. Rank 0 -> 1: send starts
// at 1000 us, the receive ends at 2100 us on rank 1's clock, so d <= 1100 us. Rank 1 -> 0: send
// starts at 5000 us on rank 1's clock, the receive ends at 5150 us on rank 0's, so d >= -150 us.
// At d = -900 us rank 1's send would start at 5900 us on rank 0's clock, 750 us after its receive
// ended: the collectives' estimate is rejected, naming that transfer, and the bounds decide: 0
// lies in [-150, 1100] us, so the recorded clocks stay, uncertain by the farther bound, 1100 us.
TEST(ClockAlignmentTest, AnEstimateThatBreaksCausalityIsRejected) {
  const std::vector<p2p_matching::Transfer> transfers = {
      Make(0, 1, 1'000'000, 2'000'000, 1'900'000, 2'100'000, false),
      Make(1, 0, 5'000'000, 5'100'000, 5'050'000, 5'150'000, false)};
  const std::vector<collective_matching::MatchedEnds> collectives = {{.a = 0,
                                                                      .b = 1,
                                                                      .a_end = 8'000'000,
                                                                      .b_end = 7'100'000,
                                                                      .b_duration = 2'000'000,
                                                                      .a_duration = 2'000'000},
                                                                     {.a = 0,
                                                                      .b = 1,
                                                                      .a_end = 9'000'000,
                                                                      .b_end = 8'100'000,
                                                                      .b_duration = 2'000'000,
                                                                      .a_duration = 2'000'000}};
  const Result result = Analyze(transfers, Ranks({0, 1}), collectives);
  const RankOffset& rank1 = result.offsets[1];
  EXPECT_EQ(rank1.source, Source::kCausalityBounds);
  EXPECT_EQ(rank1.offset_ns, 0);
  EXPECT_EQ(rank1.estimate_ns, 0);
  EXPECT_EQ(rank1.uncertainty_ns, 1'100'000);
  EXPECT_EQ(rank1.rejected_by,
            "the transfer rank 1 -> rank 0 sent at 0.005000 s on rank 1's clock: its receive "
            "would end 750.000 us before the send started");
}

// Bounds alone on drifting clocks: forward hand-offs bound d from above, backward ones from
// below, and d = 40 ppm x t. Each hand-off takes 100 us: forward at T = k * 10 s gives
// d <= d(T) + 100 us, backward at T + 5 s gives d >= d(T + 5 s) - 100 us. No constant fits
// (d moves 4 ms over the 100 s), a line of 40 ppm leaves a band 200 us wide at most: its middle,
// uncertain by half of it.
TEST(ClockAlignmentTest, TwoSidedBoundsFollowADriftingClock) {
  std::vector<p2p_matching::Transfer> transfers;
  constexpr TimeNs kStep = 10'000'000'000;
  const auto d_at = [](TimeNs t) { return t * 40 / 1'000'000; };
  for (TimeNs k = 0; k < 10; ++k) {
    const TimeNs t = k * kStep;
    transfers.push_back(Make(0, 1, t, t + 100'000, t + d_at(t), t + 100'000 + d_at(t), false));
    const TimeNs back = t + kStep / 2;
    transfers.push_back(
        Make(1, 0, back + d_at(back), back + 100'000 + d_at(back), back, back + 100'000, false));
  }
  const Result result = Analyze(transfers, Ranks({0, 1}));
  const RankOffset& rank1 = result.offsets[1];
  EXPECT_EQ(rank1.source, Source::kCausalityBounds);
  EXPECT_NEAR(rank1.rate * 1e6, 40.0, 0.5);
  // Half the band, plus the chaining bound (about 2 x 40 ppm x 2 ms + 2 x (40 ppm)^2 x 47.5 s).
  EXPECT_LE(rank1.uncertainty_ns, 100'000 + 320);
  const RankClock line{rank1.estimate_ns, rank1.rate, rank1.anchor_ns};
  for (TimeNs t : {TimeNs{0}, 50 * kStep / 10, 95 * kStep / 10}) {
    EXPECT_LE(std::abs(line.At(t + d_at(t)) - d_at(t)), rank1.uncertainty_ns) << t;
  }
}

// Times within a minute of zero are a trace's own start; wall or boot time is days from it.
TEST(ClockAlignmentTest, OwnZeroIsTheEarliestTimeNearZero) {
  Rank rank;
  EXPECT_FALSE(StartsAtItsOwnZero(rank));  // nothing recorded
  rank.timelines.resize(2);
  rank.timelines[0].intervals.push_back(Interval{.start = 59'000'000'000, .end = 59'000'000'001});
  EXPECT_TRUE(StartsAtItsOwnZero(rank));
  rank.timelines[1].intervals.push_back(Interval{.start = 61'000'000'000, .end = 61'000'000'001});
  EXPECT_TRUE(StartsAtItsOwnZero(rank));                         // the earliest decides
  rank.timelines[0].intervals[0].start = 4'456'889'854'831'821;  // 51 days after boot
  EXPECT_FALSE(StartsAtItsOwnZero(rank));  // earliest now 61 s: past the minute
}

// Offsets are applied to all of a pipeline's ranks or none: rank 1 alone is well placed
// (+2000 exactly), rank 2 has no evidence; moving rank 1 only could worsen the figures between
// ranks 1 and 2, so rank 1 is held back.
TEST(ClockAlignmentTest, AppliedToAllOrNone) {
  const std::vector<p2p_matching::Transfer> transfers = {Make(0, 1, 0, 10, 2000, 2010, true)};
  const Result result = Analyze(transfers, Ranks({0, 1, 2}));
  EXPECT_EQ(result.offsets[1].verdict, Verdict::kHeldBack);
  EXPECT_FALSE(result.offsets[1].aligned);
  EXPECT_EQ(result.offsets[1].estimate_ns, 2000);
  EXPECT_EQ(result.offsets[1].offset_ns, 0);
  EXPECT_EQ(result.offsets[1].ErrorBound(), 2000);  // as recorded, off by the estimate
  EXPECT_EQ(result.offsets[2].source, Source::kNone);
  EXPECT_EQ(result.offsets[2].verdict, Verdict::kNoEvidence);
  EXPECT_EQ(result.offsets[2].ErrorBound(), kUnbounded);
  // With rank 2 placed too (ends together with rank 0's clock), both apply.
  const Result both = Analyze({transfers[0], Make(0, 2, 20, 30, 20, 30, true)}, Ranks({0, 1, 2}));
  EXPECT_EQ(both.offsets[1].verdict, Verdict::kApplied);
  EXPECT_EQ(both.offsets[1].offset_ns, 2000);
  EXPECT_EQ(both.offsets[2].verdict, Verdict::kConsistent);
}

// An uncertainty beyond the tolerance leaves the clock as recorded: samples 500 and 540 (one
// 40 ns away from the median 500) against a tolerance of 30 ns.
TEST(ClockAlignmentTest, TighterThanTheTolerance) {
  const std::vector<p2p_matching::Transfer> transfers = {Make(0, 1, 100, 200, 550, 700, true),
                                                         Make(0, 1, 300, 400, 850, 940, true)};
  Options options = Ranks({0, 1});
  options.tolerance_ns = 30;
  Result result = Analyze(transfers, options);
  // Samples 500 and 540: 500 +/- 40, looser than 30, but 500 >= 2 x 40 from the recorded clock,
  // which is surely farther from the truth: moved, as a guess (not aligned).
  EXPECT_EQ(result.offsets[1].verdict, Verdict::kGuessApplied);
  EXPECT_FALSE(result.offsets[1].aligned);
  EXPECT_EQ(result.offsets[1].offset_ns, 500);
  EXPECT_EQ(result.offsets[1].estimate_ns, 500);
  // Samples 50 and 90: 50 +/- 40 could be the recorded clock's 0 as well: loose, kept.
  const std::vector<p2p_matching::Transfer> near_zero = {Make(0, 1, 100, 200, 150, 250, true),
                                                         Make(0, 1, 300, 400, 390, 490, true)};
  result = Analyze(near_zero, options);
  EXPECT_EQ(result.offsets[1].verdict, Verdict::kLoose);
  EXPECT_EQ(result.offsets[1].offset_ns, 0);
  EXPECT_EQ(result.offsets[1].estimate_ns, 50);
  options.tolerance_ns = 40;
  result = Analyze(transfers, options);
  EXPECT_EQ(result.offsets[1].verdict, Verdict::kApplied);
  EXPECT_EQ(result.offsets[1].offset_ns, 500);
}

// Ranks that name one host share its clock: no offset between them whatever their transfers
// say, and their transfers with other hosts pool as evidence of one clock difference. Ranks 0
// and 1 on host "a", ranks 2 and 3 on host "b", whose clock runs 700 ns ahead. A 0 -> 1
// transfer whose ends would say +5000 is within one clock and ignored; 1 -> 2 and 3 -> 0 each
// give a sample of +700 for host b, so ranks 2 and 3 move by 700 together, from 2 samples.
TEST(ClockAlignmentTest, SameHostIsOneClock) {
  const std::vector<p2p_matching::Transfer> transfers = {Make(0, 1, 0, 100, 5000, 5100, true),
                                                         Make(1, 2, 200, 300, 900, 1000, true),
                                                         Make(3, 0, 2700, 2800, 2000, 2100, true)};
  Options options = Ranks({0, 1, 2, 3});
  options.hosts = {"a", "a", "b", "b"};
  const Result result = Analyze(transfers, options);
  EXPECT_EQ(result.offsets[1].source, Source::kSameHost);
  EXPECT_EQ(result.offsets[1].verdict, Verdict::kSameClock);
  EXPECT_EQ(result.offsets[1].offset_ns, 0);
  EXPECT_EQ(result.offsets[1].host, "a");
  for (size_t i = 2; i < 4; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(result.offsets[i].source, Source::kRendezvous);
    EXPECT_EQ(result.offsets[i].verdict, Verdict::kApplied);
    EXPECT_EQ(result.offsets[i].offset_ns, 700);
    EXPECT_EQ(result.offsets[i].uncertainty_ns, 0);
    EXPECT_EQ(result.offsets[i].samples, 2);
  }
  // Without host names the 0 -> 1 transfer places rank 1 at +5000.
  const Result unnamed = Analyze(transfers, Ranks({0, 1, 2, 3}));
  EXPECT_EQ(unnamed.offsets[1].offset_ns, 5000);
  // "localhost" names no machine: the same as no name.
  options.hosts = {"localhost", "localhost", "LOCALHOST.localdomain", ""};
  EXPECT_EQ(Analyze(transfers, options).offsets[1].offset_ns, 5000);
}

// Ranks on one host with only buffered (gloo) transfers between them: the host is the evidence,
// so nothing moves even though the bounds of their guessed pairing would exclude 0. The same
// transfers without host names leave ranks 1 and 2 unaligned, their clocks as recorded.
TEST(ClockAlignmentTest, SameHostNeedsNoTransfers) {
  // 0 -> 1: the receive ends (900) before the send started (1000): d <= -100 if paired right.
  const std::vector<p2p_matching::Transfer> transfers = {Make(0, 1, 1000, 1010, 850, 900, false),
                                                         Make(1, 2, 3000, 3010, 2000, 2500, false)};
  Options options = Ranks({0, 1, 2});
  options.hosts = {"vm", "vm", "vm"};
  options.peers_guessed = true;
  Result result = Analyze(transfers, options);
  for (const RankOffset& offset : result.offsets) {
    EXPECT_TRUE(offset.aligned) << offset.rank;
    EXPECT_EQ(offset.offset_ns, 0) << offset.rank;
  }
  options.hosts.clear();
  result = Analyze(transfers, options);
  EXPECT_EQ(result.offsets[1].verdict, Verdict::kGuessedPeers);
  EXPECT_EQ(result.offsets[1].offset_ns, 0);
  EXPECT_FALSE(result.offsets[2].aligned);
  EXPECT_EQ(result.offsets[2].offset_ns, 0);
}

// Collectives paired by their sequence numbers are the stronger evidence, and the source a rank
// carries is the weakest on its chain: rank 1 placed by Seq-matched collectives (+400), rank 2
// through rank 1 by a transfer (+100 more): matched_ids then rendezvous, so rendezvous.
TEST(ClockAlignmentTest, MatchedIdsAndTheWeakestLinkOfAChain) {
  const std::vector<collective_matching::MatchedEnds> collectives = {
      {.a = 0, .b = 1, .a_end = 1000, .b_end = 1400, .b_duration = 50, .by_id = true},
      {.a = 0, .b = 1, .a_end = 3000, .b_end = 3400, .b_duration = 50, .by_id = true}};
  const std::vector<p2p_matching::Transfer> transfers = {Make(1, 2, 5000, 5100, 5150, 5200, true)};
  const Result result = Analyze(transfers, Ranks({0, 1, 2}), collectives);
  EXPECT_EQ(result.offsets[1].source, Source::kMatchedIds);
  EXPECT_EQ(result.offsets[1].offset_ns, 400);
  EXPECT_EQ(result.offsets[1].samples, 2);
  EXPECT_EQ(result.offsets[2].source, Source::kRendezvous);
  EXPECT_EQ(result.offsets[2].offset_ns, 500);
  EXPECT_EQ(result.offsets[2].samples, 1);
}

}  // namespace
}  // namespace bubblescope::clock_alignment
