// Recovery plan for a trace whose writer died mid-file. One string- and escape-aware pass with a
// bracket stack finds the end of the last complete event of the events array (or of the last
// complete top-level member), so the reader can parse that prefix closed by the brackets it still
// needs. Used only after simdjson reported that the document ends early.
#pragma once

#include <cstddef>
#include <string_view>

namespace bubblescope::kineto {

struct RepairPlan {
  // The document ends inside a string, a number or with containers still open.
  bool ends_early = false;
  // It ends early and a cut point was found.
  bool repairable = false;
  // Bare array form whose only problem is the missing final ']' (after optional commas and
  // whitespace): legal Chrome-trace format rather than damage.
  bool only_missing_close = false;
  size_t keep_bytes = 0;       // length of the prefix to keep
  std::string_view closers;    // brackets appended after the prefix, e.g. "]}" (static)
  size_t complete_events = 0;  // elements of the events array inside the kept prefix
  size_t damage_offset = 0;    // first byte of the lost tail (not whitespace or a comma)
};

// Plans the repair of `json`, the document without simdjson padding. The events array is the
// top-level array, or the value of the top-level "traceEvents" key.
RepairPlan PlanRepair(std::string_view json);

// The byte just past the first top-level object or array of `json` (after any leading JSON
// white space): its matching closing bracket, strings and escapes respected. npos when the text
// closes none (cut short, or a bracket that closes nothing). What follows it is no part of the
// document: another document, or stray text (docs/input-errors.md, `trailing_content`).
size_t FirstDocumentEnd(std::string_view json);

}  // namespace bubblescope::kineto
