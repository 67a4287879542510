// `analyze --mpi` without MPI: what each process reads, keeps and sends, and how process 0 turns
// what every process sent into the job's rank headers and facts (job/job_parts.h). The MPI calls
// that move the bytes are in mpi_world.h; everything here is plain C++, tested without MPI.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/iterations.h"
#include "bubblescope/trace.h"
#include "distributed/part_exchange.h"
#include "job/job_parts.h"
#include "loader/trace_loader.h"

namespace bubblescope::distributed {

// What one process has of its share once read.
struct Share {
  std::string bundle;  // for process 0 (read_bundle.h): each rank's header and facts
  HeldDigests held;    // each rank's digest, until process 0 asks for it
};

// Process `process` of `processes`: reads its share of `list` (file_shares.h), each rank reduced
// to its digest, header and facts (with `steps`' iteration marker) as soon as its file is read.
// When the listing failed on this process, the bundle says why.
Share ReadShare(const absl::StatusOr<TraceFileList>& list, int process, int processes,
                const LoadOptions& options, const iterations::Options& steps);

// The job as process 0 sees it before any part is fetched.
struct AssembledJob {
  Trace headers;  // every rank's header, numbered and ordered as LoadTrace numbers the ranks
  std::vector<RankOrigin> origins;    // per rank: its file and place in it
  std::vector<job::RankFacts> facts;  // per rank
};

// Process 0: the job of `list` (its own listing) from every process's bundle, in process order;
// each bundle is freed once read. The errors are LoadTrace's, plus one line naming a process that
// listed other files (a filesystem not shared alike) or could not list them.
absl::StatusOr<AssembledJob> AssembleShares(const TraceFileList& list,
                                            std::vector<std::string> bundles,
                                            const LoadOptions& options);

}  // namespace bubblescope::distributed
