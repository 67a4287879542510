// Plausibility on hand-made links and offsets: which notes appear and which ranks are too
// uncertain to build link findings on, each threshold read off the construction.
#include "crossrank/plausibility.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope::plausibility {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

link_stats::Link LinkAt(int32_t src, int32_t dst, double gbps) {
  link_stats::Link link;
  link.src = src;
  link.dst = dst;
  link.transfers = 10;
  link.bandwidth_samples = 10;
  link.gbps_median = gbps;
  link.gbps_p10 = gbps;
  link.median_message_bytes = 1 << 20;
  link.implausible = gbps > link_stats::kMaxPhysicalGbps;
  return link;
}

// p=2, one chunk: F 1 ms and B 2 ms on both stages, so a microbatch is 3 ms.
schedule_inference::Result TwoStages() {
  schedule_inference::Result shape;
  shape.p = 2;
  shape.v = 1;
  shape.m = 4;
  for (int32_t s = 0; s < 2; ++s) {
    schedule_inference::StageFigures stage;
    stage.stage = s;
    stage.rank = s;
    stage.forward.mean_ns = 1e6;
    stage.backward.mean_ns = 2e6;
    stage.mean_total_ns = 3e6;
    shape.stages.push_back(stage);
  }
  return shape;
}

TEST(PlausibilityTest, LinksFasterThanAnyPhysicalLink) {
  const std::vector<link_stats::Link> links = {LinkAt(0, 1, 37'522.0), LinkAt(1, 0, 7'200.0)};
  const Result result = Analyze(links, {}, nullptr);
  ASSERT_EQ(result.notes.size(), 1u);  // 7200 Gbit/s is NVLink 5 itself: plausible
  EXPECT_THAT(result.notes[0], HasSubstr("link 0 -> 1: a median of 37522 Gbit/s"));
  EXPECT_THAT(result.uncertain_clock_ranks, IsEmpty());
}

TEST(PlausibilityTest, ClocksUncertainByMoreThanAMicrobatch) {
  const schedule_inference::Result shape = TwoStages();
  using clock_alignment::Source;
  using clock_alignment::Verdict;
  std::vector<clock_alignment::RankOffset> offsets = {
      {.rank = 0, .source = Source::kReference, .verdict = Verdict::kSameClock, .aligned = true},
      {.rank = 1,
       .source = Source::kRendezvous,
       .verdict = Verdict::kApplied,
       .aligned = true,
       .offset_ns = 500,
       .estimate_ns = 500,
       .uncertainty_ns = 3'000'000},  // = 3 ms
      {.rank = 5,
       .source = Source::kRendezvous,
       .verdict = Verdict::kApplied,
       .aligned = true,
       .uncertainty_ns = 3'000'001},
      // Left as recorded with an estimate of 2 ms +/- 0.5: its clock may be 2.5 ms off.
      {.rank = 4,
       .source = Source::kRendezvous,
       .verdict = Verdict::kHeldBack,
       .estimate_ns = -2'000'000,
       .uncertainty_ns = 500'000},
      // Nothing reaches it: its clock may be off by anything.
      {.rank = 3, .verdict = Verdict::kNoEvidence}};
  Result result = Analyze({}, offsets, &shape);
  EXPECT_THAT(result.uncertain_clock_ranks, ElementsAre(3, 5));
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_THAT(result.notes[0], HasSubstr("(3.000 ms) on ranks 3,5: their fill"));
  // Without a shape there is no microbatch to compare with.
  EXPECT_THAT(Analyze({}, offsets, nullptr).uncertain_clock_ranks, IsEmpty());
}

// An implausible link is never slow and never the reference others are slow against.
TEST(PlausibilityTest, ImplausibleLinksAreNeitherSlowNorReference) {
  std::vector<link_stats::Link> links = {
      LinkAt(0, 1, 100.0),    LinkAt(1, 2, 100.0),    LinkAt(2, 3, 100.0),   LinkAt(3, 4, 40'000.0),
      LinkAt(4, 5, 40'000.0), LinkAt(5, 6, 40'000.0), LinkAt(6, 7, 40'000.0)};
  link_stats::MarkSlowLinks({&links}, link_stats::SlowOptions{});
  for (const link_stats::Link& link : links) {
    EXPECT_FALSE(link.slow) << link.src;  // the reference is 100 Gbit/s, from the real three
    if (!link.implausible) {
      EXPECT_EQ(link.reference_gbps, 100.0) << link.src;
    }
  }
}

}  // namespace
}  // namespace bubblescope::plausibility
