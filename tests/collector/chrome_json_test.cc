// The collector's event builder: field order, separators and the shared text helpers' spelling.
#include "chrome_json.h"

#include <string>

#include "gtest/gtest.h"

namespace bubblescope::collector {
namespace {

TEST(ChromeEventTest, PutsPhAndNameFirstAndArgsLast) {
  std::string out;
  ChromeEvent(&out, "X", "kernel", "k")
      .Int("pid", 1)
      .Micros("ts", 2500)
      .Args()
      .Int("stream", 7)
      .Text("s", "v")
      .Finish();
  EXPECT_EQ(out,
            ",\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":1,\"ts\":2.500,"
            "\"args\":{\"stream\":7,\"s\":\"v\"}}");
}

// Names are whatever a kernel or range was called: escaped, invalid UTF-8 replaced (the rules
// themselves are text::AppendJsonString's, tests/text/json_string_test.cc).
TEST(ChromeEventTest, NamesAndTimesGoThroughTheSharedTextHelpers) {
  std::string out;
  ChromeEvent(&out, "X", "", "a\"b\n\xFF")
      .Micros("ts", -1500)
      .Micros("dur", 1700000000123456789)
      .Finish();
  EXPECT_EQ(out,
            ",\n{\"ph\":\"X\",\"name\":\"a\\\"b\\n\xEF\xBF\xBD\",\"ts\":-1.500,"
            "\"dur\":1700000000123456.789}");
}

}  // namespace
}  // namespace bubblescope::collector
