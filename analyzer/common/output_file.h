// How bubblescope writes every file a user names (a report with -o, a simulated set, trace files):
// nothing of theirs is ever replaced by accident (docs/input-errors.md, "Writing files").
//
// - A new path, or an existing regular file (through any symlinks to it): the bytes go to a
//   temporary file beside the final one, are flushed to disk and renamed over it, so readers see
//   the old file or the whole new one and a killed run leaves the old file as it was. An existing
//   file keeps its permission bits; a new one gets 0666 minus the umask. A symlink stays a symlink:
//   its target is what is replaced.
// - Anything else that exists (a character device such as /dev/null or a terminal, a FIFO, a
//   socket, /dev/stdout whatever it leads to) is opened and written through; it is never replaced
//   by a regular file.
// - A directory, a dangling symlink, one of the run's own input files (the same file, however
//   it is named), or an existing file this user may not write (as a shell's `>` would refuse
//   it) is refused with an error; nothing is written.
// - Temporary files fit NAME_MAX whatever the name, are removed on SIGINT / SIGTERM / SIGHUP,
//   and a later write of the same file sweeps those a SIGKILL left (common/output_temp.h).
// - A command checks all its outputs together (CheckOutputs) before it writes any of them.
// - An output too large to hold in memory is written piece by piece (OutputStream) under the
//   same rules: a regular file still appears whole or not at all.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/byte_sink.h"

namespace bubblescope {

struct OutputFileOptions {
  // Files the output must never replace, such as the traces the run read. Compared by device and
  // inode, so another name for the same file (a symlink, a hard link, "./x") is caught too.
  std::vector<std::string> protected_files;
};

// One output of a command: the flag that names it ("-o", "--html") and its path (empty: not
// asked for).
struct NamedOutput {
  std::string flag;
  std::string path;
};

// Checks every output of one command before anything is written: each as WriteOutputFile would
// refuse it, and no two naming the same file (the same path, another name through a symlink or
// a hard link: the same device and inode; two names of one new file). Outputs written through
// (/dev/null, a FIFO) may be shared. Errors read "<flag>: cannot write <path>: <reason>" or
// "<flag> names the same file as <flag> (<paths>): one would replace the other".
absl::Status CheckOutputs(const std::vector<NamedOutput>& outputs,
                          const OutputFileOptions& options = {});

// Errors read "cannot write <path>: <reason>".
absl::Status WriteOutputFile(const std::string& path, std::string_view contents,
                             const OutputFileOptions& options = {});

// A file with no name in the output's directory (the system's temporary directory for an output
// written through), for bytes that must reach the output after others known only later. It is
// unlinked as soon as it is made, so nothing of it outlives the run however the run ends.
class ScratchFile : public ByteSink {
 public:
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  ~ScratchFile() override;

  absl::Status Append(std::string_view bytes) override;
  int64_t size() const { return size_; }

 private:
  friend class OutputStream;
  ScratchFile(int fd, std::string output_path) : fd_(fd), output_path_(std::move(output_path)) {}

  int fd_;
  std::string output_path_;  // for errors
  int64_t size_ = 0;
};

// One output written piece by piece under WriteOutputFile's rules, checked when it is opened. A
// regular file's bytes wait in its temporary file, renamed over it by Commit: readers see the old
// file or the whole new one, and a stream dropped uncommitted (an error, a signal) leaves no
// trace. A device or a FIFO is written through as the bytes come. Errors read
// "cannot write <path>: <reason>".
class OutputStream : public ByteSink {
 public:
  static absl::StatusOr<std::unique_ptr<OutputStream>> Open(const std::string& path,
                                                            const OutputFileOptions& options = {});
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;
  ~OutputStream() override;

  absl::Status Append(std::string_view bytes) override;
  // A scratch file on the output's own file system, for AppendScratch.
  absl::StatusOr<std::unique_ptr<ScratchFile>> NewScratch() const;
  // Appends every byte written to `scratch` (copied by the kernel where it can).
  absl::Status AppendScratch(const ScratchFile& scratch);
  // Flushes the bytes to disk and puts the file in place; nothing may be appended after.
  absl::Status Commit();

 private:
  struct State;
  explicit OutputStream(std::unique_ptr<State> state);

  std::unique_ptr<State> state_;
};

}  // namespace bubblescope
