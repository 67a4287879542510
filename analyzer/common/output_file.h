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
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

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

}  // namespace bubblescope
