// Unit tests of the CLI's helpers: --rank parsing.
#include <string>

#include "cli/analyze_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope {
namespace {

using ::testing::HasSubstr;

TEST(ParseRankOverrideTest, SplitsAtTheLastEqualsSign) {
  absl::StatusOr<RankOverride> simple = ParseRankOverride("rank.json=7");
  ASSERT_TRUE(simple.ok());
  EXPECT_EQ(simple->path, "rank.json");
  EXPECT_EQ(simple->rank, 7);
  absl::StatusOr<RankOverride> with_equals = ParseRankOverride("run=2/a.json=0");
  ASSERT_TRUE(with_equals.ok());
  EXPECT_EQ(with_equals->path, "run=2/a.json");
  EXPECT_EQ(with_equals->rank, 0);
  absl::StatusOr<RankOverride> largest = ParseRankOverride("a=2147483647");
  ASSERT_TRUE(largest.ok());
  EXPECT_EQ(largest->rank, 2147483647);
}

TEST(ParseRankOverrideTest, RejectsMalformedArguments) {
  for (const char* bad : {"a", "=3", "a=", "a=-1", "a=1x", "a= 1", "a=2147483648", "a=0x1"}) {
    SCOPED_TRACE(bad);
    absl::StatusOr<RankOverride> parsed = ParseRankOverride(bad);
    ASSERT_FALSE(parsed.ok());
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(bad));
  }
}

}  // namespace
}  // namespace bubblescope
