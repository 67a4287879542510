// The text report's layout helpers, by hand: wrapping at spaces with an indent, and sources
// named by the shortest end of their path that no other path shares.
#include "report/text_layout.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope {
namespace {

using ::testing::ElementsAre;

TEST(TextLayoutTest, WrapsAtSpacesKeepingLongWordsWhole) {
  // "  top cause: a b" is 16 characters: at width 12 "b" and the cause move on.
  EXPECT_EQ(Wrap("  top cause: abc de", 12, "    "), "  top cause:\n    abc de\n");
  EXPECT_EQ(Wrap("short", 12, "  "), "short\n");
  EXPECT_EQ(Wrap("averyveryverylongword x", 8, "  "), "averyveryverylongword\n  x\n");
  // Every line of a text, continuations two spaces past the line's own indent.
  EXPECT_EQ(WrapLines("one two three\n  four five six\n", 9),
            "one two\n  three\n  four\n    five\n    six\n");
  EXPECT_EQ(WrapLines("a\n\nb\n", 9), "a\n\nb\n");
}

// A value, its unit and its qualifier move on together: "(median)" is never alone on a line.
// "diagnosis: iteration 45.806 ms (median)" is 39 characters: at width 36, word by word, only
// "(median)" would move on; it takes its value and unit with it.
TEST(TextLayoutTest, AValueItsUnitAndItsQualifierStayTogether) {
  EXPECT_EQ(Wrap("diagnosis: iteration 45.806 ms (median)", 36, "  "),
            "diagnosis: iteration\n  45.806 ms (median)\n");
  EXPECT_EQ(Wrap("a bubble 45.8%, top 1.5 GiB; next", 14, "  "),
            "a bubble\n  45.8%, top\n  1.5 GiB;\n  next\n");
  EXPECT_EQ(Wrap("x 12 ms, then (p=4 m=8)", 8, "  "), "x 12 ms,\n  then\n  (p=4\n  m=8)\n");
}

TEST(TextLayoutTest, ShortestUniqueSuffixes) {
  EXPECT_THAT(ShortestUniqueSuffixes({"/data/run/rank0.json", "/data/run/rank1.json"}),
              ElementsAre("rank0.json", "rank1.json"));
  // Two files of one name in different folders keep as much of the path as tells them apart.
  EXPECT_THAT(ShortestUniqueSuffixes({"/a/x/trace.json", "/a/y/trace.json", "/a/y/other.json"}),
              ElementsAre("x/trace.json", "y/trace.json", "other.json"));
  // A path that is the end of another stays whole; the other needs one folder more.
  EXPECT_THAT(ShortestUniqueSuffixes({"trace.json", "run/trace.json"}),
              ElementsAre("trace.json", "run/trace.json"));
  // The same path twice, and an empty one, stay as they are.
  EXPECT_THAT(ShortestUniqueSuffixes({"/a/b.json", "/a/b.json", ""}),
              ElementsAre("/a/b.json", "/a/b.json", ""));
}

}  // namespace
}  // namespace bubblescope
