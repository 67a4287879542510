#include "text/micros.h"

#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace bubblescope::text {
namespace {

std::string Fixed3(int64_t ns) {
  std::string out;
  AppendMicrosFixed3(ns, &out);
  return out;
}

std::string Compact(int64_t ns) {
  std::string out;
  AppendMicrosCompact(ns, &out);
  return out;
}

TEST(MicrosTest, Fixed3) {
  EXPECT_EQ(Fixed3(0), "0.000");
  EXPECT_EQ(Fixed3(1234), "1.234");
  EXPECT_EQ(Fixed3(5), "0.005");
  EXPECT_EQ(Fixed3(1000), "1.000");
  EXPECT_EQ(Fixed3(-5), "-0.005");
  EXPECT_EQ(Fixed3(-1234567), "-1234.567");
  EXPECT_EQ(Fixed3(std::numeric_limits<int64_t>::max()), "9223372036854775.807");
  EXPECT_EQ(Fixed3(std::numeric_limits<int64_t>::min()), "-9223372036854775.808");
}

TEST(MicrosTest, Compact) {
  EXPECT_EQ(Compact(1682725898236567000), "1682725898236567");
  EXPECT_EQ(Compact(1682725898236567250), "1682725898236567.250");
  EXPECT_EQ(Compact(0), "0");
  EXPECT_EQ(Compact(-3000), "-3");
  EXPECT_EQ(Compact(-3001), "-3.001");
}

TEST(MicrosTest, Ints) {
  std::string out;
  AppendInt(std::numeric_limits<int64_t>::min(), &out);
  out.push_back(' ');
  AppendInt(std::numeric_limits<int64_t>::max(), &out);
  EXPECT_EQ(out, "-9223372036854775808 9223372036854775807");
}

}  // namespace
}  // namespace bubblescope::text
