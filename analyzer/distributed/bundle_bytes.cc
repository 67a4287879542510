#include "distributed/bundle_bytes.h"

#include "absl/strings/str_cat.h"

namespace bubblescope::distributed {
namespace {

// The highest status code that may travel (absl::StatusCode::kUnauthenticated).
constexpr uint64_t kLastStatusCode = 16;

}  // namespace

void PutNumber(uint64_t number, std::string* out) {
  for (int byte = 0; byte < 8; ++byte) {
    out->push_back(static_cast<char>((number >> (8 * byte)) & 0xff));
  }
}

void PutString(std::string_view text, std::string* out) {
  PutNumber(text.size(), out);
  out->append(text);
}

void PutStatus(const absl::Status& status, std::string* out) {
  PutNumber(static_cast<uint64_t>(status.code()), out);
  PutString(std::string_view(status.message().data(), status.message().size()), out);
}

void ByteReader::Fail(std::string_view problem) {
  if (!error_.ok()) return;
  error_ =
      absl::InternalError(absl::StrCat(sender_, ": byte ", offset_, ": ", std::string(problem)));
  offset_ = bytes_.size();
}

void ByteReader::ExpectEnd() {
  if (error_.ok() && offset_ != bytes_.size()) Fail(absl::StrCat("bytes after the ", what_));
}

uint64_t ByteReader::Number() {
  if (left() < 8) {
    Fail(absl::StrCat(what_, " ends inside a number"));
    return 0;
  }
  uint64_t number = 0;
  for (size_t byte = 0; byte < 8; ++byte) {
    number |= uint64_t{static_cast<unsigned char>(bytes_[offset_ + byte])} << (8 * byte);
  }
  offset_ += 8;
  return number;
}

std::string_view ByteReader::String() {
  const uint64_t size = Number();
  if (size > left()) {
    Fail(absl::StrCat(what_, " ends inside a string"));
    return {};
  }
  std::string_view text = bytes_.substr(offset_, size);
  offset_ += size;
  return text;
}

absl::Status ByteReader::Status() {
  const uint64_t code = Number();
  if (code > kLastStatusCode) {
    Fail("unknown status code");
    return absl::OkStatus();
  }
  const std::string_view message = String();
  return absl::Status(static_cast<absl::StatusCode>(code),
                      absl::string_view(message.data(), message.size()));
}

uint64_t ByteReader::Count(size_t item_bytes) {
  const uint64_t count = Number();
  if (count > left() / item_bytes) {
    Fail(absl::StrCat("count larger than the ", what_));
    return 0;
  }
  return count;
}

void ByteReader::Expect(std::string_view magic) {
  if (bytes_.substr(0, magic.size()) != magic) {
    Fail(absl::StrCat("not a ", what_, " of this bubblescope version"));
    return;
  }
  offset_ = magic.size();
}

}  // namespace bubblescope::distributed
