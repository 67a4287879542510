// Renders a compare::DiffResult (`bubblescope diff A B`, docs/diff-and-gate.md) as text and as
// JSON (schema "bubblescope.diff/1"). Shape changes come first in each pipeline's block.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "compare/diff.h"

namespace bubblescope {

inline constexpr std::string_view kDiffSchema = "bubblescope.diff/1";

// Per pipeline: how it was paired, shape changes, the pipeline figures (A, B, delta, and whether
// the delta lies within the iteration-to-iteration spread), then per stage, links and the
// findings that appeared or disappeared.
std::string DiffText(const compare::DiffResult& diff);

// The same as one JSON document. Fails only on writer misuse (a bug).
absl::StatusOr<std::string> DiffJson(const compare::DiffResult& diff,
                                     const std::string& tool_version);

}  // namespace bubblescope
