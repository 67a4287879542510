#include "text/json_tokens.h"

#include <cstdint>
#include <cstring>

#include "text/json_space.h"
#include "text/utf8.h"

namespace bubblescope::kineto {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads 4 hex digits at text[pos]; -1 if they are not all there.
int32_t ReadHex4(std::string_view text, size_t pos) {
  if (pos + 4 > text.size()) return -1;
  int32_t value = 0;
  for (size_t i = 0; i < 4; ++i) {
    const int digit = HexValue(text[pos + i]);
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

void AppendUtf8(uint32_t code_point, std::string* out) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

constexpr uint32_t kReplacementCharacter = 0xFFFD;

}  // namespace

bool StringTokenContent(std::string_view token, std::string_view* content) {
  size_t length = token.size();
  while (length > 0 && text::IsJsonSpace(token[length - 1])) --length;
  if (length < 2 || token[0] != '"' || token[length - 1] != '"') return false;
  *content = token.substr(1, length - 2);
  return true;
}

std::string_view KeyText(const char* key_begin) {
  size_t length = 0;
  while (key_begin[length] != '"') length += key_begin[length] == '\\' ? 2 : 1;
  return std::string_view(key_begin, length);
}

std::string_view UnescapeJsonString(std::string_view content, std::string* scratch) {
  if (content.empty()) return content;  // may have no data pointer, which memchr must not get
  const void* first_escape = std::memchr(content.data(), '\\', content.size());
  if (first_escape == nullptr) return content;
  scratch->clear();
  size_t pos = static_cast<size_t>(static_cast<const char*>(first_escape) - content.data());
  scratch->append(content.data(), pos);
  while (pos < content.size()) {
    const char c = content[pos];
    if (c != '\\' || pos + 1 >= content.size()) {
      scratch->push_back(c);
      ++pos;
      continue;
    }
    const char escaped = content[pos + 1];
    pos += 2;
    switch (escaped) {
      case 'b':
        scratch->push_back('\b');
        break;
      case 'f':
        scratch->push_back('\f');
        break;
      case 'n':
        scratch->push_back('\n');
        break;
      case 'r':
        scratch->push_back('\r');
        break;
      case 't':
        scratch->push_back('\t');
        break;
      case 'u': {
        const int32_t unit = ReadHex4(content, pos);
        if (unit < 0) {  // malformed: keep the text as written
          scratch->append("\\u");
          break;
        }
        pos += 4;
        uint32_t code_point = static_cast<uint32_t>(unit);
        if (code_point >= 0xD800 && code_point <= 0xDBFF) {
          const int32_t low =
              pos + 1 < content.size() && content[pos] == '\\' && content[pos + 1] == 'u'
                  ? ReadHex4(content, pos + 2)
                  : -1;
          if (low >= 0xDC00 && low <= 0xDFFF) {
            code_point =
                0x10000 + ((code_point - 0xD800) << 10) + (static_cast<uint32_t>(low) - 0xDC00);
            pos += 6;
          } else {
            code_point = kReplacementCharacter;
          }
        } else if (code_point >= 0xDC00 && code_point <= 0xDFFF) {
          code_point = kReplacementCharacter;
        }
        AppendUtf8(code_point, scratch);
        break;
      }
      default:
        scratch->push_back(escaped);
        break;  // \" \\ \/ and, leniently, anything else
    }
  }
  return *scratch;
}

size_t FirstInvalidUtf8(std::string_view text, bool* truncated_sequence) {
  *truncated_sequence = false;
  size_t i = 0;
  while (i < text.size()) {
    const size_t length = text::Utf8SequenceLength(text, i, truncated_sequence);
    if (length == 0) return i;
    i += length;
  }
  return std::string_view::npos;
}

size_t FirstUnescapedControl(std::string_view text) {
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!in_string) {
      in_string = c == '"';
    } else if (c == '\\') {
      ++i;  // the escaped character, whatever it is
    } else if (c == '"') {
      in_string = false;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace bubblescope::kineto
