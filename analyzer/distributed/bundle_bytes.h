// The byte layout of what the processes of `analyze --mpi` send each other (read_bundle.h,
// part_exchange.h): little-endian 8-byte numbers and length-prefixed strings, the same on every
// process, and a reader that checks every read against the bytes left.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"

namespace bubblescope::distributed {

void PutNumber(uint64_t number, std::string* out);
void PutString(std::string_view text, std::string* out);
void PutStatus(const absl::Status& status, std::string* out);

// Reads what the Put functions wrote. The first error sticks: later reads give zeros and empty
// strings, and error() says what went wrong where, as "<sender>: byte <N>: <what>".
class ByteReader {
 public:
  // `sender` names who sent the bytes ("process 3"); `what` what they are ("bundle").
  ByteReader(std::string_view bytes, std::string sender, std::string what)
      : bytes_(bytes), sender_(std::move(sender)), what_(std::move(what)) {}

  const absl::Status& error() const { return error_; }
  void Fail(std::string_view problem);
  // Fails unless every byte was read ("bytes after the <what>").
  void ExpectEnd();

  uint64_t Number();
  int64_t Signed() { return static_cast<int64_t>(Number()); }
  std::string_view String();
  absl::Status Status();
  // A count of items of at least `item_bytes` each, checked against the bytes left, so that a
  // damaged count never reserves memory the bytes cannot fill.
  uint64_t Count(size_t item_bytes);
  // The bytes begin with `magic`.
  void Expect(std::string_view magic);

 private:
  size_t left() const { return bytes_.size() - offset_; }

  std::string_view bytes_;
  std::string sender_;
  std::string what_;
  size_t offset_ = 0;
  absl::Status error_;
};

}  // namespace bubblescope::distributed
