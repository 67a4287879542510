// Whether a process still runs, for tests that check what was stopped and what was left alone.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

namespace bubblescope::testing {

// Gone, or a zombie nobody has reaped yet: either way no longer running.
bool ProcessEnded(pid_t pid);

// Polls until `pid` has ended; false if it still runs after `limit`.
bool ProcessEndsWithin(pid_t pid, std::chrono::milliseconds limit);

// The pid a process wrote as one line ("1234\n") to `path`, once the whole line is there; 0 if
// it is not there after `limit`.
pid_t PidWrittenTo(const std::string& path, std::chrono::milliseconds limit);

}  // namespace bubblescope::testing
