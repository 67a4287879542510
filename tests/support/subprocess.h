// Runs a command (the built `bubblescope` binary, usually) and captures what it did, for tests
// that check exit status and messages end to end.
#pragma once

#include <string>
#include <vector>

namespace bubblescope::testing {

struct CommandResult {
  int exit_status = -1;  // the exit code, or 128 + signal number if it died from a signal
  bool signaled = false;
  std::string out;
  std::string err;
};

// Runs argv[0] (a path) with the arguments, no shell, stdin from /dev/null. Stops it with
// SIGKILL after `timeout_seconds` (a hang is reported as signaled with SIGKILL).
CommandResult RunCommand(const std::vector<std::string>& argv, int timeout_seconds = 120);

}  // namespace bubblescope::testing
