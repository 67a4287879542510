// Keeps one `bubblescope record` run's files apart from another's. Each record run stamps its
// traces with a run id (in the file names and in the collector's process metadata); a directory
// used twice holds two runs, and pairing one run's rank 0 with another's rank 1 would measure a
// pipeline that never existed. So several runs among the inputs are an error unless the user
// picks one or asks for them to be analyzed together (docs/analyze.md, "Several record runs").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace bubblescope {

struct RecordRunChoice {
  // The run to analyze: its id, or a prefix of it that no other run's id shares. Empty: the
  // inputs must hold one run only (or files without a run id only).
  std::string run_id;
  // Analyze every run's files together (run_id must then be empty).
  bool mix = false;
};

// Files of one run (an empty id: files that carry none, not written by `bubblescope record`).
struct RecordRun {
  std::string id;
  size_t files = 0;
};

// The runs among `run_ids` (one per file, "" for none), newest first: record's generated ids
// begin with the UTC time, so they sort by time, and files without an id come last.
std::vector<RecordRun> RecordRunsOf(const std::vector<std::string_view>& run_ids);

// Which files to keep, one flag per file of `run_ids`. Errors (one line, InvalidArgument):
// several runs and no choice; a chosen id that matches no run, or a prefix of several.
absl::StatusOr<std::vector<bool>> ChooseRecordRun(const std::vector<std::string_view>& run_ids,
                                                  const RecordRunChoice& choice);

}  // namespace bubblescope
