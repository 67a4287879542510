#include "common/interval_set.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope {
namespace {

using ::testing::ElementsAre;

std::vector<TimeRange> Ranges(const IntervalSet& set) { return set.ranges(); }

TEST(IntervalSetTest, EmptySetHasNoLength) {
  IntervalSet set;
  EXPECT_TRUE(set.empty());
  EXPECT_EQ(set.Length(), 0);
  EXPECT_EQ(set.Start(), 0);
  EXPECT_EQ(set.End(), 0);
  EXPECT_FALSE(set.Contains(0));
}

TEST(IntervalSetTest, MergesOverlappingNestedAndTouchingRangesInAnyOrder) {
  // [30,40) touches [40,45); [12,15) lies inside [10,20); [18,25) overlaps [10,20).
  IntervalSet set = IntervalSet::FromRanges({{40, 45}, {10, 20}, {30, 40}, {12, 15}, {18, 25}});
  EXPECT_THAT(Ranges(set), ElementsAre(TimeRange{10, 25}, TimeRange{30, 45}));
  EXPECT_EQ(set.Length(), 15 + 15);
  EXPECT_EQ(set.Start(), 10);
  EXPECT_EQ(set.End(), 45);
}

TEST(IntervalSetTest, DropsEmptyAndInvertedRanges) {
  IntervalSet set = IntervalSet::FromRanges({{5, 5}, {9, 3}, {1, 2}});
  EXPECT_THAT(Ranges(set), ElementsAre(TimeRange{1, 2}));
  EXPECT_EQ(set.Length(), 1);
}

TEST(IntervalSetTest, HandlesNegativeAndHugeTimes) {
  constexpr TimeNs kBig = INT64_C(1) << 62;
  IntervalSet set = IntervalSet::FromRanges({{-100, -50}, {kBig, kBig + 7}});
  EXPECT_EQ(set.Length(), 50 + 7);
}

TEST(IntervalSetTest, ContainsIsHalfOpen) {
  IntervalSet set = IntervalSet::FromRanges({{10, 20}, {30, 40}});
  EXPECT_FALSE(set.Contains(9));
  EXPECT_TRUE(set.Contains(10));
  EXPECT_TRUE(set.Contains(19));
  EXPECT_FALSE(set.Contains(20));
  EXPECT_FALSE(set.Contains(25));
  EXPECT_TRUE(set.Contains(30));
  EXPECT_FALSE(set.Contains(40));
}

TEST(IntervalSetTest, UnionMergesAcrossSets) {
  IntervalSet a = IntervalSet::FromRanges({{0, 10}, {20, 30}, {50, 60}});
  IntervalSet b = IntervalSet::FromRanges({{5, 22}, {30, 35}, {70, 80}});
  IntervalSet u = a.Union(b);
  EXPECT_THAT(Ranges(u), ElementsAre(TimeRange{0, 35}, TimeRange{50, 60}, TimeRange{70, 80}));
  EXPECT_EQ(u.Length(), 35 + 10 + 10);
  EXPECT_EQ(b.Union(a), u);
  EXPECT_EQ(a.Union(IntervalSet()), a);
}

TEST(IntervalSetTest, IntersectKeepsOnlyCommonTime) {
  IntervalSet a = IntervalSet::FromRanges({{0, 10}, {20, 30}, {50, 60}});
  IntervalSet b = IntervalSet::FromRanges({{5, 25}, {28, 52}, {60, 70}});
  IntervalSet i = a.Intersect(b);
  EXPECT_THAT(Ranges(i), ElementsAre(TimeRange{5, 10}, TimeRange{20, 25}, TimeRange{28, 30},
                                     TimeRange{50, 52}));
  EXPECT_EQ(i.Length(), 5 + 5 + 2 + 2);
  EXPECT_EQ(a.IntersectionLength(b), 14);
  EXPECT_EQ(b.Intersect(a), i);
  EXPECT_TRUE(a.Intersect(IntervalSet()).empty());
}

TEST(IntervalSetTest, SubtractPunchesHoles) {
  IntervalSet a = IntervalSet::FromRanges({{0, 100}, {200, 300}});
  // [90,210) cuts the end of the first range and the start of the second.
  IntervalSet b = IntervalSet::FromRanges({{10, 20}, {30, 40}, {90, 210}, {250, 260}, {400, 500}});
  IntervalSet d = a.Subtract(b);
  EXPECT_THAT(Ranges(d), ElementsAre(TimeRange{0, 10}, TimeRange{20, 30}, TimeRange{40, 90},
                                     TimeRange{210, 250}, TimeRange{260, 300}));
  EXPECT_EQ(d.Length(), 10 + 10 + 50 + 40 + 40);
}

TEST(IntervalSetTest, SubtractEdgeCases) {
  IntervalSet a = IntervalSet::FromRanges({{10, 20}});
  EXPECT_TRUE(a.Subtract(IntervalSet::FromRanges({{0, 30}})).empty());
  EXPECT_TRUE(a.Subtract(a).empty());
  EXPECT_EQ(a.Subtract(IntervalSet()), a);
  EXPECT_EQ(a.Subtract(IntervalSet::FromRanges({{0, 10}, {20, 30}})), a);
  EXPECT_TRUE(IntervalSet().Subtract(a).empty());
  // One hole spanning several ranges of `a`.
  IntervalSet many = IntervalSet::FromRanges({{0, 5}, {10, 15}, {20, 25}, {30, 35}});
  EXPECT_THAT(Ranges(many.Subtract(IntervalSet::FromRanges({{3, 32}}))),
              ElementsAre(TimeRange{0, 3}, TimeRange{32, 35}));
}

TEST(IntervalSetTest, AlgebraIdentitiesHoldOnAMixedExample) {
  IntervalSet a = IntervalSet::FromRanges({{0, 7}, {9, 14}, {20, 40}, {45, 46}});
  IntervalSet b = IntervalSet::FromRanges({{3, 11}, {13, 21}, {39, 50}});
  // |A ∪ B| = |A| + |B| - |A ∩ B|, and A = (A \ B) ∪ (A ∩ B) with the two parts disjoint.
  EXPECT_EQ(a.Union(b).Length(), a.Length() + b.Length() - a.Intersect(b).Length());
  EXPECT_EQ(a.Subtract(b).Union(a.Intersect(b)), a);
  EXPECT_EQ(a.Subtract(b).IntersectionLength(b), 0);
  // By hand: |A| = 7 + 5 + 20 + 1 = 33, |B| = 8 + 8 + 11 = 27,
  // A ∩ B = [3,7) [9,11) [13,14) [20,21) [39,40) [45,46) = 4 + 2 + 1 + 1 + 1 + 1 = 10.
  EXPECT_EQ(a.Length(), 33);
  EXPECT_EQ(b.Length(), 27);
  EXPECT_EQ(a.IntersectionLength(b), 10);
  EXPECT_EQ(a.Union(b).Length(), 50);
}

}  // namespace
}  // namespace bubblescope
