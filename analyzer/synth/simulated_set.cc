#include "synth/simulated_set.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/output_file.h"
#include "common/status_macros.h"
#include "synth/truth_json.h"

namespace bubblescope::sim {
namespace {

namespace fs = std::filesystem;

// True for names RankFileName and NsysRankFileName can produce: "rank<digits>.pt.trace.json[.gz]",
// "rank<digits>.sqlite".
bool IsRankFileName(std::string_view name) {
  if (!name.starts_with("rank")) return false;
  name.remove_prefix(4);
  size_t digits = 0;
  while (digits < name.size() && name[digits] >= '0' && name[digits] <= '9') ++digits;
  if (digits == 0) return false;
  name.remove_prefix(digits);
  return name == ".pt.trace.json" || name == ".pt.trace.json.gz" || name == ".sqlite";
}

// Every file of the set's naming scheme (and truth.json) already in
// `directory`, sorted.
absl::StatusOr<std::vector<fs::path>> ExistingSetFiles(const fs::path& directory) {
  std::vector<fs::path> found;
  std::error_code error;
  fs::directory_iterator it(directory, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot list ", directory.string(), ": ", error.message()));
  }
  for (; it != fs::directory_iterator(); it.increment(error)) {
    if (error) break;
    std::string name = it->path().filename().string();
    if (IsRankFileName(name) || name == kTruthFileName) found.push_back(it->path());
  }
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot list ", directory.string(), ": ", error.message()));
  }
  std::sort(found.begin(), found.end());
  return found;
}

// An exclusive lock on a set's directory for as long as one set is written into it: runs
// writing into one directory at once (8 `simulate --force` in parallel) write one whole set
// after another, so the directory ends holding exactly one job's files, never a mix.
class DirectoryLock {
 public:
  explicit DirectoryLock(const fs::path& directory)
      : fd_(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {}
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  ~DirectoryLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  absl::Status Acquire(const fs::path& directory) {
    if (fd_ < 0) return Failed(directory);
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) return Failed(directory);
    }
    return absl::OkStatus();
  }

 private:
  static absl::Status Failed(const fs::path& directory) {
    return absl::InternalError(
        absl::StrCat("cannot lock ", directory.string(), ": ",
                     std::error_code(errno, std::generic_category()).message()));
  }
  int fd_;
};

}  // namespace

std::string RankFileName(int32_t rank, bool gzip) {
  return absl::StrCat("rank", rank, ".pt.trace.json", gzip ? ".gz" : "");
}

std::string NsysRankFileName(int32_t rank) { return absl::StrCat("rank", rank, ".sqlite"); }

absl::StatusOr<std::vector<std::string>> WriteSimulationSet(const Config& config,
                                                            Simulation& simulation,
                                                            const std::string& directory,
                                                            const SetWriteOptions& options) {
  const fs::path root(directory);
  std::error_code error;
  fs::create_directories(root, error);
  if (error || !fs::is_directory(root)) {
    return absl::InternalError(
        absl::StrCat("cannot create directory ", directory, ": ",
                     error ? error.message() : std::string("a file of that name is in the way")));
  }
  DirectoryLock lock(root);
  BUBBLESCOPE_RETURN_IF_ERROR(lock.Acquire(root));
  absl::StatusOr<std::vector<fs::path>> existing = ExistingSetFiles(root);
  BUBBLESCOPE_RETURN_IF_ERROR(existing.status());

  std::vector<fs::path> targets;
  for (const Rank& rank : simulation.trace.ranks) {
    targets.push_back(root / (options.nsys.has_value() ? NsysRankFileName(rank.rank)
                                                       : RankFileName(rank.rank, options.gzip)));
  }
  const fs::path truth_path = root / kTruthFileName;
  if (!existing->empty() && !options.overwrite) {
    return absl::AlreadyExistsError(absl::StrCat(
        existing->front().string(), " already exists (use --force to replace the set)"));
  }
  for (const fs::path& stale : *existing) {
    if (stale == truth_path || std::find(targets.begin(), targets.end(), stale) != targets.end()) {
      continue;  // overwritten below
    }
    if (!fs::remove(stale, error) || error) {
      return absl::InternalError(absl::StrCat("cannot remove ", stale.string(), ": ",
                                              error ? error.message() : "not removed"));
    }
  }

  absl::StatusOr<std::string> truth = TruthJson(config, simulation.truth);
  BUBBLESCOPE_RETURN_IF_ERROR(truth.status());
  std::vector<std::string> written;
  for (size_t r = 0; r < simulation.trace.ranks.size(); ++r) {
    Rank& rank = simulation.trace.ranks[r];
    // The file's traceName: its own name only, so a set is the same bytes wherever it is
    // written (sample_traces/ is checked against a fresh copy).
    rank.source_path = targets[r].filename().string();
    if (absl::Status status = options.nsys.has_value()
                                  ? WriteNsysSqlite(rank, *options.nsys, targets[r].string())
                                  : WriteKinetoFile(rank, options.kineto, targets[r].string());
        !status.ok()) {
      return status;
    }
    written.push_back(targets[r].string());
  }
  if (absl::Status status = WriteOutputFile(truth_path.string(), *truth); !status.ok()) {
    return status;
  }
  written.push_back(truth_path.string());
  return written;
}

}  // namespace bubblescope::sim
