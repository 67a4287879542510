#include "synth/live_set.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <memory>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/output_file.h"
#include "common/status_macros.h"
#include "synth/truth_json.h"
#include "writers/kineto_writer.h"

namespace bubblescope::sim {
namespace {

// The rank's identity, names, comms, groups and devices, without events: what every slice shares.
// Interval and comm ids stay valid in it, as the names and comms are copied in order.
Rank EmptySlice(const Rank& rank) {
  Rank slice = RankHeader(rank);
  slice.steps.clear();
  slice.stats = ImportStats();
  slice.comms = rank.comms;
  for (NameId id = 1; id < rank.names.size(); ++id) slice.names.Intern(rank.names.Get(id));
  for (const Timeline& timeline : rank.timelines) {
    slice.timelines.push_back(Timeline{.kind = timeline.kind,
                                       .device = timeline.device,
                                       .pid = timeline.pid,
                                       .id = timeline.id,
                                       .intervals = {}});
  }
  return slice;
}

// Which slice each of a rank's events goes into (SliceByStep's rules).
class SliceRule {
 public:
  explicit SliceRule(const Rank& rank) : rank_(rank) {
    for (const Timeline& timeline : rank.timelines) {
      if (timeline.kind != TimelineKind::kCpuThread) continue;
      for (const Interval& interval : timeline.intervals) {
        if (interval.kind == IntervalKind::kRuntime && interval.correlation != 0) {
          launch_slice_.emplace(interval.correlation, At(interval.start));
        }
      }
    }
  }

  // The last step starting at or before `time`; the first when none does.
  size_t At(TimeNs time) const {
    const auto after =
        std::upper_bound(rank_.steps.begin(), rank_.steps.end(), time,
                         [](TimeNs t, const ProfilerStep& step) { return t < step.start; });
    return after == rank_.steps.begin() ? 0 : static_cast<size_t>(after - rank_.steps.begin() - 1);
  }

  size_t Of(const Interval& interval) const {
    if (IsDeviceKind(interval.kind) && interval.correlation != 0) {
      if (auto launch = launch_slice_.find(interval.correlation); launch != launch_slice_.end()) {
        return launch->second;
      }
    }
    return At(interval.start);
  }

  size_t Of(const Annotation& annotation) const {
    if (annotation.scope == AnnotationScope::kGpu) {
      for (const Timeline& timeline : rank_.timelines) {
        if (timeline.kind != TimelineKind::kGpuStream || timeline.device != annotation.device ||
            timeline.id != annotation.thread_or_stream) {
          continue;
        }
        const auto first =
            std::lower_bound(timeline.intervals.begin(), timeline.intervals.end(), annotation.start,
                             [](const Interval& interval, TimeNs t) { return interval.start < t; });
        if (first != timeline.intervals.end() && first->start <= annotation.end) return Of(*first);
      }
    }
    return At(annotation.start);
  }

 private:
  const Rank& rank_;
  absl::flat_hash_map<int64_t, size_t> launch_slice_;  // correlation id -> its launch's slice
};

// A file appended to with plain write(2) calls, so another process reads each piece as soon as
// it is written. Created new: an existing file is an error, never written into.
class AppendedFile {
 public:
  static absl::StatusOr<std::unique_ptr<AppendedFile>> Create(std::string path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) return Failed(path);
    return std::unique_ptr<AppendedFile>(new AppendedFile(std::move(path), fd));
  }
  ~AppendedFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  AppendedFile(const AppendedFile&) = delete;
  AppendedFile& operator=(const AppendedFile&) = delete;

  absl::Status Append(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t wrote = ::write(fd_, bytes.data(), bytes.size());
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) return Failed(path_);
      bytes.remove_prefix(static_cast<size_t>(wrote));
    }
    return absl::OkStatus();
  }

  absl::Status Close() {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) return Failed(path_);
    return absl::OkStatus();
  }

  const std::string& path() const { return path_; }

 private:
  AppendedFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  static absl::Status Failed(const std::string& path) {
    return absl::InternalError(absl::StrCat(
        "cannot write ", path, ": ", std::error_code(errno, std::generic_category()).message()));
  }
  std::string path_;
  int fd_;
};

// The files of a job written live, one layout each: each iteration's slices written in turn,
// then whatever ends the job's files.
class LiveFiles {
 public:
  virtual ~LiveFiles() = default;
  // Writes slice `iteration` of every rank that has it.
  virtual absl::Status WriteIteration(size_t iteration) = 0;
  virtual absl::Status Finish() = 0;
  const std::vector<std::string>& written() const { return written_; }

 protected:
  std::vector<std::string> written_;
};

// One growing bare-array file per rank (the collector's layout).
class GrowingArrayFiles : public LiveFiles {
 public:
  GrowingArrayFiles(std::vector<Rank>& ranks, const std::vector<std::vector<Rank>>& slices,
                    const KinetoWriteOptions& options, const SetDirectory& directory)
      : ranks_(ranks), slices_(slices), options_(options), directory_(directory) {}

  absl::Status WriteIteration(size_t iteration) override {
    if (iteration == 0) BUBBLESCOPE_RETURN_IF_ERROR(Open());
    for (size_t r = 0; r < ranks_.size(); ++r) {
      if (iteration >= slices_[r].size()) continue;
      std::string piece = iteration == 0 ? pieces_[r]->Head() : std::string();
      piece += pieces_[r]->Events(slices_[r][iteration]);
      BUBBLESCOPE_RETURN_IF_ERROR(files_[r]->Append(piece));
    }
    return absl::OkStatus();
  }

  absl::Status Finish() override {
    for (const std::unique_ptr<AppendedFile>& file : files_) {
      BUBBLESCOPE_RETURN_IF_ERROR(file->Append(KinetoArrayPieces::Tail()));
      BUBBLESCOPE_RETURN_IF_ERROR(file->Close());
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Open() {
    for (Rank& rank : ranks_) {
      const std::string name = RankFileName(rank.rank, /*gzip=*/false);
      rank.source_path = name;
      absl::StatusOr<std::unique_ptr<AppendedFile>> file =
          AppendedFile::Create(directory_.PathOf(name));
      BUBBLESCOPE_RETURN_IF_ERROR(file.status());
      written_.push_back((*file)->path());
      files_.push_back(*std::move(file));
      pieces_.push_back(std::make_unique<KinetoArrayPieces>(rank, options_));
    }
    return absl::OkStatus();
  }

  std::vector<Rank>& ranks_;
  const std::vector<std::vector<Rank>>& slices_;
  const KinetoWriteOptions& options_;
  const SetDirectory& directory_;
  std::vector<std::unique_ptr<AppendedFile>> files_;
  std::vector<std::unique_ptr<KinetoArrayPieces>> pieces_;
};

// One whole Kineto file per rank per iteration (torch.profiler's cycles of one active step).
class CycleFiles : public LiveFiles {
 public:
  CycleFiles(std::vector<std::vector<Rank>>& slices, const SetWriteOptions& options,
             const SetDirectory& directory, const LiveClock& clock)
      : slices_(slices), options_(options), directory_(directory), clock_(clock) {}

  absl::Status WriteIteration(size_t iteration) override {
    // torch stamps each file with the wall clock when its cycle ends; one iteration's files share
    // the stamp (their pids keep them apart), and a later one never repeats an earlier stamp.
    stamp_ = std::max(clock_.now_ns(), stamp_ + 1);
    for (std::vector<Rank>& rank_slices : slices_) {
      if (iteration >= rank_slices.size()) continue;
      Rank& slice = rank_slices[iteration];
      const std::string name = ProfilerCycleFileName(slice, stamp_, options_.gzip);
      slice.source_path = name;
      const std::string path = directory_.PathOf(name);
      BUBBLESCOPE_RETURN_IF_ERROR(WriteKinetoFile(slice, options_.kineto, path));
      written_.push_back(path);
    }
    return absl::OkStatus();
  }

  absl::Status Finish() override { return absl::OkStatus(); }

 private:
  std::vector<std::vector<Rank>>& slices_;
  const SetWriteOptions& options_;
  const SetDirectory& directory_;
  const LiveClock& clock_;
  int64_t stamp_ = 0;
};

}  // namespace

std::vector<Rank> SliceByStep(const Rank& rank) {
  const SliceRule rule(rank);
  std::vector<Rank> slices;
  for (size_t i = 0; i < std::max<size_t>(rank.steps.size(), 1); ++i) {
    slices.push_back(EmptySlice(rank));
  }
  for (size_t t = 0; t < rank.timelines.size(); ++t) {
    for (const Interval& interval : rank.timelines[t].intervals) {
      slices[rule.Of(interval)].timelines[t].intervals.push_back(interval);
    }
  }
  for (const Annotation& annotation : rank.annotations) {
    slices[rule.Of(annotation)].annotations.push_back(annotation);
  }
  for (size_t s = 0; s < rank.steps.size(); ++s) slices[s].steps.push_back(rank.steps[s]);
  for (const MemorySample& sample : rank.memory) {
    slices[rule.At(sample.time)].memory.push_back(sample);
  }
  return slices;
}

LiveClock SystemClock() {
  return LiveClock{
      .now_ns =
          [] {
            return static_cast<int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count());
          },
      .sleep_until_ns =
          [](int64_t time_ns) {
            std::this_thread::sleep_until(std::chrono::system_clock::time_point(
                std::chrono::duration_cast<std::chrono::system_clock::duration>(
                    std::chrono::nanoseconds(time_ns))));
          },
  };
}

absl::StatusOr<std::vector<std::string>> WriteSimulationSetLive(const Config& config,
                                                                Simulation& simulation,
                                                                const std::string& directory,
                                                                const SetWriteOptions& options,
                                                                const LiveWriteOptions& live) {
  if (options.nsys.has_value()) {
    return absl::InvalidArgumentError(
        "an Nsight Systems export is made after its run ends: it cannot be written live");
  }
  const bool growing = options.kineto.layout == KinetoLayout::kBareArray;
  if (growing && options.gzip) {
    return absl::InvalidArgumentError(
        "a growing array file cannot be gzip-compressed: a gzip stream reads whole only at its "
        "end");
  }
  if (live.interval_ns < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the interval between iterations is negative: ", live.interval_ns, " ns"));
  }
  // Every earlier set's file goes before the first write, truth.json too: a watcher of the
  // directory sees only this job's files, and its truth once it has ended.
  absl::StatusOr<std::unique_ptr<SetDirectory>> claimed =
      SetDirectory::Claim(directory, /*replaced=*/{}, options.overwrite);
  BUBBLESCOPE_RETURN_IF_ERROR(claimed.status());
  const SetDirectory& root = **claimed;
  absl::StatusOr<std::string> truth = TruthJson(config, simulation.truth);
  BUBBLESCOPE_RETURN_IF_ERROR(truth.status());

  std::vector<std::vector<Rank>> slices;
  size_t iterations = 0;
  for (const Rank& rank : simulation.trace.ranks) {
    slices.push_back(SliceByStep(rank));
    iterations = std::max(iterations, slices.back().size());
  }
  std::unique_ptr<LiveFiles> files;
  if (growing) {
    files =
        std::make_unique<GrowingArrayFiles>(simulation.trace.ranks, slices, options.kineto, root);
  } else {
    files = std::make_unique<CycleFiles>(slices, options, root, live.clock);
  }
  const int64_t start_ns = live.clock.now_ns();
  for (size_t i = 0; i < iterations; ++i) {
    // Each write at its own time from the start, so the time a write takes never adds up.
    if (i > 0) live.clock.sleep_until_ns(start_ns + static_cast<int64_t>(i) * live.interval_ns);
    BUBBLESCOPE_RETURN_IF_ERROR(files->WriteIteration(i));
  }
  BUBBLESCOPE_RETURN_IF_ERROR(files->Finish());
  std::vector<std::string> written = files->written();
  const std::string truth_path = root.PathOf(kTruthFileName);
  BUBBLESCOPE_RETURN_IF_ERROR(WriteOutputFile(truth_path, *truth));
  written.push_back(truth_path);
  return written;
}

}  // namespace bubblescope::sim
