// Reads one PyTorch profiler / Kineto Chrome-trace JSON document into a Rank.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "bubblescope/trace.h"
#include "readers/trace_reader.h"
#include "simdjson.h"

namespace bubblescope {

// The format's name (TraceReader::format_name, Rank::source_format).
inline constexpr std::string_view kKinetoFormatName = "kineto";

// Owns one simdjson On-Demand parser, reused across every file this reader reads (one reader per
// worker thread).
class KinetoReader {
 public:
  KinetoReader();
  ~KinetoReader();
  KinetoReader(const KinetoReader&) = delete;
  KinetoReader& operator=(const KinetoReader&) = delete;

  // Parses `json` (the whole decompressed file, with simdjson padding) into `rank`. `display_path`
  // names the file in messages. Damaged events are skipped and counted in rank->stats; a cut-short
  // document is read up to the cut and flagged (ImportCounter::kTruncated). Returns an error
  // "<display_path>: byte <N>: <what>" only when the file is not a readable trace at all.
  // A well-formed JSON object with no traceEvents key at all is absl::NotFoundError (other JSON,
  // not a trace); every other whole-file error is absl::InvalidArgumentError.
  // rank->rank is set from distributedInfo when present, otherwise left at -1. A merged trace
  // (readers/merged_trace.h) of more than one rank is an error here: ReadRanks reads those.
  absl::Status Read(std::string_view display_path, simdjson::padded_string_view json, Rank* rank);

  // Read, for a file that may be a merged trace: `*ranks` gets one rank per rank the file holds
  // (one for a per-rank trace), each on its own clock with the rank id the merged trace gives
  // it; `*merged` tells whether it was one. The file's own damage (a cut, trailing content) is
  // counted on every rank it holds. On error, `*ranks` holds what was read, at least one rank.
  // `part_of_growing_file`: ReaderOptions' (trace_reader.h).
  absl::Status ReadRanks(std::string_view display_path, simdjson::padded_string_view json,
                         std::vector<Rank>* ranks, bool* merged, bool part_of_growing_file = false);

  // Sizes the parser's index for documents of up to `bytes` now (untouched memory costs only
  // address space), so that files of several sizes are all indexed in the same pages instead of
  // each larger one replacing them. Failing to is no error: a read then sizes it itself.
  void ReserveFor(size_t bytes);

 private:
  simdjson::ondemand::parser parser_;
};

// KinetoReader as the loader's reader of the format (readers/trace_reader.h). Claims a file whose
// text opens a JSON object or array (UTF-16 too, so that its reader can say what it is), else one
// named *.json or *.json.gz: damaged JSON is still this reader's to describe.
class KinetoTraceReader final : public TraceReader {
 public:
  std::string_view format_name() const override { return kKinetoFormatName; }
  bool Sniff(std::string_view head, std::string_view path) const override;
  bool ReadsText() const override { return true; }
  absl::StatusOr<FileRanks> Read(const std::string& path, const ReaderOptions& options) override;
  void ReserveFor(size_t bytes) override { reader_.ReserveFor(bytes); }

 private:
  KinetoReader reader_;
};

}  // namespace bubblescope
