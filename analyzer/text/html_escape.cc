#include "text/html_escape.h"

#include "text/utf8.h"

namespace bubblescope::text {
namespace {

// What a byte below 0x80 is written as, or empty when it stands as itself.
std::string_view AsciiEscape(unsigned char c) {
  switch (c) {
    case '&':
      return "&amp;";
    case '<':
      return "&lt;";
    case '>':
      return "&gt;";
    case '"':
      return "&quot;";
    case '\'':
      return "&#39;";
    case '\t':
    case '\n':
    case '\r':
      return {};
    default:
      break;
  }
  if (c < 0x20 || c == 0x7F) return kReplacementCharacter;
  return {};
}

}  // namespace

void AppendHtmlEscaped(std::string_view text, std::string* out) {
  size_t run_start = 0;  // bytes that stand as themselves are copied in runs, not one by one
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::string_view replacement;
    if (c >= 0x80) {
      const size_t length = Utf8SequenceLength(text, i);
      if (length != 0) {
        i += length;
        continue;
      }
      replacement = kReplacementCharacter;
    } else {
      replacement = AsciiEscape(c);
      if (replacement.empty()) {
        ++i;
        continue;
      }
    }
    out->append(text.data() + run_start, i - run_start);
    out->append(replacement);
    ++i;
    run_start = i;
  }
  out->append(text.data() + run_start, text.size() - run_start);
}

std::string HtmlEscaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  AppendHtmlEscaped(text, &out);
  return out;
}

}  // namespace bubblescope::text
