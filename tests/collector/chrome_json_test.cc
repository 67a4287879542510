// JSON text helpers of the collector.
#include "chrome_json.h"

#include <string>

#include "gtest/gtest.h"

namespace bubblescope::collector {
namespace {

std::string Quoted(std::string_view text) {
  std::string out;
  AppendJsonString(text, &out);
  return out;
}

std::string Micros(int64_t ns) {
  std::string out;
  AppendMicros(ns, &out);
  return out;
}

TEST(ChromeJsonTest, StringsAreEscapedAndInvalidUtf8Replaced) {
  EXPECT_EQ(Quoted("plain"), "\"plain\"");
  EXPECT_EQ(Quoted("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
  EXPECT_EQ(Quoted("\xC3\xA9t\xC3\xA9"), "\"\xC3\xA9t\xC3\xA9\"");  // é kept
  EXPECT_EQ(Quoted("x\xFFy"), "\"x\xEF\xBF\xBDy\"");
  EXPECT_EQ(Quoted("\xE2\x82"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");  // cut-short sequence
}

TEST(ChromeJsonTest, MicrosecondsWithThreeDecimals) {
  EXPECT_EQ(Micros(0), "0.000");
  EXPECT_EQ(Micros(7), "0.007");
  EXPECT_EQ(Micros(1234567), "1234.567");
  EXPECT_EQ(Micros(1700000000123456789), "1700000000123456.789");
  EXPECT_EQ(Micros(-1500), "-1.500");
}

TEST(ChromeJsonTest, EventTextPutsPhAndNameFirstAndArgsLast) {
  std::string out;
  EventText(&out, "X", "kernel", "k").Int("pid", 1).Micros("ts", 2500).Args().Int("stream", 7).Text("s", "v").Finish();
  EXPECT_EQ(out,
            ",\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":1,\"ts\":2.500,"
            "\"args\":{\"stream\":7,\"s\":\"v\"}}");
}

}  // namespace
}  // namespace bubblescope::collector
