// InferP2pSchedule on hand-built issued timelines: m and v from the traffic, and from the first
// stage's forward count where the traffic cannot show v.
#include "pipeline/p2p_structure.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope::pipeline {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

IssuedTimeline Transfers(int32_t rank, int32_t peer, int32_t sends, int32_t recvs) {
  IssuedTimeline timeline;
  timeline.rank = rank;
  TimeNs t = 0;
  const auto add = [&](ItemKind kind) {
    IssuedItem item;
    item.kind = kind;
    item.peer = peer;
    item.issue = item.start = t;
    item.end = t + 5;
    t += 10;
    timeline.items.push_back(item);
  };
  for (int32_t i = 0; i < sends; ++i) add(ItemKind::kSend);
  for (int32_t i = 0; i < recvs; ++i) add(ItemKind::kRecv);
  return timeline;
}

// Two ranks, each sending 12 to the other. (2v − 1)·m = 12 needs an odd 2v − 1 dividing 12: v = 1
// with m = 12, or v = 2 with m = 4. Only the forward count tells which.
TEST(P2pStructureTest, TwoRanksTakeVFromTheForwardCount) {
  const std::vector<IssuedTimeline> timelines = {Transfers(0, 1, 12, 12), Transfers(1, 0, 12, 12)};
  const std::vector<int32_t> order = {0, 1};

  absl::StatusOr<P2pSchedule> traffic_only = InferP2pSchedule(timelines, order, std::nullopt);
  ASSERT_TRUE(traffic_only.ok()) << traffic_only.status();
  EXPECT_EQ(traffic_only->m, 12);
  EXPECT_EQ(traffic_only->v, 1);
  EXPECT_THAT(traffic_only->notes, Contains(HasSubstr("v = 1 assumed")));

  // 8 forwards: m = 2·8 − 12 = 4, v = 8 / 4 = 2.
  absl::StatusOr<P2pSchedule> counted = InferP2pSchedule(
      timelines, order,
      ComputeCounts{.first_stage_forwards = 8, .first_stage_backwards = 8, .any_backward = true});
  ASSERT_TRUE(counted.ok()) << counted.status();
  EXPECT_EQ(counted->m, 4);
  EXPECT_EQ(counted->v, 2);
  EXPECT_THAT(counted->notes, Contains(HasSubstr("v = 2 from the first stage's 8 forward ops "
                                                 "against its 12 sends")));

  // 12 forwards, one per send: the plain v = 1 reading, with no note about v.
  counted = InferP2pSchedule(
      timelines, order,
      ComputeCounts{.first_stage_forwards = 12, .first_stage_backwards = 12, .any_backward = true});
  ASSERT_TRUE(counted.ok()) << counted.status();
  EXPECT_EQ(counted->m, 12);
  EXPECT_EQ(counted->v, 1);
  EXPECT_TRUE(counted->notes.empty());
}

TEST(P2pStructureTest, ForwardCountsThatFitNoShapeFallBackToOneChunk) {
  const std::vector<IssuedTimeline> timelines = {Transfers(0, 1, 12, 12), Transfers(1, 0, 12, 12)};
  // 7 forwards: m = 2 does not divide 7. 5 forwards: m = −2. 8 forwards but 9 backwards: the
  // split into ops is not trusted.
  for (const auto& [forwards, backwards] :
       std::vector<std::pair<int64_t, int64_t>>{{7, 7}, {5, 5}, {8, 9}}) {
    absl::StatusOr<P2pSchedule> result =
        InferP2pSchedule(timelines, {0, 1},
                         ComputeCounts{.first_stage_forwards = forwards,
                                       .first_stage_backwards = backwards,
                                       .any_backward = true});
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->m, 12);
    EXPECT_EQ(result->v, 1);
    EXPECT_THAT(result->notes, Contains(HasSubstr(absl::StrCat("first stage's ", forwards,
                                                               " forward and ", backwards,
                                                               " backward ops fit no v, v = 1 "
                                                               "assumed"))));
  }
}

TEST(P2pStructureTest, ForwardOnlyCountsAreNotUsedForV) {
  const std::vector<IssuedTimeline> timelines = {Transfers(0, 1, 12, 0), Transfers(1, 0, 0, 12)};
  absl::StatusOr<P2pSchedule> result = InferP2pSchedule(
      timelines, {0, 1}, ComputeCounts{.first_stage_forwards = 12, .any_backward = false});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->m, 12);
  EXPECT_EQ(result->v, 1);
  EXPECT_FALSE(result->has_backward);
}

}  // namespace
}  // namespace bubblescope::pipeline
