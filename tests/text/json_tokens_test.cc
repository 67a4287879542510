// String tokens, object keys, unescaping and UTF-8 checking on raw JSON text: every expected
// value below is worked out by hand from the input text.
#include "text/json_tokens.h"

#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace bubblescope::kineto {
namespace {

TEST(JsonTextTest, StringTokenContent) {
  std::string_view content;
  ASSERT_TRUE(StringTokenContent("\"abc\"  \n", &content));
  EXPECT_EQ(content, "abc");
  ASSERT_TRUE(StringTokenContent("\"\"", &content));
  EXPECT_EQ(content, "");
  EXPECT_FALSE(StringTokenContent("abc", &content));
  EXPECT_FALSE(StringTokenContent("\"", &content));
  EXPECT_FALSE(StringTokenContent("12", &content));
}

TEST(JsonTextTest, KeyTextStopsAtTheUnescapedQuote) {
  EXPECT_EQ(KeyText("ph\": 1"), "ph");
  EXPECT_EQ(KeyText(R"(a\"b": 1)"), R"(a\"b)");
  EXPECT_EQ(KeyText(R"(a\\": 1)"), R"(a\\)");
}

TEST(JsonTextTest, UnescapeLeavesPlainTextInPlace) {
  std::string scratch;
  const std::string_view plain = "aten::mm";
  const std::string_view out = UnescapeJsonString(plain, &scratch);
  EXPECT_EQ(out.data(), plain.data());
  EXPECT_EQ(out, "aten::mm");
}

TEST(JsonTextTest, UnescapeEscapes) {
  std::string scratch;
  EXPECT_EQ(UnescapeJsonString(R"(caf\u00e9)", &scratch), "caf\xC3\xA9");
  EXPECT_EQ(UnescapeJsonString(R"(a\"b\\c\/d\n\t)", &scratch), "a\"b\\c/d\n\t");
  EXPECT_EQ(UnescapeJsonString(R"(\ud83d\ude00!)", &scratch), "\xF0\x9F\x98\x80!");
  EXPECT_EQ(UnescapeJsonString(R"(\u20ac)", &scratch), "\xE2\x82\xAC");
  EXPECT_EQ(UnescapeJsonString(R"(x\ud83dy)", &scratch), "x\xEF\xBF\xBDy");  // lone surrogate
  EXPECT_EQ(UnescapeJsonString(R"(\ude00)", &scratch), "\xEF\xBF\xBD");
}

TEST(JsonTextTest, FirstInvalidUtf8) {
  bool truncated = true;
  EXPECT_EQ(FirstInvalidUtf8("abc", &truncated), std::string_view::npos);
  EXPECT_EQ(FirstInvalidUtf8("a\xC3\xA9\xF0\x9F\x98\x80"
                             "b",
                             &truncated),
            std::string_view::npos);
  EXPECT_EQ(FirstInvalidUtf8("ab\xFF", &truncated), 2u);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(FirstInvalidUtf8("ab\xE2\x82", &truncated), 2u);
  EXPECT_TRUE(truncated);
  EXPECT_EQ(FirstInvalidUtf8("\xC0\x80", &truncated), 0u);          // overlong
  EXPECT_EQ(FirstInvalidUtf8("x\xED\xA0\x80", &truncated), 1u);     // surrogate
  EXPECT_EQ(FirstInvalidUtf8("\xF4\x90\x80\x80", &truncated), 0u);  // above U+10FFFF
  EXPECT_EQ(FirstInvalidUtf8("ab\xC3(", &truncated), 2u);
  EXPECT_FALSE(truncated);
}

}  // namespace
}  // namespace bubblescope::kineto
