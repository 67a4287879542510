// The seam between the loader and the input formats: one TraceReader per format. The loader
// (loader/trace_readers.h holds the list) reads a file's first bytes, gives each reader in turn
// the chance to claim the file by them, and hands the file to the first that does; every reader
// fills the same model (include/bubblescope/trace.h) and finishes its ranks the same way
// (bubblescope/rank_finish.h). Adding a format is a reader here and one line in that list.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "simdjson.h"

namespace bubblescope {

// How many of a file's first bytes Sniff sees (fewer when the file is shorter).
inline constexpr size_t kSniffBytes = 4096;

struct ReaderOptions {
  // The reading budget: the most bytes of this file (text after gzip, or the database's pages) a
  // reader may hold; past it, a ResourceExhausted one-line error naming the file.
  int64_t max_bytes = std::numeric_limits<int64_t>::max();
  // The whole file, gzip inflated, padded for simdjson, as the loader read it: set for readers
  // whose ReadsText() is true, empty for the others (which open `path` themselves).
  simdjson::padded_string_view text;
  // The text is the complete part of a file still being written (`watch`, watch/array_tail.h):
  // a profiler step with nothing recorded in it yet is kept, since its events may be in the next
  // part (a finished file drops such a step, bubblescope/rank_finish.h). Only text readers read
  // such parts.
  bool part_of_growing_file = false;
};

// What one file held.
struct FileRanks {
  std::vector<Rank> ranks;  // most formats: one
  // The file names each of its ranks itself (a merged trace, readers/merged_trace.h): a --rank
  // override of the file is then an error, and the ids are taken as they are.
  bool named_by_file = false;
  // The file is bubblescope's own merged trace, the `bubblescope_merged` document that
  // `analyze --perfetto` writes: in a folder beside the per-rank files it was made of, the loader
  // passes it over rather than read its ranks twice.
  bool bubblescope_merged = false;
  // What a file of this format could have named its rank with, for the loader's error when it
  // names none; empty: Kineto's distributedInfo.rank.
  std::string rank_carriers;
};

// One input format. Stateless apart from buffers it reuses from file to file (a parser's
// index); the loader keeps one of each reader per worker thread, so Read is never called on one
// reader from two threads at once.
class TraceReader {
 public:
  virtual ~TraceReader() = default;

  // The format's name in messages and reports: "kineto", "digest", "nsys-sqlite".
  virtual std::string_view format_name() const = 0;

  // Whether the file is this reader's: `head` is its first kSniffBytes bytes (after gzip
  // inflation where the file is gzip), `path` its name. Content first, name second: the loader
  // asks every reader with an empty `path` (content alone) before it asks any with the name, so
  // a name claims only what no reader's content tells (damaged JSON named *.json is Kineto's).
  virtual bool Sniff(std::string_view head, std::string_view path) const = 0;

  // True when Read wants the whole file in memory (ReaderOptions::text); false when it opens
  // `path` itself (SQLite must).
  virtual bool ReadsText() const = 0;

  // Reads one file into its ranks. Errors are one line naming the path (and the byte offset
  // where there is one): "<path>: byte <N>: <what>". absl::NotFoundError means "a well-formed
  // file of no trace at all" (JSON without traceEvents): passed over when the file was found by
  // listing a directory. A file that fails gives no ranks: the loader reports its error and
  // nothing of what was read before it.
  virtual absl::StatusOr<FileRanks> Read(const std::string& path, const ReaderOptions& options) = 0;

  // Sizes buffers the reader reuses for files of up to `bytes`, so that files of several sizes
  // are all read in the same pages. Failing to is no error.
  virtual void ReserveFor(size_t /*bytes*/) {}
};

}  // namespace bubblescope
