// The HTML report's escaping: markup characters become references, forbidden control
// characters and broken UTF-8 become U+FFFD, everything else is kept byte for byte.
#include "text/html_escape.h"

#include <string>

#include "gtest/gtest.h"

namespace bubblescope::text {
namespace {

TEST(HtmlEscape, MarkupCharactersBecomeReferences) {
  EXPECT_EQ(HtmlEscaped("<script>alert(\"x\" & 'y')</script>"),
            "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;");
}

TEST(HtmlEscape, PlainTextAndWhitespaceStay) {
  EXPECT_EQ(HtmlEscaped("ncclKernel_SendRecv\t/data/run 1\r\n"),
            "ncclKernel_SendRecv\t/data/run 1\r\n");
  EXPECT_EQ(HtmlEscaped(""), "");
}

TEST(HtmlEscape, WellFormedUtf8PassesThrough) {
  // "µs" (2 bytes), "→" (3 bytes) and U+1F600 (4 bytes).
  const std::string text = "\xC2\xB5s \xE2\x86\x92 \xF0\x9F\x98\x80";
  EXPECT_EQ(HtmlEscaped(text), text);
}

TEST(HtmlEscape, ControlCharactersAndBrokenUtf8BecomeReplacementCharacters) {
  EXPECT_EQ(HtmlEscaped(std::string("a\0b", 3)),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(HtmlEscaped("a\x1b[0m\x7f"), "a\xEF\xBF\xBD[0m\xEF\xBF\xBD");
  // A lone continuation byte, and a 3-byte sequence cut short by the end: one U+FFFD per byte.
  EXPECT_EQ(HtmlEscaped("x\x80y"), "x\xEF\xBF\xBDy");
  EXPECT_EQ(HtmlEscaped("z\xE2\x86"), "z\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(HtmlEscape, AppendsToWhatIsThere) {
  std::string out = "<b>";
  AppendHtmlEscaped("1 < 2", &out);
  EXPECT_EQ(out, "<b>1 &lt; 2");
}

}  // namespace
}  // namespace bubblescope::text
