#include "text/one_line.h"

#include "gtest/gtest.h"

namespace bubblescope::text {
namespace {

TEST(OneLineTest, LineBreaksBecomeSpaces) {
  EXPECT_EQ(OneLine("a\nb\r\nc"), "a b  c");
  EXPECT_EQ(OneLine("plain"), "plain");
  EXPECT_EQ(OneLine(""), "");
}

// A file name holding an escape sequence must not reach the terminal as one.
TEST(OneLineTest, OtherControlCharactersAreSpelledOut) {
  EXPECT_EQ(OneLine("rank\x1b[31m0.json"), "rank\\x1b[31m0.json");
  EXPECT_EQ(OneLine("a\tb\x7f\x08"), "a\\x09b\\x7f\\x08");
  EXPECT_EQ(OneLine("caf\xC3\xA9"), "caf\xC3\xA9");  // UTF-8 stays as it is
}

}  // namespace
}  // namespace bubblescope::text
