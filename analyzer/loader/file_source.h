// Reads one file into memory (a trace, a report, a gate config), inflating it when it is
// gzip-compressed, within a reading budget.
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
  // Bytes after the gzip data's last member that are not gzip (InflatedText); -1: none.
  int64_t trailing_at_compressed_byte = -1;
};

// The automatic reading budget per file for `workers` files read at once: the memory this
// process may use (the least of physical memory, its address-space and data limits and its
// cgroup's limit) divided by 3 per worker, since reading a file takes its text plus the
// parser's index and the timeline built from it. At least 64 MiB.
int64_t ReadingBudgetBytes(int workers);

// Reads the file at `path` whole, inflating gzip data, keeping at most `max_bytes` of text.
// Errors: "<path>: <strerror>" when the file cannot be read (missing, a directory, no
// permission), "<path>: byte <N>: bad gzip data: <zlib message>" for corrupt gzip data, and a
// ResourceExhausted "<path>: byte <N>: more than <M> MiB of text, the reading budget per
// file" when the text (a stream such as /dev/zero, a gzip bomb, a huge file) would exceed it, and
// OutOfMemoryReading (common/out_of_memory.h) when memory runs out first. The one way bubblescope
// reads a file: traces, reports given to diff / gate / whatif and gate configs all pass a budget;
// only tests and tools read without one.
absl::StatusOr<FileContents> ReadFileSource(
    const std::string& path, int64_t max_bytes = std::numeric_limits<int64_t>::max());

}  // namespace bubblescope
