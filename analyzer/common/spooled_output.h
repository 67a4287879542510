// An output whose head is known only once its body has been written, such as the Perfetto
// overlay (perfetto/perfetto_overlay.h), whose layout naming every rank's processes comes before
// the events it is learnt from. The body goes to a scratch file beside the output as it is
// written; Finish writes the output as head + body + tail through one OutputStream, so the file
// appears whole or not at all (common/output_file.h) and no more than a buffer of it is ever in
// memory. With gzip the body is compressed as it is written (the scratch file holds compressed
// bytes) and head, body and tail become one gzip member (common/gzip_segment.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/byte_sink.h"
#include "common/gzip_segment.h"
#include "common/output_file.h"

namespace bubblescope {

class SpooledOutput {
 public:
  // Checks `path` as WriteOutputFile would, now: errors read "cannot write <path>: <reason>".
  static absl::StatusOr<std::unique_ptr<SpooledOutput>> Open(const std::string& path,
                                                             const OutputFileOptions& options,
                                                             bool gzip);

  // Where the body goes.
  ByteSink& body() { return gzip_ ? static_cast<ByteSink&>(*body_deflate_) : *scratch_; }
  // Writes head, the body and tail, and puts the file in place.
  absl::Status Finish(std::string_view head, std::string_view tail);

 private:
  SpooledOutput() = default;

  std::unique_ptr<OutputStream> stream_;
  std::unique_ptr<ScratchFile> scratch_;
  bool gzip_ = false;
  std::unique_ptr<DeflateSegment> body_deflate_;  // gzip: compresses into scratch_
};

}  // namespace bubblescope
