#include "text/one_line.h"

#include "gtest/gtest.h"

namespace bubblescope::text {
namespace {

TEST(OneLineTest, LineBreaksBecomeSpaces) {
  EXPECT_EQ(OneLine("a\nb\r\nc"), "a b  c");
  EXPECT_EQ(OneLine("plain"), "plain");
  EXPECT_EQ(OneLine(""), "");
}

}  // namespace
}  // namespace bubblescope::text
