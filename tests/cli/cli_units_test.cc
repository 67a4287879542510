// Unit tests of the CLI's helpers: --rank parsing, the nearest command to a typo.
#include <string>
#include <vector>

#include "cli/analyze_command.h"
#include "cli/command.h"
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

// Edits counted by hand: "anlyze" is "analyze" less one letter; "whatfi" swaps two; "dif" and
// "gte" lack one; "frobnicate" is 8 or more edits from every command; "xy" (2 letters) may be
// no more than 0 edits from a name.
TEST(NearestNameTest, NamesTheCommandATypoIsNearest) {
  const std::vector<std::string> names = {"analyze",  "whatif", "diff",  "gate",
                                          "simulate", "record", "digest"};
  EXPECT_EQ(NearestName("anlyze", names), "analyze");
  EXPECT_EQ(NearestName("analyse", names), "analyze");
  EXPECT_EQ(NearestName("whatfi", names), "whatif");
  EXPECT_EQ(NearestName("dif", names), "diff");
  EXPECT_EQ(NearestName("gte", names), "gate");
  EXPECT_EQ(NearestName("recrod", names), "record");
  EXPECT_EQ(NearestName("frobnicate", names), "");
  EXPECT_EQ(NearestName("xy", names), "");
  EXPECT_EQ(NearestName("", names), "");
}

}  // namespace
}  // namespace bubblescope
