// Turns paths (files or directories of per-rank traces) into one Trace: expands directories,
// reads the files in parallel, assigns rank ids and rejects two files claiming the same rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"

namespace bubblescope {

struct RankOverride {
  std::string path;  // as given on the command line, or just the file name
  int32_t rank = -1;
};

struct LoadOptions {
  int jobs = 0;  // worker threads reading files; 0 = number of cores
  std::vector<RankOverride> rank_overrides;
};

// Errors are one line: "<file>: byte <N>: <what is wrong>" (or "<file>: <what>" when no offset
// applies, e.g. a missing file or a duplicate rank, which names both files).
absl::StatusOr<Trace> LoadTrace(const std::vector<std::string>& paths, const LoadOptions& options);

}  // namespace bubblescope
