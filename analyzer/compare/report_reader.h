// Reads analyze's own JSON report (schema `bubblescope.analyze/MAJOR[.MINOR]`,
// docs/json-report.md) into the figures a comparison needs. The one way a compare::RunFigures is
// filled: the CLI renders a trace it analyses on the fly into the same JSON and reads it here.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "compare/run_figures.h"
#include "compare/schema_version.h"

namespace bubblescope::compare {

// Reads `json` (the whole report) into RunFigures with `source` as its name. Errors are
// InvalidArgumentError "<source>: byte <N>: <what>": not JSON, a member of the wrong type, no
// "schema" or "pipelines", or an unreadable schema version (a major other than
// kReadableAnalyzeMajor says which was found and which is read). Never throws.
absl::StatusOr<RunFigures> ReadAnalyzeReport(std::string_view source, std::string_view json);

}  // namespace bubblescope::compare
