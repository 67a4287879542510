#include "loader/gzip_inflate.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/out_of_memory.h"

#define ZLIB_CONST
#include <zlib.h>

namespace bubblescope {
namespace {

// Deflate cannot expand data by more than about 1032:1, which bounds any believable size hint.
constexpr uint64_t kMaxDeflateRatio = 1032;
// The smallest complete gzip member: 10 header bytes, an empty deflate block, 8 trailer bytes.
constexpr size_t kMinGzipMemberBytes = 20;
constexpr size_t kFirstGrowthChunk = size_t{64} << 10;
constexpr size_t kMaxGrowthChunk = size_t{64} << 20;

// The decompressed size recorded in the last member's footer (ISIZE, the size modulo 2^32).
// It is exact for the common single-member file under 4 GiB, and only a first guess otherwise
// (several members, a cut-short file whose last four bytes are not a footer at all).
size_t SizeHint(std::string_view compressed) {
  if (compressed.size() < kMinGzipMemberBytes) return 0;
  const auto* footer =
      reinterpret_cast<const unsigned char*>(compressed.data() + compressed.size() - 4);
  const uint64_t isize = uint64_t{footer[0]} | uint64_t{footer[1]} << 8 |
                         uint64_t{footer[2]} << 16 | uint64_t{footer[3]} << 24;
  return static_cast<size_t>(std::min<uint64_t>(isize, compressed.size() * kMaxDeflateRatio));
}

// Decompressed bytes. The first buffer is sized from the footer hint and, when the hint was
// exact, becomes the result without a copy. When it is too small, further chunks of growing size
// hold the rest (no reallocation, so no moment with two copies of everything decoded so far
// besides the final gather into one exact-size buffer).
class OutputBuffers {
 public:
  explicit OutputBuffers(size_t first_capacity) : first_(first_capacity) {
    if (first_.data() == nullptr) first_ = simdjson::padded_string(size_t{0});
  }

  // Where inflate may write next; empty when every buffer is full.
  std::pair<char*, size_t> Space() {
    if (first_used_ < first_.size()) {
      return {first_.data() + first_used_, first_.size() - first_used_};
    }
    if (more_.empty() || more_.back().used == more_.back().capacity) return {nullptr, 0};
    Chunk& chunk = more_.back();
    return {chunk.data.get() + chunk.used, chunk.capacity - chunk.used};
  }

  void Commit(size_t bytes) {
    if (more_.empty()) {
      first_used_ += bytes;
    } else {
      more_.back().used += bytes;
    }
    total_ += bytes;
  }

  // Adds a chunk after the full ones; false if memory ran out.
  bool Grow() {
    const size_t capacity =
        more_.empty() ? kFirstGrowthChunk : std::min(more_.back().capacity * 2, kMaxGrowthChunk);
    std::unique_ptr<char[]> data(new (std::nothrow) char[capacity]);
    if (data == nullptr) return false;
    more_.push_back(Chunk{std::move(data), capacity, 0});
    return true;
  }

  size_t size() const { return total_; }

  // Everything decoded, in one buffer of exactly size() bytes; empty data() if memory ran out.
  simdjson::padded_string Finish() {
    if (more_.empty() && first_used_ == first_.size()) return std::move(first_);
    simdjson::padded_string text(total_);
    if (text.data() == nullptr) return text;
    std::memcpy(text.data(), first_.data(), first_used_);
    size_t at = first_used_;
    first_ = simdjson::padded_string();
    for (Chunk& chunk : more_) {
      std::memcpy(text.data() + at, chunk.data.get(), chunk.used);
      at += chunk.used;
      chunk.data.reset();
    }
    more_.clear();
    return text;
  }

 private:
  struct Chunk {
    std::unique_ptr<char[]> data;
    size_t capacity = 0;
    size_t used = 0;
  };

  simdjson::padded_string first_;
  size_t first_used_ = 0;
  std::vector<Chunk> more_;
  size_t total_ = 0;
};

// Ends the z_stream on every path out.
class InflateStream {
 public:
  InflateStream() = default;
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;
  ~InflateStream() {
    if (initialised_) inflateEnd(&stream_);
  }

  // 15 + 32: the largest window, and a gzip or zlib header detected automatically.
  int Init() {
    const int rc = inflateInit2(&stream_, 15 + 32);
    initialised_ = rc == Z_OK;
    return rc;
  }
  z_stream* get() { return &stream_; }

 private:
  z_stream stream_{};
  bool initialised_ = false;
};

absl::Status BadGzip(std::string_view display_path, size_t offset, std::string_view what) {
  return absl::DataLossError(absl::StrCat(std::string(display_path), ": byte ", offset,
                                          ": bad gzip data: ", std::string(what)));
}

absl::Status OutOfMemory(std::string_view display_path, size_t /*bytes*/) {
  return OutOfMemoryReading(display_path);
}

bool AllZero(std::string_view bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == '\0'; });
}

// What may follow a complete member: nothing, zero padding, or the start of another member.
enum class AfterMember { kEnd, kNextMember, kGarbage };

AfterMember ClassifyRest(std::string_view rest) {
  if (rest.empty() || AllZero(rest)) return AfterMember::kEnd;
  if (rest[0] == '\x1f' && (rest.size() == 1 || rest[1] == '\x8b')) return AfterMember::kNextMember;
  return AfterMember::kGarbage;
}

}  // namespace

bool LooksLikeGzip(std::string_view data) {
  return data.size() >= 2 && data[0] == '\x1f' && data[1] == '\x8b';
}

absl::Status OverReadingBudget(std::string_view path, int64_t offset, int64_t max_bytes) {
  return absl::ResourceExhaustedError(absl::StrCat(std::string(path), ": byte ", offset,
                                                   ": more than ", max_bytes >> 20,
                                                   " MiB of text, the reading budget per file"));
}

absl::StatusOr<InflatedText> InflateGzip(std::string_view display_path, std::string_view compressed,
                                         int64_t max_bytes) {
  InflateStream inflater;
  if (const int rc = inflater.Init(); rc != Z_OK) {
    return rc == Z_MEM_ERROR ? OutOfMemory(display_path, 0)
                             : absl::InternalError(absl::StrCat(std::string(display_path),
                                                                ": cannot start zlib (", rc, ")"));
  }
  z_stream* stream = inflater.get();
  OutputBuffers out(SizeHint(compressed));
  const auto* input = reinterpret_cast<const Bytef*>(compressed.data());
  size_t consumed = 0;  // compressed offset of the next byte zlib will see
  InflatedText result;

  for (;;) {
    auto [space, space_size] = out.Space();
    if (space_size == 0) {
      if (!out.Grow()) return OutOfMemory(display_path, out.size());
      std::tie(space, space_size) = out.Space();
    }
    // zlib counts in uInt, so feed more than 4 GiB in pieces.
    const uInt offered_in =
        static_cast<uInt>(std::min<size_t>(compressed.size() - consumed, UINT_MAX));
    const uInt offered_out = static_cast<uInt>(std::min<size_t>(space_size, UINT_MAX));
    stream->next_in = input + consumed;
    stream->avail_in = offered_in;
    stream->next_out = reinterpret_cast<Bytef*>(space);
    stream->avail_out = offered_out;
    const int rc = inflate(stream, Z_NO_FLUSH);
    consumed += offered_in - stream->avail_in;
    out.Commit(offered_out - stream->avail_out);
    if (static_cast<int64_t>(out.size()) > max_bytes) {
      return OverReadingBudget(display_path, static_cast<int64_t>(consumed), max_bytes);
    }

    if (rc == Z_STREAM_END) {
      const std::string_view rest = compressed.substr(consumed);
      const AfterMember after = ClassifyRest(rest);
      if (after == AfterMember::kEnd) break;
      if (after == AfterMember::kGarbage) {
        // The rule for text after a whole JSON document holds after whole gzip data too: what
        // was read is kept, and the rest is reported (trailing_content), not the file refused.
        result.trailing_at_compressed_byte = static_cast<int64_t>(consumed);
        break;
      }
      if (inflateReset(stream) != Z_OK) {
        return absl::InternalError(
            absl::StrCat(std::string(display_path), ": cannot restart zlib"));
      }
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR) {
      if (stream->avail_out == 0) continue;  // needs room; the loop adds a chunk
      if (consumed == compressed.size()) {
        result.truncated = true;
        result.truncated_at_compressed_byte = static_cast<int64_t>(consumed);
        break;
      }
      return absl::InternalError(
          absl::StrCat(std::string(display_path), ": byte ", consumed, ": zlib made no progress"));
    }
    if (rc == Z_DATA_ERROR) {
      return BadGzip(display_path, consumed,
                     stream->msg != nullptr ? stream->msg : "invalid compressed data");
    }
    if (rc == Z_NEED_DICT) {
      return BadGzip(display_path, consumed, "needs a preset dictionary");
    }
    if (rc == Z_MEM_ERROR) return OutOfMemory(display_path, out.size());
    return absl::InternalError(
        absl::StrCat(std::string(display_path), ": byte ", consumed, ": zlib error ", rc));
  }

  const size_t total = out.size();
  result.text = out.Finish();
  if (result.text.data() == nullptr) return OutOfMemory(display_path, total);
  return result;
}

std::string InflateGzipHead(std::string_view compressed, size_t max_bytes) {
  std::string text(max_bytes, '\0');
  InflateStream inflater;
  if (inflater.Init() != Z_OK) return {};
  z_stream* stream = inflater.get();
  stream->next_in = reinterpret_cast<const Bytef*>(compressed.data());
  stream->avail_in = static_cast<uInt>(std::min<size_t>(compressed.size(), UINT_MAX));
  stream->next_out = reinterpret_cast<Bytef*>(text.data());
  stream->avail_out = static_cast<uInt>(std::min<size_t>(max_bytes, UINT_MAX));
  // One member's start is all a head needs; Z_STREAM_END, damage or the input's end stop it.
  while (stream->avail_out > 0 && inflate(stream, Z_NO_FLUSH) == Z_OK) {
  }
  text.resize(text.size() - stream->avail_out);
  return text;
}

}  // namespace bubblescope
