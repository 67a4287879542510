// Reads analyze's own JSON report (schema `bubblescope.analyze/MAJOR[.MINOR]`,
// docs/json-report.md) into the figures a comparison needs, member by member through the rows
// of compare/report_schema.h (a trace analysed on the fly is read from its result through the
// same rows: report/pipeline_report.h, AnalyzeFigures).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "compare/run_figures.h"
#include "compare/schema_version.h"
#include "simdjson.h"

namespace bubblescope::compare {

// Reads `json` (the whole report) into RunFigures with `source` as its name. Errors are
// InvalidArgumentError "<source>: byte <N>: <what>": not JSON, a member of the wrong type, no
// "schema" or "pipelines", or an unreadable schema version (a major other than
// kReadableAnalyzeMajor says which was found and which is read). Never throws.
// A number outside the range of what it measures (a fraction outside 0..1, a negative time, a
// memory figure above 2^53 bytes, NaN) is refused the same way, and memory running out is
// OutOfMemoryReading (common/out_of_memory.h).
absl::StatusOr<RunFigures> ReadAnalyzeReport(std::string_view source, std::string_view json);
// The same on text already padded for simdjson (a file as ReadFileSource returns it): no copy.
absl::StatusOr<RunFigures> ReadPaddedAnalyzeReport(std::string_view source,
                                                   simdjson::padded_string_view json);

}  // namespace bubblescope::compare
