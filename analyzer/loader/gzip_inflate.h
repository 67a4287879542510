// Inflates gzip data in memory into a simdjson-padded buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "simdjson.h"

namespace bubblescope {

struct InflatedText {
  simdjson::padded_string text;
  // A stream that ends early keeps everything decoded up to the cut, and says where the
  // compressed data stopped (always the end of the input).
  bool truncated = false;
  int64_t truncated_at_compressed_byte = -1;
  // Bytes after the last whole member that are neither zero padding nor another member: where
  // they start (compressed offset); -1 when there are none. Like content after a JSON document,
  // they are not read, and the loader counts them (ImportCounter::kTrailingContent).
  int64_t trailing_at_compressed_byte = -1;
};

// The error for a file over its reading budget of `max_bytes` of text (after gzip), found at
// byte `offset`: "<path>: byte <N>: more than <M> MiB of text, the reading budget per file".
absl::Status OverReadingBudget(std::string_view path, int64_t offset, int64_t max_bytes);

// True if `data` begins with the gzip magic bytes 1f 8b.
bool LooksLikeGzip(std::string_view data);

// Inflates `compressed`: one or more concatenated gzip members; zero bytes after the last member
// are ignored (tar-style padding), other bytes end the text there (trailing_at_compressed_byte).
// `display_path` names the file in errors, which read
// "<display_path>: byte <N>: bad gzip data: <zlib message>" with N the compressed offset where
// decoding failed. A stream cut short is not an error (see InflatedText::truncated). More than
// `max_bytes` of text is a ResourceExhausted error at the compressed byte where the budget ran
// out (a gzip bomb stops there instead of filling memory).
absl::StatusOr<InflatedText> InflateGzip(std::string_view display_path, std::string_view compressed,
                                         int64_t max_bytes = std::numeric_limits<int64_t>::max());

// The first text of gzip data, at most `max_bytes` of it: as much as `compressed` (the start of
// the data, any length) yields before it ends or turns out damaged. Never an error: what it
// tells is only a file's first bytes, and the whole read reports any damage.
std::string InflateGzipHead(std::string_view compressed, size_t max_bytes);

}  // namespace bubblescope
