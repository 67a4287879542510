// The temporary files WriteOutputFile writes beside a file before renaming them over it
// (common/output_file.h): their names, their removal when the run is interrupted, and the sweep
// of those a killed run left behind.
//
// A temporary file is named ".<name>.bubblescope-<pid>.XXXXXX" beside the final file <name>,
// with <name> shortened so the whole fits NAME_MAX (255 bytes): any name a file system takes
// as the output takes its temporary file too.
// - SIGINT, SIGTERM or SIGHUP while it exists removes it before the process dies of the signal
//   (only where the signal's disposition was the default: a command with handlers of its own
//   keeps them).
// - SIGKILL cannot be caught: the next write of the same file removes the temporary files of
//   that name whose process no longer exists (and only files of this user).
#pragma once

#include <signal.h>

#include <string>

#include "absl/status/statusor.h"

namespace bubblescope {

// The beginning every temporary file of `file_name` (a name without a directory) shares:
// ".<file_name, shortened>.bubblescope-".
std::string TempFilePrefix(const std::string& file_name);

// Creates the temporary file for `target` (a path) in its directory, open for writing: its fd
// and path. Removes stale temporary files of the same target first.
struct TempFile {
  int fd = -1;
  std::string path;
};
absl::StatusOr<TempFile> CreateTempFile(const std::string& target);

// A temporary directory inside `directory` for a set of files put in place together (a digest
// set): ".<name>.bubblescope-<pid>.XXXXXX", hidden, so nothing that lists `directory`'s files
// (analyze DIR) reads a set half written. Those a killed or interrupted run left (their process
// gone, this user's) are removed first.
absl::StatusOr<std::string> CreateTempDirectory(const std::string& directory,
                                                const std::string& name);

// While one of these lives, SIGINT, SIGTERM and SIGHUP wait: a set of renames finishes whole,
// and a signal that came meanwhile acts when it is destroyed.
class SignalsHeld {
 public:
  SignalsHeld();
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;
  ~SignalsHeld();

 private:
  sigset_t previous_;
};

// While one of these lives, its temporary file is removed if a termination signal arrives.
class TempFileGuard {
 public:
  explicit TempFileGuard(const std::string& path);
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;
  ~TempFileGuard();

 private:
  int slot_ = -1;
};

}  // namespace bubblescope
