#include "loader/trace_loader.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <filesystem>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/out_of_memory.h"
#include "common/parallel_for.h"
#include "common/status_macros.h"
#include "loader/file_source.h"
#include "loader/rank_assigner.h"
#include "loader/trace_paths.h"
#include "loader/trace_readers.h"
#include "readers/trace_reader.h"

namespace bubblescope {
namespace {

constexpr size_t kNoFailure = std::numeric_limits<size_t>::max();

// Every file's outcome, written by whichever worker read it (each slot by exactly one worker).
struct FileResults {
  explicit FileResults(size_t count) : reads(count) {}

  std::vector<FileRead> reads;
  // Lowest index that failed so far.
  std::atomic<size_t> first_failure{kNoFailure};

  void RecordFailure(size_t index) {
    size_t seen = first_failure.load();
    while (index < seen && !first_failure.compare_exchange_weak(seen, index)) {
    }
  }
};

// A gzip stream cut short is one truncation of the file. If the JSON inside was cut too, the
// reader has counted it already (at its decompressed offset); only the detail gains the gzip
// side, so one cut is never counted twice.
void NoteGzipTruncation(const FileContents& contents, Rank* rank) {
  std::string detail = absl::StrCat("gzip data ends early, at compressed byte ",
                                    contents.truncated_at_compressed_byte, " (",
                                    contents.text.size(), " bytes decompressed)");
  if (rank->stats.count(ImportCounter::kTruncated) == 0) {
    rank->stats.Bump(ImportCounter::kTruncated, contents.truncated_at_compressed_byte);
  } else if (!rank->stats.truncation_detail().empty()) {
    absl::StrAppend(&detail, "; ", rank->stats.truncation_detail());
  }
  rank->stats.set_truncation_detail(std::move(detail));
}

// A file the user did not name, found by listing a directory, that is well-formed JSON with no
// traceEvents at all (a truth.json or config.json beside the ranks).
bool IsSkippable(const TraceFile& file, const absl::Status& status) {
  return file.from_directory && absl::IsNotFound(status);
}

// What each worker keeps from file to file: one of each reader (and so one parser's index) and
// one buffer, so that the memory one file was read in serves the next. Both are sized for the
// largest file at once: a buffer that grew from file to file would be fresh memory each time.
struct Worker {
  std::vector<std::unique_ptr<TraceReader>> readers = MakeTraceReaders();
  ReadBuffer buffer;
};

absl::StatusOr<FileRanks> ReadWithReaders(Worker& worker, const std::string& path,
                                          int64_t max_bytes) {
  BUBBLESCOPE_ASSIGN_OR_RETURN(FileHead head, ReadFileHead(path, kSniffBytes));
  // A stream can be read once only: whole, with its head taken from the text.
  std::optional<FileContents> contents;
  if (!head.regular) {
    BUBBLESCOPE_ASSIGN_OR_RETURN(contents, ReadFileSource(path, max_bytes, &worker.buffer));
    head.bytes.assign(contents->text.data(), std::min(contents->text.size(), kSniffBytes));
  }
  BUBBLESCOPE_ASSIGN_OR_RETURN(TraceReader * reader, ReaderOf(worker.readers, head.bytes, path));
  ReaderOptions options;
  options.max_bytes = max_bytes;
  if (reader->ReadsText()) {
    if (!contents.has_value()) {
      BUBBLESCOPE_ASSIGN_OR_RETURN(contents, ReadFileSource(path, max_bytes, &worker.buffer));
    }
    options.text = contents->text;
  }
  BUBBLESCOPE_ASSIGN_OR_RETURN(FileRanks file, reader->Read(path, options));
  for (Rank& rank : file.ranks) {
    if (contents.has_value() && contents->truncated) NoteGzipTruncation(*contents, &rank);
    if (contents.has_value() && contents->trailing_at_compressed_byte >= 0) {
      rank.stats.Bump(ImportCounter::kTrailingContent, contents->trailing_at_compressed_byte);
    }
    rank.source_path = path;
    rank.source_format = std::string(reader->format_name());
  }
  return file;
}

// A file that fails leaves `read` with no ranks: only the first failure is reported, and nothing
// of a file read in part.
absl::Status ReadOneFile(Worker& worker, const std::string& path, int64_t max_bytes,
                         FileRead* read) {
  // Past the budget, memory can still run out (a machine that is short of it, an input whose
  // structure is unusually dense): that is this file's error, not a crash.
  absl::StatusOr<FileRanks> file;
  try {
    file = ReadWithReaders(worker, path, max_bytes);
  } catch (const std::bad_alloc&) {
    file = OutOfMemoryReading(path, max_bytes);
  }
  BUBBLESCOPE_RETURN_IF_ERROR(file.status());
  read->ranks = std::move(file->ranks);
  read->merged = file->named_by_file;
  read->bubblescope_merged = file->bubblescope_merged;
  read->rank_carriers = std::move(file->rank_carriers);
  return absl::OkStatus();
}

// The size of each file on disk; 0 where it is unknown (a pipe).
std::vector<int64_t> FileSizes(const std::vector<TraceFile>& files) {
  std::vector<int64_t> sizes;
  for (const TraceFile& file : files) {
    std::error_code error;
    const std::uintmax_t size = std::filesystem::file_size(file.path, error);
    sizes.push_back(error ? 0 : static_cast<int64_t>(size));
  }
  return sizes;
}

// Tells LoadOptions::progress of each file read, one call at a time.
class ProgressTeller {
 public:
  ProgressTeller(const std::vector<int64_t>& sizes,
                 const std::function<void(const LoadProgress&)>& tell)
      : tell_(tell), sizes_(sizes) {
    progress_.files_total = sizes.size();
    for (int64_t size : sizes) progress_.bytes_total += size;
  }

  void Done(size_t index) {
    if (!tell_) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    progress_.files_done += 1;
    progress_.bytes_done += sizes_[index];
    tell_(progress_);
  }

 private:
  const std::function<void(const LoadProgress&)>& tell_;
  const std::vector<int64_t>& sizes_;
  std::mutex mutex_;
  LoadProgress progress_;
};

// A directory of files that are all JSON without traceEvents: the first one's error; when the
// directory has trace sets in subfolders (a folder of several jobs' sets), the sets first, since
// naming one is what the user meant, and the file beside them after.
absl::Status OnlyOtherJson(const TraceFileList& list, const absl::Status& first) {
  if (list.trace_sets_below.empty()) return first;
  return absl::Status(first.code(), absl::StrCat(list.trace_sets_below,
                                                 "; beside them, no trace: ", first.message()));
}

// Passes over a merged trace that `analyze --perfetto` wrote into the directory of the per-rank
// files it was made of: read with them, each of its ranks would clash with its own file. Named
// on the command line, or alone in its directory, it is read as its ranks.
void PassOverMergedTraces(const std::vector<TraceFile>& files, const std::vector<FileRead>& reads,
                          std::vector<size_t>* readable, std::vector<SkippedFile>* skipped) {
  const bool has_rank_files = std::any_of(readable->begin(), readable->end(),
                                          [&](size_t i) { return !reads[i].bubblescope_merged; });
  if (!has_rank_files) return;
  std::erase_if(*readable, [&](size_t i) {
    if (!files[i].from_directory || !reads[i].bubblescope_merged) return false;
    skipped->push_back({files[i].path,
                        "a merged trace that analyze --perfetto wrote (bubblescope_merged); its "
                        "ranks are the folder's other files",
                        std::nullopt});
    return true;
  });
}

// The profiler cycle to read (loader/profiler_cycles.h), per readable file of the chosen record
// run: whether it is read. The cycles found go into `trace`, with a skipped file for each file of
// another cycle.
absl::StatusOr<std::vector<bool>> ChooseCycle(const std::vector<size_t>& readable,
                                              const std::vector<FileRead>& reads,
                                              const std::vector<bool>& in_run,
                                              const RankAssigner& assigner, int32_t wanted,
                                              Trace* trace) {
  std::vector<CycleFile> cycle_files;
  std::vector<size_t> of_run;  // their place in `readable`
  for (size_t k = 0; k < readable.size(); ++k) {
    if (!in_run[k]) continue;
    const FileRead& read = reads[readable[k]];
    CycleFile file;
    // A file naming several ranks (a merged trace, an Nsight export) is no one rank's cycle.
    file.rank = read.ranks.size() == 1 ? assigner.Claimed(k, read.ranks[0].rank) : -1;
    for (const Rank& rank : read.ranks) {
      for (const ProfilerStep& step : rank.steps) {
        file.first_step = std::min(file.first_step.value_or(step.number), step.number);
        file.last_step = std::max(file.last_step.value_or(step.number), step.number);
      }
    }
    cycle_files.push_back(file);
    of_run.push_back(k);
  }
  BUBBLESCOPE_ASSIGN_OR_RETURN(CycleChoice choice, ChooseProfilerCycle(cycle_files, wanted));
  std::vector<bool> keep(readable.size(), true);
  for (size_t j = 0; j < of_run.size(); ++j) {
    if (choice.keep[j]) continue;
    keep[of_run[j]] = false;
    const FileRead& read = reads[readable[of_run[j]]];
    trace->skipped_files.push_back(
        {read.ranks[0].source_path,
         absl::StrCat("of profiler cycle ", choice.cycle_of[j], ", not the one read (--cycle)"),
         std::nullopt, choice.cycle_of[j]});
  }
  trace->profiler_cycles = std::move(choice.cycles);
  return keep;
}

}  // namespace

absl::StatusOr<TraceFileList> ListTraceFiles(const std::vector<std::string>& paths,
                                             const LoadOptions& options) {
  if (options.jobs < 0) {
    return absl::InvalidArgumentError(absl::StrCat("jobs must be >= 0, not ", options.jobs));
  }
  TraceFileList list;
  BUBBLESCOPE_ASSIGN_OR_RETURN(std::vector<TraceFile> files,
                               ExpandTracePaths(paths, &list.not_regular, &list.trace_sets_below));
  list.files = std::move(files);
  // Overrides must name a file that exists in the list, so they are checked before any reading.
  std::vector<std::string> all_paths;
  for (const TraceFile& file : list.files) all_paths.push_back(file.path);
  if (absl::Status checked = RankAssigner::Create(all_paths, options.rank_overrides).status();
      !checked.ok()) {
    return checked;
  }
  return list;
}

std::vector<FileRead> ReadTraceFiles(const std::vector<TraceFile>& files,
                                     const LoadOptions& options, const FileReadHook& on_read) {
  FileResults results(files.size());
  if (files.empty()) return {};
  {
    const size_t workers = WorkerCount(options.jobs, files.size());
    const int64_t max_bytes = options.max_file_bytes > 0
                                  ? options.max_file_bytes
                                  : ReadingBudgetBytes(static_cast<int>(workers));
    const std::vector<int64_t> sizes = FileSizes(files);
    const int64_t largest = std::min(max_bytes, *std::max_element(sizes.begin(), sizes.end()));
    std::vector<Worker> state(workers);
    for (Worker& worker : state) {
      for (const std::unique_ptr<TraceReader>& reader : worker.readers) {
        reader->ReserveFor(static_cast<size_t>(largest));
      }
      worker.buffer.Reserve(static_cast<size_t>(largest));
    }
    ProgressTeller progress(sizes, options.progress);
    ParallelFor(files.size(), workers, [&](size_t worker, size_t index) {
      // Files after the first failure cannot change the outcome (the first failing file in path
      // order is reported), so they are not read.
      if (index > results.first_failure.load()) return;
      FileRead& read = results.reads[index];
      read.read = true;
      read.status = ReadOneFile(state[worker], files[index].path, max_bytes, &read);
      // Other JSON found in a directory (not a trace at all) is passed over, not a failure.
      if (!read.status.ok() && !IsSkippable(files[index], read.status)) {
        results.RecordFailure(index);
      }
      if (on_read) on_read(index, read);
      progress.Done(index);
    });
  }
  return std::move(results.reads);
}

absl::StatusOr<Trace> LoadTrace(const std::vector<std::string>& paths, const LoadOptions& options) {
  BUBBLESCOPE_ASSIGN_OR_RETURN(TraceFileList list, ListTraceFiles(paths, options));
  std::vector<FileRead> reads = ReadTraceFiles(list.files, options);
  return AssembleTrace(list, std::move(reads), options);
}

namespace {

// The outcome of every file before the first failure: the traces among them, and JSON files
// found in a directory that are no traces (noted as skipped in `trace`).
struct Judged {
  std::vector<size_t> readable;  // files before the first failure that are traces
  size_t first_failure = 0;      // files.size() when none failed
};

absl::StatusOr<Judged> JudgeOutcomes(const std::vector<TraceFile>& files,
                                     const std::vector<FileRead>& reads, Trace* trace) {
  Judged judged;
  judged.first_failure = files.size();
  for (size_t i = 0; i < files.size(); ++i) {
    const absl::Status& status = reads[i].status;
    if (IsSkippable(files[i], status)) {
      trace->skipped_files.push_back({files[i].path, "JSON without traceEvents, not a trace",
                                      std::nullopt, std::nullopt, /*other_json=*/true});
    } else if (!status.ok()) {
      judged.first_failure = i;
      break;
    } else if (!reads[i].read || reads[i].ranks.empty()) {
      // Only files after a failure are left unread, and a read trace has a rank.
      return absl::InternalError(absl::StrCat(files[i].path, ": no outcome for the file"));
    } else {
      judged.readable.push_back(i);
    }
  }
  return judged;
}

// Gives the ranks of the k-th readable file (files[`file`]) their ids and moves them to `kept`,
// with where each came from; the error is a rank clash or an override that does not fit.
absl::Status KeepFileRanks(size_t k, size_t file, FileRead& read, RankAssigner& assigner,
                           std::vector<Rank>* kept, std::vector<RankOrigin>* kept_origins) {
  for (size_t slot = 0; slot < read.ranks.size(); ++slot) {
    Rank& file_rank = read.ranks[slot];
    const int32_t reported = file_rank.rank;
    BUBBLESCOPE_ASSIGN_OR_RETURN(file_rank.rank,
                                 read.merged ? assigner.AssignNamed(k, reported)
                                             : assigner.Assign(k, reported, read.rank_carriers));
    // A reader that records its rank's source (Nsight's) is told where the loader's id came
    // from when the loader decided it.
    if (!file_rank.rank_source.empty() && !read.merged) {
      const std::string_view source = assigner.ClaimSource(k, reported);
      if (source != "file") file_rank.rank_source = std::string(source);
    }
    kept->push_back(std::move(file_rank));
    kept_origins->push_back({file, slot});
  }
  return absl::OkStatus();
}

// The trace's ranks by rank id (unique by now), the origins in the same order.
void PlaceByRankId(std::vector<Rank> kept, const std::vector<RankOrigin>& kept_origins,
                   Trace* trace, std::vector<RankOrigin>* origins) {
  std::vector<size_t> order(kept.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&kept](size_t a, size_t b) { return kept[a].rank < kept[b].rank; });
  trace->ranks.reserve(kept.size());
  for (size_t k : order) {
    trace->ranks.push_back(std::move(kept[k]));
    if (origins != nullptr) origins->push_back(kept_origins[k]);
  }
}

}  // namespace

absl::StatusOr<Trace> AssembleTrace(const TraceFileList& list, std::vector<FileRead> reads,
                                    const LoadOptions& options, std::vector<RankOrigin>* origins) {
  const std::vector<TraceFile>& files = list.files;
  if (reads.size() != files.size()) {
    return absl::InternalError(
        absl::StrCat(reads.size(), " file outcomes for ", files.size(), " files"));
  }
  // Files are judged in path order, so the error reported is the first in that order, whether a
  // read error, a mix of record runs or a rank clash. Files after the first failure were not
  // read: they count as kept, which only matters for the single-file rule, and the failure is
  // returned before that can matter.
  Trace trace;
  BUBBLESCOPE_ASSIGN_OR_RETURN(Judged judged, JudgeOutcomes(files, reads, &trace));
  const size_t first_failure = judged.first_failure;
  std::vector<size_t> readable = std::move(judged.readable);
  if (readable.empty() && first_failure == files.size()) {
    return OnlyOtherJson(list, reads[0].status);
  }
  PassOverMergedTraces(files, reads, &readable, &trace.skipped_files);
  std::vector<std::string_view> run_ids;
  // A merged trace's ranks all come from one run, or were mixed by --mix-runs before merging.
  for (size_t i : readable) run_ids.push_back(reads[i].ranks[0].record_run_id);
  BUBBLESCOPE_ASSIGN_OR_RETURN(std::vector<bool> in_run,
                               ChooseRecordRun(run_ids, options.record_run));
  // The assigner sees every trace file, those of other runs too, so that a --rank override
  // naming one of them is no error; only the chosen run's files are given rank ids.
  std::vector<std::string> trace_paths;
  for (size_t i : readable) trace_paths.push_back(files[i].path);
  for (size_t i = first_failure; i < files.size(); ++i) {
    if (!IsSkippable(files[i], reads[i].status)) trace_paths.push_back(files[i].path);
  }
  BUBBLESCOPE_ASSIGN_OR_RETURN(RankAssigner assigner,
                               RankAssigner::Create(trace_paths, options.rank_overrides));
  BUBBLESCOPE_ASSIGN_OR_RETURN(
      std::vector<bool> in_cycle,
      ChooseCycle(readable, reads, in_run, assigner, options.profiler_cycle, &trace));
  // Whether some file read has its clock base: only beside such a file is one without it left
  // out (with none known, the ranks are read as they are and the counter says so).
  bool some_base_known = false;
  for (size_t k = 0; k < readable.size(); ++k) {
    if (in_run[k] && in_cycle[k] &&
        reads[readable[k]].ranks[0].stats.count(ImportCounter::kUnknownClockBase) == 0) {
      some_base_known = true;
    }
  }
  // The ranks kept and where each came from, in the order the files were listed.
  std::vector<Rank> kept;
  std::vector<RankOrigin> kept_origins;
  for (size_t k = 0; k < readable.size(); ++k) {
    std::vector<Rank>& file_ranks = reads[readable[k]].ranks;
    const Rank& rank = file_ranks[0];
    if (!in_run[k]) {
      trace.skipped_files.push_back({trace_paths[k],
                                     rank.record_run_id.empty()
                                         ? "not from a record run, and --run chose one"
                                         : absl::StrCat("from record run ", rank.record_run_id,
                                                        ", not the one chosen (--run)"),
                                     rank.record_run_id});
      continue;
    }
    if (!in_cycle[k]) continue;  // noted by ChooseCycle
    // A rank whose clock base was cut off (kUnknownClockBase) cannot be placed on the others'
    // clock: put there as if its base were 0, its times lay years from theirs and made an
    // iteration of 1.7e12 ms. Alone, or where no file's base is known, it is read as it is.
    if (some_base_known && rank.stats.count(ImportCounter::kUnknownClockBase) > 0) {
      trace.skipped_files.push_back(
          {trace_paths[k],
           "cut short before its baseTimeNanoseconds (Kineto writes it last): its clock is "
           "unknown, so its times cannot be set beside the other ranks'",
           std::nullopt});
      continue;
    }
    BUBBLESCOPE_RETURN_IF_ERROR(
        KeepFileRanks(k, readable[k], reads[readable[k]], assigner, &kept, &kept_origins));
  }
  if (first_failure < files.size()) return reads[first_failure].status;
  trace.skipped_files.insert(trace.skipped_files.end(), list.not_regular.begin(),
                             list.not_regular.end());
  PlaceByRankId(std::move(kept), kept_origins, &trace, origins);
  return trace;
}

}  // namespace bubblescope
