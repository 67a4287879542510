#include "text/shortest_double.h"

#include <string>

#include "gtest/gtest.h"

namespace bubblescope::text {
namespace {

std::string Shortest(double value) {
  std::string out = "x=";
  EXPECT_TRUE(AppendShortestDouble(value, &out));
  return out;
}

TEST(ShortestDoubleTest, WritesTheShortestDecimalThatReadsBack) {
  EXPECT_EQ(Shortest(0.314), "x=0.314");
  EXPECT_EQ(Shortest(0.1 + 0.2), "x=0.30000000000000004");  // not 0.3: that is another double
  EXPECT_EQ(Shortest(48.31), "x=48.31");
  EXPECT_EQ(Shortest(0.0), "x=0");
  EXPECT_EQ(Shortest(-2.5), "x=-2.5");
  EXPECT_EQ(Shortest(1e-05), "x=1e-05");  // shorter than 0.00001
}

TEST(ShortestDoubleTest, FromTwoToTheFiftyThreeTheExponentFormIsWritten) {
  EXPECT_EQ(Shortest(9007199254740991.0), "x=9007199254740991");
  EXPECT_EQ(Shortest(9007199254740992.0), "x=9.007199254740992e+15");
  EXPECT_EQ(Shortest(1.2e20), "x=1.2e+20");
}

}  // namespace
}  // namespace bubblescope::text
