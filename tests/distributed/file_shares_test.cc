#include "distributed/file_shares.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope::distributed {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

uint64_t ShareBytes(const std::vector<uint64_t>& sizes, const std::vector<size_t>& share) {
  uint64_t bytes = 0;
  for (size_t file : share) bytes += sizes[file];
  return bytes;
}

// Largest first to the lightest share, worked by hand below.
TEST(FileSharesTest, LargestFilesGoToTheLightestShare) {
  // sizes by index:       0  1  2  3  4  5
  const std::vector<uint64_t> sizes = {3, 9, 1, 7, 5, 4};
  // 9 -> A(9); 7 -> B(7); 5 -> B(12); 4 -> A(13); 3 -> B(15); 1 -> A(14).
  const std::vector<std::vector<size_t>> shares = SplitBySize(sizes, 2);
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_THAT(shares[0], ElementsAre(1, 2, 5));  // 9 + 1 + 4 = 14
  EXPECT_THAT(shares[1], ElementsAre(0, 3, 4));  // 3 + 7 + 5 = 15
  EXPECT_EQ(ShareBytes(sizes, shares[0]), 14u);
  EXPECT_EQ(ShareBytes(sizes, shares[1]), 15u);
}

TEST(FileSharesTest, EveryFileIsInExactlyOneShare) {
  std::vector<uint64_t> sizes;
  for (uint64_t i = 0; i < 1024; ++i) sizes.push_back(200'000'000 + (i * 7919) % 1000);
  for (int processes : {1, 3, 8, 64, 2000}) {
    SCOPED_TRACE(processes);
    const std::vector<std::vector<size_t>> shares = SplitBySize(sizes, processes);
    ASSERT_EQ(shares.size(), static_cast<size_t>(processes));
    std::vector<int> seen(sizes.size(), 0);
    size_t largest = 0;
    size_t smallest = sizes.size();
    for (const std::vector<size_t>& share : shares) {
      for (size_t k = 1; k < share.size(); ++k) EXPECT_LT(share[k - 1], share[k]);
      for (size_t file : share) ++seen[file];
      largest = std::max(largest, share.size());
      smallest = std::min(smallest, share.size());
    }
    EXPECT_EQ(std::accumulate(seen.begin(), seen.end(), 0), 1024);
    EXPECT_EQ(*std::min_element(seen.begin(), seen.end()), 1);
    // Files of nearly equal size: shares differ by at most one file.
    EXPECT_LE(largest - smallest, 1u);
  }
}

TEST(FileSharesTest, UnsizedFilesSpreadAndMoreProcessesThanFilesLeaveSomeIdle) {
  const std::vector<std::vector<size_t>> zero = SplitBySize({0, 0, 0, 0}, 2);
  EXPECT_THAT(zero[0], ElementsAre(0, 2));
  EXPECT_THAT(zero[1], ElementsAre(1, 3));
  const std::vector<std::vector<size_t>> idle = SplitBySize({5}, 3);
  EXPECT_THAT(idle[0], ElementsAre(0));
  EXPECT_THAT(idle[1], IsEmpty());
  EXPECT_THAT(idle[2], IsEmpty());
}

TEST(FileSharesTest, TheFingerprintChangesWithAnyPathPlaceOrSize) {
  TraceFileList list;
  list.files = {{"a.json", true}, {"b.json", true}};
  const uint64_t base = ListFingerprint(list, {10, 20});
  EXPECT_EQ(ListFingerprint(list, {10, 20}), base);
  EXPECT_NE(ListFingerprint(list, {10, 21}), base);
  TraceFileList swapped;
  swapped.files = {{"b.json", true}, {"a.json", true}};
  EXPECT_NE(ListFingerprint(swapped, {20, 10}), base);
  TraceFileList fewer;
  fewer.files = {{"a.json", true}};
  EXPECT_NE(ListFingerprint(fewer, {10}), base);
  // Path bytes are length-prefixed: "ab" + "c" is not "a" + "bc".
  TraceFileList left;
  left.files = {{"ab", true}, {"c", true}};
  TraceFileList right;
  right.files = {{"a", true}, {"bc", true}};
  EXPECT_NE(ListFingerprint(left, {1, 1}), ListFingerprint(right, {1, 1}));
}

}  // namespace
}  // namespace bubblescope::distributed
