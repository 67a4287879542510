#include "record_process/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "record_process/job_watchdog.h"

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

absl::Status ExecError(const std::string& path, int error) {
  if (error == ENOENT || error == ENOTDIR) {
    return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(error)));
  }
  if (error == EAGAIN || error == ENOMEM) {
    return absl::InternalError(absl::StrCat("cannot start ", path, ": ", std::strerror(error)));
  }
  return absl::PermissionDeniedError(
      absl::StrCat(path, ": cannot execute: ", std::strerror(error)));
}

// While alive: the forwarded signals, SIGCHLD and SIGCONT are blocked so that they wait for
// sigwaitinfo instead of acting (a blocked SIGCONT still continues this process), SIGTTOU is
// blocked so that taking the terminal back from the job's group is allowed, and SIGCHLD is not
// ignored (so the child can be waited for). Restores the signal mask and SIGCHLD's disposition
// when it goes.
class SignalGuard {
 public:
  explicit SignalGuard(const std::vector<int>& forwarded) {
    sigemptyset(&waited_);
    sigaddset(&waited_, SIGCHLD);
    sigaddset(&waited_, SIGCONT);
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
      child_ignored_ = true;
      struct sigaction default_action {};
      default_action.sa_handler = SIG_DFL;
      sigemptyset(&default_action.sa_mask);
      sigaction(SIGCHLD, &default_action, nullptr);
    }
    sigset_t blocked = waited_;
    sigaddset(&blocked, SIGTTOU);
    sigprocmask(SIG_BLOCK, &blocked, &original_mask_);
  }
  ~SignalGuard() {
    // Signals that arrived after the child ended were meant for it; drop them rather than let
    // them act on this process once unblocked.
    const timespec no_wait{0, 0};
    while (sigtimedwait(&waited_, nullptr, &no_wait) > 0) {
    }
    sigprocmask(SIG_SETMASK, &original_mask_, nullptr);
    if (child_ignored_) sigaction(SIGCHLD, &saved_child_action_, nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  const sigset_t& waited() const { return waited_; }
  const sigset_t& original_mask() const { return original_mask_; }
  // SIGCHLD was ignored when RunChildProcess began: the child is given it ignored again.
  bool child_ignored() const { return child_ignored_; }

 private:
  sigset_t waited_{};
  sigset_t original_mask_{};
  struct sigaction saved_child_action_ {};
  bool child_ignored_ = false;
};

// The controlling terminal, held only while this process's group is its foreground group:
// then the job's group gets it for as long as the job runs, and gets it back after a stop.
class Terminal {
 public:
  Terminal() {
    fd_ = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd_ >= 0 && tcgetpgrp(fd_) != getpgrp()) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~Terminal() {
    TakeBack();
    if (fd_ >= 0) close(fd_);
  }
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  bool held() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  // The terminal's foreground is this process's group (again, after a `fg`).
  bool OursInForeground() const { return fd_ >= 0 && tcgetpgrp(fd_) == getpgrp(); }
  void GiveTo(pid_t group) const {
    if (fd_ >= 0) tcsetpgrp(fd_, group);
  }
  void TakeBack() const {
    if (fd_ >= 0) tcsetpgrp(fd_, getpgrp());
  }

 private:
  int fd_ = -1;
};

// What the child needs, built before fork: after it, the child may only make system calls.
struct ExecPlan {
  std::string path;
  std::vector<std::string> argv_strings;
  std::vector<std::string> env_strings;
  std::vector<char*> argv;
  std::vector<char*> envp;
};

// Forks the child into a process group of its own (and the terminal's foreground, when held),
// has `watchdog` watch that group, and only then lets the child execute the command: a job that
// ran before the watchdog knew its group would outlive a record killed in that moment. Exec
// failures come back through a close-on-exec pipe, so a missing or unrunnable command is an
// error here rather than an exit status.
absl::StatusOr<pid_t> Spawn(ExecPlan& plan, const SignalGuard& guard, const Terminal& terminal,
                            JobWatchdog& watchdog) {
  int status_pipe[2];
  int go_pipe[2];  // the parent's one byte: the watchdog knows the group, go on
  if (pipe2(status_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot start ", plan.path, ": ", std::strerror(errno)));
  }
  if (pipe2(go_pipe, O_CLOEXEC) != 0) {
    const int error = errno;
    close(status_pipe[0]);
    close(status_pipe[1]);
    return absl::InternalError(
        absl::StrCat("cannot start ", plan.path, ": ", std::strerror(error)));
  }
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    for (int fd : {status_pipe[0], status_pipe[1], go_pipe[0], go_pipe[1]}) close(fd);
    return ExecError(plan.path, error);
  }
  if (pid == 0) {
    close(status_pipe[0]);
    close(go_pipe[1]);
    setpgid(0, 0);
    if (terminal.held()) tcsetpgrp(terminal.fd(), getpid());  // SIGTTOU is still blocked here
    char go = 0;
    ssize_t got = 0;
    do {
      got = read(go_pipe[0], &go, 1);
    } while (got < 0 && errno == EINTR);
    if (got != 1) _exit(kExitCannotExecute);  // record is gone: the job never starts
    if (guard.child_ignored()) {
      struct sigaction ignore {};
      ignore.sa_handler = SIG_IGN;
      sigaction(SIGCHLD, &ignore, nullptr);
    }
    sigprocmask(SIG_SETMASK, &guard.original_mask(), nullptr);
    execve(plan.path.c_str(), plan.argv.data(), plan.envp.data());
    const int error = errno;
    if (write(status_pipe[1], &error, sizeof error) != sizeof error) {
      // Nothing more can be done: the parent then sees the child exit with 127.
    }
    _exit(kExitCommandNotFound);
  }
  close(status_pipe[1]);
  close(go_pipe[0]);
  // Both sides set the group and the terminal, as shells do, so neither depends on which of
  // them runs first.
  setpgid(pid, pid);
  terminal.GiveTo(pid);
  watchdog.Watch(pid);
  const char go = 1;
  if (write(go_pipe[1], &go, 1) != 1) {
    // The child reads EOF instead and exits 126 without running the command.
  }
  close(go_pipe[1]);
  int error = 0;
  ssize_t n = 0;
  do {
    n = read(status_pipe[0], &error, sizeof error);
  } while (n < 0 && errno == EINTR);
  close(status_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof error)) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return ExecError(plan.path, error);
  }
  return pid;
}

std::string SignalName(int signal_number) {
  const char* abbreviation = sigabbrev_np(signal_number);
  return abbreviation != nullptr ? absl::StrCat("SIG", abbreviation)
                                 : absl::StrCat("signal ", signal_number);
}

// The wait: passes signals on, takes the job's stops and continues through the terminal, and
// kills the job's group when asked twice to end it or when kill_after_ms runs out.
class JobWaiter {
 public:
  JobWaiter(pid_t pid, const ChildProcessOptions& options, const SignalGuard& guard,
            const Terminal& terminal)
      : pid_(pid), options_(options), guard_(guard), terminal_(terminal) {}

  absl::StatusOr<ChildExit> Wait() {
    while (true) {
      siginfo_t info{};
      const int signal_number = NextSignal(&info);
      if (signal_number < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) {
          Kill(absl::StrCat("the job was still running ", options_.kill_after_ms,
                            " ms after it was asked to end"));
          continue;
        }
        return absl::InternalError(absl::StrCat("sigwaitinfo: ", std::strerror(errno)));
      }
      if (signal_number == SIGCHLD) {
        absl::StatusOr<std::optional<ChildExit>> ended = Reap();
        BUBBLESCOPE_RETURN_IF_ERROR(ended.status());
        if (ended->has_value()) return **ended;
      } else if (signal_number == SIGCONT) {
        Resume();
      } else {
        PassOn(signal_number);
      }
    }
  }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kSameRequest{1};

  int NextSignal(siginfo_t* info) {
    if (!deadline_) return sigwaitinfo(&guard_.waited(), info);
    const auto left = std::max(Clock::duration::zero(), *deadline_ - Clock::now());
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(left);
    const timespec timeout{static_cast<time_t>(seconds.count()),
                           static_cast<long>(std::chrono::nanoseconds(left - seconds).count())};
    return sigtimedwait(&guard_.waited(), info, &timeout);
  }

  // The job's end, if it has ended; nothing for another child's SIGCHLD or a stop.
  absl::StatusOr<std::optional<ChildExit>> Reap() {
    int status = 0;
    const pid_t done = waitpid(pid_, &status, WNOHANG | (terminal_.held() ? WUNTRACED : 0));
    if (done == 0) return std::nullopt;
    if (done < 0) {
      if (errno == EINTR) return std::nullopt;
      return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
    }
    if (WIFSTOPPED(status)) {
      Suspend();
      return std::nullopt;
    }
    ChildExit exit;
    if (WIFSIGNALED(status)) {
      exit.signal = WTERMSIG(status);
      exit.exit_status = 128 + exit.signal;
    } else if (WIFEXITED(status)) {
      exit.exit_status = WEXITSTATUS(status);
    } else {
      return std::nullopt;
    }
    exit.killed_here = killed_;
    return exit;
  }

  // The job stopped at the terminal (Ctrl-Z): stop with it, so the shell that started this
  // process sees its job stopped and takes the terminal back.
  void Suspend() {
    terminal_.TakeBack();
    raise(SIGSTOP);
  }

  // Continued (`fg` or `bg`): the job continues too, and has the terminal again if the shell
  // gave it back to this process's group.
  void Resume() {
    if (terminal_.OursInForeground()) terminal_.GiveTo(pid_);
    killpg(pid_, SIGCONT);
  }

  void PassOn(int signal_number) {
    const bool ending = std::find(options_.ending_signals.begin(), options_.ending_signals.end(),
                                  signal_number) != options_.ending_signals.end();
    if (!ending) {
      kill(pid_, signal_number);
      return;
    }
    // One request can arrive twice: `timeout` signals its child and then its whole process
    // group, so this process gets the same signal twice within microseconds. The same signal
    // again within kSameRequest is that one request, not a second one.
    const Clock::time_point now = Clock::now();
    const bool repeat =
        signal_number == last_ending_signal_ && now - last_ending_at_ < kSameRequest;
    last_ending_signal_ = signal_number;
    last_ending_at_ = now;
    if (repeat) return;
    kill(pid_, signal_number);
    if (killed_) return;
    if (++ending_signals_seen_ >= 2) {
      Kill(absl::StrCat("second request to end the job (", SignalName(signal_number), ")"));
      return;
    }
    std::string what =
        absl::StrCat("passed ", SignalName(signal_number), " on to the job (pid ", pid_, "); ");
    if (options_.kill_after_ms > 0) {
      deadline_ = Clock::now() + std::chrono::milliseconds(options_.kill_after_ms);
      absl::StrAppend(&what, "it is killed if still running in ", options_.kill_after_ms,
                      " ms or at a second signal");
    } else {
      absl::StrAppend(&what, "a second signal kills it");
    }
    Notice(what);
  }

  void Kill(const std::string& reason) {
    deadline_.reset();
    if (killed_) return;
    killed_ = true;
    Notice(absl::StrCat(reason, ": killing the job's process group (", pid_, ") with SIGKILL"));
    killpg(pid_, SIGKILL);
  }

  void Notice(const std::string& line) const {
    if (options_.notice) options_.notice(line);
  }

  const pid_t pid_;
  const ChildProcessOptions& options_;
  const SignalGuard& guard_;
  const Terminal& terminal_;
  int ending_signals_seen_ = 0;
  int last_ending_signal_ = 0;
  Clock::time_point last_ending_at_;
  bool killed_ = false;
  std::optional<Clock::time_point> deadline_;
};

}  // namespace

absl::StatusOr<ChildExit> RunChildProcess(const ChildProcessOptions& options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("no command to run");
  absl::StatusOr<std::string> path = FindExecutable(options.argv.front());
  BUBBLESCOPE_RETURN_IF_ERROR(path.status());
  ExecPlan plan{*path, options.argv, ChildEnvironment(options.extra_environment), {}, {}};
  plan.argv = NullTerminated(plan.argv_strings);
  plan.envp = NullTerminated(plan.env_strings);

  // Order matters: signals are held before anything starts; the watchdog is forked before the
  // terminal is opened so it holds nothing of it; the terminal is taken back (Terminal's
  // destructor) before the signal mask is restored, while SIGTTOU is still blocked.
  SignalGuard guard(options.forwarded_signals);
  JobWatchdog watchdog(options.orphan_grace_ms);
  Terminal terminal;
  absl::StatusOr<pid_t> pid = Spawn(plan, guard, terminal, watchdog);
  BUBBLESCOPE_RETURN_IF_ERROR(pid.status());
  absl::StatusOr<ChildExit> exit = JobWaiter(*pid, options, guard, terminal).Wait();
  watchdog.Release();
  return exit;
}

int ExitStatusForStartError(const absl::Status& error) {
  return error.code() == absl::StatusCode::kNotFound ? kExitCommandNotFound : kExitCannotExecute;
}

}  // namespace bubblescope
