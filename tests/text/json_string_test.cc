#include "text/json_string.h"

#include <string>

#include "gtest/gtest.h"

namespace bubblescope::text {
namespace {

std::string Json(const std::string& text) {
  std::string out;
  AppendJsonString(text, &out);
  return out;
}

TEST(JsonStringTest, PlainTextIsQuotedOnly) {
  EXPECT_EQ(Json(""), R"("")");
  EXPECT_EQ(Json("aten::mm"), R"("aten::mm")");
}

TEST(JsonStringTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(Json("say \"hi\" C:\\tmp"), R"("say \"hi\" C:\\tmp")");
  EXPECT_EQ(Json("a\nb\tc\rd\be\ff"), R"("a\nb\tc\rd\be\ff")");
  EXPECT_EQ(Json(std::string("\x01\x1f", 2)), R"("\u0001\u001f")");
  EXPECT_EQ(Json(std::string("a\0b", 3)), R"("a\u0000b")");
  EXPECT_EQ(Json("\x7f"), "\"\x7f\"");  // DEL needs no escape in JSON
}

TEST(JsonStringTest, UnicodePassesThroughAndBadBytesBecomeReplacementCharacters) {
  EXPECT_EQ(Json("caf\xC3\xA9 \xF0\x9F\x98\x80"), "\"caf\xC3\xA9 \xF0\x9F\x98\x80\"");
  // Each byte of an ill-formed sequence is one U+FFFD (EF BF BD).
  EXPECT_EQ(Json("a\xFF"
                 "b"),
            "\"a\xEF\xBF\xBD"
            "b\"");
  EXPECT_EQ(Json("\xE2\x86"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");
}

}  // namespace
}  // namespace bubblescope::text
