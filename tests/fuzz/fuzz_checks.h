// The contracts the fuzz targets check, written once (docs/fuzzing.md lists which target checks
// what). A breach prints one line and aborts, so libFuzzer keeps the input as a crash and a
// replay test fails.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "job/job.h"
#include "readers/kineto_reader.h"

namespace bubblescope::fuzz {

// Prints "fuzz contract broken: <what>" and aborts.
[[noreturn]] void Fail(std::string_view what);

// Fails unless `status` is OK; `what` says what had to succeed.
void RequireOk(const absl::Status& status, std::string_view what);

// A whole-file error reads "<file>: byte <N>: <what>" (docs/input-errors.md).
void CheckFileError(const absl::Status& status, std::string_view file);

// `json` (a document bubblescope wrote) parses, and every number in it reads back as a double
// the way bubblescope's own readers read figures (simdjson On-Demand's get_double): what the
// project writes, the project reads.
void CheckNumbersReadBack(std::string_view json, std::string_view what);

// What every reader promises of a Rank (bubblescope/trace.h): every time within ±kMaxTimeNs;
// intervals sorted by start, longer first, none ending before it starts; annotations, steps and
// memory samples sorted by time; every name, comm and process-group index in range.
void CheckRank(const Rank& rank);

// One file's bytes as the loader reads them: inflated when they are gzip data (told by the magic
// bytes), at most `max_text_bytes` of text, then read by `reader` and checked (CheckFileError on
// an error, CheckRank on success). The error is the file's, for the caller to give up on.
absl::StatusOr<Rank> ReadRank(KinetoReader& reader, std::string_view file, std::string_view bytes,
                              int64_t max_text_bytes);

// job::Analyze with `options`, then both reports. Its only error is job::Analyze's
// InvalidArgument (returned; any other error fails); the text report is never empty and the JSON
// report is always written and is JSON.
absl::Status AnalyzeAndReport(const Trace& trace, const job::Options& options);

}  // namespace bubblescope::fuzz
