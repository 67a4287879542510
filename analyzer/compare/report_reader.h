// Reads analyze's own JSON report (schema `bubblescope.analyze/MAJOR[.MINOR]`,
// docs/json-report.md) into the figures a comparison needs. The one way a compare::RunFigures is
// filled: the CLI renders a trace it analyses on the fly into the same JSON and reads it here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "compare/run_figures.h"

namespace bubblescope::compare {

// The major version this bubblescope reads. Reports of any minor version under it are read
// (members it does not know are passed over); another major is an error.
inline constexpr int32_t kReadableAnalyzeMajor = 1;

struct SchemaVersion {
  int32_t major = 0;
  int32_t minor = 0;  // 0 when the schema string has no ".MINOR"
};

// Parses "bubblescope.analyze/1" or "bubblescope.analyze/1.2". InvalidArgumentError for any other
// spelling (another report kind, missing or non-decimal version).
absl::StatusOr<SchemaVersion> ParseAnalyzeSchema(std::string_view schema);

// True when `head` (a file's first bytes) opens a bubblescope JSON report: an object whose first
// member is "schema" with a "bubblescope." value. Trace files never do (Kineto's own key is
// "schemaVersion"), so a side can be told apart without parsing the whole file.
bool LooksLikeBubblescopeReport(std::string_view head);

// Reads `json` (the whole report) into RunFigures with `source` as its name. Errors are
// InvalidArgumentError "<source>: byte <N>: <what>": not JSON, a member of the wrong type, no
// "schema" or "pipelines", or an unreadable schema version (a major other than
// kReadableAnalyzeMajor says which was found and which is read). Never throws.
absl::StatusOr<RunFigures> ReadAnalyzeReport(std::string_view source, std::string_view json);

}  // namespace bubblescope::compare
