#include "writers/json_text.h"

#include <charconv>
#include <cstddef>

namespace bubblescope::json_text {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";
constexpr std::string_view kReplacementCharacter = "\\ufffd";

// Length of the valid UTF-8 sequence starting at text[i], or 0 when the bytes there are not one
// (overlong forms, surrogates and code points above U+10FFFF are rejected, as RFC 3629 requires).
size_t ValidUtf8Length(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  auto continuation = [&](size_t k) { return k < text.size() && (byte(k) & 0xC0) == 0x80; };
  unsigned char lead = byte(i);
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(i + 1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    if (!continuation(i + 1) || !continuation(i + 2)) return 0;
    unsigned char second = byte(i + 1);
    if (lead == 0xE0 && second < 0xA0) return 0;  // overlong
    if (lead == 0xED && second > 0x9F) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    if (!continuation(i + 1) || !continuation(i + 2) || !continuation(i + 3)) return 0;
    unsigned char second = byte(i + 1);
    if (lead == 0xF0 && second < 0x90) return 0;  // overlong
    if (lead == 0xF4 && second > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

// Magnitude of a signed value as unsigned, correct for INT64_MIN too.
uint64_t Magnitude(int64_t value) {
  return value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
}

void AppendUnsigned(uint64_t value, std::string* out) {
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, result.ptr);
}

void AppendMicros(int64_t ns, bool always_fraction, std::string* out) {
  uint64_t magnitude = Magnitude(ns);
  uint64_t fraction = magnitude % 1000;
  if (ns < 0) out->push_back('-');
  AppendUnsigned(magnitude / 1000, out);
  if (fraction == 0 && !always_fraction) return;
  out->push_back('.');
  out->push_back(static_cast<char>('0' + fraction / 100));
  out->push_back(static_cast<char>('0' + fraction / 10 % 10));
  out->push_back(static_cast<char>('0' + fraction % 10));
}

}  // namespace

void AppendString(std::string_view text, std::string* out) {
  out->push_back('"');
  size_t run_start = 0;  // bytes copied verbatim are appended in runs, not one by one
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      size_t length = ValidUtf8Length(text, i);
      if (length != 0) {
        i += length;
        continue;
      }
    }
    out->append(text.data() + run_start, i - run_start);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      out->append("\\u00");
      out->push_back(kHexDigits[c >> 4]);
      out->push_back(kHexDigits[c & 0xF]);
    } else {
      out->append(kReplacementCharacter);
    }
    ++i;
    run_start = i;
  }
  out->append(text.data() + run_start, text.size() - run_start);
  out->push_back('"');
}

void AppendInt(int64_t value, std::string* out) {
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, result.ptr);
}

void AppendMicrosFixed3(int64_t ns, std::string* out) { AppendMicros(ns, true, out); }

void AppendMicrosCompact(int64_t ns, std::string* out) { AppendMicros(ns, false, out); }

}  // namespace bubblescope::json_text
