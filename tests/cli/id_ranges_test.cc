// The list syntax of --perfetto-pipelines and --perfetto-ranks (cli/id_ranges.h).
#include "cli/id_ranges.h"

#include <string>

#include "gtest/gtest.h"

namespace bubblescope {
namespace {

std::string Spelled(std::string_view text) {
  absl::StatusOr<std::vector<perfetto::IdRange>> ranges = ParseIdRanges(text);
  if (!ranges.ok()) return "error: " + std::string(ranges.status().message());
  std::string spelled;
  for (const perfetto::IdRange& range : *ranges) {
    spelled += "[" + std::to_string(range.first) + "," + std::to_string(range.last) + "]";
  }
  return spelled;
}

TEST(IdRangesTest, NumbersAndRanges) {
  EXPECT_EQ(Spelled("0"), "[0,0]");
  EXPECT_EQ(Spelled("0,3"), "[0,0][3,3]");
  EXPECT_EQ(Spelled("0-7,12"), "[0,7][12,12]");
  EXPECT_EQ(Spelled("5-5,2147483647"), "[5,5][2147483647,2147483647]");
}

TEST(IdRangesTest, AnythingElseNamesTheItem) {
  const std::string expected =
      "': expected N or FIRST-LAST, whole numbers from 0 to 2147483647 (e.g. 0-7,12)";
  EXPECT_EQ(Spelled(""), "error: '" + expected);
  EXPECT_EQ(Spelled("1,,2"), "error: '" + expected);
  EXPECT_EQ(Spelled("1,"), "error: '" + expected);
  EXPECT_EQ(Spelled("-1"), "error: '-1" + expected);
  EXPECT_EQ(Spelled("2147483648"), "error: '2147483648" + expected);
  EXPECT_EQ(Spelled("0-x"), "error: '0-x" + expected);
  EXPECT_EQ(Spelled("1-2-3"), "error: '1-2-3" + expected);
  EXPECT_EQ(Spelled(" 1"), "error: ' 1" + expected);
  EXPECT_EQ(Spelled("7-3"), "error: '7-3': the range runs backwards (write 3-7)");
}

}  // namespace
}  // namespace bubblescope
