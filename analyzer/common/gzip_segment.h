// gzip (RFC 1952) compression written as the bytes come, in segments that are compressed apart
// and joined afterwards into one gzip member: each segment is raw deflate data that ends on a
// byte boundary without closing the stream (a sync flush), and the last one closes it. The
// member is GzipHeader, the segments in order, and GzipTrailer of their CRCs combined and their
// total size: what `gzip -d`, zlib and every browser read as one stream. This lets a document
// whose head is known only after its body (common/spooled_output.h) be compressed as it is
// written, without ever holding it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/byte_sink.h"

namespace bubblescope {

// zlib's fastest level: a merged trace is gigabytes of JSON, which it still shrinks ~10x.
inline constexpr int kFastGzipLevel = 1;

class DeflateSegment : public ByteSink {
 public:
  // Compresses into `out` at zlib `level` (0-9).
  DeflateSegment(ByteSink* out, int level);
  DeflateSegment(const DeflateSegment&) = delete;
  DeflateSegment& operator=(const DeflateSegment&) = delete;
  ~DeflateSegment() override;

  absl::Status Append(std::string_view bytes) override;
  // Writes out what is pending; `last` closes the deflate stream. Nothing may follow.
  absl::Status End(bool last);

  uint32_t crc() const { return crc_; }    // CRC-32 of the bytes appended
  uint64_t size() const { return size_; }  // how many there were

 private:
  absl::Status Deflate(std::string_view bytes, int flush);

  struct Stream;
  std::unique_ptr<Stream> stream_;
  ByteSink* out_;
  uint32_t crc_ = 0;
  uint64_t size_ = 0;
  bool ended_ = false;
};

// The 10 bytes that open a member compressed at `level`, as zlib writes them (no name, no time).
std::string GzipHeader(int level);
// The 8 bytes that close it: the CRC-32 and the size mod 2^32 of everything it holds.
std::string GzipTrailer(uint32_t crc, uint64_t size);
// The CRC-32 of A followed by B, from theirs and B's size.
uint32_t CombineCrc(uint32_t crc_a, uint32_t crc_b, uint64_t size_b);

}  // namespace bubblescope
