// Turns paths (files or directories of per-rank traces) into one Trace: expands directories,
// reads the files in parallel, assigns rank ids and rejects two files claiming the same rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "loader/file_source.h"  // ReadingBudgetBytes
#include "loader/record_runs.h"

namespace bubblescope {

struct RankOverride {
  std::string path;  // as given on the command line, or just the file name
  int32_t rank = -1;
};

// How far a load has come, told after each file is read (LoadOptions::progress).
struct LoadProgress {
  size_t files_done = 0;
  size_t files_total = 0;  // every file the paths name or their directories hold
  int64_t bytes_done = 0;  // on disk (compressed, for a gzip file) of the files done
  int64_t bytes_total = 0;  // of every file; one whose size is unknown (a pipe) counts 0
};

struct LoadOptions {
  int jobs = 0;  // worker threads reading files; 0 = number of cores
  // Called once for every file read, in the order they finish, from the thread that read it and
  // never two calls at once; files_done counts up by one each time. No call for files left
  // unread after a failure. The CLI's progress line; empty: nobody is told.
  std::function<void(const LoadProgress&)> progress;
  std::vector<RankOverride> rank_overrides;
  // The reading budget: the most trace text (after gzip) one file may hold. 0: the automatic
  // budget, ReadingBudgetBytes(workers). A file over it, or one whose reading still runs out of
  // memory, is a one-line error naming it (docs/input-errors.md, "Memory").
  int64_t max_file_bytes = 0;
  // Which `bubblescope record` run to read when the inputs hold several (loader/record_runs.h).
  // Files of the other runs are left out with a note in Trace.skipped_files.
  RecordRunChoice record_run;
};

// Errors are one line: "<file>: byte <N>: <what is wrong>" (or "<file>: <what>" when no offset
// applies, e.g. a missing file or a duplicate rank, which names both files; or, for inputs from
// several record runs, the runs and how to choose).
absl::StatusOr<Trace> LoadTrace(const std::vector<std::string>& paths, const LoadOptions& options);

}  // namespace bubblescope
