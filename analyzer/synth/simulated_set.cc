#include "synth/simulated_set.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string_view>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/output_file.h"
#include "common/status_macros.h"
#include "synth/trace_builder.h"
#include "synth/truth_json.h"

namespace bubblescope::sim {
namespace {

namespace fs = std::filesystem;

// Consumes `prefix` from the front of `name`; false (and `name` unchanged) when it is not there.
bool Consume(std::string_view& name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return false;
  name.remove_prefix(prefix.size());
  return true;
}

// Consumes one or more decimal digits from the front of `name`.
bool ConsumeDigits(std::string_view& name) {
  size_t digits = 0;
  while (digits < name.size() && name[digits] >= '0' && name[digits] <= '9') ++digits;
  name.remove_prefix(digits);
  return digits > 0;
}

bool IsKinetoSuffix(std::string_view rest) {
  return rest == ".pt.trace.json" || rest == ".pt.trace.json.gz";
}

// True for names RankFileName and NsysRankFileName can produce: "rank<digits>.pt.trace.json[.gz]",
// "rank<digits>.sqlite".
bool IsRankFileName(std::string_view name) {
  if (!Consume(name, "rank") || !ConsumeDigits(name)) return false;
  return IsKinetoSuffix(name) || name == ".sqlite";
}

// True for names ProfilerCycleFileName can produce for a simulated rank:
// "sim-host[-<digits>]_<digits>.<digits>.pt.trace.json[.gz]". Only the simulator's own host
// names, so a profiler's real cycle files in the directory are never taken for a set's.
bool IsSimulatedCycleFileName(std::string_view name) {
  if (!Consume(name, kSimulatedHostName)) return false;
  if (Consume(name, "-") && !ConsumeDigits(name)) return false;
  if (!Consume(name, "_") || !ConsumeDigits(name)) return false;
  if (!Consume(name, ".") || !ConsumeDigits(name)) return false;
  return IsKinetoSuffix(name);
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
    if (IsRankFileName(name) || IsSimulatedCycleFileName(name) || name == kTruthFileName) {
      found.push_back(it->path());
    }
  }
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot list ", directory.string(), ": ", error.message()));
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

std::string RankFileName(int32_t rank, bool gzip) {
  return absl::StrCat("rank", rank, ".pt.trace.json", gzip ? ".gz" : "");
}

std::string NsysRankFileName(int32_t rank) { return absl::StrCat("rank", rank, ".sqlite"); }

std::string ProfilerCycleFileName(const Rank& rank, int64_t time_ns, bool gzip) {
  return absl::StrCat(rank.host.empty() ? kSimulatedHostName : rank.host, "_", rank.pid, ".",
                      time_ns, ".pt.trace.json", gzip ? ".gz" : "");
}

SetDirectory::SetDirectory(std::string directory, int lock_fd)
    : directory_(std::move(directory)), lock_fd_(lock_fd) {}

SetDirectory::~SetDirectory() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing releases the lock
}

absl::StatusOr<std::unique_ptr<SetDirectory>> SetDirectory::Claim(
    const std::string& directory, const std::vector<std::string>& replaced, bool overwrite) {
  const fs::path root(directory);
  std::error_code error;
  fs::create_directories(root, error);
  if (error || !fs::is_directory(root)) {
    return absl::InternalError(
        absl::StrCat("cannot create directory ", directory, ": ",
                     error ? error.message() : std::string("a file of that name is in the way")));
  }
  // An exclusive lock on the directory for as long as one set is written into it: runs writing
  // into one directory at once (8 `simulate --force` in parallel) write one whole set after
  // another, so the directory ends holding exactly one job's files, never a mix.
  const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  auto lock_failed = [&directory] {
    return absl::InternalError(
        absl::StrCat("cannot lock ", directory, ": ",
                     std::error_code(errno, std::generic_category()).message()));
  };
  if (fd < 0) return lock_failed();
  std::unique_ptr<SetDirectory> claimed(new SetDirectory(directory, fd));
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) return lock_failed();
  }
  absl::StatusOr<std::vector<fs::path>> existing = ExistingSetFiles(root);
  BUBBLESCOPE_RETURN_IF_ERROR(existing.status());
  if (!existing->empty() && !overwrite) {
    return absl::AlreadyExistsError(absl::StrCat(
        existing->front().string(), " already exists (use --force to replace the set)"));
  }
  for (const fs::path& stale : *existing) {
    if (std::find(replaced.begin(), replaced.end(), stale.filename().string()) != replaced.end()) {
      continue;  // replaced whole by its writer
    }
    if (!fs::remove(stale, error) || error) {
      return absl::InternalError(absl::StrCat("cannot remove ", stale.string(), ": ",
                                              error ? error.message() : "not removed"));
    }
  }
  return claimed;
}

std::string SetDirectory::PathOf(std::string_view name) const {
  return (fs::path(directory_) / name).string();
}

absl::StatusOr<std::vector<std::string>> WriteSimulationSet(const Config& config,
                                                            Simulation& simulation,
                                                            const std::string& directory,
                                                            const SetWriteOptions& options) {
  std::vector<std::string> names;
  for (const Rank& rank : simulation.trace.ranks) {
    names.push_back(options.nsys.has_value() ? NsysRankFileName(rank.rank)
                                             : RankFileName(rank.rank, options.gzip));
  }
  std::vector<std::string> replaced = names;
  replaced.push_back(kTruthFileName);
  absl::StatusOr<std::unique_ptr<SetDirectory>> claimed =
      SetDirectory::Claim(directory, replaced, options.overwrite);
  BUBBLESCOPE_RETURN_IF_ERROR(claimed.status());
  const SetDirectory& root = **claimed;

  absl::StatusOr<std::string> truth = TruthJson(config, simulation.truth);
  BUBBLESCOPE_RETURN_IF_ERROR(truth.status());
  std::vector<std::string> written;
  for (size_t r = 0; r < simulation.trace.ranks.size(); ++r) {
    Rank& rank = simulation.trace.ranks[r];
    // The file's traceName: its own name only, so a set is the same bytes wherever it is
    // written (sample_traces/ is checked against a fresh copy).
    rank.source_path = names[r];
    const std::string path = root.PathOf(names[r]);
    if (absl::Status status = options.nsys.has_value()
                                  ? WriteNsysSqlite(rank, *options.nsys, path)
                                  : WriteKinetoFile(rank, options.kineto, path);
        !status.ok()) {
      return status;
    }
    written.push_back(path);
  }
  const std::string truth_path = root.PathOf(kTruthFileName);
  BUBBLESCOPE_RETURN_IF_ERROR(WriteOutputFile(truth_path, *truth));
  written.push_back(truth_path);
  return written;
}

}  // namespace bubblescope::sim
