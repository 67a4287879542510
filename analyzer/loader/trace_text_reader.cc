#include "loader/trace_text_reader.h"

#include <algorithm>
#include <new>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/out_of_memory.h"
#include "common/status_macros.h"
#include "loader/trace_readers.h"

namespace bubblescope {

TraceTextReader::TraceTextReader() : readers_(MakeTraceReaders()) {}

TraceTextReader::~TraceTextReader() = default;

absl::StatusOr<FileRanks> TraceTextReader::Read(const std::string& path,
                                                simdjson::padded_string_view text,
                                                int64_t max_bytes) {
  const std::string_view head(text.data(), std::min(text.size(), kSniffBytes));
  BUBBLESCOPE_ASSIGN_OR_RETURN(TraceReader * reader, ReaderOf(readers_, head, path));
  if (!reader->ReadsText()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": a ", std::string(reader->format_name()),
                                                   " file is read whole, not as text"));
  }
  ReaderOptions options;
  options.max_bytes = max_bytes;
  options.text = text;
  options.part_of_growing_file = true;
  absl::StatusOr<FileRanks> file;
  try {
    file = reader->Read(path, options);
  } catch (const std::bad_alloc&) {
    file = OutOfMemoryReading(path, max_bytes);
  }
  BUBBLESCOPE_RETURN_IF_ERROR(file.status());
  for (Rank& rank : file->ranks) {
    rank.source_path = path;
    rank.source_format = std::string(reader->format_name());
  }
  return file;
}

}  // namespace bubblescope
