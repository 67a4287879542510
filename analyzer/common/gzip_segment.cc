#include "common/gzip_segment.h"

#include <zlib.h>

#include <algorithm>
#include <vector>

namespace bubblescope {

struct DeflateSegment::Stream {
  z_stream z{};
  bool ready = false;  // deflateInit2 succeeded
  std::vector<unsigned char> buffer = std::vector<unsigned char>(1 << 18);
};

DeflateSegment::DeflateSegment(ByteSink* out, int level)
    : stream_(std::make_unique<Stream>()),
      out_(out),
      crc_(static_cast<uint32_t>(crc32(0L, Z_NULL, 0))) {
  // Negative window bits: raw deflate, the gzip framing being written apart.
  stream_->ready = deflateInit2(&stream_->z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
}

DeflateSegment::~DeflateSegment() {
  if (stream_->ready) deflateEnd(&stream_->z);
}

absl::Status DeflateSegment::Deflate(std::string_view bytes, int flush) {
  if (!stream_->ready) return absl::ResourceExhaustedError("gzip compression could not start");
  if (ended_) return absl::InternalError("gzip segment appended to after its end");
  z_stream& z = stream_->z;
  // deflate takes unsigned lengths: large pieces go in chunks.
  do {
    const size_t chunk = std::min<size_t>(bytes.size(), 1u << 30);
    const bool final_chunk = chunk == bytes.size();
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z.avail_in = static_cast<uInt>(chunk);
    const int mode = final_chunk ? flush : Z_NO_FLUSH;
    do {
      z.next_out = stream_->buffer.data();
      z.avail_out = static_cast<uInt>(stream_->buffer.size());
      const int result = deflate(&z, mode);
      if (result == Z_STREAM_ERROR) return absl::InternalError("gzip compression failed");
      const size_t produced = stream_->buffer.size() - z.avail_out;
      if (produced > 0) {
        if (absl::Status written = out_->Append(
                std::string_view(reinterpret_cast<const char*>(stream_->buffer.data()), produced));
            !written.ok()) {
          return written;
        }
      }
    } while (z.avail_out == 0);
    bytes.remove_prefix(chunk);
  } while (!bytes.empty());
  return absl::OkStatus();
}

absl::Status DeflateSegment::Append(std::string_view bytes) {
  if (bytes.empty()) return absl::OkStatus();
  crc_ = static_cast<uint32_t>(
      crc32_z(crc_, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
  size_ += bytes.size();
  return Deflate(bytes, Z_NO_FLUSH);
}

absl::Status DeflateSegment::End(bool last) {
  absl::Status status = Deflate(std::string_view(), last ? Z_FINISH : Z_SYNC_FLUSH);
  ended_ = true;
  return status;
}

std::string GzipHeader(int level) {
  // Magic, deflate, no flags, no time; the extra flags say "fastest" or "best" as zlib does;
  // OS 3 (Unix).
  const char extra = level == 1 ? 4 : level == 9 ? 2 : 0;
  return std::string({'\x1f', '\x8b', '\x08', '\0', '\0', '\0', '\0', '\0', extra, '\x03'});
}

std::string GzipTrailer(uint32_t crc, uint64_t size) {
  std::string trailer(8, '\0');
  const uint32_t low_size = static_cast<uint32_t>(size);  // the format keeps it mod 2^32
  for (int i = 0; i < 4; ++i) {
    trailer[static_cast<size_t>(i)] = static_cast<char>((crc >> (8 * i)) & 0xff);
    trailer[static_cast<size_t>(4 + i)] = static_cast<char>((low_size >> (8 * i)) & 0xff);
  }
  return trailer;
}

uint32_t CombineCrc(uint32_t crc_a, uint32_t crc_b, uint64_t size_b) {
  return static_cast<uint32_t>(crc32_combine(crc_a, crc_b, static_cast<z_off_t>(size_b)));
}

}  // namespace bubblescope
