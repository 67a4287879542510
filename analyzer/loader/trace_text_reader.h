// A file's text read as the loader reads the file (loader/trace_loader.h): the reader that claims
// it by its first bytes, its source path and format set on its ranks. `watch` reads the complete
// part of a file that a running job is still writing this way (watch/array_tail.h): the text is
// that part, closed, under the file's name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "readers/trace_reader.h"
#include "simdjson.h"

namespace bubblescope {

// Keeps one of each reader (and so one parser's index) from text to text; not thread-safe.
class TraceTextReader {
 public:
  TraceTextReader();
  ~TraceTextReader();

  // The ranks `text` holds, read as the file `path` (the name only names it in errors and on
  // the ranks), as a part of a file still being written (ReaderOptions::part_of_growing_file).
  // Errors are the reader's one-line errors; a format its reader opens itself (an Nsight SQLite
  // export) is one too, and running out of memory is the loader's error for it.
  absl::StatusOr<FileRanks> Read(const std::string& path, simdjson::padded_string_view text,
                                 int64_t max_bytes);

 private:
  std::vector<std::unique_ptr<TraceReader>> readers_;
};

}  // namespace bubblescope
