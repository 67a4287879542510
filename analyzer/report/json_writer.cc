#include "report/json_writer.h"

#include <charconv>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace bubblescope {
namespace {

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// Length of the well-formed UTF-8 sequence at the start of `text` (whose first byte is >= 0x80),
// or 0 if it is not one (Unicode 15, table 3-7: no overlongs, no surrogates, nothing > U+10FFFF).
size_t Utf8SequenceLength(std::string_view text) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(0);
  size_t length = 0;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;
    if (lead == 0xED) second_max = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;
    if (lead == 0xF4) second_max = 0x8F;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  if (byte(1) < second_min || byte(1) > second_max) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

JsonWriter::JsonWriter(const JsonWriterOptions& options) : options_(options) {}

void JsonWriter::Fail(std::string message) {
  if (status_.ok()) status_ = absl::FailedPreconditionError(std::move(message));
}

void JsonWriter::NewLine() {
  if (options_.indent <= 0) return;
  out_.push_back('\n');
  out_.append(stack_.size() * static_cast<size_t>(options_.indent), ' ');
}

bool JsonWriter::BeforeValue() {
  if (!status_.ok()) return false;
  if (stack_.empty()) {
    if (root_written_) {
      Fail("JSON writer: a second top-level value");
      return false;
    }
    root_written_ = true;
    return true;
  }
  Level& level = stack_.back();
  if (level.container == Container::kObject) {
    if (level.key_due) {
      Fail("JSON writer: a value inside an object without a key");
      return false;
    }
    level.key_due = true;
    return true;
  }
  if (!level.empty) out_.push_back(',');
  level.empty = false;
  NewLine();
  return true;
}

void JsonWriter::Key(std::string_view key) {
  if (!status_.ok()) return;
  if (stack_.empty() || stack_.back().container != Container::kObject) {
    Fail(absl::StrCat("JSON writer: key \"", std::string(key), "\" outside an object"));
    return;
  }
  Level& level = stack_.back();
  if (!level.key_due) {
    Fail(absl::StrCat("JSON writer: key \"", std::string(key), "\" where a value is due"));
    return;
  }
  if (!level.empty) out_.push_back(',');
  level.empty = false;
  level.key_due = false;
  NewLine();
  AppendEscaped(key);
  out_.push_back(':');
  if (options_.indent > 0) out_.push_back(' ');
}

void JsonWriter::BeginObject() {
  if (!BeforeValue()) return;
  out_.push_back('{');
  stack_.push_back({Container::kObject});
}

void JsonWriter::BeginArray() {
  if (!BeforeValue()) return;
  out_.push_back('[');
  stack_.push_back({Container::kArray});
}

void JsonWriter::EndObject() {
  if (!status_.ok()) return;
  if (stack_.empty() || stack_.back().container != Container::kObject) {
    Fail("JSON writer: EndObject without a matching BeginObject");
    return;
  }
  if (!stack_.back().key_due) {
    Fail("JSON writer: object ends after a key without its value");
    return;
  }
  bool was_empty = stack_.back().empty;
  stack_.pop_back();
  if (!was_empty) NewLine();
  out_.push_back('}');
}

void JsonWriter::EndArray() {
  if (!status_.ok()) return;
  if (stack_.empty() || stack_.back().container != Container::kArray) {
    Fail("JSON writer: EndArray without a matching BeginArray");
    return;
  }
  bool was_empty = stack_.back().empty;
  stack_.pop_back();
  if (!was_empty) NewLine();
  out_.push_back(']');
}

void JsonWriter::String(std::string_view value) {
  if (!BeforeValue()) return;
  AppendEscaped(value);
}

void JsonWriter::Int(int64_t value) {
  if (!BeforeValue()) return;
  absl::StrAppend(&out_, value);
}

void JsonWriter::UInt(uint64_t value) {
  if (!BeforeValue()) return;
  absl::StrAppend(&out_, value);
}

void JsonWriter::Double(double value) {
  if (!status_.ok()) return;
  if (!std::isfinite(value)) {
    Fail("JSON writer: NaN or infinity has no JSON form");
    return;
  }
  if (!BeforeValue()) return;
  char buffer[32];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (error != std::errc()) {
    Fail("JSON writer: cannot format a double");
    return;
  }
  out_.append(buffer, end);
}

void JsonWriter::Decimal(int64_t units, int scale) {
  if (!status_.ok()) return;
  if (scale < 0 || scale > 18) {
    Fail(absl::StrCat("JSON writer: decimal scale ", scale, " outside 0..18"));
    return;
  }
  if (!BeforeValue()) return;
  // Work on the magnitude in uint64 so INT64_MIN needs no special case.
  uint64_t magnitude = units < 0 ? 0 - static_cast<uint64_t>(units) : static_cast<uint64_t>(units);
  uint64_t divisor = 1;
  for (int i = 0; i < scale; ++i) divisor *= 10;
  if (units < 0) out_.push_back('-');
  absl::StrAppend(&out_, magnitude / divisor);
  uint64_t fraction = magnitude % divisor;
  if (fraction == 0) return;
  std::string digits = absl::StrCat(fraction);
  out_.push_back('.');
  out_.append(static_cast<size_t>(scale) - digits.size(), '0');
  while (!digits.empty() && digits.back() == '0') digits.pop_back();
  out_.append(digits);
}

void JsonWriter::Bool(bool value) {
  if (!BeforeValue()) return;
  out_.append(value ? "true" : "false");
}

void JsonWriter::Null() {
  if (!BeforeValue()) return;
  out_.append("null");
}

void JsonWriter::AppendEscaped(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out_.push_back('"');
  size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      size_t length = Utf8SequenceLength(text.substr(i));
      if (length == 0) {
        out_.append(kReplacementCharacter);
        ++i;
      } else {
        out_.append(text.substr(i, length));
        i += length;
      }
      continue;
    }
    switch (c) {
      case '"': out_.append("\\\""); break;
      case '\\': out_.append("\\\\"); break;
      case '\b': out_.append("\\b"); break;
      case '\f': out_.append("\\f"); break;
      case '\n': out_.append("\\n"); break;
      case '\r': out_.append("\\r"); break;
      case '\t': out_.append("\\t"); break;
      default:
        if (c < 0x20) {
          out_.append("\\u00");
          out_.push_back(kHex[c >> 4]);
          out_.push_back(kHex[c & 0xF]);
        } else {
          out_.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out_.push_back('"');
}

absl::StatusOr<std::string> JsonWriter::Finish() {
  if (!status_.ok()) return status_;
  if (!stack_.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("JSON writer: ", stack_.size(), " unclosed object(s) or array(s)"));
  }
  if (!root_written_) return absl::FailedPreconditionError("JSON writer: empty document");
  return std::move(out_);
}

}  // namespace bubblescope
