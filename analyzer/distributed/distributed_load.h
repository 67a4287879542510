// `analyze --mpi` without MPI: what each process reads and sends, and how process 0 turns what
// every process sent into the Trace that LoadTrace would give. The MPI calls that move the bytes
// are in mpi_world.h; everything here is plain C++, tested without MPI.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "loader/trace_loader.h"

namespace bubblescope::distributed {

// Process `process` of `processes`: reads its share of `list` (file_shares.h), each rank reduced
// to a digest as soon as its file is read, and returns the bundle to send to process 0
// (read_bundle.h). When the listing failed on this process, the bundle says why.
std::string ReadShare(const absl::StatusOr<TraceFileList>& list, int process, int processes,
                      const LoadOptions& options);

// Process 0: the Trace of `list` (its own listing) from every process's bundle, in process
// order; each bundle is freed once decoded. The result and its errors are LoadTrace's, plus one
// line naming a process that listed other files (a filesystem not shared alike) or could not
// list them.
absl::StatusOr<Trace> AssembleShares(const TraceFileList& list, std::vector<std::string> bundles,
                                     const LoadOptions& options);

}  // namespace bubblescope::distributed
