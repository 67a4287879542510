// Nearest-rank percentiles, worked by hand: the q-quantile of n values is the ceil(q·n)-th
// smallest.
#include "common/percentile.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace bubblescope {
namespace {

TEST(PercentileTest, NearestRankOfTenValues) {
  const std::vector<int64_t> values = {70, 10, 40, 20, 100, 90, 30, 60, 80, 50};
  EXPECT_EQ(NearestRank(values, 50), 50);   // ceil(5.0) = 5th
  EXPECT_EQ(NearestRank(values, 90), 90);   // ceil(9.0) = 9th
  EXPECT_EQ(NearestRank(values, 10), 10);   // ceil(1.0) = 1st
  EXPECT_EQ(NearestRank(values, 91), 100);  // ceil(9.1) = 10th
  EXPECT_EQ(NearestRank(values, 100), 100);
}

TEST(PercentileTest, SmallCountsRoundUp) {
  EXPECT_EQ(NearestRank(std::vector<int64_t>{3, 1, 2, 4}, 50), 2);  // ceil(2.0) = 2nd
  EXPECT_EQ(NearestRank(std::vector<int64_t>{3, 1, 2}, 50), 2);     // ceil(1.5) = 2nd
  EXPECT_EQ(NearestRank(std::vector<int64_t>{3, 1, 2}, 90), 3);     // ceil(2.7) = 3rd
  EXPECT_EQ(NearestRank(std::vector<double>{2.5}, 10), 2.5);        // ceil(0.1) = 1st
}

TEST(PercentileTest, OutOfRangePercentsClampAndEmptyIsZero) {
  EXPECT_EQ(NearestRank(std::vector<int64_t>{5, 7}, 0), 5);
  EXPECT_EQ(NearestRank(std::vector<int64_t>{5, 7}, 250), 7);
  EXPECT_EQ(NearestRank(std::vector<int64_t>{}, 50), 0);
  EXPECT_EQ(NearestRankOfSorted(std::vector<double>{}, 90), 0.0);
}

}  // namespace
}  // namespace bubblescope
