// Reads one trace file into memory, inflating it when it is gzip-compressed.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "simdjson.h"

namespace bubblescope {

// The bytes of one file, decompressed, padded for simdjson.
struct FileContents {
  simdjson::padded_string text;
  bool gzip = false;  // the file held gzip data (told by its magic bytes, not by its name)
  // A gzip stream cut short keeps everything decoded up to the cut; these say where the
  // compressed data stopped. The text is otherwise returned as if it were complete.
  bool truncated = false;
  int64_t truncated_at_compressed_byte = -1;
};

// Reads the file at `path` whole, inflating gzip data, keeping at most `max_bytes` of text.
// Errors: "<path>: <strerror>" when the file cannot be read (missing, a directory, no
// permission), "<path>: byte <N>: bad gzip data: <zlib message>" for corrupt gzip data, and a
// ResourceExhausted "<path>: byte <N>: more than <M> MiB of trace text, the reading budget per
// file" when the text (a stream such as /dev/zero, a gzip bomb, a huge file) would exceed it.
// The loader always passes its budget; other callers (tests, tools) read without one.
absl::StatusOr<FileContents> ReadFileSource(
    const std::string& path, int64_t max_bytes = std::numeric_limits<int64_t>::max());

// The error ReadFileSource returns for a file over its budget, found at byte `offset`.
absl::Status OverReadingBudget(std::string_view path, int64_t offset, int64_t max_bytes);

}  // namespace bubblescope
