// Reads one trace file into memory, inflating it when it is gzip-compressed.
#pragma once

#include <cstdint>
#include <string>

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

// Reads the file at `path` whole, inflating gzip data. Errors: "<path>: <strerror>" when the
// file cannot be read (missing, a directory, no permission), "<path>: byte <N>: bad gzip data:
// <zlib message>" for corrupt gzip data.
absl::StatusOr<FileContents> ReadFileSource(const std::string& path);

}  // namespace bubblescope
