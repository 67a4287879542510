// Where a writer that produces more bytes than it should hold at once sends them, piece by
// piece: an output file (common/output_file.h), a scratch file, a compressor in front of either
// (common/gzip_segment.h), or a string in tests.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace bubblescope {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Errors, one line: what could not be written where.
  virtual absl::Status Append(std::string_view bytes) = 0;
};

// Collects the bytes in a string the caller owns.
class StringSink : public ByteSink {
 public:
  explicit StringSink(std::string* text) : text_(text) {}
  absl::Status Append(std::string_view bytes) override {
    text_->append(bytes.data(), bytes.size());
    return absl::OkStatus();
  }

 private:
  std::string* text_;
};

}  // namespace bubblescope
