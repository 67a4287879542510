// Runs one command as a child process the way a shell runs a foreground job, for `bubblescope
// record`: PATH lookup, extra environment variables, signals passed on, and the shell's exit
// status conventions. The child shares the caller's stdin, stdout and stderr (nothing is
// captured) and its process group, so signals the terminal sends to the whole foreground group
// (Ctrl-C, Ctrl-\) reach it directly and are not sent a second time.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace bubblescope {

// Exit statuses a shell gives a command that could not be started.
inline constexpr int kExitCommandNotFound = 127;
inline constexpr int kExitCannotExecute = 126;

struct ChildProcessOptions {
  // argv[0] is looked up in PATH unless it contains a '/'.
  std::vector<std::string> argv;
  // Set (or replaced) in the child's environment; every other variable is passed on unchanged.
  std::vector<std::pair<std::string, std::string>> extra_environment;
  // Signals that, sent to this process while the child runs, are sent on to the child instead
  // of acting on this process. Signals this process ignores stay ignored, for the child too.
  std::vector<int> forwarded_signals;
};

// How the child ended.
struct ChildExit {
  int exit_status = 0;  // its exit code, or 128 + N when signal N killed it (as shells report)
  int signal = 0;       // N, or 0 when it exited
};

// Starts the command, waits for it and returns how it ended. Errors when it could not be
// started: NotFound ("NAME: command not found", or "PATH: No such file or directory" for a path)
// and PermissionDenied ("PATH: cannot execute: <reason>"); Internal when the system refuses to
// create or wait for a process. ExitStatusForStartError maps those to a shell's exit status.
// Blocks the forwarded signals and SIGCHLD while the child runs, so call it from a process with
// no other threads (other threads would still take those signals).
absl::StatusOr<ChildExit> RunChildProcess(const ChildProcessOptions& options);

// 127 for NotFound, 126 for any other start error (a shell's statuses).
int ExitStatusForStartError(const absl::Status& error);

}  // namespace bubblescope
