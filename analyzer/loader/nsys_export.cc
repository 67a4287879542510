#include "loader/nsys_export.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "text/one_line.h"

extern char** environ;

namespace bubblescope {
namespace {

namespace fs = std::filesystem;

// The flags every export is made with: SQLite, NCCL's payloads kept (docs/nsight-systems.md).
constexpr char kExportFlags[] = "--type sqlite --include-blobs=true";

// The report's path without its suffix (".nsys-rep" or ".qdrep": one dot each), the name its
// export takes.
std::string WithoutReportSuffix(const std::string& report) {
  const size_t slash = report.rfind('/');
  const size_t dot = report.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return report;
  return report.substr(0, dot);
}

// `name` as an executable file in one of PATH's folders (an empty entry is the working
// directory, as for the shell); nullopt when none holds one.
std::optional<std::string> FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  const std::vector<std::string> folders = absl::StrSplit(path, ':');
  for (const std::string& folder : folders) {
    const std::string candidate = absl::StrCat(folder.empty() ? "." : folder, "/", name);
    struct stat status {};
    if (stat(candidate.c_str(), &status) == 0 && S_ISREG(status.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

// $XDG_CACHE_HOME (an absolute path, as its specification requires), else $HOME/.cache; empty
// when neither is set.
std::string CacheHome() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return xdg;
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return absl::StrCat(home, "/.cache");
  return "";
}

// 64-bit FNV-1a: a hash that is the same in every build and process (the cache outlives both).
uint64_t StableHash(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : bytes) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// The folder name of the report's export: its absolute path, size and modification time, so
// that a report rewritten in place (same name, new content) is exported again.
absl::StatusOr<std::string> CacheKey(const std::string& report) {
  struct stat status {};
  if (stat(report.c_str(), &status) != 0) {
    return absl::NotFoundError(absl::StrCat(report, ": ", std::strerror(errno)));
  }
  if (!S_ISREG(status.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(report,
                                                   ": an Nsight Systems report's name, "
                                                   "but not a regular file"));
  }
  std::error_code error;
  fs::path absolute = fs::weakly_canonical(fs::absolute(report, error), error);
  if (error) absolute = fs::path(report);
  const std::string identity =
      absl::StrCat(absolute.string(), "\n", static_cast<int64_t>(status.st_size), "\n",
                   static_cast<int64_t>(status.st_mtim.tv_sec), ".",
                   static_cast<int64_t>(status.st_mtim.tv_nsec));
  return absl::StrFormat("%016x", StableHash(identity));
}

// The last line of `file` that is not blank, on one line; empty when there is none.
std::string LastLine(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  std::string last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  constexpr size_t kMaxQuoted = 300;
  if (last.size() > kMaxQuoted) last = last.substr(0, kMaxQuoted) + "...";
  return text::OneLine(last);
}

// Runs `argv` with stdin and stdout on /dev/null and stderr into `stderr_file`; its wait status,
// or an errno.
absl::StatusOr<int> RunWithStderrTo(const std::vector<std::string>& argv,
                                    const std::string& stderr_file) {
  posix_spawn_file_actions_t actions;
  if (posix_spawn_file_actions_init(&actions) != 0) return absl::InternalError("posix_spawn");
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return absl::InternalError(std::strerror(spawned));
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(std::strerror(errno));
  }
  return wait_status;
}

}  // namespace

std::string NsightExportCommand(const std::string& report) {
  return absl::StrCat("nsys export ", kExportFlags, " --output ", WithoutReportSuffix(report),
                      ".sqlite ", report);
}

absl::StatusOr<std::string> ExportNsightReport(const std::string& report) {
  const std::string readable_by =
      absl::StrCat("bubblescope reads its SQLite export: ", NsightExportCommand(report));
  const std::optional<std::string> nsys = FindOnPath("nsys");
  if (!nsys.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        report, ": an Nsight Systems report, and no nsys on PATH to export it; ", readable_by));
  }
  const std::string cache_home = CacheHome();
  if (cache_home.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(report,
                     ": an Nsight Systems report, and no cache folder to export it into "
                     "(neither XDG_CACHE_HOME nor HOME is set); ",
                     readable_by));
  }
  BUBBLESCOPE_ASSIGN_OR_RETURN(std::string key, CacheKey(report));
  const fs::path folder = fs::path(cache_home) / "bubblescope" / "nsys" / key;
  const std::string name = fs::path(WithoutReportSuffix(report)).filename().string();
  const fs::path exported = folder / (name + ".sqlite");
  std::error_code error;
  // A current export (the key names the report's content) is read as it is.
  if (fs::is_regular_file(exported, error) && fs::file_size(exported, error) > 0 && !error) {
    return exported.string();
  }
  error.clear();
  fs::create_directories(folder, error);
  if (error) {
    return absl::InvalidArgumentError(absl::StrCat(report, ": cannot make the cache folder ",
                                                   folder.string(),
                                                   " for its export: ", error.message()));
  }
  // Each process its own temporary names; ".sqlite" last, as nsys would append it otherwise.
  const std::string partial =
      (folder / absl::StrCat(name, ".", getpid(), ".partial.sqlite")).string();
  const std::string stderr_file = (folder / absl::StrCat(name, ".", getpid(), ".stderr")).string();
  const std::vector<std::string> argv = {
      *nsys,      "export", "--type", "sqlite", "--include-blobs=true", "--force-overwrite=true",
      "--output", partial,  report};
  absl::StatusOr<int> wait_status = RunWithStderrTo(argv, stderr_file);
  const std::string said = LastLine(stderr_file);
  fs::remove(stderr_file, error);
  if (!wait_status.ok()) {
    fs::remove(partial, error);
    return absl::InvalidArgumentError(
        absl::StrCat(report, ": cannot run ", *nsys, ": ", wait_status.status().message()));
  }
  const bool succeeded = WIFEXITED(*wait_status) && WEXITSTATUS(*wait_status) == 0;
  if (!succeeded || !fs::is_regular_file(partial, error)) {
    fs::remove(partial, error);
    const std::string how =
        !succeeded
            ? (WIFEXITED(*wait_status) ? absl::StrCat("exit status ", WEXITSTATUS(*wait_status))
                                       : absl::StrCat("killed by signal ", WTERMSIG(*wait_status)))
            : "exit status 0, and no export written";
    return absl::InvalidArgumentError(absl::StrCat(report, ": nsys export failed (", how,
                                                   "): ", said.empty() ? "it said nothing" : said));
  }
  fs::rename(partial, exported, error);
  if (error) {
    const std::string why = error.message();
    fs::remove(partial, error);
    return absl::InvalidArgumentError(
        absl::StrCat(report, ": cannot put its export in place at ", exported.string(), ": ", why));
  }
  return exported.string();
}

}  // namespace bubblescope
