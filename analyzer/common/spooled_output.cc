#include "common/spooled_output.h"

#include <utility>

namespace bubblescope {

absl::StatusOr<std::unique_ptr<SpooledOutput>> SpooledOutput::Open(
    const std::string& path, const OutputFileOptions& options, bool gzip) {
  std::unique_ptr<SpooledOutput> output(new SpooledOutput());
  absl::StatusOr<std::unique_ptr<OutputStream>> stream = OutputStream::Open(path, options);
  if (!stream.ok()) return stream.status();
  output->stream_ = *std::move(stream);
  absl::StatusOr<std::unique_ptr<ScratchFile>> scratch = output->stream_->NewScratch();
  if (!scratch.ok()) return scratch.status();
  output->scratch_ = *std::move(scratch);
  output->gzip_ = gzip;
  if (gzip) {
    output->body_deflate_ = std::make_unique<DeflateSegment>(output->scratch_.get(),
                                                             kFastGzipLevel);
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
  if (absl::Status ended = body_deflate_->End(/*last=*/false); !ended.ok()) return ended;
  absl::Status status = stream_->Append(GzipHeader(kFastGzipLevel));
  DeflateSegment head_deflate(stream_.get(), kFastGzipLevel);
  if (status.ok()) status = head_deflate.Append(head);
  if (status.ok()) status = head_deflate.End(/*last=*/false);
  if (status.ok()) status = stream_->AppendScratch(*scratch_);
  DeflateSegment tail_deflate(stream_.get(), kFastGzipLevel);
  if (status.ok()) status = tail_deflate.Append(tail);
  if (status.ok()) status = tail_deflate.End(/*last=*/true);
  if (!status.ok()) return status;
  uint32_t crc = CombineCrc(head_deflate.crc(), body_deflate_->crc(), body_deflate_->size());
  crc = CombineCrc(crc, tail_deflate.crc(), tail_deflate.size());
  const uint64_t size = head_deflate.size() + body_deflate_->size() + tail_deflate.size();
  if (status = stream_->Append(GzipTrailer(crc, size)); !status.ok()) return status;
  return stream_->Commit();
}

}  // namespace bubblescope
