// Turns paths (files or directories of per-rank traces) into one Trace: expands directories,
// reads the files in parallel, assigns rank ids and rejects two files claiming the same rank.
#pragma once

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

struct LoadOptions {
  int jobs = 0;  // worker threads reading files; 0 = number of cores
  std::vector<RankOverride> rank_overrides;
  // The reading budget: the most trace text (after gzip) one file may hold. 0: the automatic
  // budget, ReadingBudgetBytes(workers). A file over it, or one whose reading still runs out of
  // memory, is a one-line error naming it (docs/input-errors.md, "Memory").
  int64_t max_file_bytes = 0;
  // Which `bubblescope record` run to read when the inputs hold several (loader/record_runs.h).
  // Files of the other runs are left out with a note in Trace.skipped_files.
  RecordRunChoice record_run;
  // Called on every rank as soon as its file is read, on the worker thread that read it, before
  // rank ids are assigned: `bubblescope digest` reduces each rank there (index/digest_reduction.h),
  // so only the reduced ranks, not the whole job, are held at once. Must be safe to call from
  // several threads.
  std::function<void(Rank&)> on_rank_read;
};

// Errors are one line: "<file>: byte <N>: <what is wrong>" (or "<file>: <what>" when no offset
// applies, e.g. a missing file or a duplicate rank, which names both files; or, for inputs from
// several record runs, the runs and how to choose).
absl::StatusOr<Trace> LoadTrace(const std::vector<std::string>& paths, const LoadOptions& options);

}  // namespace bubblescope
