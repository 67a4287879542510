// A small streaming JSON writer: values are appended to a string in order, strings are escaped
// (and invalid UTF-8 replaced, so the output always parses), and misuse such as a value where a
// key is due or an unbalanced End* is recorded rather than producing broken JSON.
//
// Misuse is sticky: the first mistake is kept, later calls are ignored, and Finish() returns it.
// This keeps call sites linear (no status check after every value) while still never letting a
// malformed document escape.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace bubblescope {

struct JsonWriterOptions {
  // Spaces per nesting level; 0 writes everything on one line without spaces.
  int indent = 0;
};

class JsonWriter {
 public:
  explicit JsonWriter(const JsonWriterOptions& options = {});

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  // The key of the next member; only valid directly inside an object.
  void Key(std::string_view key);

  void String(std::string_view value);
  void Int(int64_t value);
  void UInt(uint64_t value);
  // Shortest decimal that reads back as `value`. JSON has no NaN or infinity: those are misuse.
  void Double(double value);
  // `units` / 10^`scale` written exactly in fixed point without trailing zeros, e.g.
  // Decimal(1234567, 3) -> 1234.567, Decimal(1500, 3) -> 1.5, Decimal(-5, 3) -> -0.005.
  // Used for nanoseconds shown as microseconds, which a double would round. scale is 0..18.
  void Decimal(int64_t units, int scale);
  void Bool(bool value);
  void Null();

  // An object member in one call: Key(key) and then the value.
  void IntMember(std::string_view key, int64_t value);
  void UIntMember(std::string_view key, uint64_t value);
  void DoubleMember(std::string_view key, double value);
  void DecimalMember(std::string_view key, int64_t units, int scale);
  void StringMember(std::string_view key, std::string_view value);
  void BoolMember(std::string_view key, bool value);
  void IntArrayMember(std::string_view key, const std::vector<int32_t>& values);
  // `value`, or null when it is negative: the model's spelling of an unknown count or size.
  void CountOrNullMember(std::string_view key, int64_t value);

  // The finished document, or the first misuse (including an incomplete document).
  absl::StatusOr<std::string> Finish();

 private:
  enum class Container : uint8_t { kObject, kArray };
  struct Level {
    Container container;
    bool empty = true;    // nothing written inside yet
    bool key_due = true;  // objects: the next token must be a key
  };

  // Checks that a value may come now and writes the separator before it.
  bool BeforeValue();
  void Fail(std::string message);
  void NewLine();

  JsonWriterOptions options_;
  std::string out_;
  std::vector<Level> stack_;
  bool root_written_ = false;
  absl::Status status_;
};

}  // namespace bubblescope
