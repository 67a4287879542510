// Turns paths (files or directories of per-rank traces) into one Trace: expands directories,
// reads the files in parallel, assigns rank ids and rejects two files claiming the same rank.
// LoadTrace is three public steps, so that `analyze --mpi` can run the reading on many processes
// and the rest on one: ListTraceFiles, ReadTraceFiles (any subset of the list, on any process)
// and AssembleTrace (every file's outcome, in list order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "loader/file_source.h"  // ReadingBudgetBytes
#include "loader/profiler_cycles.h"
#include "loader/record_runs.h"
#include "loader/trace_paths.h"

namespace bubblescope {

struct RankOverride {
  std::string path;  // as given on the command line, or just the file name
  int32_t rank = -1;
};

// How far a load has come, told after each file is read (LoadOptions::progress).
struct LoadProgress {
  size_t files_done = 0;
  size_t files_total = 0;   // every file the paths name or their directories hold
  int64_t bytes_done = 0;   // on disk (compressed, for a gzip file) of the files done
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
  // Which profiler cycle to read when the files hold several (loader/profiler_cycles.h), by its
  // number; 0: the newest complete one. Files of the other cycles are left out with a note.
  int32_t profiler_cycle = 0;
};

// Errors are one line: "<file>: byte <N>: <what is wrong>" (or "<file>: <what>" when no offset
// applies, e.g. a missing file or a duplicate rank, which names both files; or, for inputs from
// several record runs, the runs and how to choose).
absl::StatusOr<Trace> LoadTrace(const std::vector<std::string>& paths, const LoadOptions& options);

// The files `paths` name, in the order they are judged in, and the entries passed over.
struct TraceFileList {
  std::vector<TraceFile> files;
  std::vector<SkippedFile> not_regular;  // trace-named entries that are not regular files
  // The trace sets in the subfolders of the directories named, said when the files listed are
  // no traces at all (TraceSetsBelow); empty when there are none.
  std::string trace_sets_below;
};

// Step 1: expands `paths` and checks the options and the --rank overrides against the files
// before anything is read. The same paths give the same list on every process that sees one
// filesystem.
absl::StatusOr<TraceFileList> ListTraceFiles(const std::vector<std::string>& paths,
                                             const LoadOptions& options);

// One file's outcome.
struct FileRead {
  bool read = false;    // false: not read, because a file before it in the list failed
  absl::Status status;  // the file's error; NotFound for JSON without traceEvents
  bool merged = false;  // a merged trace (readers/merged_trace.h), naming its ranks itself
  bool bubblescope_merged = false;  // the one `analyze --perfetto` writes (FileRanks)
  std::string rank_carriers;        // FileRanks::rank_carriers
  std::vector<Rank> ranks;  // the file's ranks with their reported ids (several when merged);
                            // none when the file failed
};

// Called by the worker that read files[index], as soon as it has: `analyze --mpi` encodes the
// ranks as digests there and drops them, so that a process holds one trace per worker at a time.
using FileReadHook = std::function<void(size_t index, FileRead& read)>;

// Step 2: reads `files` (the list or any part of it, in list order) with options.jobs threads,
// one FileRead per file, each passed to `on_read` first when there is one. After a file fails,
// later files may be left unread: only the first failure in list order is ever reported.
std::vector<FileRead> ReadTraceFiles(const std::vector<TraceFile>& files,
                                     const LoadOptions& options,
                                     const FileReadHook& on_read = nullptr);

// Step 3: the Trace of `list` from `reads`, one per file of the list: record runs chosen, a
// merged trace found in a directory beside the ranks it was made of passed over, the profiler
// cycle chosen, rank
// ids assigned (duplicates rejected), files that are not traces noted. The error is the first
// in list order, of a file's own or of its place among the others.
// With `origins`, also where each of the Trace's ranks came from, one per rank in its order.
struct RankOrigin {
  size_t file = 0;  // its file's place in the list
  size_t slot = 0;  // its place among that file's ranks (FileRead::ranks)
};
absl::StatusOr<Trace> AssembleTrace(const TraceFileList& list, std::vector<FileRead> reads,
                                    const LoadOptions& options,
                                    std::vector<RankOrigin>* origins = nullptr);

}  // namespace bubblescope
