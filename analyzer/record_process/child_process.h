// Runs one command as a child process the way a shell runs a foreground job, for `bubblescope
// record`: PATH lookup, extra environment variables, signals passed on, and the shell's exit
// status conventions. The child shares the caller's stdin, stdout and stderr (nothing is
// captured).
//
// The child gets a process group of its own, so that everything the job starts (a launcher's
// workers included) can be stopped together. When the caller's group owns the controlling
// terminal, the terminal is handed to the job's group for as long as it runs, as a shell does
// with a foreground job: Ctrl-C, Ctrl-\ and Ctrl-Z reach the job directly and the job can read
// the terminal. docs/record.md ("Exit status and signals") tells users what this means.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
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
  // Signals that, sent to this process while the child runs, are sent on to the child's first
  // process (as `kill PID` to the job would) instead of acting on this process. Signals this
  // process ignores stay ignored, for the child too.
  std::vector<int> forwarded_signals;
  // Those of `forwarded_signals` that ask the job to end. When a second one arrives before the
  // job has ended, the job's whole process group is killed with SIGKILL, so a job that ignores
  // them cannot keep this process waiting for ever. The same signal again within a second is
  // the same request delivered twice (as `timeout` does), neither passed on nor counted.
  std::vector<int> ending_signals;
  // Milliseconds to wait after the first ending signal before killing the job's process group
  // with SIGKILL; 0: wait until the job ends or a second ending signal arrives.
  int64_t kill_after_ms = 0;
  // If this process is killed outright (SIGKILL) while the job runs, a watchdog process sends
  // the job's process group SIGTERM, then SIGKILL this many milliseconds later if any of it
  // is still running.
  int64_t orphan_grace_ms = 10'000;
  // Told, one line at a time (no newline), what is done to the job on the user's behalf: a
  // signal passed on, the job killed. Called while the job runs; may be empty.
  std::function<void(const std::string&)> notice;
};

// How the child ended.
struct ChildExit {
  int exit_status = 0;       // its exit code, or 128 + N when signal N killed it (as shells report)
  int signal = 0;            // N, or 0 when it exited
  bool killed_here = false;  // this process killed it (a second ending signal, kill_after_ms)
};

// Starts the command, waits for it and returns how it ended. Errors when it could not be
// started: NotFound ("NAME: command not found", or "PATH: No such file or directory" for a path)
// and PermissionDenied ("PATH: cannot execute: <reason>"); Internal when the system refuses to
// create or wait for a process. ExitStatusForStartError maps those to a shell's exit status.
// Blocks the forwarded signals, SIGCHLD and SIGTTOU while the child runs, so call it from a
// process with no other threads (other threads would still take those signals).
absl::StatusOr<ChildExit> RunChildProcess(const ChildProcessOptions& options);

// 127 for NotFound, 126 for any other start error (a shell's statuses).
int ExitStatusForStartError(const absl::Status& error);

}  // namespace bubblescope
