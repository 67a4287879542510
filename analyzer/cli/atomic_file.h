// Replaces a file's contents all at once: readers of `path` see either the old file or the
// complete new one, never a half-written mix, even if bubblescope is killed mid-write.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace bubblescope {

// Writes `contents` to a temporary file beside `path`, flushes it to disk and renames it over
// `path`. An existing file keeps its permission bits; a new one gets 0666 minus the umask. A
// symlink at `path` is followed, so its target is replaced. On failure the temporary file is
// removed, `path` is untouched, and the error reads "cannot write <path>: <reason>".
absl::Status WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace bubblescope
