#include "common/spooled_output.h"

#include <utility>

#include "common/status_macros.h"

namespace bubblescope {

absl::StatusOr<std::unique_ptr<SpooledOutput>> SpooledOutput::Open(const std::string& path,
                                                                   const OutputFileOptions& options,
                                                                   bool gzip) {
  std::unique_ptr<SpooledOutput> output(new SpooledOutput());
  BUBBLESCOPE_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> stream,
                               OutputStream::Open(path, options));
  output->stream_ = std::move(stream);
  BUBBLESCOPE_ASSIGN_OR_RETURN(std::unique_ptr<ScratchFile> scratch, output->stream_->NewScratch());
  output->scratch_ = std::move(scratch);
  output->gzip_ = gzip;
  if (gzip) {
    output->body_deflate_ =
        std::make_unique<DeflateSegment>(output->scratch_.get(), kFastGzipLevel);
  }
  return output;
}

absl::Status SpooledOutput::Finish(std::string_view head, std::string_view tail) {
  if (!gzip_) {
    absl::Status status = stream_->Append(head);
    if (status.ok()) status = stream_->AppendScratch(*scratch_);
    if (status.ok()) status = stream_->Append(tail);
    return status.ok() ? stream_->Commit() : status;
  }
  BUBBLESCOPE_RETURN_IF_ERROR(body_deflate_->End(/*last=*/false));
  absl::Status status = stream_->Append(GzipHeader(kFastGzipLevel));
  DeflateSegment head_deflate(stream_.get(), kFastGzipLevel);
  if (status.ok()) status = head_deflate.Append(head);
  if (status.ok()) status = head_deflate.End(/*last=*/false);
  if (status.ok()) status = stream_->AppendScratch(*scratch_);
  DeflateSegment tail_deflate(stream_.get(), kFastGzipLevel);
  if (status.ok()) status = tail_deflate.Append(tail);
  if (status.ok()) status = tail_deflate.End(/*last=*/true);
  BUBBLESCOPE_RETURN_IF_ERROR(status);
  uint32_t crc = CombineCrc(head_deflate.crc(), body_deflate_->crc(), body_deflate_->size());
  crc = CombineCrc(crc, tail_deflate.crc(), tail_deflate.size());
  const uint64_t size = head_deflate.size() + body_deflate_->size() + tail_deflate.size();
  if (status = stream_->Append(GzipTrailer(crc, size)); !status.ok()) return status;
  return stream_->Commit();
}

}  // namespace bubblescope
