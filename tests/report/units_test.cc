// How the text reports spell figures, worked by hand.
#include "report/units.h"

#include <limits>

#include "gtest/gtest.h"

namespace bubblescope {
namespace {

TEST(UnitsTest, MillisRoundsToTheMicrosecondWithHalvesAwayFromZero) {
  EXPECT_EQ(Millis(1234567.0), "1.235");
  EXPECT_EQ(Millis(1234500.0), "1.235");  // a half rounds up, however the double divides
  EXPECT_EQ(Millis(1234499.0), "1.234");
  EXPECT_EQ(Millis(0.0), "0.000");
  EXPECT_EQ(Millis(-1500.0), "-0.002");
  EXPECT_EQ(Millis(-400.0), "0.000");  // no negative zero
  EXPECT_EQ(Millis(12345678901.2), "12345.679");
  // A figure past what an integer microsecond count holds (a hand-edited or fuzzed report) is
  // written in scientific form, not cast out of range.
  EXPECT_EQ(Millis(1.2e46), "1.2e+40");
  EXPECT_EQ(Millis(-1.2e46), "-1.2e+40");
  EXPECT_EQ(Millis(std::numeric_limits<double>::infinity()), "inf");
}

TEST(UnitsTest, MicrosPercentAndBytes) {
  EXPECT_EQ(Micros(1234.0), "1.234");
  EXPECT_EQ(Percent(0.1234), "12.3");
  EXPECT_EQ(Percent(1.0), "100.0");
  EXPECT_EQ(BinaryBytes(512), "512 B");
  EXPECT_EQ(BinaryBytes(1536), "1.50 KiB");
  EXPECT_EQ(BinaryBytes(int64_t{3} << 30), "3.00 GiB");
  EXPECT_EQ(BinaryBytes(-1), "-");
  EXPECT_EQ(GiB(int64_t{1} << 28), "0.25 GiB");
  EXPECT_EQ(GiB(-1), "-");
}

TEST(UnitsTest, TheSpellingsOfEachMeaning) {
  EXPECT_EQ(MillisWithUnit(1234500.0), "1.235 ms");
  EXPECT_EQ(MillisWithUnit(0.0), "0.000 ms");
  // A median of byte counts: rounded to whole bytes first (1535.5 -> 1536 = 1.5 KiB).
  EXPECT_EQ(RoundedBinaryBytes(1535.5), "1.50 KiB");
  EXPECT_EQ(RoundedBinaryBytes(511.4), "511 B");
  EXPECT_EQ(Mebibytes(int64_t{3} << 19), "1.50");  // 1.5 MiB, no unit: a column headed MiB
  EXPECT_EQ(Mebibytes(0), "0.00");
  EXPECT_EQ(Gbps(12.346), "12.35");
  EXPECT_EQ(Gbps(0.0), "0.00");
}

}  // namespace
}  // namespace bubblescope
