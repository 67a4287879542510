#include "common/output_temp.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace bubblescope {
namespace {

constexpr char kMarker[] = ".bubblescope-";
constexpr size_t kRandomChars = 6;  // mkstemp's XXXXXX
// What follows the shortened name: the marker, a pid of at most 10 digits, '.', XXXXXX.
constexpr size_t kSuffixBytes = sizeof(kMarker) - 1 + 10 + 1 + kRandomChars;

// Temporary files a termination signal must remove. Plain arrays: a signal handler may only
// read memory and call async-signal-safe functions (unlink, raise).
constexpr int kSlots = 8;
char g_paths[kSlots][PATH_MAX];
volatile sig_atomic_t g_in_use[kSlots];
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[std::size(kSignals)];
int g_guards = 0;  // live guards; handlers are installed while it is above 0

extern "C" void RemoveTempFilesAndDie(int signal_number) {
  for (int i = 0; i < kSlots; ++i) {
    if (g_in_use[i] != 0) ::unlink(g_paths[i]);
  }
  // SA_RESETHAND restored the default action: the process dies of the signal, as it would have.
  ::raise(signal_number);
}

void InstallHandlers() {
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    struct sigaction current {};
    ::sigaction(kSignals[i], nullptr, &current);
    g_previous[i] = current;
    // A command that handles the signal itself (record forwards it to its child) keeps it.
    if (current.sa_handler != SIG_DFL) continue;
    struct sigaction ours {};
    ours.sa_handler = RemoveTempFilesAndDie;
    sigemptyset(&ours.sa_mask);
    ours.sa_flags = SA_RESETHAND | SA_NODEFER;
    ::sigaction(kSignals[i], &ours, nullptr);
  }
}

void RestoreHandlers() {
  for (size_t i = 0; i < std::size(kSignals); ++i)
    ::sigaction(kSignals[i], &g_previous[i], nullptr);
}

// True when `pid` names no process (one of another user's still counts as existing).
bool ProcessGone(long pid) {
  if (pid <= 0 || pid > INT_MAX) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// Removes `prefix`<pid>.XXXXXX files in `directory` whose process is gone and that this user
// owns: what a run killed by SIGKILL while writing the same file left.
void SweepStale(const std::string& directory, const std::string& prefix) {
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name(entry->d_name);
    if (!name.starts_with(prefix)) continue;
    const std::string_view rest = name.substr(prefix.size());
    const size_t dot = rest.find('.');
    if (dot == std::string_view::npos || rest.size() - dot - 1 != kRandomChars) continue;
    long pid = 0;
    if (!absl::SimpleAtoi(std::string(rest.substr(0, dot)), &pid) || !ProcessGone(pid)) continue;
    const std::string path = (std::filesystem::path(directory) / std::string(name)).string();
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0 || info.st_uid != ::geteuid()) continue;
    if (S_ISREG(info.st_mode)) {
      ::unlink(path.c_str());
    } else if (S_ISDIR(info.st_mode)) {  // a set's directory (CreateTempDirectory)
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  }
  ::closedir(dir);
}

}  // namespace

std::string TempFilePrefix(const std::string& file_name) {
  constexpr size_t kNameMax = NAME_MAX;
  const size_t keep = std::min(file_name.size(), kNameMax - 1 - kSuffixBytes);
  // Appended piece by piece: GCC 12 -O3 reports a false -Wrestrict on a concatenation here.
  std::string prefix;
  prefix.reserve(1 + keep + sizeof(kMarker));
  prefix.push_back('.');
  prefix.append(file_name.data(), keep);
  prefix.append(kMarker);
  return prefix;
}

absl::StatusOr<std::string> CreateTempDirectory(const std::string& directory,
                                                const std::string& name) {
  const std::string prefix = TempFilePrefix(name);
  SweepStale(directory, prefix);
  const std::string pattern =
      (std::filesystem::path(directory) / absl::StrCat(prefix, ::getpid(), ".XXXXXX")).string();
  std::vector<char> path(pattern.begin(), pattern.end());
  path.push_back('\0');
  if (::mkdtemp(path.data()) == nullptr) {
    return absl::UnavailableError(std::error_code(errno, std::generic_category()).message());
  }
  return std::string(path.data());
}

SignalsHeld::SignalsHeld() {
  sigset_t held;
  sigemptyset(&held);
  for (int signal_number : kSignals) sigaddset(&held, signal_number);
  ::sigprocmask(SIG_BLOCK, &held, &previous_);
}

SignalsHeld::~SignalsHeld() { ::sigprocmask(SIG_SETMASK, &previous_, nullptr); }

absl::StatusOr<TempFile> CreateTempFile(const std::string& target) {
  const std::filesystem::path target_path(target);
  const std::string directory =
      target_path.has_parent_path() ? target_path.parent_path().string() : std::string(".");
  const std::string prefix = TempFilePrefix(target_path.filename().string());
  SweepStale(directory, prefix);
  // Same directory, so the final rename never crosses a file system.
  const std::string pattern =
      (std::filesystem::path(directory) / absl::StrCat(prefix, ::getpid(), ".XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    return absl::UnavailableError(std::error_code(errno, std::generic_category()).message());
  }
  return TempFile{fd, std::string(name.data())};
}

TempFileGuard::TempFileGuard(const std::string& path) {
  if (path.size() >= PATH_MAX) return;  // mkstemp could not have made it
  for (int i = 0; i < kSlots; ++i) {
    if (g_in_use[i] != 0) continue;
    std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
    g_in_use[i] = 1;
    slot_ = i;
    break;
  }
  if (g_guards++ == 0) InstallHandlers();
}

TempFileGuard::~TempFileGuard() {
  if (slot_ >= 0) g_in_use[slot_] = 0;
  if (--g_guards == 0) RestoreHandlers();
}

}  // namespace bubblescope
