#include "text/json_string.h"

#include "text/utf8.h"

namespace bubblescope::text {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// The escape for a byte below 0x80 that cannot stand as itself, or nothing.
bool AppendEscape(unsigned char c, std::string* out) {
  switch (c) {
    case '"':
      out->append("\\\"");
      return true;
    case '\\':
      out->append("\\\\");
      return true;
    case '\b':
      out->append("\\b");
      return true;
    case '\f':
      out->append("\\f");
      return true;
    case '\n':
      out->append("\\n");
      return true;
    case '\r':
      out->append("\\r");
      return true;
    case '\t':
      out->append("\\t");
      return true;
    default:
      break;
  }
  if (c >= 0x20) return false;
  out->append("\\u00");
  out->push_back(kHexDigits[c >> 4]);
  out->push_back(kHexDigits[c & 0xF]);
  return true;
}

}  // namespace

void AppendJsonString(std::string_view text, std::string* out) {
  out->push_back('"');
  size_t run_start = 0;  // bytes that stand as themselves are copied in runs, not one by one
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t length = Utf8SequenceLength(text, i);
      if (length != 0) {
        i += length;
        continue;
      }
      out->append(text.data() + run_start, i - run_start);
      out->append(kReplacementCharacter);
    } else {
      if (c >= 0x20 && c != '"' && c != '\\') {
        ++i;
        continue;
      }
      out->append(text.data() + run_start, i - run_start);
      AppendEscape(c, out);
    }
    ++i;
    run_start = i;
  }
  out->append(text.data() + run_start, text.size() - run_start);
  out->push_back('"');
}

}  // namespace bubblescope::text
