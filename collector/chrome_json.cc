#include "chrome_json.h"

#include <cinttypes>
#include <cstdio>

namespace bubblescope::collector {
namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 if it is not one.
size_t Utf8Length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t length = 0;
  uint32_t min = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    min = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    min = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  uint32_t code = lead & (0x7Fu >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3Fu);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

}  // namespace

void AppendJsonString(std::string_view text, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
      ++i;
    } else if (c < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\u%04x", c);
      out->append(escape);
      ++i;
    } else if (c < 0x80) {
      out->push_back(static_cast<char>(c));
      ++i;
    } else if (const size_t length = Utf8Length(text, i); length > 0) {
      out->append(text.substr(i, length));
      i += length;
    } else {
      out->append("\xEF\xBF\xBD");
      ++i;
    }
  }
  out->push_back('"');
}

void AppendMicros(int64_t ns, std::string* out) {
  const bool negative = ns < 0;
  // Magnitude as unsigned, so INT64_MIN has one too.
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  char text[32];
  std::snprintf(text, sizeof(text), "%s%" PRIu64 ".%03" PRIu64, negative ? "-" : "",
                magnitude / 1000, magnitude % 1000);
  out->append(text);
}

EventText::EventText(std::string* out, std::string_view ph, std::string_view cat,
                     std::string_view name)
    : out_(out) {
  out_->append(",\n{\"ph\":");
  AppendJsonString(ph, out_);
  if (!cat.empty()) {
    out_->append(",\"cat\":");
    AppendJsonString(cat, out_);
  }
  out_->append(",\"name\":");
  AppendJsonString(name, out_);
}

void EventText::Key(std::string_view key) {
  if (!in_args_ || !first_in_args_) out_->push_back(',');
  first_in_args_ = false;
  AppendJsonString(key, out_);
  out_->push_back(':');
}

EventText& EventText::Int(std::string_view key, int64_t value) {
  Key(key);
  out_->append(std::to_string(value));
  return *this;
}

EventText& EventText::Micros(std::string_view key, int64_t ns) {
  Key(key);
  AppendMicros(ns, out_);
  return *this;
}

EventText& EventText::Text(std::string_view key, std::string_view value) {
  Key(key);
  AppendJsonString(value, out_);
  return *this;
}

EventText& EventText::Raw(std::string_view key, std::string_view json) {
  Key(key);
  out_->append(json);
  return *this;
}

EventText& EventText::Args() {
  if (in_args_) return *this;
  out_->append(",\"args\":{");
  in_args_ = true;
  first_in_args_ = true;
  return *this;
}

void EventText::Finish() {
  if (in_args_) out_->push_back('}');
  out_->push_back('}');
}

}  // namespace bubblescope::collector
