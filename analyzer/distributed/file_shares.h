// Which process of `analyze --mpi` reads which trace files: shares balanced by file size, and a
// fingerprint of the list so that process 0 can tell when another process saw other files.
#pragma once

#include <cstdint>
#include <vector>

#include "loader/trace_loader.h"

namespace bubblescope::distributed {

// Each file's size in bytes as stored (compressed for .gz); 0 for one that cannot be stat'ed,
// whose read then reports why.
std::vector<uint64_t> FileSizes(const TraceFileList& list);

// `processes` shares of the files (indices into `sizes`, ascending in each share), the largest
// files first to the share with the fewest bytes so far (ties: fewer files, then the lower
// share; equal sizes go in list order). Deterministic, so every process computes the same shares. A
// share may be empty.
std::vector<std::vector<size_t>> SplitBySize(const std::vector<uint64_t>& sizes, int processes);

// A hash of every file's path, place in the list and size: equal on two processes when they
// listed the same files (FNV-1a 64, the same on every machine).
uint64_t ListFingerprint(const TraceFileList& list, const std::vector<uint64_t>& sizes);

}  // namespace bubblescope::distributed
