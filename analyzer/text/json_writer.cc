#include "text/json_writer.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "text/json_string.h"
#include "text/shortest_double.h"

namespace bubblescope {

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
  text::AppendJsonString(key, &out_);
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
  text::AppendJsonString(value, &out_);
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
  if (!text::AppendShortestDouble(value, &out_)) Fail("JSON writer: cannot format a double");
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

void JsonWriter::IntMember(std::string_view key, int64_t value) {
  Key(key);
  Int(value);
}

void JsonWriter::UIntMember(std::string_view key, uint64_t value) {
  Key(key);
  UInt(value);
}

void JsonWriter::DoubleMember(std::string_view key, double value) {
  Key(key);
  Double(value);
}

void JsonWriter::DecimalMember(std::string_view key, int64_t units, int scale) {
  Key(key);
  Decimal(units, scale);
}

void JsonWriter::StringMember(std::string_view key, std::string_view value) {
  Key(key);
  String(value);
}

void JsonWriter::BoolMember(std::string_view key, bool value) {
  Key(key);
  Bool(value);
}

void JsonWriter::IntArrayMember(std::string_view key, const std::vector<int32_t>& values) {
  Key(key);
  BeginArray();
  for (int32_t value : values) Int(value);
  EndArray();
}

void JsonWriter::CountOrNullMember(std::string_view key, int64_t value) {
  Key(key);
  if (value < 0) {
    Null();
  } else {
    Int(value);
  }
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
