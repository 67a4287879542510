#include "distributed/read_bundle.h"

#include <cstddef>

#include "absl/strings/str_cat.h"

namespace bubblescope::distributed {
namespace {

constexpr std::string_view kMagic = "bubblescope-mpi-bundle-1\n";
// The highest status code a bundle may carry (absl::StatusCode::kUnauthenticated).
constexpr uint64_t kLastStatusCode = 16;

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

// Reads what PackBundle wrote, each read checked against the bytes left. The first error sticks:
// later reads give zeros and empty strings, and Error() says what went wrong where.
class BundleReader {
 public:
  BundleReader(std::string_view bytes, int process) : bytes_(bytes), process_(process) {}

  const absl::Status& error() const { return error_; }
  void Fail(const char* what) {
    if (!error_.ok()) return;
    error_ = absl::InternalError(absl::StrCat("process ", process_, ": byte ", offset_, ": ", what));
    offset_ = bytes_.size();
  }
  bool AtEnd() const { return offset_ == bytes_.size(); }

  uint64_t Number() {
    if (left() < 8) {
      Fail("bundle ends inside a number");
      return 0;
    }
    uint64_t number = 0;
    for (size_t byte = 0; byte < 8; ++byte) {
      number |= uint64_t{static_cast<unsigned char>(bytes_[offset_ + byte])} << (8 * byte);
    }
    offset_ += 8;
    return number;
  }
  std::string_view String() {
    const uint64_t size = Number();
    if (size > left()) {
      Fail("bundle ends inside a string");
      return {};
    }
    std::string_view text = bytes_.substr(offset_, size);
    offset_ += size;
    return text;
  }
  absl::Status Status() {
    const uint64_t code = Number();
    if (code > kLastStatusCode) {
      Fail("unknown status code");
      return absl::OkStatus();
    }
    const std::string_view message = String();
    return absl::Status(static_cast<absl::StatusCode>(code),
                        absl::string_view(message.data(), message.size()));
  }
  // A count of items of at least `item_bytes` each, checked against the bytes left, so that a
  // damaged count never reserves memory the bundle cannot fill.
  uint64_t Count(size_t item_bytes) {
    const uint64_t count = Number();
    if (count > left() / item_bytes) {
      Fail("count larger than the bundle");
      return 0;
    }
    return count;
  }
  void Expect(std::string_view magic) {
    if (bytes_.substr(0, magic.size()) != magic) {
      Fail("not a bundle of this bubblescope version");
      return;
    }
    offset_ = magic.size();
  }

 private:
  size_t left() const { return bytes_.size() - offset_; }

  std::string_view bytes_;
  int process_;
  size_t offset_ = 0;
  absl::Status error_;
};

// The smallest an encoded read can be: index, read, status code and message size, merged and
// digest count.
constexpr size_t kReadBytes = 6 * 8;

}  // namespace

std::string PackBundle(const ReadBundle& bundle) {
  std::string out(kMagic);
  PutStatus(bundle.list_status, &out);
  PutNumber(bundle.list_fingerprint, &out);
  PutNumber(bundle.list_size, &out);
  PutNumber(bundle.reads.size(), &out);
  for (const EncodedRead& read : bundle.reads) {
    PutNumber(read.index, &out);
    PutNumber(read.read ? 1 : 0, &out);
    PutStatus(read.status, &out);
    PutNumber(read.merged ? 1 : 0, &out);
    PutNumber(read.digests.size(), &out);
    for (const std::string& digest : read.digests) PutString(digest, &out);
  }
  return out;
}

absl::StatusOr<ReadBundle> UnpackBundle(std::string_view bytes, int process) {
  BundleReader in(bytes, process);
  in.Expect(kMagic);
  ReadBundle bundle;
  bundle.list_status = in.Status();
  bundle.list_fingerprint = in.Number();
  bundle.list_size = in.Number();
  bundle.reads.resize(in.Count(kReadBytes));
  for (EncodedRead& read : bundle.reads) {
    read.index = in.Number();
    read.read = in.Number() != 0;
    read.status = in.Status();
    read.merged = in.Number() != 0;
    const uint64_t digests = in.Count(8);
    read.digests.reserve(digests);
    for (uint64_t d = 0; d < digests; ++d) read.digests.emplace_back(in.String());
  }
  if (in.error().ok() && !in.AtEnd()) in.Fail("bytes after the bundle");
  if (!in.error().ok()) return in.error();
  return bundle;
}

}  // namespace bubblescope::distributed
