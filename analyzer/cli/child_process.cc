#include "cli/child_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

extern char** environ;

namespace bubblescope {
namespace {

// The search path when PATH is unset, as execvp uses it.
std::string DefaultSearchPath() {
  size_t size = confstr(_CS_PATH, nullptr, 0);
  if (size == 0) return "/bin:/usr/bin";
  std::string path(size, '\0');
  confstr(_CS_PATH, path.data(), size);
  path.resize(size - 1);  // confstr counts the terminating NUL
  return path;
}

bool IsRegularFile(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// The file a shell would run for `name`: the name itself when it holds a '/', otherwise the
// first executable regular file in a PATH directory (an empty entry is the current directory).
absl::StatusOr<std::string> FindExecutable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path_variable = getenv("PATH");
  const std::string search = path_variable != nullptr ? path_variable : DefaultSearchPath();
  std::string not_executable;
  for (absl::string_view directory : absl::StrSplit(search, ':')) {
    if (name.empty()) break;
    std::string candidate = directory.empty() ? name : absl::StrCat(directory, "/", name);
    if (!IsRegularFile(candidate)) continue;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (not_executable.empty()) not_executable = candidate;
  }
  if (!not_executable.empty()) {
    return absl::PermissionDeniedError(
        absl::StrCat(not_executable, ": cannot execute: Permission denied"));
  }
  return absl::NotFoundError(absl::StrCat(name, ": command not found"));
}

// "NAME=VALUE" strings: this process's environment with `extra` set on top.
std::vector<std::string> ChildEnvironment(
    const std::vector<std::pair<std::string, std::string>>& extra) {
  absl::flat_hash_set<std::string> replaced;
  for (const auto& [name, value] : extra) replaced.insert(name);
  std::vector<std::string> entries;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    absl::string_view text(*entry);
    absl::string_view name = text.substr(0, text.find('='));
    if (!replaced.contains(name)) entries.emplace_back(text);
  }
  for (const auto& [name, value] : extra) entries.push_back(absl::StrCat(name, "=", value));
  return entries;
}

std::vector<char*> NullTerminated(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

absl::Status SpawnError(const std::string& path, int error) {
  if (error == ENOENT || error == ENOTDIR) {
    return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(error)));
  }
  if (error == EAGAIN || error == ENOMEM) {
    return absl::InternalError(absl::StrCat("cannot start ", path, ": ", std::strerror(error)));
  }
  return absl::PermissionDeniedError(
      absl::StrCat(path, ": cannot execute: ", std::strerror(error)));
}

// While alive: the forwarded signals and SIGCHLD are blocked (so they wait for sigwaitinfo
// instead of acting) and SIGCHLD is not ignored (so the child can be waited for). Restores the
// signal mask and SIGCHLD's disposition when it goes away.
class SignalGuard {
 public:
  explicit SignalGuard(const std::vector<int>& forwarded) {
    sigemptyset(&waited_);
    sigaddset(&waited_, SIGCHLD);
    for (int signal_number : forwarded) {
      struct sigaction current {};
      if (sigaction(signal_number, nullptr, &current) != 0) continue;
      if (current.sa_handler == SIG_IGN) continue;  // stays ignored, for the child too
      sigaddset(&waited_, signal_number);
    }
    struct sigaction child_action {};
    sigaction(SIGCHLD, nullptr, &child_action);
    if (child_action.sa_handler == SIG_IGN) {
      saved_child_action_ = child_action;
      restore_child_action_ = true;
      struct sigaction default_action {};
      default_action.sa_handler = SIG_DFL;
      sigemptyset(&default_action.sa_mask);
      sigaction(SIGCHLD, &default_action, nullptr);
    }
    sigprocmask(SIG_BLOCK, &waited_, &original_mask_);
  }
  ~SignalGuard() {
    // Signals that arrived after the child ended were meant for it; drop them rather than let
    // them act on this process once unblocked.
    const timespec no_wait{0, 0};
    while (sigtimedwait(&waited_, nullptr, &no_wait) > 0) {
    }
    sigprocmask(SIG_SETMASK, &original_mask_, nullptr);
    if (restore_child_action_) sigaction(SIGCHLD, &saved_child_action_, nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  const sigset_t& waited() const { return waited_; }
  const sigset_t& original_mask() const { return original_mask_; }

 private:
  sigset_t waited_{};
  sigset_t original_mask_{};
  struct sigaction saved_child_action_ {};
  bool restore_child_action_ = false;
};

absl::StatusOr<pid_t> Spawn(const std::string& path, const ChildProcessOptions& options,
                            const sigset_t& child_mask) {
  std::vector<std::string> argv_strings = options.argv;
  std::vector<std::string> env_strings = ChildEnvironment(options.extra_environment);
  std::vector<char*> argv = NullTerminated(argv_strings);
  std::vector<char*> envp = NullTerminated(env_strings);
  posix_spawnattr_t attributes;
  if (posix_spawnattr_init(&attributes) != 0) return absl::InternalError("posix_spawnattr_init");
  posix_spawnattr_setsigmask(&attributes, &child_mask);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  int error = posix_spawn(&pid, path.c_str(), nullptr, &attributes, argv.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  if (error != 0) return SpawnError(path, error);
  return pid;
}

// Waits for `pid`, sending it every waited signal except SIGCHLD. A signal the kernel sent
// (si_code SI_KERNEL: the terminal's Ctrl-C to the foreground process group) already reached
// the child, which shares our group, so it is not sent again.
absl::StatusOr<ChildExit> WaitForwarding(pid_t pid, const sigset_t& waited) {
  while (true) {
    siginfo_t info{};
    int signal_number = sigwaitinfo(&waited, &info);
    if (signal_number < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("sigwaitinfo: ", std::strerror(errno)));
    }
    if (signal_number != SIGCHLD) {
      if (info.si_code != SI_KERNEL) kill(pid, signal_number);
      continue;
    }
    int status = 0;
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == 0) continue;  // another child of ours, or ours stopped
    if (done < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
    }
    if (WIFSIGNALED(status)) return ChildExit{128 + WTERMSIG(status), WTERMSIG(status)};
    if (WIFEXITED(status)) return ChildExit{WEXITSTATUS(status), 0};
  }
}

}  // namespace

absl::StatusOr<ChildExit> RunChildProcess(const ChildProcessOptions& options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("no command to run");
  absl::StatusOr<std::string> path = FindExecutable(options.argv.front());
  if (!path.ok()) return path.status();
  SignalGuard guard(options.forwarded_signals);
  absl::StatusOr<pid_t> pid = Spawn(*path, options, guard.original_mask());
  if (!pid.ok()) return pid.status();
  return WaitForwarding(*pid, guard.waited());
}

int ExitStatusForStartError(const absl::Status& error) {
  return error.code() == absl::StatusCode::kNotFound ? kExitCommandNotFound : kExitCannotExecute;
}

}  // namespace bubblescope
