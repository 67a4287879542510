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
// - A directory, a dangling symlink, or one of the run's own input files (the same file, however
//   it is named) is refused with an error; nothing is written.
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

// Errors read "cannot write <path>: <reason>".
absl::Status WriteOutputFile(const std::string& path, std::string_view contents,
                             const OutputFileOptions& options = {});

}  // namespace bubblescope
