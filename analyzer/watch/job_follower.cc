#include "watch/job_follower.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/iterations.h"
#include "common/status_macros.h"
#include "findings/root_causes.h"
#include "loader/rank_from_name.h"
#include "loader/trace_loader.h"
#include "loader/trace_paths.h"
#include "text/json_space.h"
#include "watch/array_tail.h"
#include "watch/rank_window.h"

namespace bubblescope::watch {

// How a file is read: as a growing JSON array from where the last look stopped, or whole once it
// has stopped changing.
// kUndecided: nothing but white space in it yet (a file just made), told at a later look.
enum class FileMode : uint8_t { kUndecided, kGrowingArray, kWhole, kIgnored };

struct JobFollower::FileState {
  std::string path;
  FileMode mode = FileMode::kWhole;
  bool finished = false;       // closed array, or a whole file read
  std::vector<int32_t> ranks;  // the ranks its events join; none until its first are read
  // Growing array: bytes taken so far, whether the `[` was among them, the metadata events kept.
  int64_t consumed = 0;
  bool opened = false;
  std::vector<std::string> metadata;
  // Whole file: its size and modification time at the last look (read once they hold still).
  int64_t size = -1;
  int64_t mtime_ns = -1;
  int32_t still_looks = 0;  // looks in a row it held still
};

struct JobFollower::RankState {
  Rank held;
  std::vector<FileState*> files;
  bool reported_overflow = false;
};

namespace {

constexpr char kMetadataSeparator[] = ",\n";

// Looks a whole file read as cut short must hold still before it is taken as cut.
constexpr int32_t kLooksBeforeCut = 10;

// How a file is to be read, by its first byte other than white space: a JSON array grows, any
// other file (a Kineto object, gzip, SQLite, a digest) is read whole; undecided while it has none.
FileMode ModeOf(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FileMode::kUndecided;
  char buffer[256];
  const ssize_t got = ::read(fd, buffer, sizeof(buffer));
  ::close(fd);
  for (ssize_t i = 0; i < got; ++i) {
    if (text::IsJsonSpace(buffer[i])) continue;
    return buffer[i] == '[' ? FileMode::kGrowingArray : FileMode::kWhole;
  }
  return FileMode::kUndecided;
}

// The bytes of `path` from `offset`, at most `limit`; an error names the file.
absl::StatusOr<std::string> ReadFrom(const std::string& path, int64_t offset, int64_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    return absl::UnavailableError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  if (static_cast<int64_t>(info.st_size) < offset) {
    ::close(fd);
    return absl::DataLossError(absl::StrCat(path, ": ", info.st_size, " bytes, fewer than the ",
                                            offset, " already read of it (the file was replaced)"));
  }
  const int64_t available = static_cast<int64_t>(info.st_size) - offset;
  std::string bytes(static_cast<size_t>(std::min(available, limit)), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = ::pread(fd, bytes.data() + done, bytes.size() - done,
                                static_cast<off_t>(offset + static_cast<int64_t>(done)));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  ::close(fd);
  bytes.resize(done);
  return bytes;
}

WatchNotice Notice(int64_t now_unix_ns, std::string text) {
  return WatchNotice{.analysed_unix_ns = now_unix_ns, .text = std::move(text)};
}

std::string RankList(const std::vector<int32_t>& ranks) {
  return absl::StrCat("[", absl::StrJoin(ranks, ", "), "]");
}

int32_t SlowestStage(const std::vector<StageIteration>& stages) {
  int32_t slowest = -1;
  TimeNs most = 0;
  for (const StageIteration& stage : stages) {
    const TimeNs work = stage.split.compute + stage.split.in_stage_comm;
    if (work > most) {
      most = work;
      slowest = stage.stage;
    }
  }
  return slowest;
}

IterationReport ReportOf(int32_t pipeline_index, const job::Pipeline& pipeline,
                         const bubble::IterationFigures& iteration, int64_t now_unix_ns) {
  IterationReport report;
  report.pipeline = pipeline_index;
  report.step = iteration.number;
  report.analysed_unix_ns = now_unix_ns;
  report.window_ns = iteration.window();
  report.bubble_fraction = iteration.bubble_fraction;
  if (pipeline.ideal.has_value()) {
    report.ideal_bubble_fraction = pipeline.ideal->fraction;
    report.excess_bubble_fraction = iteration.bubble_fraction - pipeline.ideal->fraction;
  }
  const std::vector<int32_t>& order = pipeline.crossrank.pipeline.stage_order();
  for (const bubble::RankIterationFigures& rank : iteration.ranks) {
    const auto at = std::find(order.begin(), order.end(), rank.rank);
    const int32_t stage = at == order.end() ? -1 : static_cast<int32_t>(at - order.begin());
    report.stages.push_back({.stage = stage, .rank = rank.rank, .split = rank.split});
  }
  std::sort(report.stages.begin(), report.stages.end(),
            [](const StageIteration& a, const StageIteration& b) { return a.stage < b.stage; });
  report.slowest_stage = SlowestStage(report.stages);
  if (!pipeline.causes.causes.empty()) {
    report.top_cause = std::string(root_causes::CauseName(pipeline.causes.causes[0].cause));
  }
  return report;
}

// One clock node's difference to another in a model: clock(b) - clock(a) at `at_ns`, with its
// uncertainty; nullopt where the model has no fit for the pair.
struct Difference {
  double ns = 0;
  TimeNs uncertainty_ns = 0;
};
std::optional<Difference> DifferenceOf(const clock_alignment::JobClocks& clocks, int32_t rank_a,
                                       int32_t rank_b, TimeNs at_ns) {
  const auto a = clocks.node_of.find(rank_a);
  const auto b = clocks.node_of.find(rank_b);
  if (a == clocks.node_of.end() || b == clocks.node_of.end()) return std::nullopt;
  if (a->second == b->second) return Difference{};
  const bool flipped = a->second > b->second;
  const auto fit =
      clocks.fits.find(flipped ? std::pair(b->second, a->second) : std::pair(a->second, b->second));
  if (fit == clocks.fits.end() || fit->second.samples == 0 ||
      fit->second.uncertainty_ns >= clock_alignment::kUnbounded - 1) {
    return std::nullopt;
  }
  const clock_alignment::Line& line = fit->second.line;
  const double ns = static_cast<double>(line.offset_ns) +
                    line.rate * static_cast<double>(at_ns - clocks.anchor_ns);
  return Difference{.ns = flipped ? -ns : ns, .uncertainty_ns = fit->second.uncertainty_ns};
}

}  // namespace

std::optional<ClockDisagreement> CompareClocks(const clock_alignment::JobClocks& reused,
                                               const clock_alignment::JobClocks& own,
                                               TimeNs at_ns) {
  std::optional<ClockDisagreement> worst;
  double worst_excess = 0;
  for (const auto& [pair, fit] : own.fits) {
    // A rank of each node stands for its node.
    int32_t rank_a = -1;
    int32_t rank_b = -1;
    for (const auto& [rank, node] : own.node_of) {
      if (node == pair.first && rank_a < 0) rank_a = rank;
      if (node == pair.second && rank_b < 0) rank_b = rank;
    }
    if (rank_a < 0 || rank_b < 0) continue;
    const std::optional<Difference> now = DifferenceOf(own, rank_a, rank_b, at_ns);
    const std::optional<Difference> before = DifferenceOf(reused, rank_a, rank_b, at_ns);
    if (!now.has_value() || !before.has_value()) continue;
    const double apart = std::fabs(now->ns - before->ns);
    const double allowed = static_cast<double>(
        std::max<TimeNs>({now->uncertainty_ns, before->uncertainty_ns, TimeNs{1000}}));
    if (apart > allowed && apart - allowed > worst_excess) {
      worst_excess = apart - allowed;
      worst = ClockDisagreement{.rank_a = std::min(rank_a, rank_b),
                                .rank_b = std::max(rank_a, rank_b),
                                .by_ns = static_cast<TimeNs>(std::llround(apart))};
    }
  }
  return worst;
}

JobFollower::JobFollower(FollowOptions options) : options_(std::move(options)) {}

JobFollower::~JobFollower() = default;

size_t JobFollower::HeldIntervals() const {
  size_t intervals = 0;
  for (const auto& [id, rank] : ranks_) {
    for (const Timeline& timeline : rank->held.timelines) intervals += timeline.intervals.size();
  }
  return intervals;
}

bool JobFollower::Adopt(FileState& file, std::vector<Rank> ranks, int64_t now_unix_ns,
                        Polled& polled) {
  auto ignore = [&](std::string why) {
    polled.notices.push_back(Notice(now_unix_ns, absl::StrCat(file.path, ": ", why, ": ignored")));
    file.mode = FileMode::kIgnored;
    return false;
  };
  if (ranks.empty()) return ignore("no rank in it");
  if (file.mode == FileMode::kGrowingArray && ranks.size() != 1) {
    return ignore(absl::StrCat("a growing file of ", ranks.size(), " ranks"));
  }
  const std::string& run = ranks[0].record_run_id;
  if (!run.empty()) {
    if (record_run_.empty()) record_run_ = run;
    if (run != record_run_) {
      return ignore(
          absl::StrCat("from record run ", run, ", not the run followed (", record_run_, ")"));
    }
  }
  if (file.ranks.empty()) {
    // The ranks' ids as the loader gives them: what the file says, else (a file of one rank) its
    // name, else the only file's 0.
    std::vector<int32_t> ids;
    for (const Rank& rank : ranks) {
      int32_t id = rank.rank;
      if (id < 0 && ranks.size() == 1) id = RankFromFileName(file.path).value_or(-1);
      if (id < 0 && ranks.size() == 1 && files_.size() == 1) id = 0;
      if (id < 0) return ignore("names no rank (distributedInfo.rank, or rank<N> in its name)");
      ids.push_back(id);
    }
    // A rank is one growing file's, or any number of whole files' (one per profiler cycle).
    for (int32_t id : ids) {
      const auto known = ranks_.find(id);
      if (known == ranks_.end() || known->second->files.empty()) continue;
      const FileState& other = *known->second->files[0];
      if (other.mode == FileMode::kGrowingArray || file.mode == FileMode::kGrowingArray) {
        return ignore(absl::StrCat("rank ", id, " is another file's (", other.path, ")"));
      }
    }
    for (int32_t id : ids) {
      std::unique_ptr<RankState>& state = ranks_[id];
      if (state == nullptr) state = std::make_unique<RankState>();
      state->files.push_back(&file);
    }
    file.ranks = std::move(ids);
  }
  for (size_t r = 0; r < ranks.size() && r < file.ranks.size(); ++r) {
    ranks[r].rank = file.ranks[r];
    AppendRank(ranks_.at(file.ranks[r])->held, std::move(ranks[r]));
  }
  return true;
}

absl::Status JobFollower::ReadGrowing(FileState& file, int64_t now_unix_ns, Polled& polled) {
  const int64_t limit = std::max<int64_t>(options_.read_bytes_per_look, 1 << 16);
  absl::StatusOr<std::string> read_bytes = ReadFrom(file.path, file.consumed, limit);
  if (!read_bytes.ok()) {
    // Gone, unreadable or replaced: what was read of it stays, the rest is not followed.
    polled.notices.push_back(
        Notice(now_unix_ns, absl::StrCat(read_bytes.status().message(), ": no longer followed")));
    file.mode = FileMode::kIgnored;
    file.finished = true;
    return absl::OkStatus();
  }
  const std::string& bytes = *read_bytes;
  const ArrayTailScan scan = ScanArrayTail(bytes, file.opened);
  if (scan.damaged) {
    const std::string what =
        absl::StrCat(file.path, ": byte ", file.consumed + static_cast<int64_t>(scan.damage_at),
                     ": not a JSON array of events from here on");
    polled.notices.push_back(Notice(now_unix_ns, absl::StrCat(what, "; read up to it")));
  }
  if (!scan.damaged && !scan.closed && static_cast<int64_t>(bytes.size()) == limit) {
    polled.more_to_read = true;
  }
  file.opened = scan.opened;
  file.consumed += static_cast<int64_t>(scan.consumed);
  file.finished = scan.closed || scan.damaged;
  std::vector<std::string_view> events;
  for (std::string_view element : scan.elements) {
    if (IsMetadataEvent(element)) {
      file.metadata.emplace_back(element);
    } else {
      events.push_back(element);
    }
  }
  if (events.empty() && (!file.ranks.empty() || file.metadata.empty())) return absl::OkStatus();
  // The part read as a document of its own: the rank's metadata, then the new events.
  std::string text = "[";
  text += absl::StrJoin(file.metadata, kMetadataSeparator);
  for (std::string_view event : events) {
    if (text.size() > 1) text += kMetadataSeparator;
    text += event;
  }
  text += "]\n";
  const simdjson::padded_string padded(text);
  const int64_t budget =
      options_.max_file_bytes > 0 ? options_.max_file_bytes : std::numeric_limits<int64_t>::max();
  absl::StatusOr<FileRanks> read = text_reader_.Read(file.path, padded, budget);
  if (!read.ok()) {
    polled.notices.push_back(
        Notice(now_unix_ns, absl::StrCat(read.status().message(), " (events skipped)")));
    return absl::OkStatus();
  }
  polled.read_something = true;
  Adopt(file, std::move(read->ranks), now_unix_ns, polled);
  return absl::OkStatus();
}

absl::Status JobFollower::ReadWhole(FileState& file, int64_t now_unix_ns, Polled& polled) {
  struct stat info {};
  if (::stat(file.path.c_str(), &info) != 0) return absl::OkStatus();  // gone: nothing to read
  const int64_t size = static_cast<int64_t>(info.st_size);
  const int64_t mtime_ns =
      static_cast<int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
  // A file still being written (torch writes a cycle's file at the cycle's end) is read once it
  // holds still from one look to the next.
  const bool still = size == file.size && mtime_ns == file.mtime_ns;
  file.still_looks = still ? file.still_looks + 1 : 0;
  file.size = size;
  file.mtime_ns = mtime_ns;
  if (!options_.once && !still) return absl::OkStatus();
  LoadOptions load;
  load.jobs = 1;
  load.max_file_bytes = options_.max_file_bytes;
  std::vector<FileRead> reads = ReadTraceFiles({TraceFile{file.path, true}}, load);
  FileRead& read = reads[0];
  // Cut short while the job runs: its writer may not be done (a slow disk, a writer that pauses);
  // read again once it changes, and taken as cut only after it has held still for a while.
  const bool cut = read.status.ok() && !read.ranks.empty() &&
                   read.ranks[0].stats.count(ImportCounter::kTruncated) > 0;
  if (!options_.once && cut && file.still_looks < kLooksBeforeCut) return absl::OkStatus();
  file.finished = true;
  if (!read.status.ok()) {
    if (absl::IsNotFound(read.status)) {  // JSON of no trace (a truth.json): nothing to follow
      file.mode = FileMode::kIgnored;
      return absl::OkStatus();
    }
    if (options_.once) return read.status;
    polled.notices.push_back(Notice(now_unix_ns, absl::StrCat(read.status.message(), ": ignored")));
    file.mode = FileMode::kIgnored;
    return absl::OkStatus();
  }
  polled.read_something = true;
  if (read.bubblescope_merged) {
    // analyze --perfetto's merged trace beside the ranks it was made of: their events again.
    polled.notices.push_back(
        Notice(now_unix_ns, absl::StrCat(file.path, ": bubblescope's merged trace: passed over")));
    file.mode = FileMode::kIgnored;
    return absl::OkStatus();
  }
  for (const Rank& rank : read.ranks) {
    if (rank.stats.count(ImportCounter::kTruncated) > 0) {
      polled.notices.push_back(Notice(
          now_unix_ns, absl::StrCat(file.path, ": cut short (", rank.stats.truncation_detail(),
                                    "): its last iteration is left out")));
      break;
    }
  }
  Adopt(file, std::move(read.ranks), now_unix_ns, polled);
  return absl::OkStatus();
}

absl::Status JobFollower::ReadFolder(int64_t now_unix_ns, Polled& polled) {
  std::error_code error;
  // A job that has not started yet has not made its folder: waited for, unless --once.
  if (!options_.once && !std::filesystem::exists(options_.dir, error) && !error) {
    if (!said_waiting_) {
      polled.notices.push_back(
          Notice(now_unix_ns, absl::StrCat(options_.dir, " does not exist yet: waiting for it")));
      said_waiting_ = true;
    }
    return absl::OkStatus();
  }
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(options_.dir, error)) {
    const std::string name = entry.path().filename().string();
    std::error_code kind_error;
    if (!IsTraceFileName(name) || !entry.is_regular_file(kind_error)) continue;
    paths.push_back(entry.path().string());
  }
  if (error) {
    return absl::NotFoundError(absl::StrCat(options_.dir, ": ", error.message()));
  }
  std::sort(paths.begin(), paths.end());
  if (options_.once && paths.empty()) {
    return absl::NotFoundError(
        absl::StrCat(options_.dir, ": no trace files (*.json, *.json.gz, *.bsdigest, *.sqlite)"));
  }
  for (const std::string& path : paths) {
    std::unique_ptr<FileState>& state = files_[path];
    if (state == nullptr) {
      state = std::make_unique<FileState>();
      state->path = path;
      // With --once every file is read whole, as analyze reads it (a cut one flagged alike).
      state->mode = options_.once ? FileMode::kWhole : FileMode::kUndecided;
    }
  }
  for (const std::string& path : paths) {
    FileState& file = *files_.at(path);
    if (file.mode == FileMode::kUndecided) file.mode = ModeOf(path);
    if (file.finished || file.mode == FileMode::kIgnored || file.mode == FileMode::kUndecided) {
      continue;
    }
    BUBBLESCOPE_RETURN_IF_ERROR(file.mode == FileMode::kGrowingArray
                                    ? ReadGrowing(file, now_unix_ns, polled)
                                    : ReadWhole(file, now_unix_ns, polled));
  }
  return absl::OkStatus();
}

std::optional<int64_t> JobFollower::Settled(int32_t rank) const {
  const auto state = ranks_.find(rank);
  if (state == ranks_.end()) return std::nullopt;
  // Every file read whole: every iteration is there, or (a cut file's last, a step the profiler
  // left empty) the analysis finds it incomplete, as analyze does.
  if (options_.once) return std::numeric_limits<int64_t>::max();
  const bool finished = std::all_of(state->second->files.begin(), state->second->files.end(),
                                    [](const FileState* file) { return file->finished; });
  // A growing file that never closed (a job killed) keeps its last step unsettled even now: it
  // lost that step's end, as `analyze` reads a cut file.
  const bool cut = std::any_of(state->second->files.begin(), state->second->files.end(),
                               [](const FileState* file) {
                                 return file->mode == FileMode::kGrowingArray && !file->finished;
                               });
  return SettledStep(state->second->held, finished && !cut);
}

bool JobFollower::SomethingReady() const {
  if (ranks_.empty()) return false;
  if (!analysed_) {
    // The first analysis finds the pipelines: it waits for every rank the files declare and for
    // a settled step on each.
    int32_t declared = -1;
    for (const auto& [id, rank] : ranks_) declared = std::max(declared, rank->held.world_size);
    if (!options_.once && declared > 0 && static_cast<int32_t>(ranks_.size()) < declared) {
      return false;
    }
    return std::all_of(ranks_.begin(), ranks_.end(),
                       [this](const auto& rank) { return Settled(rank.first).has_value(); });
  }
  for (const std::vector<int32_t>& pipeline : pipelines_) {
    // A pipeline waiting for a rank's file is looked at again once a new rank has come.
    if (waiting_.contains(pipeline) && ranks_.size() == ranks_at_analysis_) continue;
    const std::optional<int64_t> ready = Ready(pipeline);
    const auto reported = reported_.find(pipeline);
    if (ready.has_value() && (reported == reported_.end() || *ready > reported->second)) {
      return true;
    }
  }
  return false;
}

std::optional<int64_t> JobFollower::Ready(const std::vector<int32_t>& ranks) const {
  std::optional<int64_t> ready;
  for (int32_t rank : ranks) {
    const std::optional<int64_t> settled = Settled(rank);
    if (!settled.has_value()) return std::nullopt;
    ready = ready.has_value() ? std::min(*ready, *settled) : *settled;
  }
  return ready;
}

absl::StatusOr<job::Result> JobFollower::AnalyseWindows(clock_alignment::JobClocks& own) {
  Trace window;
  std::vector<int32_t> ids;
  for (auto& [id, rank] : ranks_) {
    ids.push_back(id);
    window.ranks.push_back(std::move(rank->held));
  }
  job::Options options = options_.job;
  options.clocks = clocks_.has_value() ? &*clocks_ : nullptr;
  options.own_clocks = &own;
  absl::StatusOr<job::Result> result = job::Analyze(window, options);
  // The windows go back to their ranks whatever the outcome.
  for (size_t i = 0; i < ids.size(); ++i) ranks_.at(ids[i])->held = std::move(window.ranks[i]);
  return result;
}

absl::Status JobFollower::Recheck(const job::Result& result, clock_alignment::JobClocks own,
                                  int64_t now_unix_ns, Polled& polled) {
  std::vector<std::vector<int32_t>> pipelines;
  for (const job::Pipeline& pipeline : result.pipelines) {
    pipelines.push_back(pipeline.crossrank.pipeline.stage_order());
  }
  if (!analysed_) {
    for (const job::Pipeline& pipeline : result.pipelines) {
      if (!options_.once && pipeline.bubble.step_source != iterations::StepSource::kProfilerSteps) {
        return absl::FailedPreconditionError(absl::StrCat(
            options_.dir, ": its iterations come from ",
            std::string(iterations::StepSourceName(pipeline.bubble.step_source)),
            ", not ProfilerStep#N ranges; watch follows a running job by its step numbers: "
            "use `watch --once` or `analyze` on the finished job"));
      }
    }
    clocks_ = std::move(own);
  } else {
    if (pipelines != pipelines_) {
      std::vector<std::string> was;
      std::vector<std::string> now;
      for (const std::vector<int32_t>& ranks : pipelines_) was.push_back(RankList(ranks));
      for (const std::vector<int32_t>& ranks : pipelines) now.push_back(RankList(ranks));
      polled.notices.push_back(
          Notice(now_unix_ns, absl::StrCat("the pipelines changed: ", absl::StrJoin(was, " "),
                                           " before, ", absl::StrJoin(now, " "), " now")));
    }
    if (!own.fits.empty()) {
      if (const std::optional<ClockDisagreement> off =
              CompareClocks(*clocks_, own, own.anchor_ns)) {
        polled.notices.push_back(
            Notice(now_unix_ns,
                   absl::StrCat("the clock model of the first iterations no longer holds: ranks ",
                                off->rank_a, " and ", off->rank_b, " are ",
                                static_cast<double>(off->by_ns) / 1000.0,
                                " us from it; re-fitted on the latest iterations")));
        clocks_ = std::move(own);
      }
    }
  }
  pipelines_ = std::move(pipelines);
  analysed_ = true;
  ranks_at_analysis_ = ranks_.size();
  return absl::OkStatus();
}

JobFollower::Kept JobFollower::ReportReady(const job::Result& result, int64_t now_unix_ns,
                                           Polled& polled) {
  Kept kept;
  for (size_t p = 0; p < result.pipelines.size(); ++p) {
    const job::Pipeline& pipeline = result.pipelines[p];
    const std::vector<int32_t>& ranks = pipelines_[p];
    // A pipeline exchanging with ranks whose files are not here yet waits for them (a job's
    // files appear one by one as its processes start), its ranks' windows kept whole.
    if (!options_.once && !pipeline.crossrank.missing_peers.empty()) {
      if (waiting_.insert(ranks).second) {
        polled.notices.push_back(
            Notice(now_unix_ns,
                   absl::StrCat("pipeline ", RankList(ranks), " exchanges with ranks ",
                                RankList(pipeline.crossrank.missing_peers),
                                " whose files are not here yet: its iterations wait for them")));
      }
      kept.whole.insert(ranks.begin(), ranks.end());
      continue;
    }
    // Reported up to: this pipeline's own mark, or where the pipelines found before reported any
    // of its ranks up to (the pipelines changed), so that no rank's iteration comes twice.
    int64_t after = std::numeric_limits<int64_t>::min();
    for (const auto& [marked, step] : reported_) {
      const bool shares_a_rank = std::any_of(marked.begin(), marked.end(), [&](int32_t rank) {
        return std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
      });
      if (shares_a_rank) after = std::max(after, step);
    }
    const std::optional<int64_t> ready = Ready(ranks);
    if (!ready.has_value()) {
      // A rank without a settled step yet (its file just began): nothing to report, and the
      // others' windows keep what is not reported.
      for (int32_t rank : ranks) {
        if (after == std::numeric_limits<int64_t>::min()) {
          kept.whole.insert(rank);
        } else {
          kept.from[rank] = after;
        }
      }
      continue;
    }
    int64_t last = after;
    for (const bubble::IterationFigures& iteration : pipeline.bubble.iterations) {
      if (!iteration.complete || iteration.number <= after || iteration.number > *ready) continue;
      polled.iterations.push_back(
          ReportOf(static_cast<int32_t>(p), pipeline, iteration, now_unix_ns));
      last = std::max(last, iteration.number);
    }
    // The mark covers what the pipelines before reported of its ranks, so a new key is not
    // taken for news at the next look.
    if (const int64_t mark = std::max({last, *ready, after});
        mark != std::numeric_limits<int64_t>::min()) {
      reported_[ranks] = mark;
      for (int32_t rank : ranks) kept.from[rank] = mark;
    }
    waiting_.erase(ranks);
  }
  std::stable_sort(polled.iterations.begin(), polled.iterations.end(),
                   [](const IterationReport& a, const IterationReport& b) {
                     return a.step != b.step ? a.step < b.step : a.pipeline < b.pipeline;
                   });
  return kept;
}

void JobFollower::TrimWindows(const Kept& kept, int64_t now_unix_ns, Polled& polled) {
  // Each pipeline rank keeps its last reported step (the next one's context); a rank of no
  // pipeline keeps its last settled one; a rank of a waiting pipeline keeps everything.
  for (auto& [id, rank] : ranks_) {
    std::optional<int64_t> from;
    if (const auto marked = kept.from.find(id); marked != kept.from.end()) {
      from = marked->second;
    } else if (!kept.whole.contains(id)) {
      from = Settled(id);
    }
    if (from.has_value()) {
      if (const std::optional<TimeNs> start = StepStart(rank->held, *from)) {
        TrimRankBefore(rank->held, *start);
      }
    }
    if (static_cast<int32_t>(rank->held.steps.size()) > options_.max_held_steps) {
      const ProfilerStep& oldest_kept =
          rank->held.steps[rank->held.steps.size() - static_cast<size_t>(options_.max_held_steps)];
      if (!rank->reported_overflow) {
        polled.notices.push_back(Notice(
            now_unix_ns,
            absl::StrCat("rank ", id, " holds ", rank->held.steps.size(),
                         " steps that no pipeline could report (a rank of its pipeline writes "
                         "nothing?): the oldest are dropped unreported")));
        rank->reported_overflow = true;
      }
      TrimRankBefore(rank->held, oldest_kept.start);
    }
  }
}

absl::Status JobFollower::Analyse(int64_t now_unix_ns, Polled& polled) {
  clock_alignment::JobClocks own;
  BUBBLESCOPE_ASSIGN_OR_RETURN(job::Result result, AnalyseWindows(own));
  BUBBLESCOPE_RETURN_IF_ERROR(Recheck(result, std::move(own), now_unix_ns, polled));
  const Kept kept = ReportReady(result, now_unix_ns, polled);
  TrimWindows(kept, now_unix_ns, polled);
  return absl::OkStatus();
}

absl::StatusOr<Polled> JobFollower::Poll(int64_t now_unix_ns) {
  Polled polled;
  BUBBLESCOPE_RETURN_IF_ERROR(ReadFolder(now_unix_ns, polled));
  if (options_.once && ranks_.empty()) {
    return absl::NotFoundError(
        absl::StrCat(options_.dir, ": no trace in it (", files_.size(), " files passed over)"));
  }
  if (SomethingReady()) BUBBLESCOPE_RETURN_IF_ERROR(Analyse(now_unix_ns, polled));
  bool arrays = false;
  bool all_closed = true;
  for (const auto& [path, file] : files_) {
    if (file->mode == FileMode::kIgnored) continue;
    arrays = arrays || file->mode == FileMode::kGrowingArray;
    all_closed = all_closed && file->mode == FileMode::kGrowingArray && file->finished;
  }
  polled.all_finished =
      options_.once || (arrays && all_closed && !polled.more_to_read && !SomethingReady());
  return polled;
}

}  // namespace bubblescope::watch
