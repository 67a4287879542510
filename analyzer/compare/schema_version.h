// The version of analyze's JSON report (docs/json-report.md, "Versions"): how a schema string is
// read, which major version this bubblescope reads, and how a report file is told from a trace.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

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

}  // namespace bubblescope::compare
