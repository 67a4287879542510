// Reads one file into memory (a trace, a report, a gate config), inflating it when it is
// gzip-compressed, within a reading budget.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "simdjson.h"

namespace bubblescope {

// Memory that one worker reads file after file into. It keeps the pages of the largest file it
// has held, so that a later file is read into memory the process already has: fresh memory costs
// the kernel one page fault per 4 KiB, which was a third of the time of reading a trace
// (docs/benchmarks.md, "Where the time goes").
class ReadBuffer {
 public:
  // Room for `size` bytes and simdjson's padding after them: the buffer's bytes, or nullptr when
  // that memory could not be had (the buffer is then empty). A buffer that must grow takes an
  // eighth more than asked, so that files of about one size are all read into the same pages.
  char* Reserve(size_t size);
  size_t capacity() const { return capacity_; }

 private:
  std::unique_ptr<char[]> bytes_;
  size_t capacity_ = 0;  // bytes usable before the padding
};

// The bytes of one file, decompressed, padded for simdjson.
struct FileContents {
  // Where the text is: in `owned`, or in the ReadBuffer it was read into (valid until the next
  // read into that buffer).
  simdjson::padded_string_view text;
  simdjson::padded_string owned;
  bool gzip = false;  // the file held gzip data (told by its magic bytes, not by its name)
  // A gzip stream cut short keeps everything decoded up to the cut; these say where the
  // compressed data stopped. The text is otherwise returned as if it were complete.
  bool truncated = false;
  int64_t truncated_at_compressed_byte = -1;
  // Bytes after the gzip data's last member that are not gzip (InflatedText); -1: none.
  int64_t trailing_at_compressed_byte = -1;
};

// The automatic reading budget per file for `workers` files read at once: what this process
// may hold divided by 3 per worker (physical memory, its cgroup's limit: reading a file peaks
// at about 2.6x its text resident), or, where less, its address-space and data limits less
// 32 MiB for the process itself divided by 9 per worker (reading reserves 8-9x the text of
// address space). At least 1 MiB.
int64_t ReadingBudgetBytes(int workers);

// Reads the file at `path` whole, inflating gzip data, keeping at most `max_bytes` of text.
// Errors: "<path>: <strerror>" when the file cannot be read (missing, a directory, no
// permission), "<path>: byte <N>: bad gzip data: <zlib message>" for corrupt gzip data, and a
// ResourceExhausted "<path>: byte <N>: more than <M> MiB of text, the reading budget per
// file" when the text (a stream such as /dev/zero, a gzip bomb, a huge file) would exceed it, and
// OutOfMemoryReading (common/out_of_memory.h) when memory runs out first. The one way bubblescope
// reads a file: traces, reports given to diff / gate / whatif and gate configs all pass a budget;
// only tests and tools read without one. With a `buffer`, a file that is not gzip is read into
// it instead of memory of its own.
absl::StatusOr<FileContents> ReadFileSource(const std::string& path,
                                            int64_t max_bytes = std::numeric_limits<int64_t>::max(),
                                            ReadBuffer* buffer = nullptr);

// The first bytes of a file, for telling its format (readers/trace_reader.h).
struct FileHead {
  std::string bytes;  // up to the size asked of the file's text, gzip inflated
  // False for a pipe or other stream, of which nothing was read (what is read of a stream is
  // gone): read it whole with ReadFileSource and take its head from that text.
  bool regular = true;
};

// Up to `size` bytes of the text of the file at `path` (inflated where the file is gzip). Errors
// as ReadFileSource's for a file that cannot be opened or is a directory.
absl::StatusOr<FileHead> ReadFileHead(const std::string& path, size_t size);

}  // namespace bubblescope
